"""Every chapter's concept questions (``posenc_lib.checks.chNN.CONCEPTS``), and the two kinds.

For every question of every chapter that has them: the right answer passes (and the forgiven
spellings of it); every wrong option fails with its own ``why``; every named mistake fails naming
it; None is "not attempted"; the near misses of the type asked for (two letters, a list of all the
options, a str subclass whose ``__eq__`` says yes to everything, a number for a letter, a string
for a number, NaN, inf, True) fail with a sentence that gives nothing away; and the definition is
sound (one right option among 3 to 5, mistakes outside the accepted band, a numeric answer computed
by a function that calls something). Then the definitions an author can get wrong, each refused
with a sentence.
"""

import importlib
import math
import sys

import pytest

from posenc_lib.checks import FAIL, NOT_ATTEMPTED, PASS, scorecard
from posenc_lib.checks.concepts import (
    MAX_TEXT,
    Choice,
    Mistake,
    MultipleChoice,
    Numeric,
    format_number,
    markup_html,
)


def _graded(module):
    """The concept questions a chapter's exercises grade: ``EXERCISE_CONCEPTS`` where the lecture's
    quiz (``CONCEPTS``) asks other questions (chapter 5), else ``CONCEPTS``."""
    return tuple(getattr(module, "EXERCISE_CONCEPTS", getattr(module, "CONCEPTS", ())))


def _chapter_concepts():
    """(chapter, question) for every graded concept question, then ("NN-quiz", question) for a
    lecture quiz's questions that the exercises do not ask: both kinds are held to the same rules."""
    found = []
    for number in range(1, 9):
        module = importlib.import_module(f"posenc_lib.checks.ch{number:02d}")
        graded = _graded(module)
        found += [(f"{number:02d}", q) for q in graded]
        found += [
            (f"{number:02d}-quiz", q) for q in getattr(module, "CONCEPTS", ()) if q not in graded
        ]
    return found


ALL = _chapter_concepts()
CHAPTERS = sorted({c for c, _ in ALL if not c.endswith("-quiz")})  # chapters with graded ones
IDS = [f"ch{chapter}-{q.name}" for chapter, q in ALL]
CHOICES = [q for _, q in ALL if isinstance(q, MultipleChoice)]
NUMERICS = [q for _, q in ALL if isinstance(q, Numeric)]
each = pytest.mark.parametrize("question", [q for _, q in ALL], ids=IDS)


class AlwaysEqual(str):
    """A str that says it equals anything: a learner's attempt to pass every letter question."""

    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


class AlwaysEqualFloat(float):
    def __eq__(self, other):
        return True

    __hash__ = float.__hash__


def _right(question):
    return question.answer if isinstance(question, MultipleChoice) else question.value


def test_chapter_one_has_its_four_and_every_chapter_at_most_five():
    assert [q.name for c, q in ALL if c == "01"] == ["c1", "c2", "c3", "c4"]
    for chapter in {c for c, _ in ALL}:
        names = [q.name for c, q in ALL if c == chapter]
        assert 3 <= len(names) <= 5 and names == [f"c{i}" for i in range(1, len(names) + 1)]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_concepts_are_graded_with_the_chapter(chapter):
    module = importlib.import_module(f"posenc_lib.checks.ch{chapter}")
    concepts = _graded(module)
    assert module.QUESTIONS[-len(concepts) :] == tuple(concepts)
    for q in concepts:
        assert getattr(module, q.name) is q and q.name in module.__all__
        assert q.function == f"answer_{q.name}" and q.points == 1


@each
def test_the_right_answer_passes(question, capsys):
    verdict = question.check(_right(question))
    assert verdict.status == PASS and verdict.points == 1, verdict.message


@pytest.mark.parametrize("question", CHOICES, ids=lambda q: q.name)
def test_a_letter_is_read_forgivingly(question):
    key = question.answer
    for spelling in (key.upper(), f" {key} ", f"({key})", f"{key})", f"( {key.upper()} )"):
        assert question.evaluate(spelling).status == PASS, spelling


@pytest.mark.parametrize("question", NUMERICS, ids=lambda q: q.name)
def test_a_number_within_the_tolerance_passes_and_just_outside_fails(question):
    value, tol = question.value, question.rel_tol
    assert question.evaluate(float(value)).status == PASS
    if question.decimals is not None:  # "to one decimal": the precision asked for sets the band
        step = 10.0**-question.decimals
        assert question.evaluate(round(value, question.decimals)).status == PASS
        for off in (-step, step):
            assert question.evaluate(round(value + off, question.decimals)).status == FAIL
        return
    assert question.evaluate(value * (1 + 0.9 * tol)).status == PASS
    if value != 0:
        assert question.evaluate(value * (1 + 1.1 * tol)).status == FAIL


def test_a_prompt_that_asks_for_a_precision_is_graded_at_that_precision(capsys):
    from posenc_lib.checks.ch05 import CONCEPTS  # the lecture quiz's c3, "Answer to one decimal"

    c3 = CONCEPTS[2]  # ln(10) / (1/4) = 9.21...

    assert c3.decimals == 1
    for right in (9.2, 9.21, 9.2103):
        assert c3.evaluate(right).status == PASS, right
    for wrong in (9, 9.0, 9.1, 9.3):
        verdict = c3.evaluate(wrong)
        assert verdict.status == FAIL, wrong
    assert "precision the question asks for (1 decimal places)" in c3.evaluate(9).message
    # an author who asks for a precision must say which (and only then)
    with pytest.raises(ValueError, match="needs decimals="):
        _numeric(prompt="How many? Answer to one decimal.")
    with pytest.raises(ValueError, match="needs decimals="):
        _numeric(decimals=1)
    assert _numeric(prompt="How many, to the nearest whole number?", decimals=0).abs_tol < 0.51


@pytest.mark.parametrize("question", NUMERICS, ids=lambda q: q.name)
def test_a_numpy_number_is_a_number(question, capsys):
    import numpy as np

    value = question.value
    assert question.check(np.float64(value)).status == PASS
    if float(value).is_integer():
        assert question.check(np.int64(int(value))).status == PASS
    wrong = value * 7.3 if value else 7.3
    assert question.check(np.float64(wrong)).status == FAIL


def test_numpy_floats_are_read_in_a_notebook_and_by_the_grader_alike(capsys):
    import numpy as np

    from posenc_lib.checks.ch05 import CONCEPTS
    from posenc_lib.grading.sandbox import encode_answer

    c3 = CONCEPTS[2]  # the lecture quiz's window of head 2 of 8, ln(10) / 0.25

    answer = np.log(10) / 0.25  # np.float64, what a learner computing with NumPy gets
    assert c3.check(answer).status == PASS
    assert type(encode_answer(answer)) is float and encode_answer(answer) == float(answer)
    assert type(encode_answer(np.int64(3))) is int and type(encode_answer(np.float32(2.5))) is float

    class Rigged(np.float64):  # a subclass could define anything: read as an object, by name
        pass

    assert encode_answer(Rigged(9.21)) == {"__object__": "Rigged"}
    assert "not a number" in c3.evaluate(Rigged(9.21)).message


def _wrong_sentences(question):
    """Every sentence a wrong answer to ``question`` can get (its options' or mistakes' whys)."""
    if isinstance(question, MultipleChoice):
        return [
            question.evaluate(c.key).message for c in question.choices if c.key != question.answer
        ]
    sentences = [question.evaluate(m.value).message for m in question.mistakes]
    wrong = question.value * 7.3 if question.value else 7.3
    return [*sentences, question.evaluate(wrong).message]


@each
def test_no_wrong_answer_is_told_the_answer(question):
    from posenc_lib.checks.diagnosis import leaked

    assert question.answer_keys  # the value (numeric) or the right option's text, and more
    for sentence in _wrong_sentences(question):
        assert not leaked(sentence, question.answer_keys), sentence


WRONG_CHOICES = [(q, c) for q in CHOICES for c in q.choices if c.key != q.answer]


@pytest.mark.parametrize(
    "question, choice", WRONG_CHOICES, ids=[f"{q.name}-{c.key}" for q, c in WRONG_CHOICES]
)
def test_every_wrong_choice_fails_with_its_own_why(question, choice, capsys):
    verdict = question.check(choice.key)
    assert verdict.status == FAIL and verdict.points == 0
    assert choice.why in verdict.message, verdict.message
    assert question.right.why not in verdict.message


MISTAKES = [(q, m) for q in NUMERICS for m in q.mistakes]


@pytest.mark.parametrize(
    "question, mistake", MISTAKES, ids=[f"{q.name}-{m.value:g}" for q, m in MISTAKES]
)
def test_every_named_mistake_fails_naming_it(question, mistake, capsys):
    for got in (mistake.value, mistake.value * (1 + question.rel_tol / 2)):
        verdict = question.check(got)
        assert verdict.status == FAIL and verdict.points == 0
        assert mistake.why in verdict.message, verdict.message
        assert question.why not in verdict.message


@pytest.mark.parametrize("question", NUMERICS, ids=lambda q: q.name)
def test_another_wrong_number_fails_without_giving_the_answer(question):
    value = question.value
    for factor in (7.3, -3.1, 0.137, 41.0):
        got = value * factor if value else factor
        if not any(question.near(got, m.value) for m in question.mistakes):
            break
    verdict = question.evaluate(got)
    assert verdict.status == FAIL and verdict.message.startswith("That is not the number")
    assert question.shown_value not in verdict.message and question.why not in verdict.message
    assert question.section in verdict.message


@each
def test_none_is_not_attempted_and_a_missing_variable_says_so(question, capsys, monkeypatch):
    verdict = question.check(None)
    assert verdict.status == NOT_ATTEMPTED and verdict.points == 0
    assert f"set {question.function} to" in verdict.message
    main = sys.modules["__main__"]
    monkeypatch.delattr(main, question.function, raising=False)
    verdict = question.check()  # no argument: read from the notebook, where it is missing
    assert verdict.status == NOT_ATTEMPTED and f"no variable `{question.function}`" in (
        verdict.message
    )
    monkeypatch.setattr(main, question.function, _right(question), raising=False)
    assert question.check().status == PASS


def _near_misses(question):
    """name -> a value one step away from an answer of the right type."""
    if isinstance(question, MultipleChoice):
        keys = [c.key for c in question.choices]
        other = next(k for k in keys if k != question.answer)
        return {
            "two letters": question.answer + other,
            "two letters with a comma": f"{other}, {question.answer}",
            "a list of all choices": keys,
            "a tuple of the right letter": (question.answer,),
            "a str subclass equal to anything": AlwaysEqual(question.answer),
            "a number": keys.index(question.answer) + 1,
            "a float": 2.0,
            "True": True,
            "an empty string": "",
            "a letter that is no option": "z",
            "the option's text": question.right.text,
            "a long text": question.answer * (MAX_TEXT + 5),
        }
    value = question.value
    return {
        "a string": str(value),
        "a string that is no number": "about a hundred",
        "NaN": math.nan,
        "inf": math.inf,
        "-inf": -math.inf,
        "True": True,
        "a list of the number": [value],
        "a float subclass equal to anything": AlwaysEqualFloat(value),
        "an int too large for a float": 10**400,
        "a complex number": complex(value, 0),
    }


NEAR_MISSES = [(q, name) for _, q in ALL for name in _near_misses(q)]


@pytest.mark.parametrize(
    "question, miss", NEAR_MISSES, ids=[f"{q.name}-{name}" for q, name in NEAR_MISSES]
)
def test_a_near_miss_of_the_type_fails_with_a_sentence(question, miss, capsys):
    verdict = question.check(_near_misses(question)[miss])
    assert verdict.status == FAIL and verdict.points == 0, (miss, verdict.message)
    assert verdict.message and "Traceback" not in verdict.message
    assert "could not read" not in verdict.message  # a sentence of its own, not the fallback
    right_why = question.right.why if isinstance(question, MultipleChoice) else question.why
    assert right_why not in verdict.message
    if isinstance(question, MultipleChoice):
        assert "the options are" in verdict.message or question.function in verdict.message


@pytest.mark.parametrize("question", CHOICES, ids=lambda q: q.name)
def test_a_multiple_choice_definition_is_sound(question):
    keys = [c.key for c in question.choices]
    assert 3 <= len(keys) <= 5 and keys == list("abcde")[: len(keys)]
    assert [c for c in question.choices if c.key == question.answer] == [question.right]
    assert len({c.why for c in question.choices}) == len(keys)  # each option its own feedback
    assert question.prompt and question.section and "$" not in question.prompt


@pytest.mark.parametrize("question", NUMERICS, ids=lambda q: q.name)
def test_a_numeric_definition_is_sound(question):
    assert callable(question.answer) and question.answer() == question.value
    # Computed, not typed in: the function calls something (the library or math).
    assert question.answer.__code__.co_names, "answer must compute the value"
    assert math.isfinite(question.value) and 0 < question.rel_tol <= 0.5
    assert not question.near(question.value, question.value * (1 + 2 * question.rel_tol))
    for m in question.mistakes:
        assert not question.near(m.value, question.value)
        assert not question.near(question.value, m.value)


@each
def test_ask_hint_and_solution_show_what_they_should(question, capsys):
    question.ask()
    asked = capsys.readouterr().out
    assert question.prompt in asked and question.function in asked
    right_why = question.right.why if isinstance(question, MultipleChoice) else question.why
    assert right_why not in asked
    from posenc_lib.checks.diagnosis import leaked

    question.hint()
    hint = capsys.readouterr().out
    assert (question.nudge or question.section) in hint  # its own nudge, or where to re-read
    assert not leaked(hint.split(": hint: ", 1)[1], question.answer_keys), hint
    question.hint()  # asked again: no repeat, a pointer to the solution
    again = capsys.readouterr().out
    assert "only hint" in again and f"{question.name}.solution()" in again
    question.solution()
    shown = capsys.readouterr().out
    assert right_why in shown
    if isinstance(question, Numeric):
        assert question.shown_value in shown
    else:
        assert f"({question.answer})" in shown


def test_the_scorecard_counts_concept_questions(capsys):
    from posenc_lib.checks.ch01 import QUESTIONS, c1, c2

    namespace = {"answer_c1": c1.answer, "answer_c2": "z"}
    card = scorecard(QUESTIONS, namespace)
    by_name = {v.question: v for v in card}
    assert by_name["c1"].status == PASS and by_name["c2"].status == FAIL
    assert by_name["c3"].status == NOT_ATTEMPTED and "no variable `answer_c3`" in (
        by_name["c3"].message
    )
    assert card.points == 1 and card.max_points == sum(q.points for q in QUESTIONS)
    assert c2.points == 1


# -- what an author can get wrong -------------------------------------------------------------------


def _choices(n=4):
    return tuple(Choice("abcdef"[i], f"option {i}", why=f"because {i}.") for i in range(n))


def _mc(**change):
    arguments = dict(prompt="Which?", choices=_choices(), answer="b", section="section 1")
    return MultipleChoice("c1", **{**arguments, **change})


def _numeric(**change):
    arguments = dict(
        prompt="How many?",
        answer=lambda: math.factorial(4),
        rel_tol=0.05,
        why="4! = 24.",
        mistakes=(Mistake(6, "3! counts 3 words."),),
        section="section 1",
    )
    return Numeric("c2", **{**arguments, **change})


BAD_DEFINITIONS = {
    "two choices": (lambda: _mc(choices=_choices(2)), "3 to 5 choices"),
    "six choices": (lambda: _mc(choices=_choices(6)), "3 to 5 choices"),
    "an answer that is no key": (lambda: _mc(answer="e"), "answer must be the key"),
    "two right answers": (lambda: _mc(answer=("a", "b")), "answer must be the key"),
    "a repeated key": (
        lambda: _mc(choices=(*_choices(3), Choice("c", "other", why="x."))),
        "keys must be",
    ),
    "an upper-case key": (
        lambda: _mc(choices=(Choice("A", "x", why="x."), *_choices(3)[1:])),
        "keys must be",
    ),
    "two options with the same text": (
        lambda: _mc(choices=(*_choices(2), Choice("c", "Option  0", why="x."))),
        "same text",
    ),
    "an empty why": (
        lambda: _mc(choices=(*_choices(2), Choice("c", "x", why=" "))),
        "why must be a non-empty",
    ),
    "math in a prompt": (lambda: _mc(prompt="Is $x$ small?"), "no $math$"),
    "a why too long to show": (
        lambda: _mc(choices=(*_choices(2), Choice("c", "x", why="w" * 400))),
        "keep it to",
    ),
    "a bad name": (lambda: MultipleChoice("q1", "Which?", _choices(), "b", "s"), '"c1", "c2"'),
    "a typed-in answer": (lambda: _numeric(answer=24.0), "zero-argument function"),
    "an answer that is NaN": (lambda: _numeric(answer=lambda: math.nan), "finite int or float"),
    "a mistake inside the band": (
        lambda: _numeric(mistakes=(Mistake(24.5, "close."),)),
        "within rel_tol of the answer",
    ),
    "two mistakes too close to name": (
        lambda: _numeric(mistakes=(Mistake(6, "a."), Mistake(6.2, "b."))),
        "within rel_tol of each other",
    ),
    "a tolerance of zero": (lambda: _numeric(rel_tol=0.0), "rel_tol must be"),
    "an integer tolerance": (lambda: _numeric(rel_tol=1), "rel_tol must be"),
}


@pytest.mark.parametrize("name", list(BAD_DEFINITIONS))
def test_a_faulty_definition_is_refused_with_a_sentence(name):
    build, fragment = BAD_DEFINITIONS[name]
    with pytest.raises(ValueError, match="concept question") as error:
        build()
    assert fragment in str(error.value), str(error.value)


def test_a_sound_definition_is_accepted_and_judged():
    q = _numeric()
    assert q.value == 24 and q.working == "math.factorial(4)"
    assert q.evaluate(24).status == PASS and "3! counts" in q.evaluate(6).message
    assert _mc().evaluate("b").status == PASS


@pytest.mark.parametrize(
    "value, shown",
    [(62831.85, "62800"), (0.0314159, "0.0314"), (1.5, "1.50"), (999.6, "1000"), (120, "120"),
     (123456789.0, "1.23e8"), (0.0001234, "1.23e-4"), (-2.345, "-2.35"), (0.0, "0")],
)  # fmt: skip
def test_numbers_are_shown_to_three_significant_digits(value, shown):
    assert format_number(value) == shown


def test_code_spans_become_html_code_and_text_is_escaped():
    assert markup_html("use `x < y` & more") == "use <code>x &lt; y</code> &amp; more"


@pytest.mark.parametrize("chapter", [f"{n:02d}" for n in range(1, 9)])
def test_the_exercises_readme_counts_every_question_and_point(chapter):
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[2] / "exercises" / "README.md").read_text("utf-8")
    module = importlib.import_module(f"posenc_lib.checks.ch{chapter}")
    (row,) = [line for line in readme.splitlines() if line.startswith(f"| `{chapter}_")]
    assert row.endswith(f"| {sum(q.points for q in module.QUESTIONS)} |"), row
    concepts = _graded(module)
    assert (f"{len(concepts)} concept questions" in row) == bool(concepts), row


# -- the notebooks: solutions answer right, exercises leave the answer to the learner ---------------


def test_the_authoring_tool_blanks_every_answer_line_and_keeps_its_comment():
    from tools.authoring import blank_answers

    source = (
        'c1.ask()\nanswer_c1 = "b"  # one letter: "a", "b", "c" or "d"\n'
        "answer_c12=6.28 # a number\n  answer_c2 = (120)\nanswer_c3 == 1\nmy_answer_c1 = 2\n"
        "answer_c4 = None  # already blank"
    )
    assert blank_answers(source).splitlines() == [
        "c1.ask()",
        'answer_c1 = None  # one letter: "a", "b", "c" or "d"',
        "answer_c12=None # a number",
        "  answer_c2 = None",
        "answer_c3 == 1",
        "my_answer_c1 = 2",
        "answer_c4 = None  # already blank",
    ]


def _answer_lines(path):
    """question name -> (the value its answer line sets, the line), from a notebook's code cells."""
    import ast
    import json

    found = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        for line in "".join(cell["source"]).splitlines():
            if line.startswith("answer_c"):
                (node,) = ast.parse(line).body
                found[node.targets[0].id.removeprefix("answer_")] = (
                    ast.literal_eval(node.value),
                    line,
                )
    return found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_solutions_answer_every_concept_question_right_and_exercises_leave_it_blank(chapter):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    (solutions,) = root.glob(f"solutions/{chapter}_*.ipynb")
    module = importlib.import_module(f"posenc_lib.checks.ch{chapter}")
    answers = _answer_lines(solutions)
    assert sorted(answers) == sorted(q.name for q in _graded(module))
    for q in _graded(module):
        assert q.evaluate(answers[q.name][0]).status == PASS, answers[q.name][1]
    blanks = _answer_lines(root / "exercises" / solutions.name)
    assert sorted(blanks) == sorted(answers)
    for name, (value, line) in blanks.items():
        assert value is None and line.split("#")[1:] == answers[name][1].split("#")[1:], line


@pytest.mark.parametrize(
    "question", NUMERICS, ids=[f"ch{c}-{q.name}" for c, q in ALL if isinstance(q, Numeric)]
)
def test_a_named_mistake_never_gives_the_answer_away(question):
    # A learner who types a known wrong number reads its ``why``: it names the mistake, and must not
    # hand over the right number (as the answer's 3 digits, or 2π when the answer is 2π).
    from posenc_lib.checks.quiz import three_digits

    shown = three_digits(question.value)
    for mistake in question.mistakes:
        assert shown not in mistake.why, mistake.why
        if math.isclose(question.value, 2 * math.pi, rel_tol=1e-9):
            assert "2π" not in mistake.why, mistake.why
