"""Concept questions through the real grader: chapter 1's solutions notebook with its answer cells
(``answer_c1 = "b"``...) changed, one notebook per kind of wrong answer, each covering all four
concept questions, graded in one batch.

Right answers earn their points; every known-wrong answer (each wrong option, each named mistake,
the near misses of the type) fails in the grader with the very sentence the notebook's own check
gives; an object with a rigged ``__eq__`` fails; replacing the concept checks in the notebook is
reported as tampering and changes no grade; and the class report ranks the wrong option planted
most often first, while the sheet, the LMS export and progress list the concept questions.
"""

import csv
import io
import math

import nbformat
import pytest
from attack_notebooks import SEED, SOLUTIONS

from posenc_lib.checks import FAIL, NOT_ATTEMPTED, PASS
from posenc_lib.checks.ch01 import EXERCISE_CONCEPTS as CONCEPTS
from posenc_lib.checks.ch01 import QUESTIONS
from posenc_lib.checks.concepts import MultipleChoice
from posenc_lib.grading.grader import grade_all
from posenc_lib.grading.lms import lms_sheet
from posenc_lib.grading.progress import table
from posenc_lib.grading.report import class_report, mistake_sentence
from posenc_lib.grading.sheet import write_sheet

RIGGED = '''
class Agreeable(str):
    """Equal to every letter."""
    def __eq__(self, other):
        return True
    __hash__ = str.__hash__
'''


class Agreeable(str):  # the same class, for the sentence the notebook's own check gives
    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


def _wrong(question, index):
    """The index-th known-wrong answer of a question (wrong options, or named mistakes), cycling."""
    if isinstance(question, MultipleChoice):
        wrong = [c.key for c in question.choices if c.key != question.answer]
        return repr(wrong[index % len(wrong)])
    return repr(question.mistakes[index % len(question.mistakes)].value)


def _most_wrong():
    return max(
        len(q.choices) - 1 if isinstance(q, MultipleChoice) else len(q.mistakes) for q in CONCEPTS
    )


def _type_miss(question, kind):
    """Source of a near miss of the type asked for."""
    letter = isinstance(question, MultipleChoice)
    return {
        "list": '["a", "b", "c", "d"]' if letter else f"[{question.value!r}]",
        "rigged": f'Agreeable("{question.answer}")' if letter else "float('nan')",
        "number or string": "2" if letter else repr(str(question.value)),
        "bool or inf": "True" if letter else "float('inf')",
        "two letters": '"ab"' if letter else "10 ** 400",
    }[kind]


TYPE_MISSES = ("list", "rigged", "number or string", "bool or inf", "two letters")
WRONG_ROUNDS = range(_most_wrong())
# The wrong answers planted most often: round 0's (round 0, its copies and the tampered notebook).
PLANTED_COPIES = 2


def _notebook(answers: dict, first: str = "") -> str:
    """The solutions notebook with these answer lines (name -> source of the value); a name set to
    "DELETE" loses its answer cell; ``first`` is a cell put after the imports."""
    notebook = nbformat.read(SOLUTIONS, as_version=4)
    cells = []
    for cell in notebook.cells:
        name = next((n for n in answers if cell.source.startswith(f"answer_{n} =")), None)
        if name is not None:
            if answers[name] == "DELETE":
                continue
            cell.source = f"answer_{name} = {answers[name]}"
        cells.append(cell)
    notebook.cells = cells
    if first:
        start = next(i for i, c in enumerate(cells) if c.cell_type == "code")
        cells.insert(start + 1, nbformat.v4.new_code_cell(first))
    return nbformat.writes(notebook)


def _submissions():
    """name -> (notebook text, {question name: the value the learner set, as source})."""
    subs = {"right": ({}, "")}
    for index in WRONG_ROUNDS:
        subs[f"wrong-{index}"] = ({q.name: _wrong(q, index) for q in CONCEPTS}, "")
    for copy in range(PLANTED_COPIES):
        subs[f"wrong-0-again-{copy}"] = ({q.name: _wrong(q, 0) for q in CONCEPTS}, "")
    for kind in TYPE_MISSES:
        subs[f"type-{kind}"] = ({q.name: _type_miss(q, kind) for q in CONCEPTS}, RIGGED)
    subs["none-and-missing"] = ({"c1": "None", "c2": "DELETE", "c3": "None", "c4": "DELETE"}, "")
    tamper = (
        "from posenc_lib.checks import concepts\n"
        "concepts.MultipleChoice.read = lambda self, value: ('pass', 'well done.')\n"
        "concepts.Numeric.read = lambda self, value: ('pass', 'well done.')\n"
    )
    subs["tampered"] = ({q.name: _wrong(q, 0) for q in CONCEPTS}, tamper)
    return subs


SUBMISSIONS = _submissions()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("concepts")
    paths = []
    for name, (answers, first) in SUBMISSIONS.items():
        path = folder / f"{name}.ipynb"
        path.write_text(_notebook(answers, first), encoding="utf-8")
        paths.append((path, name))
    rows = grade_all(paths, SEED, timeout=20.0, workers=2, memory_mb=512)
    return dict(zip(SUBMISSIONS, rows, strict=True)), folder


def _verdicts(row):
    return {v.question: v for v in row.verdicts}


def _expected(question, source):
    """The verdict the notebook's own check gives for the value ``source`` evaluates to."""
    value = eval(source, {"Agreeable": Agreeable, "math": math})  # noqa: S307 - the test's own
    return question.evaluate(value)


def test_right_answers_earn_every_point(graded):
    rows, _ = graded
    row = rows["right"]
    assert row.status == "ok" and row.score == row.max_score == sum(q.points for q in QUESTIONS)
    assert all(_verdicts(row)[q.name].status == PASS for q in CONCEPTS)


@pytest.mark.parametrize(
    "name", [n for n in SUBMISSIONS if n.startswith(("wrong", "type"))], ids=str
)
def test_each_wrong_answer_fails_with_the_checks_own_sentence(graded, name):
    rows, _ = graded
    row = rows[name]
    assert row.status == "ok", row.reason
    answers, _ = SUBMISSIONS[name]
    coding = sum(q.points for q in QUESTIONS if q not in CONCEPTS)
    assert row.score == coding  # every coding question right, every concept question wrong
    for q in CONCEPTS:
        got, want = _verdicts(row)[q.name], _expected(q, answers[q.name])
        assert got.status == FAIL and got.points == 0, (q.name, got.message)
        assert got.message == want.message, (q.name, answers[q.name])


def test_an_object_with_a_rigged_eq_fails_and_is_named(graded):
    rows, _ = graded
    for q in CONCEPTS:
        if isinstance(q, MultipleChoice):
            message = _verdicts(rows["type-rigged"])[q.name].message
            assert "is an Agreeable, not a letter" in message, message


def test_none_is_not_attempted_and_a_deleted_answer_is_missing(graded):
    rows, _ = graded
    verdicts = _verdicts(rows["none-and-missing"])
    assert {n: verdicts[n].status for n in ("c1", "c2", "c3", "c4")} == dict.fromkeys(
        ("c1", "c2", "c3", "c4"), NOT_ATTEMPTED
    )
    assert 'answer_c1 = "b"' in verdicts["c1"].message
    assert "no variable `answer_c2`" in verdicts["c2"].message


def test_replacing_the_concept_checks_is_tampering_and_earns_nothing(graded):
    rows, _ = graded
    row = rows["tampered"]
    assert row.status == "tampered" and "MultipleChoice.read" in row.reason, row.reason
    assert all(_verdicts(row)[q.name].status == FAIL for q in CONCEPTS)


def test_the_report_ranks_the_planted_wrong_answer_first(graded):
    rows, _ = graded
    (chapter,) = class_report(list(rows.values())).chapters
    by_name = {q.question: q for q in chapter.questions}
    for q in CONCEPTS:
        summary = by_name[q.name]
        planted = mistake_sentence(_expected(q, _wrong(q, 0)).message)
        times = sum(answers.get(q.name) == _wrong(q, 0) for answers, _ in SUBMISSIONS.values())
        assert times >= 1 + PLANTED_COPIES
        assert summary.mistakes[0] == (planted, times), summary.mistakes[:2]
        assert summary.mistakes[1][1] < summary.mistakes[0][1]
        assert summary.passed == 1 and summary.hint and summary.title


def test_the_sheet_lms_and_progress_include_the_concept_questions(graded):
    rows, folder = graded
    write_sheet(list(rows.values()), folder / "grades.csv")
    with open(folder / "grades.csv", encoding="utf-8") as handle:
        header = next(csv.reader(handle))
    assert header[5:] == [q.name for q in QUESTIONS]  # q1..q5, then c1..c4
    canvas = list(csv.DictReader(io.StringIO(lms_sheet([rows["right"]], "canvas"))))
    assert canvas[0]["Chapter 01 exercises (posenc)"] == str(sum(q.points for q in QUESTIONS))
    lines = table([rows["right"], rows["wrong-1"]])
    assert all(f"{q.name} ✓" in lines[0] for q in QUESTIONS)
    assert any(line.strip().startswith("c1 ✗") for line in lines[2:])


def test_answers_are_read_before_any_function_runs(tmp_path):
    # A function that ends the process loses the questions still to come, never the concept
    # answers; a function that changes an answer when called changes nothing.
    source = "import os\ndef unchanged_rows(T, i, j):\n    os._exit(0)"
    text = _notebook({}, "")
    notebook = nbformat.reads(text, as_version=4)
    cell = next(c for c in notebook.cells if "def unchanged_rows(" in c.source)
    cell.source = source
    other = next(c for c in notebook.cells if "def permutation_matrix(" in c.source)
    other.source = other.source.replace(
        "def permutation_matrix(order):",
        "def permutation_matrix(order):\n    global answer_c1\n    answer_c1 = 'z'",
    )
    path = tmp_path / "exits.ipynb"
    path.write_text(nbformat.writes(notebook), encoding="utf-8")
    (row,) = grade_all([path], SEED, timeout=20.0, workers=1, memory_mb=512)
    verdicts = _verdicts(row)
    assert row.status == "error" and verdicts["q5"].points == 0
    assert all(verdicts[q.name].status == PASS for q in CONCEPTS)
