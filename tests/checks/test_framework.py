"""The check machinery: running learner code safely, and verdicts that read like a tutor."""

import itertools
import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import torch

import posenc_lib
from posenc_lib import alibi
from posenc_lib.checks import (
    FAIL,
    FLOAT,
    FLOATS,
    INDEX_LIST,
    INT,
    INT_TENSOR,
    NOT_ATTEMPTED,
    PASS,
    TENSOR,
    Case,
    Question,
    Verdict,
    as_index_list,
    as_int,
    as_number,
    as_tensor,
    call,
    guard,
    references,
    run,
    scorecard,
    solution_code,
    type_problem,
)
from posenc_lib.checks.run import (
    CHANGED_INPUT,
    KINDS,
    RETURNED,
    SHORTCUT,
    TIMED_OUT,
    TOO_SLOW,
    Collected,
    Outcome,
    resolve,
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
    assert outcome.kind == TOO_SLOW


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
    # The third call repeats nothing: it says the hints are used up and where the solution is.
    assert "Hint 1 of 2" in out and out.count("Hint 2 of 2") == 1
    assert "that was the last hint (2 of 2)" in out and f"{question.name}.solution()" in out
    question.hint(1)
    assert "Hint 1 of 2" in capsys.readouterr().out


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


def test_the_solution_is_found_from_the_learners_folder_never_above_the_package(
    tmp_path, monkeypatch, capsys
):
    import json
    from pathlib import Path

    from posenc_lib.checks import solutions
    from posenc_lib.checks.ch01 import q1

    assert "parents[" not in Path(solutions.__file__).read_text()  # reads nothing above itself
    name, course = "01_order_blindness.ipynb", tmp_path / "course"
    for folder in ("exercises", "solutions"):
        (course / folder).mkdir(parents=True)
    worked = [
        "def attention(x):\n",
        "    ### BEGIN SOLUTION\n",
        "    return x\n",
        "    ### END SOLUTION\n",
    ]
    stub = "def attention(x):\n    raise NotImplementedError"
    for folder, source in (("solutions", worked), ("exercises", stub)):
        cells = {"cells": [{"cell_type": "code", "source": source}]}
        (course / folder / name).write_text(json.dumps(cells))
    # from exercises/ (../solutions), the course folder (solutions/), solutions/ itself
    for folder in (course / "exercises", course, course / "solutions"):
        monkeypatch.chdir(folder)
        assert solution_code(name, "attention") == "def attention(x):\n    return x"
    q1.solution()
    assert "Worked solution (from solutions/01_order_blindness.ipynb):" in capsys.readouterr().out
    # without the solutions folder: the exercise's stub is no solution; the package's own copy of
    # the worked code is shown (a notebook copied anywhere still gets it)
    (course / "solutions" / name).unlink()
    monkeypatch.chdir(course / "exercises")
    shipped = solution_code(name, "attention")
    assert shipped.startswith("def attention(") and "raise NotImplementedError" not in shipped
    q1.solution()
    assert shipped in capsys.readouterr().out
    # a notebook and a function the package does not know: the tutor says where to look
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
    assert call(swallows_once, (), timeout=0.2).kind == TOO_SLOW
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


# -- the type policy ------------------------------------------------------------------------------


def _collected(items, source):
    value = Collected(items)
    value.source = source
    return value


RIGHT_TYPES = [
    (FLOAT, 0.5),
    (FLOAT, 3),  # an int is a number too
    (INT, 3),
    (TENSOR, torch.zeros(2)),
    (TENSOR, torch.zeros(2, dtype=torch.float64)),
    (INT_TENSOR, torch.zeros(2, dtype=torch.long)),
    (INT_TENSOR, torch.zeros(2, dtype=torch.int32)),
    (INDEX_LIST, []),
    (INDEX_LIST, [0, 2, 5]),
    (FLOATS, [0.5, 0.25]),
    (FLOATS, torch.tensor([0.5, 0.25])),
    ((TENSOR, FLOAT), (torch.zeros(2), 1.0)),
]

NEAR_MISSES = [
    (FLOAT, torch.tensor(0.5), "a 0-d tensor", "float(x)"),
    (FLOAT, torch.tensor([0.5]), "a one-element tensor", "x.item()"),
    (FLOAT, np.float64(0.5), "a NumPy scalar (numpy.float64)", "float(x)"),
    (FLOAT, np.float32(0.5), "a NumPy scalar (numpy.float32)", "float(x)"),
    (FLOAT, np.array(0.5), "a one-element NumPy array", "float(x)"),
    (FLOAT, [0.5], "a list of one number", "x[0]"),
    (INT, 3.0, "a float (3.0)", "int(x)"),
    (INT, torch.tensor(3), "a 0-d tensor", "int(x)"),
    (INT, np.int64(3), "a NumPy scalar (numpy.int64)", "int(x)"),
    (TENSOR, np.zeros(3), "a NumPy array", "torch.from_numpy(x)"),
    (TENSOR, [0.0, 1.0], "a list", "torch.tensor"),
    (TENSOR, [torch.zeros(2), torch.ones(2)], "a list", "torch.stack"),
    (TENSOR, torch.zeros(2, dtype=torch.long), "a tensor of integers (torch.int64)", "x.float()"),
    (TENSOR, torch.zeros(2, dtype=torch.bool), "a tensor of booleans (torch.bool)", "x.float()"),
    (INT_TENSOR, torch.zeros(2), "a tensor of floats (torch.float32)", "x.long()"),
    (INT_TENSOR, np.zeros(2, dtype=np.int64), "a NumPy array", "torch.from_numpy(x)"),
    (INDEX_LIST, torch.tensor([0, 2]), "a tensor", "x.tolist()"),
    (INDEX_LIST, np.array([0, 2]), "a NumPy array", "x.tolist()"),
    (INDEX_LIST, (0, 2), "a tuple", "list(x)"),
    (INDEX_LIST, _collected([0, 2], "set"), "a set", "sorted(x)"),
    (INDEX_LIST, _collected([0, 2], "generator"), "a generator", "list(x)"),
    (INDEX_LIST, [2, 0], "not in increasing order", "sorted(x)"),
    (INDEX_LIST, [0, 2, 2], "holds 2 more than once", "sorted(set(x))"),
    (INDEX_LIST, [np.int64(0), np.int64(2)], "a list of NumPy integers", "int(i)"),
    (INDEX_LIST, [torch.tensor(0), torch.tensor(2)], "a list of tensors", "int(i)"),
    (FLOATS, np.array([0.5, 0.25]), "a NumPy array", "x.tolist()"),
    (FLOATS, [torch.tensor(0.5), torch.tensor(0.25)], "a list of tensors", "float(v)"),
    (FLOATS, torch.tensor([1, 2]), "a tensor of integers", "x.float()"),
    ((TENSOR, FLOAT), [torch.zeros(2), 1.0], "a list", "a tuple"),
    ((TENSOR, FLOAT), (np.zeros(2), 1.0), "Item 1 of the tuple", "torch.from_numpy(x)"),
    ((TENSOR, FLOAT), (torch.zeros(2), torch.tensor(1.0)), "Item 2 of the tuple", "float(x)"),
]


@pytest.mark.parametrize("returns, value", RIGHT_TYPES)
def test_the_type_asked_for_passes_the_policy(returns, value):
    assert type_problem(value, returns, "f") is None


@pytest.mark.parametrize("returns, value, what, fix", NEAR_MISSES)
def test_a_near_miss_gets_one_sentence_naming_the_conversion(returns, value, what, fix):
    sentence = type_problem(value, returns, "f")
    assert sentence is not None and what in sentence and fix in sentence, sentence
    assert "the question asks for" in sentence and "tensor(" not in sentence


@pytest.mark.parametrize(
    "returns, value",
    [(FLOAT, torch.zeros(3)), (FLOAT, "0.5"), (TENSOR, 0.5), (INDEX_LIST, [True, False])],
)
def test_what_is_not_one_conversion_away_is_left_to_diagnose(returns, value):
    assert type_problem(value, returns, "f") is None


def test_the_judging_helpers_use_the_same_words():
    assert "the question asks for a torch tensor" in as_tensor(np.zeros(2), "The output")[1]
    assert "the question asks for a Python float" in as_number(torch.tensor(1.0), "The gap")[1]
    assert "the question asks for a Python int" in as_int(np.int64(3), "The offset")[1]
    assert "increasing order" in as_index_list([3, 1], "Your answer")[1]
    assert as_index_list([1, 3], "Your answer") == ([1, 3], None)
    assert "mask" in as_index_list([True, False], "Your answer")[1]
    assert "not one number" in as_index_list(3, "Your answer")[1]


class Rows(Question):
    """A toy question asking for a list of ints."""

    name, function, returns = "qr", "rows", INDEX_LIST

    def cases(self, seed=0):
        return [Case((4,), "T = 4")]

    def diagnose(self, case, value):
        return None if value == [1, 3] else "Not rows 1 and 3."


def test_a_check_fails_a_near_miss_before_judging_it(capsys):
    assert Rows().check(lambda n: [1, 3]).status == PASS
    verdict = Rows().check(lambda n: {3, 1})
    assert verdict.status == FAIL and "returned a set" in verdict.message
    assert "(Input: T = 4.)" in verdict.message
    assert "a tensor" in Rows().check(lambda n: torch.tensor([1, 3])).message
    assert "a generator" in Rows().check(lambda n: (r for r in (1, 3))).message


# -- side effects ----------------------------------------------------------------------------------


def test_an_answer_that_changes_an_argument_in_place_is_caught_and_named():
    def scaled(x, factor):
        x *= factor  # the classic: an in-place operation on the caller's tensor
        return x

    outcome = call(scaled, (torch.ones(3), 2.0))
    assert (outcome.kind, outcome.error) == (CHANGED_INPUT, "`x`")
    outcome = call(lambda order, n: order.sort(), ([2, 0, 1], 3))
    assert (outcome.kind, outcome.error) == (CHANGED_INPUT, "`order`")
    outcome = call(lambda *args: args[1].append(0), (1, [1]))
    assert (outcome.kind, outcome.error) == (CHANGED_INPUT, "argument 2")
    outcome = call(lambda pair: pair[0].add_(1), ((torch.zeros(2), 1),))  # nested
    assert outcome.kind == CHANGED_INPUT
    assert call(lambda x: x.half(), (torch.ones(2),)).kind == RETURNED  # a new tensor


def test_inputs_left_alone_are_not_reported_even_with_nan_and_inf():
    x = torch.tensor([float("nan"), float("-inf"), 1.0])
    assert call(lambda x, f: x + 1, (x, lambda: 1)).kind == RETURNED
    assert call(lambda d: dict(d), ({"a": [1, np.zeros(2)]},)).kind == RETURNED


def test_the_changed_argument_is_named_in_the_verdict(capsys):
    verdict = Double().check(lambda x: x.mul_(2))
    assert verdict.status == FAIL and "changed its argument `x` in place" in verdict.message
    assert "x = x.clone()" in verdict.message


# -- shortcuts -------------------------------------------------------------------------------------


class Slopes(Question):
    """A toy question whose library reference is alibi.alibi_slopes."""

    name, function, returns = "qs", "slopes", FLOATS
    references = ("posenc_lib.alibi.alibi_slopes",)

    def cases(self, seed=0):
        return [Case((4,), "num_heads = 4")]

    def diagnose(self, case, value):
        return None


def test_the_reference_is_switched_off_however_the_answer_reaches_it(capsys):
    from posenc_lib import alibi_slopes as imported_early  # as a notebook does, before the check

    namespace = {"alibi_slopes": imported_early}
    exec("def from_notebook(n):\n    return alibi_slopes(n).tolist()", namespace)

    def closure(found):
        return lambda n: found(n).tolist()

    def swallowed(n):  # catching the error changes nothing: the call is recorded
        try:
            return alibi.alibi_slopes(n).tolist()
        except Exception:
            return [0.25, 0.0625, 0.015625, 0.00390625]

    for answer in (
        lambda n: posenc_lib.alibi_slopes(n).tolist(),
        lambda n: alibi.alibi_slopes(n).tolist(),
        namespace["from_notebook"],
        closure(imported_early),
        swallowed,
    ):
        verdict = Slopes().check(answer)
        assert verdict.status == FAIL, verdict.message
        assert verdict.message.startswith("this exercise asks you to write `slopes` yourself")
        assert "`posenc_lib.alibi.alibi_slopes` is switched off" in verdict.message
    assert Slopes().check(lambda n: [2.0 ** (-2 * h) for h in range(1, 5)]).status == PASS
    assert torch.equal(alibi.alibi_slopes(2), torch.tensor([1 / 16, 1 / 256]))  # back on


def test_the_reference_is_back_after_a_timeout_and_an_error():
    (ref,) = resolve(["posenc_lib.alibi.alibi_slopes"])

    def slow(n):
        while True:
            pass

    assert call(slow, (4,), 0.2, (ref,)).kind == TOO_SLOW
    assert call(lambda n: 1 / 0, (4,), 1.0, (ref,)).kind == "raised"
    assert call(lambda n: alibi.alibi_slopes(n), (4,), 1.0, (ref,)).kind == SHORTCUT
    assert alibi.alibi_slopes.__code__ is ref.code and alibi.alibi_slopes(1).item() == 2**-8
    assert references.HOOK not in vars(alibi)


def test_a_reference_must_name_a_library_function():
    with pytest.raises(ValueError, match="plain Python function"):
        resolve(["posenc_lib.ROPE_SCALING"])
    with pytest.raises(ValueError):
        resolve(["nowhere.at_all"])


# -- time limits -----------------------------------------------------------------------------------


def test_the_cpu_limit_does_not_count_imports(tmp_path, monkeypatch):
    (tmp_path / "slow_to_import.py").write_text(
        "import time\nstart = time.thread_time()\n"
        "while time.thread_time() - start < 0.6:\n    pass\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    def imports_then_adds(x):
        import slow_to_import  # noqa: F401 - 0.6 s of CPU, three times the limit

        return x + 1

    outcome = call(imports_then_adds, (1,), timeout=0.2)
    assert (outcome.kind, outcome.value) == (RETURNED, 2)


def test_only_the_hard_limit_speaks_of_a_loop_that_never_ends(monkeypatch, capsys):
    def spins(x):
        while True:
            pass

    def waits(x):
        while True:
            time.sleep(0.05)  # no CPU time: only the wall-clock hard limit stops it

    question = Double()
    question.timeout = 0.2
    slow = question.check(spins).message
    assert "used more than 0.2 s of CPU time" in slow and "never ends" not in slow
    monkeypatch.setattr(run, "hard_limit", lambda cpu: 0.5)
    assert call(waits, (1,), timeout=0.2).kind == TIMED_OUT
    monkeypatch.setattr("posenc_lib.checks.question.hard_limit", lambda cpu: 0.5)
    message = question.check(waits).message
    assert "still running after 0.5 s" in message and "loop that never ends" in message


def test_a_cold_import_inside_the_worked_solution_passes():
    """Chapter 4 q3's worked solution with transformers' T5 imported inside: the import (seconds
    of CPU, cold, in a fresh process) is not the answer's work."""
    script = textwrap.dedent(
        """
        import math, torch
        from posenc_lib.checks import solution_code
        from posenc_lib.checks.ch04 import q3
        head, body = solution_code("04_relative_bias.ipynb", "t5_bucket").split("\\n", 1)
        namespace = {"torch": torch, "math": math}
        exec(head + "\\n    import transformers.models.t5.modeling_t5\\n" + body, namespace)
        print(q3.evaluate(namespace["t5_bucket"]))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert "correct" in done.stdout, done.stdout + done.stderr[-2000:]


# -- no internal names -----------------------------------------------------------------------------


INTERNAL = re.compile(r"_TimedOut|SwitchedOff|TooMany|Collected|Outcome|\b_[A-Za-z]\w*")


@pytest.mark.parametrize("kind", KINDS)
def test_every_outcome_reads_as_a_sentence_without_internal_names(kind):
    outcome = Outcome(
        kind, value=1.0, error={SHORTCUT: "posenc_lib.alibi.alibi_slopes"}.get(kind, "`x`")
    )
    verdict = Double().judge(Double().cases(), [outcome])
    assert verdict.message and not INTERNAL.search(verdict.message), verdict.message


def test_strange_values_are_described_in_plain_words(capsys):
    for value in (itertools.count(), iter(range(3)), {1, 2}, np.float64(1.0), object()):
        message = Double().check(lambda x, v=value: v).message
        assert not INTERNAL.search(message), message


def test_an_answer_that_swallows_the_time_limit_and_returns_is_still_too_slow():
    def returns_after_the_limit(x):
        try:
            while True:
                pass
        except BaseException:  # noqa: BLE001 - the learner's "make the error go away"
            return x

    def raises_after_the_limit(x):
        try:
            while True:
                pass
        except BaseException:  # noqa: BLE001
            raise ValueError("something else") from None

    assert call(returns_after_the_limit, (1,), timeout=0.2).kind == TOO_SLOW
    assert call(raises_after_the_limit, (1,), timeout=0.2).kind == TOO_SLOW


# -- the whole library is switched off, and nothing an answer does lasts ----------------------------


def test_every_library_function_is_off_for_the_answer_but_not_for_the_library():
    from posenc_lib import rope
    from posenc_lib.analysis import ch03_sinusoid as sinusoid
    from posenc_lib.analysis import ch06_rope
    from posenc_lib.checks import ch01

    x = torch.randn(3, 4, dtype=torch.float64)
    # An argument that is a library function may be called, and it calls the library itself.
    outcome = call(lambda rotate, x: rotate(x, [0, 1, 2]), (ch06_rope.rotate, x), 5.0)
    assert outcome.kind == RETURNED and torch.allclose(outcome.value, ch06_rope.rotate(x, 3))
    # The answer's own calls of library functions (and of the checks' helpers) are switched off.
    for answer, name in (
        (lambda rotate, x: rope.apply_rope(x, *rope.rope_cos_sin(3, 4)), "rope.rope_cos_sin"),
        (lambda rotate, x: sinusoid.tensor2tensor_encoding(3, 4), "tensor2tensor_encoding"),
        (lambda rotate, x: ch01._gap(torch.sin, x, [2, 0, 1]), "checks.ch01.equivariance._gap"),
        (lambda rotate, x: ch01.q1.cases(0), "ch01.attention.Attention.cases"),
    ):
        outcome = call(answer, (ch06_rope.rotate, x), 5.0)
        assert outcome.kind == SHORTCUT and name in outcome.error, outcome
    # Nested: the answer calling the harness itself on a library function gains nothing.
    assert call(lambda: call(ch01._gap, (torch.sin, x, [2, 0, 1])).value, ()).kind == SHORTCUT
    assert rope.rope_cos_sin.__code__.co_filename == rope.__file__  # all back on
    assert ch01._gap.__code__.co_filename == ch01.equivariance.__file__
    assert all(guard.GUARD not in vars(m) for m in (rope, ch01, ch01.equivariance))


def test_an_answer_leaves_no_random_state_and_no_patch_behind():
    import random

    from posenc_lib.checks import ch01

    torch_state, python_state = torch.get_rng_state(), random.getstate()
    questions = ch01.attention  # the module of q1 and q2, which imports ``close``
    close, judge, code = questions.close, Question._judge, posenc_lib.checks.close.__code__

    questions_before = ch01.QUESTIONS

    def meddle():
        torch.manual_seed(1234)
        random.seed(1234)
        questions.close = lambda *a, **k: True
        ch01.SNEAKY = 1
        del ch01.QUESTIONS
        Question._judge = lambda self, cases, outcomes: ("pass", "well done.")
        posenc_lib.checks.close.__code__ = (lambda *a, **k: True).__code__
        return 0

    assert call(meddle, ()).kind == RETURNED
    assert torch.equal(torch.get_rng_state(), torch_state) and random.getstate() == python_state
    assert (
        questions.close is close
        and not hasattr(ch01, "SNEAKY")
        and ch01.QUESTIONS == questions_before
    )
    assert Question._judge is judge and posenc_lib.checks.close.__code__ is code


def test_a_sparse_tensor_is_a_near_miss_named_with_its_conversion(capsys):
    from posenc_lib.checks import ch01

    verdict = ch01.q2.check(lambda order: torch.eye(len(order))[order].to_sparse())
    assert verdict.status == FAIL and verdict.points == 0
    assert "returned a sparse tensor" in verdict.message and "x.to_dense()" in verdict.message
    assert "Sparse" not in verdict.message and "raised" not in verdict.message


def test_the_checks_cache_of_answers_is_empty_while_an_answer_runs():
    from posenc_lib.checks import ch02

    ch02.q4.cases(0)
    ch02.q4.cases(3)
    known, drawn = dict(ch02._KNOWN), dict(ch02._DRAWN)
    assert known and drawn
    outcome = call(lambda: (len(ch02._KNOWN), len(ch02._DRAWN)), ())
    assert outcome.value == (0, 0)
    assert ch02._KNOWN == known and ch02._DRAWN.keys() == drawn.keys()  # back after the call


def test_transformers_own_versions_are_switched_off_too(capsys):
    from posenc_lib.checks import ch04, ch05

    def buckets(*args):
        from transformers.models.t5.modeling_t5 import T5Attention  # imported by the answer

        return T5Attention._relative_position_bucket(*args)

    def slopes(num_heads):
        from transformers.models.bloom.modeling_bloom import build_alibi_tensor

        alibi = build_alibi_tensor(torch.ones(1, 2), num_heads, torch.float64)
        return alibi[:, 0, 1].tolist()

    for question, answer, name in (
        (ch04.q3, buckets, "T5Attention._relative_position_bucket"),
        (ch05.q1, slopes, "modeling_bloom.build_alibi_tensor"),
    ):
        verdict = question.check(answer)
        assert verdict.status == FAIL and f"{name}` is switched off" in verdict.message
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    assert build_alibi_tensor(torch.ones(1, 2), 1, torch.float64).shape == (1, 1, 2)  # back on
