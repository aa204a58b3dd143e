"""The classroom quiz in ``make demo``: each chapter with concept questions gets a quiz notebook
beside its dashboard (listed on the demo's index page), ``--quiz`` serves it, and a chapter
without one gets a sentence naming those with one. (The quiz in Voila, clicked in a browser:
tests/browser/test_quiz_in_browser.py.)"""

import json

import nbformat
import pytest

import tools.demo as demo
from posenc_lib.checks.quiz import chapter_concepts
from tools.demo import (
    chapters,
    quiz_chapters,
    quiz_notebook,
    quiz_path,
    quiz_title,
    write_demos,
    write_quizzes,
)

WITH_QUIZ = [key for key in chapters() if chapter_concepts(key)]


def test_the_chapters_with_a_quiz_are_those_with_concept_questions():
    assert quiz_chapters() == WITH_QUIZ
    assert "start" not in WITH_QUIZ
    if not WITH_QUIZ:
        pytest.skip("no chapter has concept questions yet")


@pytest.mark.parametrize("key", WITH_QUIZ)
def test_a_quiz_notebook_holds_its_chapters_questions_in_projector_type(key):
    notebook = nbformat.from_dict(quiz_notebook(key))
    nbformat.validate(notebook)
    code = [c.source for c in notebook.cells]
    assert [c.cell_type for c in notebook.cells] == ["code", "code"]
    assert f"from posenc_lib.checks.ch{key} import CONCEPTS" in code[0]
    assert json.dumps(f"<h1>{quiz_title(key)}</h1>")[1:-1] in code[0]  # the page's heading
    assert "%matplotlib" not in code[0]
    assert code[1] == "quiz(CONCEPTS, projector=True)"
    assert (
        notebook.metadata.title
        == quiz_title(key)
        == f"Chapter {int(key)} · Check your understanding"
    )
    # What Voila's kernel will show: this chapter's questions, each option's feedback inside.
    namespace = {}
    exec(code[0].split("display(")[0], namespace)  # the imports, without displaying anything
    shown = eval(code[1], namespace).html()
    assert "font-size: 28px" in shown
    for q in chapter_concepts(key):
        assert f"({q.name})" in shown
    assert shown.count("<details") == sum(
        len(getattr(q, "choices", "x")) for q in chapter_concepts(key)
    )


@pytest.mark.parametrize("typed", ["start", "3"])
def test_a_chapter_without_a_quiz_gets_a_sentence_naming_those_with_one(typed, monkeypatch):
    monkeypatch.setattr(demo, "chapter_concepts", lambda key: ("q",) if key == "02" else ())
    where = "start page" if typed == "start" else "chapter 03"
    with pytest.raises(SystemExit, match=rf"The {where} has no concept questions.*: 02 .*--quiz"):
        quiz_notebook(typed)


def test_the_demo_folder_lists_each_quiz_beside_its_dashboard_the_same_on_every_run(tmp_path):
    (tmp_path / "a").mkdir()
    stale = tmp_path / "a" / "ch42_quiz.ipynb"  # a chapter that lost its questions
    stale.write_text("{}")
    dashboards = write_demos(tmp_path / "a")
    write_demos(tmp_path / "b")
    names = sorted(p.name for p in (tmp_path / "a").iterdir())
    assert not stale.exists()
    assert names == sorted(
        [p.name for p in dashboards.values()] + [f"ch{k}_quiz.ipynb" for k in WITH_QUIZ] + ["zh"]
    )
    # the Chinese edition's list: the same notebooks, in zh/
    chinese = sorted(p.name for p in (tmp_path / "a" / "zh").iterdir())
    assert chinese == [n for n in names if n != "zh"]
    for key in WITH_QUIZ:  # chNN_quiz sorts beside chNN_<dashboard> in the index's list
        quiz = quiz_path(key, tmp_path / "a")
        assert dashboards[key].name.startswith(f"ch{key}_") and quiz.is_file()
        assert json.loads(quiz.read_text()) == quiz_notebook(key)
        assert quiz.read_bytes() == quiz_path(key, tmp_path / "b").read_bytes()
    assert write_quizzes(tmp_path / "c") == {k: quiz_path(k, tmp_path / "c") for k in WITH_QUIZ}


def test_dash_dash_quiz_serves_the_chapters_quiz_and_the_index_names_the_quizzes(
    tmp_path, monkeypatch, capsys
):
    served = []
    monkeypatch.setattr(demo, "DEMO_DIR", tmp_path)
    monkeypatch.setattr(demo.subprocess, "run", lambda command, check: served.append(command))
    demo.main([])  # the index: every chapter, and which have a quiz
    printed = capsys.readouterr().out
    assert "make demo CHAPTER=03 DEMO_ARGS=--quiz" in printed
    for key in chapters():
        line = next(row for row in printed.splitlines() if row.strip().startswith(f"{key} "))
        assert line.endswith("(and its quiz)") == (key in WITH_QUIZ), line
    assert served[-1][1] == str(tmp_path)
    if not WITH_QUIZ:
        pytest.skip("no chapter has concept questions yet")
    key = WITH_QUIZ[0]
    demo.main([str(int(key)), "--quiz", "--no-browser"])
    assert served[-1][1] == str(quiz_path(key, tmp_path))
    assert "--Voila.open_browser=False" in served[-1]
    demo.main([key, "--no-browser"])  # without --quiz: the dashboard, as before
    assert served[-1][1] == str(write_demos(tmp_path)[key])


def test_chinese_demo_pages_speak_chinese(tmp_path):
    """The zh/ list's pages set the library's language and have Chinese titles; code is alike."""
    write_demos(tmp_path)
    key = WITH_QUIZ[0]
    english = json.loads(quiz_path(key, tmp_path).read_text())
    chinese = json.loads(quiz_path(key, tmp_path / "zh").read_text())
    assert 'posenc_lib.set_language("zh")' in "".join(chinese["cells"][0]["source"]).replace(
        "'", '"'
    )
    assert "set_language" not in "".join(english["cells"][0]["source"])
    assert any("\u4e00" <= c <= "\u9fff" for c in chinese["metadata"]["title"])
    assert english["cells"][1]["source"] == chinese["cells"][1]["source"]
