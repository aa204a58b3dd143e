"""Course authoring: write exercise notebooks from solutions, and re-execute every notebook.

    python -m tools.authoring exercises   # solutions/*.ipynb -> exercises/*.ipynb (make exercises)
    python -m tools.authoring execute     # re-run every notebook in place (make notebooks)
    python -m tools.authoring times [--only NN]   # course.toml's minutes into notebooks and README
    python -m tools.authoring outputs [ID ...] [--drop ID ...]   # the checked-outputs manifest
    python -m tools.authoring move CORE.ipynb DEEP.ipynb ID ... [--after ID]   # cells to a deep dive

Lectures live in ``notebooks/NN_*.ipynb`` (a chapter's core) and ``notebooks/deeper/NN_*.ipynb``
(its deep dives, optional branches beside the core); ``lecture_notebooks`` lists both.

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
import json
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


DEEPER = "deeper"  # notebooks/deeper/NN_slug.ipynb: chapter NN's deep dives


def lecture_notebooks(root: Path = ROOT) -> list[Path]:
    """Every lecture notebook: the core lectures (notebooks/*.ipynb), then the deep dives
    (notebooks/deeper/*.ipynb)."""
    return sorted((root / "notebooks").glob("*.ipynb")) + sorted(
        (root / "notebooks" / DEEPER).glob("*.ipynb")
    )


def course_notebooks(root: Path = ROOT) -> list[Path]:
    """Every committed notebook: lectures and deep dives, then solutions (exercises are generated
    from those)."""
    return lecture_notebooks(root) + sorted((root / "solutions").glob("*.ipynb"))


# -- deep dives: moving cells out of a core lecture ---------------------------------------------------


def move_cells(source: Path, target: Path, cell_ids: list[str], after: str | None = None) -> str:
    """Move the cells ``cell_ids`` (in the source's order) from lecture ``source`` into notebook
    ``target`` (a deep dive, created if missing), ids, outputs and tags kept, after the cell
    ``after`` (default: at the end); their Chinese catalog entries move with them, fingerprints
    kept, so nothing is re-translated. Return a summary of what moved."""
    from tools import translate

    source, target = (ROOT / source).resolve(), (ROOT / target).resolve()
    notebook = nbformat.read(source, as_version=4)
    chosen = [c for c in notebook.cells if c.id in cell_ids]
    missing = sorted(set(cell_ids) - {c.id for c in chosen})
    if missing:
        raise ValueError(f"{source.relative_to(ROOT)} has no cell {missing}")
    if target.exists():
        deep = nbformat.read(target, as_version=4)
    else:
        deep = nbformat.v4.new_notebook(metadata=copy.deepcopy(notebook.metadata))
        deep.metadata.pop("widgets", None)
        deep.metadata["posenc"] = {"chapter": target.name[:2], "kind": "deeper"}
    clash = sorted({c.id for c in deep.cells} & set(cell_ids))
    if clash:
        raise ValueError(f"{target.relative_to(ROOT)} already has the cells {clash}")
    where = len(deep.cells)
    if after is not None:
        where = 1 + next((i for i, c in enumerate(deep.cells) if c.id == after), None)
    deep.cells[where:where] = chosen
    notebook.cells = [c for c in notebook.cells if c.id not in cell_ids]
    target.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(render(notebook), encoding="utf-8")
    target.write_text(render(deep), encoding="utf-8")
    catalogs = dict((nbs[0], cat) for cat, nbs in translate.groups() if len(nbs) == 1)
    from_catalog = catalogs.get(source, translate.CATALOGS / "notebooks" / f"{source.stem}.md")
    to_catalog = translate.CATALOGS / "notebooks" / translate.DEEPER / f"{target.stem}.md"
    old, new = translate.read_catalog(from_catalog), translate.read_catalog(to_catalog)
    moved = [i for i in cell_ids if i in old]
    for cell_id in moved:
        new[cell_id] = old.pop(cell_id)
    for catalog, entries, book in ((from_catalog, old, notebook), (to_catalog, new, deep)):
        order = [c.id for c in book.cells if c.id in entries]
        rest = [i for i in entries if i not in order]  # entries whose cell is elsewhere: kept
        path = source if book is notebook else target
        translate.write_catalog(
            catalog, [entries[i] for i in order + rest], [path.relative_to(ROOT).as_posix()]
        )
    return (
        f"moved {len(chosen)} cells ({len(moved)} with their Chinese) from "
        f"{source.relative_to(ROOT)} to {target.relative_to(ROOT)}"
    )


# -- nothing printed is lost: the manifest of checked outputs ----------------------------------------

CHECKED_OUTPUTS = ROOT / "tests" / "data" / "checked_outputs.json"


def printed_text(cell) -> str:
    """What a code cell prints, as nbval compares it: its streams and text/plain outputs."""
    parts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            parts.append(output["text"])
        elif "text/plain" in output.get("data", {}):
            parts.append(output["data"]["text/plain"])
    return "".join(parts)


def checked_cells(root: Path = ROOT) -> dict[str, list[tuple[str, str]]]:
    """Every ``# NBVAL_CHECK_OUTPUT`` cell of the English lectures and deep dives, by id: a list of
    (notebook path from the root, printed text), one item per notebook holding that id."""
    found: dict[str, list[tuple[str, str]]] = {}
    for path in lecture_notebooks(root):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "code" and NBVAL_MARK in cell.source:
                where = path.relative_to(root).as_posix()
                found.setdefault(cell.id, []).append((where, printed_text(cell)))
    return found


def read_manifest(path: Path = CHECKED_OUTPUTS) -> dict[str, dict]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def write_manifest(entries: dict[str, dict], path: Path = CHECKED_OUTPUTS) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(dict(sorted(entries.items())), indent=1, ensure_ascii=False)
    path.write_text(text + "\n", encoding="utf-8")


def update_manifest(
    changed: list[str] = (), drop: list[str] = (), root: Path = ROOT, path: Path = CHECKED_OUTPUTS
) -> list[str]:
    """Bring the manifest up to date with the notebooks; return what it did, one line each.

    New checked cells are added and moved cells get their new notebook. A cell whose printed text
    differs is rewritten only when named in ``changed`` (a deliberate update: a fix changed a
    number); an id no notebook holds any more is removed only when named in ``drop``. Anything
    else raises ValueError, and nothing is written."""
    entries, cells = read_manifest(path), checked_cells(root)
    twice = {i: [w for w, _ in v] for i, v in cells.items() if len(v) > 1}
    if twice:
        raise ValueError(f"cell ids in more than one notebook (make them unique): {twice}")
    unknown = sorted((set(changed) | set(drop)) - set(entries) - set(cells))
    if unknown:
        raise ValueError(f"no checked cell and no manifest entry has the id(s) {unknown}")
    done, refused = [], []
    for cell_id in sorted(set(entries) | set(cells)):
        old = entries.get(cell_id)
        if cell_id not in cells:
            if cell_id in drop:
                del entries[cell_id]
                done.append(f"dropped {cell_id} (was in {old['notebook']})")
            else:
                refused.append(
                    f"{cell_id} (in {old['notebook']}) is in no notebook under notebooks/ as a "
                    "checked cell: restore it, or pass --drop " + cell_id
                )
            continue
        where, text = cells[cell_id][0]
        if old is None:
            entries[cell_id] = {"notebook": where, "text": text}
            done.append(f"added {cell_id} ({where})")
            continue
        if old["text"] != text:
            if cell_id not in changed:
                refused.append(
                    f"{cell_id} ({where}) prints other text than the manifest: if a fix changed "
                    f"it on purpose, name it: python -m tools.authoring outputs {cell_id}"
                )
                continue
            done.append(f"rewrote {cell_id} ({where})")
        elif cell_id in changed:
            done.append(f"{cell_id} ({where}) prints what the manifest holds already")
        if old["notebook"] != where:
            done.append(f"moved {cell_id}: {old['notebook']} -> {where}")
        entries[cell_id] = {"notebook": where, "text": text}
    if refused:
        raise ValueError("\n".join(refused))
    write_manifest(entries, path)
    return done


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.authoring",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("command", choices=["exercises", "execute", "times", "outputs", "move"])
    parser.add_argument(
        "paths",
        nargs="*",
        help="execute: notebooks to execute (default: all); outputs: ids of checked cells whose "
        "new printed text the manifest should take (a deliberate change)",
    )
    parser.add_argument(
        "--drop",
        action="append",
        default=[],
        metavar="ID",
        help="outputs: let the manifest forget this checked cell (it prints nowhere any more)",
    )
    parser.add_argument(
        "--after", metavar="ID", help="move: put the cells after this cell of the target"
    )
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NN",
        help="times: only chapter NN's minutes and notebooks (and the start page's map, README)",
    )
    args = parser.parse_args(argv)
    if args.command == "exercises":
        for path in write_exercises():
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    if args.command == "outputs":
        try:
            done = update_manifest(args.paths, args.drop)
        except ValueError as error:
            print(error)
            print(f"nothing written to {CHECKED_OUTPUTS.relative_to(ROOT)}")
            return 1
        print("\n".join(done) or "the manifest already holds every checked output")
        return 0
    if args.command == "move":
        if len(args.paths) < 3:
            parser.error("move needs: SOURCE.ipynb TARGET.ipynb ID [ID ...]")
        source, target, *ids = args.paths
        try:
            print(move_cells(Path(source), Path(target), ids, args.after))
        except ValueError as error:
            print(error)
            return 1
        return 0
    if args.command == "times":
        from tools import course_plan

        for path in course_plan.render_all(args.only):
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    paths = [Path(p) for p in args.paths] or course_notebooks()
    total = 0.0
    from tools import course_plan

    for path in paths:
        seconds = execute(path)
        total += seconds
        course_plan.record_run_time(path, seconds)  # course.toml's run_s, for the pace model
        print(f"{seconds:6.1f} s  {path.resolve().relative_to(ROOT)}", flush=True)
    for path in write_exercises() if not args.paths else []:
        seconds = execute(path, save=False)  # exercises are committed without outputs
        total += seconds
        print(f"{seconds:6.1f} s  {path.relative_to(ROOT)} (run, not saved)", flush=True)
    print(f"{total:6.1f} s  in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
