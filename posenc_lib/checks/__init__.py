"""Exercise checks that answer like a tutor: ``q1.check(fn)``, ``q1.hint()``, ``q1.solution()``.

A check has two halves, kept apart so a grader can run them in different processes:
- ``Question.run`` calls the learner's function on each input and records what happened (an
  ``Outcome``: returned a value, raised, was not attempted, ran out of time, called a library
  function the question asks it to write, changed its input; see ``run.py``). This is the only
  place learner code runs, always on copies of the inputs, under a time limit, with the question's
  ``references`` switched off.
- ``Question.judge`` turns the outcomes into a ``Verdict``: pass, fail with a sentence naming what is
  off (a near miss of the type asked for, a shape, a swapped axis, a missing scale), or not
  attempted. It never runs learner code and never shows the expected answer.
``Question.check`` does both on the public inputs (``cases(seed=0)``); a grader passes its own seed.

Each chapter's questions live in ``checks/chNN.py``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from posenc_lib.checks.run import (
    CHANGED_INPUT,
    NOT_ATTEMPTED,
    RAISED,
    SHORTCUT,
    TIMED_OUT,
    TOO_SLOW,
    Collected,
    Outcome,
    TooMany,
    call,
    hard_limit,
    resolve,
)

PASS, FAIL = "pass", "fail"
TIMEOUT_SECONDS = 5.0  # per call of a learner's function
MAX_MESSAGE = 400  # characters of a tutor's sentence
SOLUTIONS_DIR = Path(__file__).resolve().parents[2] / "solutions"


# -- verdicts -------------------------------------------------------------------------------------

_SYMBOL = {PASS: "✓", FAIL: "✗", NOT_ATTEMPTED: "○"}
_COLOUR = {PASS: "#1b7f3b", FAIL: "#b42318", NOT_ATTEMPTED: "#6b7280"}
_HEADLINE = {PASS: "correct", FAIL: "not yet", NOT_ATTEMPTED: "not attempted"}


@dataclass
class Verdict:
    """The result of one check: ``status`` is "pass", "fail" or "not attempted"."""

    question: str
    status: str
    message: str
    points: int
    max_points: int
    _shown: bool = field(default=False, repr=False, compare=False)

    @property
    def passed(self) -> bool:
        return self.status == PASS

    def __str__(self) -> str:
        head = f"{self.question} {_SYMBOL[self.status]} {_HEADLINE[self.status]}"
        return f"{head} ({self.points}/{self.max_points} points): {self.message}"

    def _repr_html_(self) -> str:
        colour = _COLOUR[self.status]
        head = f"{self.question} {_SYMBOL[self.status]} {_HEADLINE[self.status]}"
        return (
            f'<div style="border-left: 4px solid {colour}; padding: 2px 8px">'
            f'<b style="color: {colour}">{_escape(head)}</b> '
            f"({self.points}/{self.max_points} points): {_escape(self.message)}</div>"
        )

    def _ipython_display_(self) -> None:
        # ``check`` shows the verdict as it returns it; when the call is also the cell's last line,
        # IPython would show it a second time. Show each verdict once.
        if not self._shown:
            self._shown = True
            _display({"text/plain": str(self), "text/html": self._repr_html_()})


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _display(bundle: dict) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the course
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(bundle, raw=True)
    else:
        print(bundle["text/plain"])


# -- the type policy: the type a question asks for is the type it accepts -----------------------------
#
# ``Question.returns`` names what the learner's function returns: one of the kinds below, or a tuple
# of them for a function that returns a pair. A value one conversion away from it (a NumPy array
# for a tensor, a 0-d tensor for a float, a list for a tensor, a tensor for a list, an unsorted
# list...) fails before any judging, with a sentence naming the conversion: the same words in every
# chapter. Anything further off is left to ``diagnose``, whose ``as_*`` helpers below say what
# they wanted.

FLOAT = "float"  # a Python float (an int is a number too)
INT = "int"  # a Python int
TENSOR = "tensor"  # a torch tensor of floats
INT_TENSOR = "int tensor"  # a torch tensor of integers
INDEX_LIST = "index list"  # a list of Python ints in increasing order, each once
FLOATS = "floats"  # a list of Python floats, or a 1-D float tensor

ASKED = {
    FLOAT: "a Python float",
    INT: "a Python int",
    TENSOR: "a torch tensor of floats",
    INT_TENSOR: "a torch tensor of integers",
    INDEX_LIST: "a list of ints in increasing order, each once",
    FLOATS: "a list of Python floats (or a 1-D float tensor)",
}
_FROM_NUMPY = "return torch.from_numpy(x), or build it with torch from the start"
_TO_TENSOR = (
    "convert it with torch.tensor (torch.stack for a list of tensors), or build it with torch "
    "from the start"
)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _container(value) -> str:
    if isinstance(value, Collected):
        return f"a {value.source}"
    return "a tuple" if isinstance(value, tuple) else "a list"


def _near_miss(value, kind) -> tuple[str, str] | None:
    """(what ``value`` is, the conversion that gives ``kind``) when one conversion away, else None."""
    if isinstance(value, torch.Tensor) and value.layout != torch.strided and kind in ASKED:
        return "a sparse tensor", "return x.to_dense()"
    if isinstance(kind, tuple):  # a pair (or more): a tuple of the kinds, item by item
        if isinstance(value, list) and len(value) == len(kind):
            return "a list", "return a tuple, as in `return a, b`"
        return None
    if kind in (FLOAT, INT):
        word = "float" if kind == FLOAT else "int"
        if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_complex():
            shape = "a 0-d tensor" if value.dim() == 0 else "a one-element tensor"
            return shape, f"return x.item() or {word}(x)"
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            return f"a NumPy scalar (numpy.{value.dtype})", f"return {word}(x)"
        if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
            return "a one-element NumPy array", f"return {word}(x)"
        if isinstance(value, (list, tuple)) and len(value) == 1 and _is_number(value[0]):
            return f"{_container(value)} of one number", "return the number itself, x[0]"
        if kind == INT and isinstance(value, float) and value.is_integer():
            return f"a float ({value!r})", "return int(x)"
        return None
    if kind in (TENSOR, INT_TENSOR):
        if isinstance(value, np.ndarray):
            return "a NumPy array", _FROM_NUMPY
        if isinstance(value, (list, tuple)):
            if isinstance(value, tuple) and len(value) > 1 and isinstance(value[0], torch.Tensor):
                return None  # more than was asked for: as_tensor says so
            return _container(value), _TO_TENSOR
        if isinstance(value, torch.Tensor) and not value.is_complex():
            floating = value.dtype.is_floating_point
            if kind == TENSOR and not floating:
                held = "booleans" if value.dtype == torch.bool else "integers"
                return f"a tensor of {held} ({value.dtype})", (
                    "return x.float(), or build it with a float dtype from the start"
                )
            if kind == INT_TENSOR and floating:  # (a True/False mask is not a near miss)
                return f"a tensor of floats ({value.dtype})", "return x.long()"
        return None
    if kind in (INDEX_LIST, FLOATS):
        if isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim != 1:
            return None  # not a flat list of anything: a shape problem, for diagnose
        if isinstance(value, torch.Tensor):
            if kind == FLOATS and not value.is_complex():
                if value.dtype.is_floating_point:
                    return None
                return f"a tensor of integers ({value.dtype})", "return x.float()"
            return "a tensor", "return x.tolist()"
        if isinstance(value, np.ndarray):
            return "a NumPy array", "return x.tolist()"
        if isinstance(value, Collected) and value.source == "set" and kind == INDEX_LIST:
            return "a set", "return sorted(x)"
        if isinstance(value, (tuple, Collected)):
            return _container(value), "return list(x)"
        if not isinstance(value, list) or not value:
            return None
        if kind == FLOATS:
            if all(isinstance(v, torch.Tensor) and v.numel() == 1 for v in value):
                return "a list of tensors", "return [float(v) for v in x]"
            if all(isinstance(v, np.generic) for v in value):
                return "a list of NumPy numbers", "return [float(v) for v in x]"
            return None
        if all(isinstance(v, torch.Tensor) and v.numel() == 1 for v in value):
            return "a list of tensors", "return [int(i) for i in x]"
        if all(isinstance(v, np.integer) for v in value):
            return "a list of NumPy integers", "return [int(i) for i in x]"
        if all(isinstance(v, float) and v.is_integer() for v in value):
            return "a list of floats", "return [int(i) for i in x]"
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return None
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            return f"a list that holds {twice[0]} more than once", "return sorted(set(x))"
        if value != sorted(value):
            return "a list that is not in increasing order", "return sorted(x)"
        return None
    return None


def type_problem(value, returns, function: str) -> str | None:
    """The policy's sentence when ``function`` returned a near miss of ``returns``, else None."""
    if returns is None:
        return None
    missed = _near_miss(value, returns)
    if missed:
        what, fix = missed
        asked = "a tuple" if isinstance(returns, tuple) else ASKED[returns]
        return f"`{function}` returned {what}, but the question asks for {asked}: {fix}."
    if isinstance(returns, tuple) and isinstance(value, tuple) and len(value) == len(returns):
        for number, (item, kind) in enumerate(zip(value, returns, strict=True), start=1):
            missed = _near_miss(item, kind)
            if missed:
                what, fix = missed
                return (
                    f"Item {number} of the tuple `{function}` returned is {what}, but the question "
                    f"asks for {ASKED[kind]} there: {fix}."
                )
    return None


def _sentence(value, kind, what: str) -> str | None:
    """The policy's words for a near miss, about ``what`` (e.g. "The output")."""
    missed = _near_miss(value, kind)
    if missed is None:
        return None
    described, fix = missed
    return f"{what} is {described}, but the question asks for {ASKED[kind]}: {fix}."


# -- helpers for judging values ----------------------------------------------------------------------


def as_tensor(value, what: str, shape: tuple | None = None):
    """(value as a float64 tensor, None), or (None, a sentence saying why it is not usable).

    Accepts a torch tensor only (of any real dtype: ``Question.returns`` says which); the type
    policy's sentence for a NumPy array or a list.
    """
    if isinstance(value, TooMany):
        return None, f"{what} should be a tensor, but your function returned an endless iterator."
    if isinstance(value, np.ndarray) and value.dtype.kind == "c":
        return None, f"{what} should hold real numbers, but yours is complex ({value.dtype})."
    if not isinstance(value, torch.Tensor):
        if isinstance(value, tuple) and len(value) > 1 and isinstance(value[0], torch.Tensor):
            return None, (
                f"{what} should be one tensor, but your function returned a tuple of "
                f"{len(value)} things; return only the tensor asked for."
            )
        near = _sentence(value, TENSOR, what)
        return None, near or (
            f"{what} should be a torch tensor, but your function returned {_kind(value)}."
        )
    if value.is_complex():
        return None, f"{what} should hold real numbers, but yours is complex ({value.dtype})."
    if shape is not None and tuple(value.shape) != tuple(shape):
        return None, (
            f"{what} should have shape {tuple(shape)}, but yours has shape {tuple(value.shape)}."
        )
    value = value.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(value).all()):
        return None, (
            f"{what} contains NaN or infinite values: look for a division by zero, a log of 0, "
            "or a softmax over -inf everywhere."
        )
    return value, None


def as_number(value, what: str):
    """(value as a float, None), or (None, a sentence saying why it is not one number).

    Accepts a Python float or int; the type policy's sentence for a tensor or a NumPy number.
    """
    near = _sentence(value, FLOAT, what)
    if near:
        return None, near
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return None, (
            f"{what} should be one number, but your function returned an array of shape "
            f"{tuple(value.shape)}; reduce it to a single value (e.g. with .max())."
        )
    if not _is_number(value):
        return None, f"{what} should be a number, but your function returned {_kind(value)}."
    value = float(value)
    if not math.isfinite(value):
        return None, f"{what} should be a finite number, but yours is {value}."
    return value, None


def as_int(value, what: str):
    """(value, None) for a Python int, or (None, a sentence saying why it is not one)."""
    near = _sentence(value, INT, what)
    if near:
        return None, near
    if isinstance(value, float) and math.isfinite(value):
        return None, f"{what} should be a whole number, but yours is {value:g}."
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return None, (
            f"{what} should be one number (an int), but your function returned an array of shape "
            f"{tuple(value.shape)}."
        )
    if not isinstance(value, int) or isinstance(value, bool):
        return None, f"{what} should be an int, but your function returned {_kind(value)}."
    return value, None


def as_index_list(value, what: str):
    """(a list of ints, None), or (None, a sentence): the policy's increasing list, each once."""
    if isinstance(value, TooMany):
        return (
            None,
            f"{what} should be a list of ints, but your function returned an endless iterator.",
        )
    near = _sentence(value, INDEX_LIST, what)
    if near:
        return None, near
    if _is_number(value) or isinstance(value, bool):
        return None, f"{what} should be a list of ints (e.g. [0, 1, 2]), not one number."
    if not isinstance(value, list):
        return None, f"{what} should be a list of ints, but your function returned {_kind(value)}."
    if value and all(isinstance(v, bool) for v in value):
        return None, (
            f"{what} is a True/False mask; return the indices themselves, e.g. "
            "[i for i in range(n) if ...]."
        )
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None, f"{what} should hold plain ints, one per index."
    return list(value), None


def as_floats(value, what: str, length: int | None = None):
    """(a float64 tensor, None) from a list of floats or a 1-D float tensor, or (None, a sentence)."""
    if isinstance(value, TooMany):
        return (
            None,
            f"{what} should be a list of floats, but your function returned an endless iterator.",
        )
    near = _sentence(value, FLOATS, what)
    if near:
        return None, near
    if isinstance(value, list):
        if not all(_is_number(v) for v in value):
            return None, f"{what} should hold plain numbers (Python floats), one per item."
        value = torch.tensor(value, dtype=torch.float64)
    got, problem = as_tensor(value, what)
    if problem:
        return None, problem
    if got.dim() != 1 or (length is not None and got.numel() != length):
        want = "numbers" if length is None else f"{length} numbers"
        return (
            None,
            f"{what} should be {want} in one flat list, but yours has shape {tuple(got.shape)}.",
        )
    return got, None


def close(a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """True when two tensors agree to float32 accuracy (shapes must match)."""
    return a.shape == b.shape and bool(torch.allclose(a, b.to(a.dtype), rtol=rtol, atol=atol))


# Errors torch raises for the usual slips, and what to look at.
_TIPS = {
    "same dtype": "Two tensors of different dtypes met (float32 and float64, or an integer or "
    "boolean tensor and a float one): convert one with .to(x.dtype).",
    "cannot be multiplied": "Print the shapes of the two matrices you multiply.",
    "must match the size": "Two tensors' shapes do not line up: print them.",
    "out of bounds": "An index ran past the end: check your ranges.",
    "maximum recursion": "Your function calls itself without end.",
}


def _tip(error: str) -> str:
    return next((f" {tip}" for pattern, tip in _TIPS.items() if pattern in error), "")


def _kind(value) -> str:
    """What a value is, in words: "a NumPy array of int64 values", "an endless iterator"."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of {value.dtype} values"
    if isinstance(value, np.generic):
        return f"a NumPy scalar (numpy.{value.dtype})"
    if isinstance(value, TooMany):
        return "an endless iterator"
    if isinstance(value, Collected):
        return f"a {value.source}"
    name = type(value).__name__ or "nameless object"
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


# -- questions ----------------------------------------------------------------------------------------


@dataclass
class Case:
    """One input for a learner's function: its arguments and a short description for messages."""

    args: tuple
    describe: str


class Question:
    """One graded exercise. Subclasses give the inputs (``cases``) and the judgement (``diagnose``).

    name: "q1"; function: the name of the function the learner writes; points: its weight.
    """

    name = "q?"
    title = ""
    function = ""
    points = 1
    hints: tuple[str, ...] = ()
    notebook = ""  # the solutions notebook holding the worked solution
    timeout = TIMEOUT_SECONDS  # seconds of CPU time per call (imports not counted)
    # What the function returns (FLOAT, INT, TENSOR, INT_TENSOR, INDEX_LIST, FLOATS, or a tuple of
    # them): a near miss of it fails with the type policy's sentence before ``diagnose`` runs.
    returns: str | tuple | None = None
    # The library functions that answer the question ("posenc_lib.module.function"): switched off
    # while the learner's function runs, so calling one fails with a sentence.
    references: tuple[str, ...] = ()
    slow_hint = "look for a Python loop over every entry of a tensor."  # after "too slow"

    def __init__(self):
        self._next_hint = 0

    # The two halves a subclass fills in.
    def cases(self, seed: int = 0) -> list[Case]:
        """The inputs the learner's function is called on; seed 0 gives the public ones.

        Other seeds give a grader's hidden inputs: drawn from the seed, and longer than the public
        ones, so they are new to the learner and test that an answer generalises.
        """
        raise NotImplementedError

    def diagnose(self, case: Case, value) -> str | None:
        """None if ``value`` is right for ``case``, else a tutor's sentence saying what is off."""
        raise NotImplementedError

    def diagnose_all(self, cases: list[Case], values: list) -> str | None:
        """A judgement across cases (e.g. "the same for two inputs"); None when all is well."""
        return None

    # Running and judging.
    def run(self, fn, cases: list[Case]) -> list[Outcome]:
        """Call ``fn`` on each case, stopping at the first call that did not return a value."""
        outcomes, references = [], resolve(self.references, lazy=True)
        for case in cases:
            outcomes.append(call(fn, case.args, self.timeout, references))
            if outcomes[-1].kind != "returned" or isinstance(outcomes[-1].value, TooMany):
                break  # (an endless iterator fails its first input: no need to read more)
        return outcomes

    def judge(self, cases: list[Case], outcomes: list[Outcome]) -> Verdict:
        """Turn outcomes into a Verdict. Runs no learner code; never raises."""
        try:
            status, message = self._judge(cases, outcomes)
        except KeyboardInterrupt:
            raise
        except BaseException:  # noqa: BLE001 - a strange value must not crash the check
            status, message = (
                FAIL,
                (
                    f"`{self.function}` returned something the check could not read; return the "
                    "type the question asks for."
                ),
            )
        points = self.points if status == PASS else 0
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 3] + "..."
        return Verdict(self.name, status, message, points, self.points)

    def _judge(self, cases, outcomes) -> tuple[str, str]:
        values = []
        for case, outcome in zip(cases, outcomes, strict=False):  # run() may stop early
            where = f"when called with {case.describe}"
            if outcome.kind == NOT_ATTEMPTED:
                return NOT_ATTEMPTED, (
                    f"replace the `raise NotImplementedError` line in `{self.function}` with your "
                    "code, then run the check again."
                )
            if outcome.kind != "returned":
                return FAIL, self._not_returned(outcome, where)
            if outcome.value is None:
                return FAIL, (
                    f"`{self.function}` returned None {where}: did you forget the `return`?"
                )
            problem = type_problem(outcome.value, self.returns, self.function)
            if problem:
                return FAIL, f"{problem} (Input: {case.describe}.)"
            problem = self.diagnose(case, outcome.value)
            if problem:
                return FAIL, f"{problem} (Input: {case.describe}.)"
            values.append(outcome.value)
        if len(outcomes) < len(cases):
            return FAIL, "the check stopped early."  # run() stops only at a failed call
        problem = self.diagnose_all(cases, values)
        if problem:
            return FAIL, problem
        return PASS, "well done."

    def _not_returned(self, outcome: Outcome, where: str) -> str:
        """The sentence for a call that raised, ran too long, cheated or changed its input."""
        fn = f"`{self.function}`"
        if outcome.kind == TOO_SLOW:
            return (
                f"{fn} used more than {self.timeout:g} s of CPU time {where} (imports not "
                f"counted) and was stopped; a right answer needs far less: {self.slow_hint}"
            )
        if outcome.kind == TIMED_OUT:
            return (
                f"{fn} was still running after {hard_limit(self.timeout):g} s {where} and was "
                "stopped: is there a loop that never ends?"
            )
        if outcome.kind == SHORTCUT:
            return (
                f"this exercise asks you to write {fn} yourself; the library's `{outcome.error}` "
                "is switched off while your answer is checked."
            )
        if outcome.kind == CHANGED_INPUT:
            name = outcome.error.strip("`") if outcome.error.startswith("`") else "x"
            return (
                f"{fn} changed its argument {outcome.error} in place {where}: work on a copy "
                f"(`{name} = {name}.clone()` for a tensor, `{name} = list({name})` for a list), "
                "or use operations that make new tensors (x = x + y, not x += y)."
            )
        if outcome.kind == RAISED:
            return f"{fn} raised {outcome.error} {where}.{_tip(outcome.error)}"
        return f"{fn} did not return a value {where}."

    def evaluate(self, fn) -> Verdict:
        """The Verdict for ``fn`` on the public inputs, without showing it.

        ``fn`` may be a ``_Missing`` (the notebook has no such function yet) or any object.
        """
        if isinstance(fn, _Missing):
            return Verdict(
                self.name,
                NOT_ATTEMPTED,
                f"there is no function `{self.function}` yet: run the cell that defines it, then "
                "check again.",
                0,
                self.points,
            )
        if not callable(fn):
            return Verdict(
                self.name,
                FAIL,
                f"check needs your function itself, as in `{self.name}.check({self.function})`, "
                f"but it was given {_kind(fn)}.",
                0,
                self.points,
            )
        cases = self.cases(seed=0)
        return self.judge(cases, self.run(fn, cases))

    def check(self, fn=None) -> Verdict:
        """Check the learner's function on the public inputs; show and return the Verdict."""
        verdict = self.evaluate(_from_notebook(self.function) if fn is None else fn)
        verdict._ipython_display_()
        return verdict

    # Help.
    def hint(self, number: int | None = None) -> None:
        """Show the next hint (or hint ``number``, counting from 1)."""
        if not self.hints:
            text = "No hint for this one: re-read the question and the lecture's section."
        else:
            index = self._next_hint if number is None else max(1, min(number, len(self.hints))) - 1
            self._next_hint = min(index + 1, len(self.hints) - 1)
            text = f"Hint {index + 1} of {len(self.hints)}: {self.hints[index]}"
        _display(
            {"text/plain": f"{self.name}: {text}", "text/html": _escape(f"{self.name}: {text}")}
        )

    def solution(self) -> None:
        """Show the worked solution, read from the solutions notebook."""
        code = solution_code(self.notebook, self.function)
        if code is None:
            text = f"The worked solution is in solutions/{self.notebook} in the course repository."
            _display({"text/plain": text, "text/markdown": text})
        else:
            intro = f"Worked solution (from solutions/{self.notebook}):"
            _display(
                {
                    "text/plain": f"{intro}\n\n{code}",
                    "text/markdown": f"{intro}\n\n```python\n{code}\n```",
                }
            )


def _from_notebook(name: str):
    """The learner's function ``name`` from the notebook's namespace, or a sentence-bearing None."""
    import __main__

    fn = getattr(__main__, name, None)
    return fn if fn is not None else _Missing(name)


class _Missing:
    """Stands for a function the learner has not defined yet (not callable: check explains)."""

    def __init__(self, name):
        self.name = name


class Scorecard(list):
    """The verdicts of a chapter's questions, shown as one table (once, like a Verdict)."""

    _shown = False

    @property
    def points(self) -> int:
        return sum(v.points for v in self)

    @property
    def max_points(self) -> int:
        return sum(v.max_points for v in self)

    def __str__(self) -> str:
        lines = [
            f"{v.question}  {_SYMBOL[v.status]} {_HEADLINE[v.status]:<13} {v.points}/{v.max_points}"
            for v in self
        ]
        return "\n".join([*lines, f"total: {self.points}/{self.max_points} points"])

    def _ipython_display_(self) -> None:
        if not self._shown:
            self._shown = True
            _display({"text/plain": str(self), "text/html": f"<pre>{_escape(str(self))}</pre>"})


def scorecard(questions, namespace=None) -> Scorecard:
    """Check every question against the notebook's functions, quietly; show one table; return it.

    namespace: where to find the learner's functions (default: the notebook's globals).
    """
    if namespace is None:
        import __main__

        namespace = vars(__main__)
    card = Scorecard(
        question.evaluate(namespace.get(question.function, _Missing(question.function)))
        for question in questions
    )
    card._ipython_display_()
    return card


def solution_code(notebook: str, function: str) -> str | None:
    """The code of ``def function`` in solutions/<notebook>, markers removed; None if not found."""
    path = SOLUTIONS_DIR / notebook
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except (OSError, ValueError, KeyError):
        return None
    for cell in cells:
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") == "code" and f"def {function}(" in source:
            lines = [ln for ln in source.splitlines() if "### BEGIN SOLUTION" not in ln]
            return "\n".join(ln for ln in lines if "### END SOLUTION" not in ln).strip()
    return None
