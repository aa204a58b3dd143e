"""A learner's progress: which questions pass now, read from their own notebooks.

No account and no server: ``progress()`` finds the learner's exercise notebooks (the course's
``exercises/`` folder, looked for from the working folder up, as saved on disk), grades each with
the class grader (``grader.py``: every notebook in its own sandboxed child process) on the public
inputs only, the ones each notebook's check cells use (seed 0: no hidden inputs), and prints one
line per chapter::

    01_order_blindness  q1 ✗  q2 ✓  q3 ✓  q4 ○  q5 ○  4/12 points
        q1 ✗ Close, but the scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax.
    05_alibi            q1 ○  q2 ○  q3 ○  q4 ○        0/10 points
    total: 4/22 points; 2 of 9 questions pass now, 1 not yet, 6 not attempted

✓ passes now, ✗ not yet (the tutor's sentence below, shortened), ○ not attempted. A notebook that
does not run to the end gets its reason. From a terminal: ``python -m posenc_lib.grading.progress
[FOLDER_OR_NOTEBOOK...]``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import re
import sys
import textwrap
from pathlib import Path

from posenc_lib.checks.verdicts import escape_html, show
from posenc_lib.grading.grader import grade_all
from posenc_lib.grading.sheet import Row
from posenc_lib.grading.submissions import submissions
from posenc_lib.i18n import N_, _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

PUBLIC_SEED = 0  # the public inputs: what each notebook's own check() uses
SENTENCE_WIDTH = 100  # characters of a tutor's sentence shown under its chapter
_SYMBOL = {"pass": "✓", "fail": "✗", "not attempted": "○"}
_WHAT_TO_PASS = N_(
    "pass the folder of your exercise notebooks, e.g. progress('exercises'), or a list of "
    "notebook files, e.g. progress(['exercises/01_order_blindness.ipynb'])"
)
_WHAT_TO_TYPE = N_(  # the same, for the command line
    "give the folder of your exercise notebooks, e.g. python -m posenc_lib.grading.progress "
    "exercises, or notebook files"
)
# The input a verdict names at its end (``checks.question.with_input``), in English or Chinese.
_INPUT = re.compile(r"\s*(\(Input: .*\)|（输入：.*）)\.?\s*$", re.DOTALL)


class Progress(list):
    """The graded rows (``sheet.Row``, one per notebook); ``str()`` is the printed table."""

    _shown = False

    def lines(self) -> list[str]:
        return table(self)

    def __str__(self) -> str:
        return "\n".join(self.lines())

    def __repr__(self) -> str:
        points = sum(r.score for r in self)
        most = sum(r.max_score for r in self)
        return f"<Progress: {points}/{most} points in {len(self)} notebooks>"

    def _ipython_display_(self) -> None:
        # progress() shows the table as it returns it; in Jupyter, when the call is also the
        # cell's last line, IPython would show it a second time. Show it once.
        if not self._shown:
            self._shown = True
            text = str(self)
            show({"text/plain": text, "text/html": f"<pre>{escape_html(text)}</pre>"})


def progress(folder=None, timeout: float = 60.0) -> Progress:
    """Grade the learner's exercise notebooks on their public inputs; print and return the table.

    folder: None (the course's ``exercises/`` folder: the first folder holding both
    ``exercises/`` and ``notebooks/``, from the working folder up, else the course folder that
    holds this library), a folder, one notebook file, or a list of notebook files. The notebooks
    are read as saved: save a notebook before asking. timeout: seconds per notebook.
    Returns a ``Progress``: the ``sheet.Row`` of each notebook, in chapter order.
    """
    if _in_grading_child():
        return Progress()  # a progress() cell, run by the grader itself: nothing to show
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
        raise ValueError(
            tr(
                "timeout must be a positive number of seconds per notebook, got {timeout!r}.",
                timeout=timeout,
            )
        )
    return _show_progress(notebooks(folder), timeout)


def _show_progress(paths: list[tuple[Path, str]], timeout: float) -> Progress:
    # Seed 0 draws the public inputs, so the grader's "hidden" inputs are the public ones again:
    # each question is judged on the inputs its check cell uses, and on nothing else.
    rows = grade_all(paths, PUBLIC_SEED, timeout=timeout)
    result = Progress(sorted(rows, key=lambda r: (r.chapter == "", r.chapter, r.submission)))
    result._ipython_display_()
    return result


def _in_grading_child() -> bool:
    """True in the grader's sandboxed child, which runs a notebook's cells (in a scratch folder
    named ``posenc-grade-...``): a ``progress()`` cell there would grade the learner's notebooks
    again, inside their own grading."""
    scratch = Path.cwd().name.startswith("posenc-grade-")
    return scratch and multiprocessing.parent_process() is not None


def find_exercises(cwd: Path | None = None, hint: str = _WHAT_TO_PASS) -> Path:
    """The course's ``exercises/`` folder (next to ``notebooks/``), from ``cwd`` up, or the course
    folder that holds this library; ValueError when neither has one."""
    here = (Path.cwd() if cwd is None else Path(cwd)).resolve()
    course = Path(__file__).resolve().parents[2]  # posenc_lib/grading/progress.py -> the course
    for folder in [here, *here.parents, course]:
        if (folder / "exercises").is_dir() and (folder / "notebooks").is_dir():
            return folder / "exercises"
    raise ValueError(
        tr(
            "found no course folder (one holding exercises/ and notebooks/) in {here} or above "
            "it: {hint}.",
            here=here,
            hint=translate(hint),
        )
    )


def notebooks(folder=None, hint: str = _WHAT_TO_PASS) -> list[tuple[Path, str]]:
    """(notebook, name) pairs to grade, from what ``progress`` was given; ValueError if none."""
    if folder is None:
        folder = find_exercises(hint=hint)
    given = [folder] if isinstance(folder, (str, Path)) else folder
    said = translate(hint)
    if not isinstance(given, (list, tuple)) or not given:
        raise ValueError(
            tr("progress() was given {value}: {hint}.", value=_show(folder), hint=said)
        )
    paths = []
    for item in given:
        if not isinstance(item, (str, Path)):
            raise ValueError(
                tr(
                    "progress() was given {value} in its list: {hint}.",
                    value=_show(item),
                    hint=said,
                )
            )
        path = Path(item).expanduser()
        if not path.exists():
            raise ValueError(tr("{path!r} does not exist: {hint}.", path=str(path), hint=said))
        if path.is_file() and path.suffix != ".ipynb":
            raise ValueError(
                tr("{path!r} is not a notebook (.ipynb): {hint}.", path=str(path), hint=said)
            )
        paths.append(path)
    found = submissions(paths)
    if not found:
        where = ", ".join(repr(str(p)) for p in paths)
        raise ValueError(tr("{where} holds no notebook (.ipynb): {hint}.", where=where, hint=said))
    return found


def table(rows: list[Row]) -> list[str]:
    """The printed lines: one per notebook (its chapter's questions), the sentences of those not
    passing yet under it, and the totals."""
    labels = [_label(r) for r in rows]
    states = [
        "  ".join(f"{v.question} {_SYMBOL.get(v.status, '?')}" for v in r.verdicts) for r in rows
    ]
    width = max(map(len, labels), default=0)
    states_width = max(map(len, states), default=0)
    lines = []
    for row, label, state in zip(rows, labels, states, strict=True):
        if row.status == "invalid":
            lines.append(
                f"{label:<{width}}  " + tr("could not be read: {reason}", reason=row.reason)
            )
            continue
        points = tr("{score}/{max_score} points", score=row.score, max_score=row.max_score)
        lines.append(f"{label:<{width}}  {state:<{states_width}}  {points}")
        failing: dict[str, list[str]] = {}  # sentence -> questions (e.g. all not graded)
        for v in row.verdicts:
            if v.status == "fail":
                failing.setdefault(shorten(v.message), []).append(v.question)
        lines += [f"    {', '.join(names)} ✗ {sentence}" for sentence, names in failing.items()]
        if row.status in ("error", "timeout"):
            lines.append("    " + tr("did not run to the end: {reason}", reason=row.reason))
        elif row.status != "ok":  # tampered: the points are still the grader's own comparisons
            lines.append("    " + tr("note: {reason}", reason=row.reason))
        lines += [
            "    " + tr("a cell raised an error: {error}", error=shorten(c))
            for c in row.failed_cells[:3]
        ]
    verdicts = [v for r in rows for v in r.verdicts]
    counts = {s: sum(v.status == s for v in verdicts) for s in _SYMBOL}
    total = tr(
        "total: {score}/{max_score} points; "
        "{passing} of {questions} questions pass now, {failing} not yet, "
        "{not_attempted} not attempted",
        score=sum(r.score for r in rows),
        max_score=sum(r.max_score for r in rows),
        passing=counts["pass"],
        questions=len(verdicts),
        failing=counts["fail"],
        not_attempted=counts["not attempted"],
    )
    stopped = sum(r.status in ("error", "timeout", "invalid") for r in rows)
    if stopped:
        total += tr(
            "; {stopped} of {notebooks} notebooks did not run to the end",
            stopped=stopped,
            notebooks=len(rows),
        )
    return [*lines, total]


def shorten(sentence: str, width: int = SENTENCE_WIDTH) -> str:
    """A tutor's sentence on one line: without the "(Input: ...)" it ends with, cut at a word
    (Chinese, which has no spaces to cut at, at a character)."""
    sentence = _INPUT.sub("", sentence)
    short = textwrap.shorten(sentence, width, placeholder=" ...")
    if len(" ".join(sentence.split())) > width and len(short) < width // 2:
        short = " ".join(sentence.split())[: width - 1] + "…"
    return short


def _label(row: Row) -> str:
    stem = Path(row.submission).stem
    return stem if stem.startswith(row.chapter) else f"{row.chapter} {stem}"


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib.grading.progress",
        description=_(
            "Which exercise questions pass now: grades your notebooks on their public inputs "
            "(the ones their check cells use) and prints one line per chapter."
        ),
    )
    parser.add_argument(
        "paths",
        nargs="*",
        type=Path,
        help=_("the folder of your exercise notebooks, or notebook files (default: exercises/)"),
    )
    parser.add_argument("--timeout", type=float, default=60.0, help=_("seconds per notebook"))
    args = parser.parse_args(argv)
    folder = None if not args.paths else args.paths[0] if len(args.paths) == 1 else args.paths
    if not args.timeout > 0:
        parser.error(
            tr(
                "--timeout must be a positive number of seconds, got {timeout:g}",
                timeout=args.timeout,
            )
        )
    try:
        paths = notebooks(folder, hint=_WHAT_TO_TYPE)
    except ValueError as error:
        parser.error(str(error))
    _show_progress(paths, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
