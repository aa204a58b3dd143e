"""A graded exercise: ``Question`` (its inputs, ``cases``; its judgement, ``diagnose``) and
``Case``; ``q1.check(fn)``, ``q1.hint()``, ``q1.solution()``; ``scorecard`` for a whole chapter.

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
"""

from __future__ import annotations

from dataclasses import dataclass

from posenc_lib.checks.answers import kind_of, type_problem
from posenc_lib.checks.run import (
    CHANGED_INPUT,
    NOT_ATTEMPTED,
    RAISED,
    SHORTCUT,
    TIMED_OUT,
    TOO_SLOW,
    Outcome,
    TooMany,
    call,
    hard_limit,
    resolve,
)
from posenc_lib.checks.solutions import show_solution
from posenc_lib.checks.verdicts import FAIL, PASS, Scorecard, Verdict, escape_html, show

TIMEOUT_SECONDS = 5.0  # per call of a learner's function
MAX_MESSAGE = 400  # characters of a tutor's sentence

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
                f"but it was given {kind_of(fn)}.",
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
        show(
            {"text/plain": f"{self.name}: {text}", "text/html": escape_html(f"{self.name}: {text}")}
        )

    def solution(self) -> None:
        """Show the worked solution, read from the solutions notebook near the working folder."""
        show_solution(self.notebook, self.function)


def _from_notebook(name: str):
    """The learner's function ``name`` from the notebook's namespace, or a sentence-bearing None."""
    import __main__

    fn = getattr(__main__, name, None)
    return fn if fn is not None else _Missing(name)


class _Missing:
    """Stands for a function the learner has not defined yet (not callable: check explains)."""

    def __init__(self, name):
        self.name = name


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
