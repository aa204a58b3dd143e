"""The check machinery: running learner code safely, and verdicts that read like a tutor."""

import pytest
import torch

from posenc_lib.checks import (
    FAIL,
    NOT_ATTEMPTED,
    PASS,
    Case,
    Question,
    Verdict,
    call,
    scorecard,
    solution_code,
)


class Double(Question):
    """A toy question: return 2 * x."""

    name, function, points = "q0", "double", 2
    hints = ("Multiply by two.", "Use `2 * x`.")
    timeout = 0.5

    def cases(self, seed=0):
        return [Case((torch.tensor([1.0, 2.0]) + seed,), "x = [1, 2]")]

    def diagnose(self, case, value):
        return None if torch.equal(value, 2 * case.args[0]) else "Not twice x."


def test_call_records_what_the_function_did():
    assert call(lambda x: x + 1, (1,)).value == 2
    assert call(lambda: 1 / 0, ()).error == "ZeroDivisionError: division by zero"
    assert call(lambda: exit(3), ()).kind == "raised"  # SystemExit is caught too
    assert call(lambda: (_ for _ in ()).throw(NotImplementedError), ()).kind == NOT_ATTEMPTED


def test_a_hang_is_stopped_even_if_the_learner_catches_exceptions():
    def stubborn():
        while True:
            try:
                while True:
                    pass
            except Exception:  # cannot swallow the time limit
                pass

    outcome = call(stubborn, (), timeout=0.2)
    assert outcome.kind == "timed out"


def test_the_learner_cannot_change_the_inputs_of_later_calls():
    x = torch.zeros(3)
    call(lambda t: t.add_(1), (x,))
    assert torch.equal(x, torch.zeros(3))


@pytest.mark.parametrize(
    "fn, status, fragment",
    [
        (lambda x: 2 * x, PASS, "well done"),
        (lambda x: 3 * x, FAIL, "Not twice x"),
        (lambda x: None, FAIL, "forget the `return`"),
        (lambda x: x.foo(), FAIL, "raised AttributeError"),
        (lambda x: (_ for _ in ()).throw(NotImplementedError), NOT_ATTEMPTED, "replace the"),
        (lambda x: [0] * 10**3 if True else None, FAIL, "could not read"),
    ],
)
def test_check_gives_one_of_three_states_with_a_sentence(fn, status, fragment, capsys):
    verdict = Double().check(fn)
    assert verdict.status == status and fragment in verdict.message
    assert verdict.points == (2 if status == PASS else 0)
    shown = capsys.readouterr().out
    assert fragment in shown and "Traceback" not in shown


def test_check_explains_a_missing_or_non_callable_function(capsys):
    assert "itself" in Double().check(torch.ones(2)).message
    verdict = Double().check()  # looks for `double` in the notebook's namespace: none here
    assert verdict.status == NOT_ATTEMPTED and "no function `double`" in verdict.message


def test_a_verdict_is_shown_once_and_escapes_html(capsys):
    verdict = Verdict("q9", FAIL, "x < y & z", 0, 1)
    verdict._ipython_display_()
    verdict._ipython_display_()
    assert capsys.readouterr().out.count("q9") == 1
    assert "x &lt; y &amp; z" in verdict._repr_html_()


def test_hints_come_one_at_a_time(capsys):
    question = Double()
    question.hint()
    question.hint()
    question.hint()
    out = capsys.readouterr().out
    assert "Hint 1 of 2" in out and out.count("Hint 2 of 2") == 2


def test_scorecard_adds_up_the_points(capsys):
    verdicts = scorecard([Double(), Double()], {"double": lambda x: 2 * x})
    assert [v.status for v in verdicts] == [PASS, PASS]
    assert "total: 4/4 points" in capsys.readouterr().out and verdicts.points == 4
    verdicts = scorecard([Double()], {})
    assert verdicts[0].status == NOT_ATTEMPTED


def test_solution_code_is_read_from_the_solutions_notebook_without_markers():
    code = solution_code("01_order_blindness.ipynb", "attention")
    assert code.startswith("def attention(") and "SOLUTION" not in code
    assert solution_code("01_order_blindness.ipynb", "no_such_function") is None
    assert solution_code("99_missing.ipynb", "attention") is None
