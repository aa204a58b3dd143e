"""The class report: a synthetic class of chapter 1 submissions, graded for real; the report's
top named mistake per question is the one planted most often, hidden-input failures are counted,
and the submissions that could not be graded are listed with why."""

import html
import re

import nbformat
import pytest
from attack_notebooks import FULL, SEED, UNSCALED_ATTENTION, solutions_with

from posenc_lib.checks import Verdict
from posenc_lib.grading.cli import main
from posenc_lib.grading.grader import grade_all
from posenc_lib.grading.report import (
    class_report,
    mistake_sentence,
    to_html,
    to_markdown,
    write_report,
)
from posenc_lib.grading.sheet import Row

OVER_D_K = """
def attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / w_k.shape[1], dim=-1) @ v
"""
# Right on the notebook's own (public) inputs, unscaled everywhere else: the check in the
# notebook says "correct", the grader's hidden inputs do not.
PUBLIC_ONLY = """
def attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scale = w_k.shape[1] ** 0.5 if tuple(x.shape) in [(4, 6), (3, 5), (9, 2)] else 1.0
    return torch.softmax(q @ k.T / scale, dim=-1) @ v
"""
CLASS = {  # name -> notebook text
    "ada": solutions_with(),
    "ben": solutions_with(replace=("attention", UNSCALED_ATTENTION)),
    "cai": solutions_with(replace=("attention", UNSCALED_ATTENTION)),
    "dan": solutions_with(replace=("attention", UNSCALED_ATTENTION)),
    "eve": solutions_with(replace=("attention", OVER_D_K)),
    "fay": solutions_with(replace=("attention", PUBLIC_ONLY)),
    "gus": nbformat.writes(nbformat.v4.new_notebook()),  # no chapter: cannot be graded
}
UNSCALED = (
    "the scores go into the softmax unscaled: re-read the scale in the question's formula "
    "(section 2 of the lecture)."
)


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class")
    paths = []
    for name, text in CLASS.items():
        path = folder / f"{name}.ipynb"
        path.write_text(text, encoding="utf-8")
        paths.append((path, name))
    return grade_all(paths, SEED, timeout=20.0, workers=2, memory_mb=512)


def test_the_top_named_mistake_is_the_one_planted_most_often(rows):
    report = class_report(rows)
    (chapter,) = report.chapters
    q1 = chapter.questions[0]
    assert (chapter.chapter, q1.question, q1.graded, q1.passed) == ("01", "q1", 6, 1)
    # three planted, and the public-only answer fails the same way on the hidden inputs
    assert q1.mistakes[0][1] == 4 and UNSCALED in q1.mistakes[0][0]
    assert q1.mistakes[1][1] == 1 and "divide the scores by d_k" in q1.mistakes[1][0]
    assert q1.hidden_only == 1  # fay: the notebook's check said correct
    assert "(Input:" not in q1.mistakes[0][0]  # the sentence, not one learner's input
    assert all(q.passed == 6 for q in chapter.questions[1:])  # the other questions: solved
    assert sorted(chapter.scores) == [FULL - 3] * 5 + [FULL]  # q1 (3 points) lost by five
    assert [name for name, *_ in report.not_graded] == ["gus"]
    assert "metadata.posenc.chapter" in report.not_graded[0][2]


def test_the_markdown_and_html_say_the_same(rows, tmp_path):
    text = to_markdown(class_report(rows))
    assert "# Class report: 7 submissions" in text
    assert "1 of 6 passed (17%), 0 not attempted" in text
    assert f"- 4 × Close, but {UNSCALED}" in text
    assert "- 1 passed the notebook's own check but failed on hidden inputs." in text
    assert re.search(r"- gus: invalid: .*metadata\.posenc\.chapter", text)
    write_report(rows, tmp_path / "class.html")
    page = (tmp_path / "class.html").read_text(encoding="utf-8")
    assert page.count('src="data:image/png;base64,') == 1 and "http" not in page
    shown = html.escape(f"Close, but {UNSCALED}")  # the page escapes the sentence's apostrophe
    assert f'<td class="count">4</td><td>{shown}</td>' in page
    assert "<b>1</b> passed the notebook's own check but failed on hidden inputs" in page
    with pytest.raises(ValueError, match=r"ending in \.html .* or \.md"):
        write_report(rows, tmp_path / "class.pdf")


def test_the_feedback_file_marks_a_hidden_input_failure(rows):
    fay = next(r for r in rows if r.submission == "fay")
    assert fay.hidden_only == ["q1"]
    question = fay.feedback()["questions"][0]
    assert question["failed_on_hidden_inputs_only"] is True and question["status"] == "fail"
    ben = next(r for r in rows if r.submission == "ben")
    assert ben.hidden_only == []  # wrong on the public inputs too


def test_the_command_refuses_a_report_it_cannot_write(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main([str(tmp_path), "--report", str(tmp_path / "class.pdf")])
    assert "--report needs a name ending in .html or .md, not class.pdf" in capsys.readouterr().err


def test_the_command_writes_both_reports(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ada.ipynb").write_text(CLASS["ada"], encoding="utf-8")
    (folder / "ben.ipynb").write_text(CLASS["ben"], encoding="utf-8")
    html_path, md_path = tmp_path / "class.html", tmp_path / "class.md"
    code = main([str(folder), "--seed", str(SEED), "--out", str(tmp_path / "g.csv"),
                 "--report", str(html_path), "--report", str(md_path), "--timeout", "20"])  # fmt: skip
    assert code == 0 and html_path.exists() and md_path.exists()
    assert "1 of 2 passed (50%)" in md_path.read_text(encoding="utf-8")


def test_an_input_suffix_is_stripped_and_only_that():
    assert mistake_sentence("Close, but no. (Input: x (4, 6).)") == "Close, but no."
    assert mistake_sentence("well done.") == "well done."


def test_a_report_of_nothing_gets_a_sentence():
    with pytest.raises(ValueError, match="no graded submissions"):
        class_report([])


def test_every_status_that_did_not_run_is_listed_not_scored():
    rows = [
        Row("a", "01", "ok", 12, 12, [Verdict("q1", "pass", "well done.", 3, 3)]),
        Row("b", "01", "timeout", 0, 12, reason="the notebook did not finish within 20 s"),
        Row("c", "01", "error", 0, 12, reason="a cell raised"),
        Row(
            "d",
            "01",
            "tampered",
            12,
            12,
            [Verdict("q1", "pass", "well done.", 3, 3)],
            reason="the notebook replaced torch.allclose",
        ),  # fmt: skip
    ]
    report = class_report(rows)
    assert [n for n, *_ in report.not_graded] == ["b", "c"]
    assert report.tampered == [("d", "the notebook replaced torch.allclose")]
    assert report.chapters[0].scores == [12, 12]
    assert "the notebook replaced torch.allclose" in to_html(report)


def test_only_the_public_only_answer_is_flagged(rows):
    flagged = {r.submission: r.hidden_only for r in rows if r.hidden_only}
    assert flagged == {"fay": ["q1"]}
