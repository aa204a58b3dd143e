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
from posenc_lib.i18n import N_, _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

TIMEOUT_SECONDS = 5.0  # per call of a learner's function
MAX_MESSAGE = 400  # characters of a tutor's sentence

# Errors torch raises for the usual slips, and what to look at.
# (The patterns match torch's own English error text, which no language setting changes.)
_TIPS = {
    "same dtype": N_(
        "Two tensors of different dtypes met (float32 and float64, or an integer or "
        "boolean tensor and a float one): convert one with .to(x.dtype)."
    ),
    "cannot be multiplied": N_("Print the shapes of the two matrices you multiply."),
    "must match the size": N_("Two tensors' shapes do not line up: print them."),
    "out of bounds": N_("An index ran past the end: check your ranges."),
    "maximum recursion": N_("Your function calls itself without end."),
}


def _tip(error: str) -> str:
    tip = next((translate(tip) for pattern, tip in _TIPS.items() if pattern in error), "")
    return tr(" {tip}", tip=tip) if tip else ""  # Chinese joins sentences with no space


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
    slow_hint = N_("look for a Python loop over every entry of a tensor.")  # after "too slow"
    # The worked solution's key expressions and numbers ("ln(factor)/m", "(T-1)"): no sentence a
    # check shows for a wrong answer may contain one (``diagnosis.leaked``; tests/checks): the fix
    # belongs in the hints and ``solution()``, a verdict names the mistake and where to look.
    answer_keys: tuple[str, ...] = ()

    def __init__(self):
        self._next_hint = 0

    def shown_title(self) -> str:
        """The title in the language in use (``title`` is the English, marked with ``N_``)."""
        return translate(self.title) if self.title else ""

    def shown_hints(self) -> tuple[str, ...]:
        """The hints in the language in use (``hints`` holds the English, marked with ``N_``)."""
        return tuple(translate(h) for h in self.hints)

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

    def none_note(self, case: Case) -> str:
        """A sentence added when the answer returned None for ``case``: what is special about that
        input (a branch the learner may have left without a ``return``); "" for most questions."""
        return ""

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
                tr(
                    "`{function}` returned something the check could not read; return the "
                    "type the question asks for.",
                    function=self.function,
                ),
            )
        points = self.points if status == PASS else 0
        if len(message) > MAX_MESSAGE:
            message = message[: MAX_MESSAGE - 3] + "..."
        return Verdict(self.name, status, message, points, self.points)

    def _judge(self, cases, outcomes) -> tuple[str, str]:
        values = []
        for case, outcome in zip(cases, outcomes, strict=False):  # run() may stop early
            where = tr("when called with {case}", case=case.describe)
            if outcome.kind == NOT_ATTEMPTED:
                return NOT_ATTEMPTED, tr(
                    "replace the `raise NotImplementedError` line in `{function}` with your "
                    "code, then run the check again.",
                    function=self.function,
                )
            if outcome.kind != "returned":
                return FAIL, self._not_returned(outcome, where)
            if outcome.value is None:
                return FAIL, tr(
                    "`{function}` returned None {where}: did you forget the `return`?",
                    function=self.function,
                    where=where,
                ) + self.none_note(case)
            problem = type_problem(outcome.value, self.returns, self.function)
            if problem:
                return FAIL, with_input(problem, case)
            problem = self.diagnose(case, outcome.value)
            if problem:
                return FAIL, with_input(problem, case)
            values.append(outcome.value)
        if len(outcomes) < len(cases):
            return FAIL, _("the check stopped early.")  # run() stops only at a failed call
        problem = self.diagnose_all(cases, values)
        if problem:
            return FAIL, problem
        return PASS, _("well done.")

    def _not_returned(self, outcome: Outcome, where: str) -> str:
        """The sentence for a call that raised, ran too long, cheated or changed its input."""
        fn = f"`{self.function}`"
        if outcome.kind == TOO_SLOW:
            return tr(
                "{fn} used more than {seconds:g} s of CPU time {where} (imports not "
                "counted) and was stopped; a right answer needs far less: {slow_hint}",
                fn=fn,
                seconds=self.timeout,
                where=where,
                slow_hint=translate(self.slow_hint),
            )
        if outcome.kind == TIMED_OUT:
            return tr(
                "{fn} was still running after {seconds:g} s {where} and was "
                "stopped: is there a loop that never ends?",
                fn=fn,
                seconds=hard_limit(self.timeout),
                where=where,
            )
        if outcome.kind == SHORTCUT:
            return tr(
                "this exercise asks you to write {fn} yourself; the library's `{reference}` "
                "is switched off while your answer is checked.",
                fn=fn,
                reference=outcome.error,
            )
        if outcome.kind == CHANGED_INPUT:
            name = outcome.error.strip("`") if outcome.error.startswith("`") else "x"
            return tr(
                "{fn} changed its argument {argument} in place {where}: work on a copy "
                "(`{name} = {name}.clone()` for a tensor, `{name} = list({name})` for a list), "
                "or use operations that make new tensors (x = x + y, not x += y).",
                fn=fn,
                argument=outcome.error,
                where=where,
                name=name,
            )
        if outcome.kind == RAISED:
            return tr(
                "{fn} raised {error} {where}.{tip}",
                fn=fn,
                error=outcome.error,
                where=where,
                tip=_tip(outcome.error),
            )
        return tr("{fn} did not return a value {where}.", fn=fn, where=where)

    def evaluate(self, fn) -> Verdict:
        """The Verdict for ``fn`` on the public inputs, without showing it.

        ``fn`` may be a ``_Missing`` (the notebook has no such function yet) or any object.
        """
        if isinstance(fn, _Missing):
            return Verdict(
                self.name,
                NOT_ATTEMPTED,
                tr(
                    "there is no function `{function}` yet: run the cell that defines it, then "
                    "check again.",
                    function=self.function,
                ),
                0,
                self.points,
            )
        if not callable(fn):
            return Verdict(
                self.name,
                FAIL,
                tr(
                    "check needs your function itself, as in `{name}.check({function})`, "
                    "but it was given {kind}.",
                    name=self.name,
                    function=self.function,
                    kind=kind_of(fn),
                ),
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
        hints = self.shown_hints()
        if not hints:
            text = _("No hint for this one: re-read the question and the lecture's section.")
        else:
            index = self._next_hint if number is None else max(1, min(number, len(hints))) - 1
            if index >= len(hints):  # every hint shown: say so instead of repeating the last
                text = tr(
                    "that was the last hint ({total} of {total}): {name}.hint(1) shows the first "
                    "again, and {name}.solution() a worked solution.",
                    total=len(hints),
                    name=self.name,
                )
            else:
                self._next_hint = index + 1
                text = tr(
                    "Hint {number} of {total}: {hint}",
                    number=index + 1,
                    total=len(hints),
                    hint=hints[index],
                )
        line = tr("{name}: {hint}", name=self.name, hint=text)
        show({"text/plain": line, "text/html": escape_html(line)})

    def solution(self) -> None:
        """Show the worked solution, read from the solutions notebook near the working folder."""
        show_solution(self.notebook, self.function)


def with_input(problem: str, case: Case) -> str:
    """A failed verdict's sentence followed by the input it failed on (the class report strips it:
    ``grading.report.mistake_sentence``)."""
    return tr("{problem} (Input: {case}.)", problem=problem, case=case.describe)


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
