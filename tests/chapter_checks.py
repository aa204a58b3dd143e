"""The tests every chapter's exercise checks must pass, written once.

Each ``tests/test_chNN_checks.py`` keeps what is its own (the known-wrong answers, the chapter's
special cases) and takes these from here:

    globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=10))

- the worked solutions pass on the public inputs and on hidden seeds 1-5;
- the exercise stubs are "not attempted", for no points;
- every known-wrong answer fails, with the sentence that names its mistake, and never a traceback
  or a tensor's repr (which would show the expected values);
- every question has at least three known-wrong answers, and the points add up;
- broken functions (None, raising, NaN, any object, an endless iterator, a hang) get a sentence.
"""

import pytest

from posenc_lib.checks import FAIL, NOT_ATTEMPTED, PASS


def _hang(*args):
    while True:
        pass


BROKEN = {
    "none": (lambda *a: None, "returned None"),
    "raises": (lambda *a: 1 / 0, "raised ZeroDivisionError"),
    "nan": (lambda *a: float("nan"), ""),
    "object": (lambda *a: object(), ""),
    "endless": (lambda *a: iter(range(10**9)), ""),
    "hangs": (_hang, "did not finish within"),
}


def standard_tests(questions, solutions, stubs, wrong, points) -> dict:
    """The shared test functions for one chapter, by name, for the test module's globals.

    solutions, stubs: function name -> the worked solution / the exercise stub.
    wrong: question name -> [(known-wrong function, fragment its sentence must contain), ...].
    points: the chapter's total.
    """
    by_name = {q.name: q for q in questions}
    each_question = pytest.mark.parametrize("question", questions, ids=lambda q: q.name)

    @each_question
    def test_the_worked_solutions_pass_on_public_and_hidden_inputs(question):
        fn = solutions[question.function]
        for seed in range(6):
            cases = question.cases(seed)
            verdict = question.judge(cases, question.run(fn, cases))
            assert verdict.status == PASS, (seed, verdict.message)

    @each_question
    def test_the_exercise_stubs_are_not_attempted(question, capsys):
        verdict = question.check(stubs[question.function])
        assert verdict.status == NOT_ATTEMPTED and verdict.points == 0

    @pytest.mark.parametrize(
        "name, index", [(name, i) for name, fns in wrong.items() for i in range(len(fns))]
    )
    def test_known_wrong_answers_fail_with_a_sentence_that_names_the_mistake(name, index, capsys):
        question, (fn, fragment) = by_name[name], wrong[name][index]
        verdict = question.check(fn)
        assert verdict.status == FAIL and verdict.points == 0
        assert fragment in verdict.message, verdict.message
        assert "Traceback" not in verdict.message and "tensor(" not in verdict.message

    def test_every_question_has_at_least_three_known_wrong_answers():
        assert set(wrong) == set(by_name)
        assert all(len(fns) >= 3 for fns in wrong.values())
        assert sum(q.points for q in questions) == points

    @each_question
    @pytest.mark.parametrize("fn, fragment", list(BROKEN.values()), ids=list(BROKEN))
    def test_broken_functions_get_a_tutor_sentence(question, fn, fragment, monkeypatch, capsys):
        monkeypatch.setattr(question, "timeout", 0.2)
        verdict = question.check(fn)
        assert verdict.status == FAIL and fragment in verdict.message and verdict.message
        assert "Traceback" not in capsys.readouterr().out

    return {name: value for name, value in locals().items() if name.startswith("test_")}
