"""The check machinery: running learner code safely, and verdicts that read like a tutor."""

import itertools
import signal
import time

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
    assert call(_stub, ()).kind == NOT_ATTEMPTED


def _stub(*args):
    raise NotImplementedError("Replace this line with your code.")


def test_only_the_stub_itself_is_not_attempted():
    class Layer:
        def forward(self):  # a typo'd subclass method: torch's base raises NotImplementedError
            raise NotImplementedError

    outcome = call(lambda: Layer().forward(), ())
    assert outcome.kind == "raised" and outcome.error.startswith("NotImplementedError")


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
        (_stub, NOT_ATTEMPTED, "replace the"),
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


def test_a_swallowed_interrupt_is_followed_by_another():
    def swallows_once():
        try:
            while True:
                pass
        except BaseException:  # the beginner's "make the error go away"
            pass
        while True:
            pass

    started = time.monotonic()
    assert call(swallows_once, (), timeout=0.2).kind == "timed out"
    assert time.monotonic() - started < 3


def test_an_outer_timer_survives_a_check():
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        call(lambda: 1, (), timeout=1.0)
        assert 25 < signal.getitimer(signal.ITIMER_REAL)[0] <= 30
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def test_strange_returns_and_errors_become_sentences():
    class Liar(torch.Tensor):  # a tensor subclass that would answer "equal" to anything
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return (
                True
                if func is torch.allclose
                else super().__torch_function__(func, types, args, kwargs or {})
            )

    verdict = Double().check(lambda x: torch.zeros(2).as_subclass(Liar))
    assert verdict.status == FAIL  # judged as a plain tensor: the lie never runs

    class Unprintable(Exception):
        def __str__(self):
            raise ValueError

    def raises_unprintable(x):
        raise Unprintable

    assert "raised Unprintable" in Double().check(raises_unprintable).message
    assert Double().check(lambda x: itertools.count()).status == FAIL  # endless, read at most 1e5
    assert (
        len(Double().check(lambda x: (_ for _ in ()).throw(ValueError("x" * 10**5))).message) <= 400
    )


def test_the_learners_torch_defaults_do_not_leak_into_later_checks():
    call(lambda: torch.set_default_dtype(torch.float16), ())
    assert torch.get_default_dtype() == torch.float32


def test_checking_leaves_no_default_device_mode_behind():
    """Restoring the default device must not install torch's device mode: every later torch call
    would then pass through it in Python. A learner's own change of device is undone too."""
    from torch.overrides import _get_current_function_mode_stack as modes

    assert modes() == []
    call(lambda: 1, ())
    assert modes() == []
    call(lambda: torch.set_default_device("meta"), ())
    assert torch.get_default_device() == torch.device("cpu") and modes() == []


def test_the_alarm_handler_is_given_back():
    before = signal.getsignal(signal.SIGALRM)
    call(lambda: 1, (), timeout=1.0)
    assert signal.getsignal(signal.SIGALRM) is before


class Wordy(Question):
    """A question whose sentence is far too long, and which has three inputs."""

    name, function = "qw", "f"

    def cases(self, seed=0):
        return [Case((i,), f"x = {i}") for i in range(3)]

    def diagnose(self, case, value):
        return "y" * 1000


def test_long_sentences_are_cut_and_a_failing_call_ends_the_run(capsys):
    assert len(Wordy().check(lambda x: 1).message) <= 400
    calls = []

    def fails(x):
        calls.append(x)
        raise ValueError

    Wordy().run(fails, Wordy().cases())
    assert calls == [0]
