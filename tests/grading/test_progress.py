"""A learner's progress (``posenc_lib.grading.progress``): their notebooks graded on the public
inputs only, printed one line per chapter. Chapters 1 and 5 only, to keep the file fast."""

import shutil
import subprocess
import sys

import nbformat
import pytest
import torch
from attack_notebooks import ROOT, UNSCALED_ATTENTION, solutions_with

from posenc_lib.checks import ch01, ch05
from posenc_lib.grading import progress as module
from posenc_lib.grading.progress import find_exercises, main, progress, shorten

CHAPTERS = ("01_order_blindness.ipynb", "05_alibi.ipynb")
# Each chapter's questions (its coding questions, then its concept questions) and points.
N1, N5 = len(ch01.QUESTIONS), len(ch05.QUESTIONS)
FULL1, FULL5 = sum(q.points for q in ch01.QUESTIONS), sum(q.points for q in ch05.QUESTIONS)


def _marks(module, *marks) -> str:
    """ "q1 ✓  q2 ✓ ..." for a chapter's questions, the marks given in order (the last repeated)."""
    marks = list(marks) + [marks[-1]] * (len(module.QUESTIONS) - len(marks))
    return "  ".join(f"{q.name} {m}" for q, m in zip(module.QUESTIONS, marks, strict=True))


WIDTH = max(len(_marks(ch01, "✓")), len(_marks(ch05, "✓")))  # the table pads the marks to this
SOLVED = [
    f"01_order_blindness  {_marks(ch01, '✓'):<{WIDTH}}  {FULL1}/{FULL1} points",
    f"05_alibi            {_marks(ch05, '✓'):<{WIDTH}}  {FULL5}/{FULL5} points",
    f"total: {FULL1 + FULL5}/{FULL1 + FULL5} points; {N1 + N5} of {N1 + N5} questions pass now, "
    "0 not yet, 0 not attempted",
]


def _course(tmp_path, source="exercises"):
    """A course folder (exercises/ beside notebooks/) holding chapters 1 and 5 from ``source``."""
    (tmp_path / "notebooks").mkdir(parents=True)
    (tmp_path / "exercises").mkdir()
    for name in CHAPTERS:
        shutil.copy(ROOT / source / name, tmp_path / "exercises" / name)
    return tmp_path / "exercises"


def test_solved_notebooks_all_pass_and_print_the_table(capsys):
    rows = progress([ROOT / "solutions" / name for name in CHAPTERS])
    assert [r.chapter for r in rows] == ["01", "05"]
    assert all(v.status == "pass" for r in rows for v in r.verdicts)
    assert capsys.readouterr().out.splitlines() == SOLVED
    assert str(rows).splitlines() == SOLVED  # the same table, as the returned value's text
    assert repr(rows) == f"<Progress: {FULL1 + FULL5}/{FULL1 + FULL5} points in 2 notebooks>"


def test_untouched_exercises_are_not_attempted(tmp_path, capsys):
    rows = progress(_course(tmp_path))  # a folder
    assert [r.status for r in rows] == ["ok", "ok"]
    assert all(v.status == "not attempted" for r in rows for v in r.verdicts)
    assert capsys.readouterr().out.splitlines() == [
        f"01_order_blindness  {_marks(ch01, '○'):<{WIDTH}}  0/{FULL1} points",
        f"05_alibi            {_marks(ch05, '○'):<{WIDTH}}  0/{FULL5} points",
        f"total: 0/{FULL1 + FULL5} points; 0 of {N1 + N5} questions pass now, 0 not yet, "
        f"{N1 + N5} not attempted",
    ]


def test_one_wrong_function_fails_its_question_only_with_the_checks_sentence(tmp_path, capsys):
    notebook = tmp_path / "my_chapter_1.ipynb"  # renamed: the chapter comes from the metadata
    notebook.write_text(solutions_with(replace=("attention", UNSCALED_ATTENTION)), "utf-8")
    (row,) = progress(notebook)
    assert [v.status for v in row.verdicts] == ["fail"] + ["pass"] * (N1 - 1)
    # The sentence the notebook's own check cell shows (the public inputs, in this process).
    namespace = {"torch": torch}
    exec(UNSCALED_ATTENTION, namespace)  # noqa: S102 - the test's own wrong answer
    shown = ch01.q1.evaluate(namespace["attention"]).message
    assert "the scores go into the softmax unscaled" in shown and row.verdicts[0].message == shown
    assert capsys.readouterr().out.splitlines() == [
        f"01 my_chapter_1  {_marks(ch01, '✗', '✓')}  {FULL1 - 3}/{FULL1} points",
        "    q1 ✗ Close, but the scores go into the softmax unscaled: re-read the scale in the "
        "question's formula ...",  # shortened to the report's width
        f"total: {FULL1 - 3}/{FULL1} points; {N1 - 1} of {N1} questions pass now, 1 not yet, "
        "0 not attempted",
    ]


def test_a_notebook_that_does_not_run_gets_its_reason(tmp_path, capsys):
    (tmp_path / "01_exits.ipynb").write_text(solutions_with(last="import os\nos._exit(3)"), "utf-8")
    (tmp_path / "notes.ipynb").write_text("not json", encoding="utf-8")
    alibi = nbformat.read(ROOT / "exercises" / CHAPTERS[1], as_version=4)
    alibi.cells.append(nbformat.v4.new_code_cell("1 / 0"))
    nbformat.write(alibi, tmp_path / CHAPTERS[1])
    last = sum(c.cell_type == "code" for c in alibi.cells)  # the grader counts code cells
    rows = progress(tmp_path, timeout=20.0)
    assert [r.status for r in rows] == ["error", "ok", "invalid"]
    lines = capsys.readouterr().out.splitlines()
    # It exits after its cells, before its functions are called: no question is graded.
    assert lines[:2] == [
        f"01_exits  {_marks(ch01, '✗'):<{WIDTH}}  0/{FULL1} points",
        f"    {', '.join(q.name for q in ch01.QUESTIONS)} ✗ not graded: the notebook stopped first.",
    ]
    assert lines[2].startswith("    did not run to the end: the notebook ended the grading")
    assert lines[3:] == [
        f"05_alibi  {_marks(ch05, '○'):<{WIDTH}}  0/{FULL5} points",
        f"    a cell raised an error: cell {last}: ZeroDivisionError: division by zero",
        "notes     could not be read: the file is not a notebook: it is not valid JSON",
        f"total: 0/{FULL1 + FULL5} points; 0 of {N1 + N5} questions pass now, {N1} not yet, "
        f"{N5} not attempted; 2 of 3 notebooks did not run to the end",
    ]


def test_a_progress_cell_in_a_graded_notebook_grades_nothing_again(tmp_path, capsys):
    # The grader runs every cell but the checks: progress() there must not grade the notebooks
    # again inside their own grading (it returns at once, and the cell does not fail).
    cell = "import posenc_lib.grading.progress as p\nassert p.progress() == []"
    (tmp_path / "01_asks.ipynb").write_text(solutions_with(last=cell), encoding="utf-8")
    (row,) = progress(tmp_path)
    assert (row.status, row.score, row.failed_cells) == ("ok", FULL1, [])
    assert capsys.readouterr().out.splitlines()[0].endswith(f"{FULL1}/{FULL1} points")


def test_the_sentence_is_shortened_to_one_line():
    long = "the scores are off " * 20 + "(Input: x of shape (5, 6), seed 0.)"
    short = shorten(long)
    assert len(short) <= 100 and short.endswith(" ...") and "Input" not in short
    assert shorten("well said. (Input: n_heads=8.)") == "well said."


@pytest.mark.parametrize(
    ("given", "sentence"),
    [
        ("nowhere-at-all", "'nowhere-at-all' does not exist: pass the folder of your exercise"),
        ([], r"progress\(\) was given \[\]: pass the folder"),
        (42, r"progress\(\) was given 42: pass the folder"),
        ([3], r"progress\(\) was given 3 in its list"),
        ("README.md", r"'README.md' is not a notebook \(\.ipynb\): pass the folder"),
    ],
)
def test_bad_input_says_what_to_pass(given, sentence, monkeypatch):
    monkeypatch.chdir(ROOT)
    with pytest.raises(ValueError, match=sentence):
        progress(given)


def test_a_folder_without_notebooks_says_what_to_pass(tmp_path):
    (tmp_path / "README.md").write_text("no notebook here", encoding="utf-8")
    with pytest.raises(ValueError, match=r"holds no notebook \(\.ipynb\): pass the folder of your"):
        progress(tmp_path)
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        progress(tmp_path, timeout=0)


def test_the_exercises_folder_is_found_from_the_working_folder_up(tmp_path, monkeypatch):
    exercises = _course(tmp_path / "course")
    assert find_exercises(exercises) == exercises.resolve()  # a notebook runs in exercises/
    assert find_exercises(tmp_path / "course") == exercises.resolve()
    assert find_exercises(tmp_path) == ROOT / "exercises"  # the course holding the library
    monkeypatch.setattr(module, "__file__", str(tmp_path / "site" / "posenc_lib" / "grading" / "x"))
    with pytest.raises(ValueError, match="found no course folder .* pass the folder of your"):
        find_exercises(tmp_path)


def test_the_command_prints_the_same_table(capsys):
    assert main([str(ROOT / "solutions" / name) for name in CHAPTERS]) == 0
    assert capsys.readouterr().out.splitlines() == SOLVED
    with pytest.raises(SystemExit):
        main(["nowhere-at-all"])
    assert "'nowhere-at-all' does not exist: give the folder" in capsys.readouterr().err


def test_python_m_finds_the_exercises_from_the_working_folder(tmp_path):
    exercises = _course(tmp_path, source="solutions")
    done = subprocess.run(
        [sys.executable, "-m", "posenc_lib.grading.progress"],
        capture_output=True, text=True, timeout=120, cwd=exercises,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == SOLVED
