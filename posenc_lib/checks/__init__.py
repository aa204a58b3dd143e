"""Exercise checks that answer like a tutor: ``q1.check(fn)``, ``q1.hint()``, ``q1.solution()``.

A check has two halves, kept apart so a grader can run them in different processes:
- ``Question.run`` calls the learner's function on each input and records what happened (an
  ``Outcome``: returned a value, raised, was not attempted, ran out of time; see ``run.py``). This
  is the only place learner code runs, always on copies of the inputs, under a time limit.
- ``Question.judge`` turns the outcomes into a ``Verdict``: pass, fail with a sentence naming what is
  off (a shape, a swapped axis, a missing scale), or not attempted. It never runs learner code and
  never shows the expected answer.
``Question.check`` does both on the public inputs (``cases(seed=0)``); a grader passes its own seed.

Each chapter's questions live in ``checks/chNN.py``.
"""

from __future__ import annotations

import json
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch

from .run import NOT_ATTEMPTED, Outcome, TooMany, call

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


# -- helpers for judging values ----------------------------------------------------------------------


def as_tensor(value, what: str, shape: tuple | None = None):
    """(value as a float64 tensor, None), or (None, a sentence saying why it is not usable)."""
    if isinstance(value, TooMany):
        return None, f"{what} should be a tensor, but your function returned an endless iterator."
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        value = torch.from_numpy(np.ascontiguousarray(value, dtype=np.float64))
    if isinstance(value, np.ndarray) and value.dtype.kind == "c":
        return None, f"{what} should hold real numbers, but yours is complex ({value.dtype})."
    if not isinstance(value, torch.Tensor):
        if isinstance(value, tuple) and value and isinstance(value[0], torch.Tensor):
            return None, (
                f"{what} should be one tensor, but your function returned a tuple of "
                f"{len(value)} things; return only the tensor asked for."
            )
        return None, f"{what} should be a torch tensor, but your function returned {_kind(value)}."
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
    """(value as a float, None), or (None, a sentence saying why it is not one number)."""
    if isinstance(value, (torch.Tensor, np.ndarray)):
        size = value.size if isinstance(value, np.ndarray) else value.numel()
        if size == 1:
            value = value.item()
        else:
            return None, (
                f"{what} should be one number, but your function returned an array of shape "
                f"{tuple(value.shape)}; reduce it to a single value (e.g. with .max())."
            )
    if isinstance(value, bool) or not isinstance(value, (numbers.Real, np.number)):
        return None, f"{what} should be a number, but your function returned {_kind(value)}."
    value = float(value)
    if not math.isfinite(value):
        return None, f"{what} should be a finite number, but yours is {value}."
    return value, None


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
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return f"a NumPy array of {value.dtype} values"
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
    timeout = TIMEOUT_SECONDS

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
        outcomes = []
        for case in cases:
            outcomes.append(call(fn, case.args, self.timeout))
            if outcomes[-1].kind != "returned":
                break
        return outcomes

    def judge(self, cases: list[Case], outcomes: list[Outcome]) -> Verdict:
        """Turn outcomes into a Verdict. Runs no learner code; never raises."""
        try:
            status, message = self._judge(cases, outcomes)
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # noqa: BLE001 - a strange value must not crash the check
            status, message = (
                FAIL,
                (
                    f"`{self.function}` returned something the check could not read "
                    f"({type(error).__name__}); return the type the question asks for."
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
            if outcome.kind == "timed out":
                return FAIL, (
                    f"`{self.function}` did not finish within {self.timeout:g} s {where}: "
                    "is there a loop that never ends?"
                )
            if outcome.kind == "raised":
                return (
                    FAIL,
                    f"`{self.function}` raised {outcome.error} {where}.{_tip(outcome.error)}",
                )
            if outcome.value is None:
                return FAIL, (
                    f"`{self.function}` returned None {where}: did you forget the `return`?"
                )
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
