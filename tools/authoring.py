"""Course authoring: write exercise notebooks from solutions, and re-execute every notebook.

    python -m tools.authoring exercises   # solutions/*.ipynb -> exercises/*.ipynb (make exercises)
    python -m tools.authoring execute     # re-run every notebook in place (make notebooks)

The solutions notebook is the one source of a chapter's exercises. In its code cells, the lines
from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` become a stub in the exercises notebook:

    # YOUR CODE HERE
    raise NotImplementedError("...")

at the indentation of the BEGIN marker (nbgrader's convention). A concept question's answer line,
``answer_c1 = "b"  # one letter: ...``, becomes ``answer_c1 = None  # one letter: ...`` (the comment
kept; ``blank_answers``). Cells tagged ``solutions-only`` are
left out; outputs and execution counts are cleared, and so are ``# NBVAL_CHECK_OUTPUT`` marks. Every notebook carries
``metadata.posenc = {"chapter": "01", "kind": "lecture" | "solutions" | "exercises"}``, which a
grader reads instead of trusting a file name.
"""

from __future__ import annotations

import argparse
import copy
import re
import sys
import time
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
STUB = ("# YOUR CODE HERE", 'raise NotImplementedError("Replace this line with your code.")')
SOLUTIONS_ONLY = "solutions-only"
NBVAL_MARK = "# NBVAL_CHECK_OUTPUT"
CELL_TIMEOUT = 120  # seconds; a chapter's notebook runs in well under 30
# A concept question's answer: `answer_c1 = <value>`, then an optional comment. The value runs to
# the comment's "#" (a value holding "#" in a string is not an answer a solution gives).
ANSWER_LINE = re.compile(
    r"^(?P<lead>\s*answer_c\d+\s*=(?!=)\s*)(?P<value>[^#]*?)(?P<rest>\s*(#.*)?)$"
)


def stub_out(source: str, where: str = "a cell") -> str:
    """Replace each BEGIN ... END SOLUTION block of ``source`` by the stub, at the BEGIN's indent."""
    out, inside = [], False
    for number, line in enumerate(source.splitlines(), start=1):
        marker = line.strip()
        if marker == BEGIN:
            if inside:
                raise ValueError(f"{where}, line {number}: {BEGIN} inside another solution block.")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + stub for stub in STUB)
        elif marker == END:
            if not inside:
                raise ValueError(f"{where}, line {number}: {END} without a {BEGIN} before it.")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"{where}: {BEGIN} is never closed by {END}.")
    return "\n".join(out)


def blank_answers(source: str) -> str:
    """Every ``answer_cN = <value>  # comment`` line of ``source`` as ``answer_cN = None  # comment``."""
    lines = []
    for line in source.splitlines():
        match = ANSWER_LINE.match(line)
        if match and match["value"].strip():
            line = f"{match['lead']}None{match['rest']}"
        lines.append(line)
    return "\n".join(lines)


def exercises_from(solutions: nbformat.NotebookNode, name: str = "") -> nbformat.NotebookNode:
    """The exercises notebook for a solutions notebook: solutions stubbed, outputs cleared."""
    notebook = copy.deepcopy(solutions)
    cells = []
    for index, cell in enumerate(notebook.cells):
        if SOLUTIONS_ONLY in cell.metadata.get("tags", []):
            continue
        where = f"{name} cell {index}"
        if cell.cell_type == "code":
            cell.source = blank_answers(stub_out(cell.source, where))
            # Outputs are cleared, so nbval has nothing to compare a marked cell with.
            cell.source = "\n".join(
                line for line in cell.source.splitlines() if line.strip() != NBVAL_MARK
            )
            cell.outputs, cell.execution_count = [], None
        elif BEGIN in cell.source or END in cell.source:
            raise ValueError(f"{where}: solution markers belong in code cells only.")
        cell.metadata.pop("execution", None)
        cells.append(cell)
    notebook.cells = cells
    notebook.metadata.pop("widgets", None)
    notebook.metadata.setdefault("posenc", {})["kind"] = "exercises"
    return notebook


def exercise_pairs(root: Path = ROOT):
    """(solutions path, exercises path) for every chapter with a solutions notebook."""
    for source in sorted((root / "solutions").glob("[0-9][0-9]_*.ipynb")):
        yield source, root / "exercises" / source.name


def render(notebook: nbformat.NotebookNode) -> str:
    """The exact text a notebook is saved as (so a test can compare files byte for byte)."""
    return nbformat.writes(notebook) + "\n"


def write_exercises(root: Path = ROOT) -> list[Path]:
    """Write exercises/NN_*.ipynb for every solutions/NN_*.ipynb; return the paths written."""
    written = []
    for source, target in exercise_pairs(root):
        notebook = exercises_from(nbformat.read(source, as_version=4), source.name)
        target.write_text(render(notebook), encoding="utf-8")
        written.append(target)
    return written


def execute(path: Path, save: bool = True) -> float:
    """Run a notebook top to bottom in a fresh kernel from its own folder; return the seconds."""
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    started = time.perf_counter()
    NotebookClient(
        notebook,
        timeout=CELL_TIMEOUT,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,  # no timestamps in cell metadata: re-running changes no line for nothing
        store_widget_state=False,  # the outputs carry PNG fallbacks; widget state would double them
    ).execute()
    seconds = time.perf_counter() - started
    _drop_duplicate_images(notebook)
    _merge_streams(notebook)
    if save:
        path.write_text(render(notebook), encoding="utf-8")
    return seconds


def _merge_streams(notebook) -> None:
    """One output per run of prints: a busy machine delivers a cell's stdout in several pieces, and
    the file should not change with the machine's load."""
    for cell in notebook.cells:
        merged = []
        for output in cell.get("outputs", []):
            previous = merged[-1] if merged else None
            if (
                previous is not None
                and output.get("output_type") == previous.get("output_type") == "stream"
                and output.get("name") == previous.get("name")
            ):
                previous["text"] += output["text"]
            else:
                merged.append(output)
        if "outputs" in cell:
            cell.outputs = merged


def _drop_duplicate_images(notebook) -> None:
    """ipympl shows each canvas as a PNG and again as an HTML <img> of the same PNG; keep the PNG.

    Also drops timestamps left in cell metadata by other tools (a re-run should change no line
    for nothing)."""
    for cell in notebook.cells:
        cell.metadata.pop("execution", None)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data and "data:image/png;base64" in data.get("text/html", ""):
                del data["text/html"]


def course_notebooks(root: Path = ROOT) -> list[Path]:
    """Every committed notebook: lectures, then solutions (exercises are generated from those)."""
    return sorted((root / "notebooks").glob("*.ipynb")) + sorted(
        (root / "solutions").glob("*.ipynb")
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.authoring", description=__doc__)
    parser.add_argument("command", choices=["exercises", "execute"])
    parser.add_argument("paths", nargs="*", type=Path, help="notebooks to execute (default: all)")
    args = parser.parse_args(argv)
    if args.command == "exercises":
        for path in write_exercises():
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    paths = args.paths or course_notebooks()
    total = 0.0
    for path in paths:
        seconds = execute(path)
        total += seconds
        print(f"{seconds:6.1f} s  {path.resolve().relative_to(ROOT)}", flush=True)
    for path in write_exercises() if not args.paths else []:
        seconds = execute(path, save=False)  # exercises are committed without outputs
        total += seconds
        print(f"{seconds:6.1f} s  {path.relative_to(ROOT)} (run, not saved)", flush=True)
    print(f"{total:6.1f} s  in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
