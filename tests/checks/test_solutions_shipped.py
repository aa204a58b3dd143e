"""The package ships the worked solutions' code (``posenc_lib/checks/worked.py``), so that
``q1.solution()`` shows it from a notebook copied anywhere: the copy must match the solutions
notebooks, and hold every coding question's function."""

import importlib
from pathlib import Path

import pytest

from posenc_lib.checks.concepts import Concept
from posenc_lib.checks.solutions import collect, module_text, solution_code
from posenc_lib.checks.worked import WORKED
from posenc_lib.grading.submissions import chapters

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [
    q
    for module in chapters().values()
    for q in importlib.import_module(module).QUESTIONS
    if not isinstance(q, Concept)
]


def test_the_shipped_copy_matches_the_solutions_notebooks():
    fix = "run `python -m posenc_lib.checks.ship_solutions solutions`"
    assert collect(ROOT / "solutions") == WORKED, fix
    shipped = (ROOT / "posenc_lib" / "checks" / "worked.py").read_text(encoding="utf-8")
    assert module_text(WORKED) == shipped, fix


@pytest.mark.parametrize("question", QUESTIONS, ids=lambda q: f"{q.notebook[:2]}-{q.name}")
def test_every_coding_question_has_its_worked_code_shipped(question):
    code = WORKED[question.notebook][question.function]
    assert code.startswith(f"def {question.function}(") and "SOLUTION" not in code


@pytest.mark.parametrize("question", QUESTIONS[:1] + QUESTIONS[-1:], ids=lambda q: q.notebook[:2])
def test_solution_shows_the_worked_code_from_a_folder_outside_the_course(
    question, tmp_path, monkeypatch, capsys
):
    outside = tmp_path / "my copy of the notebook"
    outside.mkdir()
    monkeypatch.chdir(outside)  # no solutions/ near it, and not inside the repository
    assert not any(p.exists() for p in (outside.parent / "solutions", outside / "solutions"))
    question.solution()
    out = capsys.readouterr().out
    assert f"def {question.function}(" in out and "in the course repository" not in out
    assert solution_code(question.notebook, question.function) in out


def test_a_folder_without_solutions_is_refused_before_anything_is_written(tmp_path, capsys):
    from posenc_lib.checks import ship_solutions, solutions

    before = solutions.SHIPPED.read_bytes()
    assert ship_solutions.main([str(tmp_path)]) == 2
    assert "holds no solutions notebooks" in capsys.readouterr().out
    assert solutions.SHIPPED.read_bytes() == before
    with pytest.raises(SystemExit):  # --help prints usage; it is not a folder
        ship_solutions.main(["--help"])
    assert solutions.SHIPPED.read_bytes() == before
