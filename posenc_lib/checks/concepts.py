"""Concept questions: a chapter's multiple-choice and numeric questions on its ideas, graded like
its coding questions (1 point each, in its ``QUESTIONS``).

    from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
    c1 = MultipleChoice("c1", prompt="...", choices=(Choice("a", "...", why="..."), ...),
                        answer="b", section="section 3 of this chapter")
    c2 = Numeric("c2", prompt="...", answer=lambda: ..., rel_tol=0.05, why="...",
                 mistakes=(Mistake(6.28, "..."),), section="...")

In the notebook: ``c1.ask()`` shows the question, the learner sets ``answer_c1 = "b"`` (a letter)
or ``answer_c2 = 6.28`` (a number), ``c1.check(answer_c1)`` shows the verdict, ``c1.hint()`` points
at the section that teaches it, ``c1.solution()`` explains the answer. The grader reads the
variable ``answer_c1`` (``c1.function``) from the notebook's namespace after running its cells.

Unlike a coding question, a concept question takes a *value*, never a function, and calls nothing:
``run`` records the value as one returned ``Outcome``, and ``_judge`` reads it strictly
(``type(v) is str``...), so a ``str`` subclass or an object with a rigged ``__eq__`` fails with a
sentence, in the notebook and in the grader alike (the grader's child sends only exact ``str``,
``int``, ``float``, ``bool`` or None, and for anything else its type's name: the sentences here
depend on nothing more). A wrong option fails with its ``why``; a number near a ``Mistake`` fails
with that mistake's ``why`` (a *named mistake*, which the class report ranks); any other wrong
number fails with a sentence that does not give the answer away.

What a quiz display reads (``posenc_lib.checks.quiz``): ``q.prompt``, ``q.section``; for a
``MultipleChoice`` ``q.choices`` and ``q.answer`` (the right key; ``q.right`` is its ``Choice``);
for a ``Numeric`` ``q.value`` (the answer, computed once at construction), ``q.shown_value``
(``q.value`` to 3 significant digits, the same on every CPU), ``q.rel_tol``, ``q.why``,
``q.mistakes``, ``q.unit`` and ``q.working`` (the source of the answer's function, or "").
``markup_html(text)`` renders `code` spans. The definitions are checked when built: a course author
gets a ``ValueError`` naming what to fix.
"""

from __future__ import annotations

import ast
import html
import inspect
import math
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from posenc_lib.checks.question import MAX_MESSAGE, Case, Question, _Missing
from posenc_lib.checks.run import NOT_ATTEMPTED, RETURNED, Outcome
from posenc_lib.checks.verdicts import FAIL, PASS, Verdict, show
from posenc_lib.i18n import N_, _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

MAX_TEXT = 100  # characters of an answer read as text; the grader's child sends no more than 101
MAX_WHY = 330  # characters of a ``why``: with its lead-in, a verdict shows it whole
_LEAD = '"(e)" is not the answer. '  # the longest lead-in a ``why`` gets
_LETTER = re.compile(r"\(?\s*([A-Za-z])\s*[).:]?")  # "b", "B", "(b)", "b)", "b.", " ( b ) "
_NUMBERISH = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice question.

    key: one lower-case letter ("a", "b"...); text: the option as shown (plain text and Unicode,
    `code` in backticks, no $math$); why: for a wrong option, why it is wrong (the misconception,
    where the lecture shows otherwise); for the right one, why it is right.
    """

    key: str
    text: str
    why: str


@dataclass(frozen=True)
class Mistake:
    """A named wrong number for a numeric question: what a learner giving it most likely did."""

    value: float
    why: str


def type_name(value) -> str:
    """The name of ``value``'s own type, read without running anything the type defines."""
    return _TYPE_NAME.__get__(type(value))


_TYPE_NAME = type.__dict__["__name__"]


def format_number(value) -> str:
    """An int exactly; a float to 3 significant digits (the same on every CPU), without an
    exponent between 0.001 and a million: 62831.85 -> "62800", 0.0314159 -> "0.0314"."""
    if type(value) is int:
        return str(value) if abs(value) < 10**15 else f"{float(value):.3g}"
    value = float(value)
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    exponent = math.floor(math.log10(abs(float(f"{value:.2e}"))))
    if not -3 <= exponent < 6:
        return f"{value:.2e}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    decimals = max(0, 2 - exponent)
    return f"{round(value, 2 - exponent):.{decimals}f}"


def markup_html(text: str) -> str:
    """Plain text as HTML: escaped, with `code` spans as <code>."""
    parts = html.escape(text, quote=False).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _a(word: str) -> str:
    if word[:1].lower() in "aeiou":
        return tr("an {type}", type=word)
    return tr("a {type}", type=word)


def shown(text: str) -> str:
    """A question's text (prompt, option, why, unit, section: English, marked with ``N_`` where
    the chapter defines it) in the language in use, translated when it is shown."""
    return translate(text).strip() if text else text


def _shorten(text: str, width: int = 90) -> str:
    """A translated prompt in at most ``width`` characters, cut at a character (Chinese has no
    spaces to cut at)."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


class _Unset:
    """check() was called without an answer: read it from the notebook."""


_UNSET = _Unset()


class Concept(Question):
    """What both kinds share: answered with a value in ``answer_cN``, 1 point, no hidden inputs."""

    points = 1
    kind = ""  # "multiple choice" or "numeric" (marked N_: shown in the language in use)

    def __init__(self, name: str, prompt: str, section: str, hint: str = ""):
        super().__init__()
        _require(isinstance(name, str) and re.fullmatch(r"c[1-9]\d?", name), name,
                 'name must be "c1", "c2", ...')  # fmt: skip
        _require_text(prompt, name, "prompt")
        _require_text(section, name, "section")
        self.name, self.prompt, self.section = name, prompt.strip(), section.strip()
        self.function = f"answer_{name}"
        # The question's own nudge toward the idea (N_-marked), else a generic pointer to the section.
        _require(isinstance(hint, str), name, "hint must be a sentence (a str), or left out")
        self.nudge = hint.strip()
        self._hinted = False
        self.title = textwrap.shorten(self.prompt.replace("`", ""), 90, placeholder=" ...")

    def shown_title(self) -> str:
        """The title (the shortened prompt) in the language in use."""
        if translate(self.prompt) == self.prompt:
            return self.title
        return _shorten(shown(self.prompt).replace("`", ""))

    def shown_hints(self) -> tuple[str, ...]:
        return (shown(self.nudge) if self.nudge else self._hint(),)

    def _hint(self) -> str:
        raise NotImplementedError

    # -- the two halves of a check: the value is recorded, never called -----------------------------
    def cases(self, seed: int = 0) -> list[Case]:
        """One case, "your answer", on the public seed; a concept question has no hidden inputs."""
        return [Case((), "your answer")] if seed == 0 else []

    def run(self, value, cases=None) -> list[Outcome]:
        """The learner's value as one returned Outcome; nothing is called."""
        return [Outcome(RETURNED, value)]

    def diagnose(self, case, value):  # pragma: no cover - _judge reads the value itself
        raise NotImplementedError

    def _judge(self, cases, outcomes) -> tuple[str, str]:
        if not outcomes:
            return FAIL, _("not graded: no answer was read.")
        outcome = outcomes[0]
        if outcome.kind != RETURNED:
            return FAIL, tr(
                "`{function}` could not be read ({kind}).",
                function=self.function,
                kind=outcome.kind,
            )
        if outcome.value is None:
            return NOT_ATTEMPTED, self.not_attempted
        return self.read(outcome.value)

    def read(self, value) -> tuple[str, str]:
        """(status, sentence) for a learner's value that is not None."""
        raise NotImplementedError

    @property
    def not_attempted(self) -> str:
        raise NotImplementedError

    def missing(self) -> Verdict:
        """The verdict when the notebook has no variable ``answer_cN`` at all."""
        sentence = tr(
            "there is no variable `{function}` yet: run the cell that sets it "
            "(or add it back), then check again.",
            function=self.function,
        )
        return Verdict(self.name, NOT_ATTEMPTED, sentence, 0, self.points)

    def evaluate(self, value) -> Verdict:
        """The Verdict for ``value``, without showing it."""
        if type(value) is _Missing:  # scorecard(): the notebook has no such variable
            return self.missing()
        return self.judge(self.cases(0), self.run(value))

    def check(self, value=_UNSET) -> Verdict:
        """Check the learner's answer; show and return the Verdict. ``c1.check(answer_c1)``."""
        if value is _UNSET:
            import __main__

            namespace = vars(__main__)
            if self.function not in namespace:
                verdict = self.missing()
                verdict._ipython_display_()
                return verdict
            value = namespace[self.function]
        verdict = self.evaluate(value)
        verdict._ipython_display_()
        return verdict

    # -- showing ------------------------------------------------------------------------------------
    def ask(self) -> None:
        """Show the question (the prompt and the options, or the unit asked for); no answer."""
        text, markup = self._asked()
        show({"text/plain": text, "text/html": markup})

    def hint(self, number: int | None = None) -> None:
        """Show the question's one hint; asked again, say so and point to ``solution()``."""
        if self._hinted and number is None:
            text = tr(
                "{name}: that was the only hint. {name}.solution() shows the answer and why.",
                name=self.name,
            )
        else:
            text = tr("{name}: hint: {hint}", name=self.name, hint=self.shown_hints()[0])
        self._hinted = True
        show({"text/plain": text, "text/html": markup_html(text)})

    def _asked(self) -> tuple[str, str]:
        raise NotImplementedError

    def _head(self) -> tuple[str, str]:
        prompt = shown(self.prompt)
        about = tr("({kind}, {points} point)", kind=translate(self.kind), points=self.points)
        plain = tr("{name} {about}: {prompt}", name=self.name, about=about, prompt=prompt)
        markup = tr(
            "{name} {about}: {prompt}",
            name=f"<p><b>{self.name}</b>",
            about=f"<i>{about}</i>",
            prompt=f"{markup_html(prompt)}</p>",
        )
        return plain, markup


class MultipleChoice(Concept):
    """A question with 3 to 5 options, exactly one right, answered with its letter as a str.

    answer: the right option's key; section: where the lecture teaches it ("section 3 of this
    chapter"); answer_keys: expressions no wrong option's ``why`` may contain (the right option's
    text is always one).
    """

    kind = N_("multiple choice")

    def __init__(self, name: str, prompt: str, choices: tuple[Choice, ...], answer: str,
                 section: str, answer_keys: tuple[str, ...] = (), hint: str = ""):  # fmt: skip
        super().__init__(name, prompt, section, hint)
        _require(isinstance(choices, tuple) and all(type(c) is Choice for c in choices), name,
                 "choices must be a tuple of Choice(key, text, why)")  # fmt: skip
        _require(3 <= len(choices) <= 5, name, f"give 3 to 5 choices, not {len(choices)}")
        keys = [c.key for c in choices]
        _require(keys == list("abcde"[: len(choices)]), name,
                 f'the choices\' keys must be "a", "b", ... in order, one letter each; got {keys}')  # fmt: skip
        for c in choices:
            _require_text(c.text, name, f"choice {c.key}'s text")
            _require_text(c.why, name, f"choice {c.key}'s why", MAX_WHY)
        texts = [" ".join(c.text.lower().split()) for c in choices]
        _require(len(set(texts)) == len(texts), name, "two choices have the same text")
        _require(isinstance(answer, str) and answer in keys, name,
                 f"answer must be the key of the one right choice, one of {keys}; got {answer!r}")  # fmt: skip
        self.choices, self.answer = choices, answer
        self.right = choices[keys.index(answer)]
        # No wrong option's why may give the right one away: its text, and any keys given.
        self.answer_keys = (self.right.text, *_keys(answer_keys, name))
        self.hints = (
            (self.nudge,)
            if self.nudge
            else (
                f"re-read {self.section}; then take the options one at a time and ask whether "
                "something the lecture printed contradicts it.",
            )
        )

    def _hint(self) -> str:
        return tr(
            "re-read {section}; then take the options one at a time and ask whether "
            "something the lecture printed contradicts it.",
            section=shown(self.section),
        )

    @property
    def letters(self) -> str:
        """ "a", "b", "c" or "d" """
        keys = [f'"{c.key}"' for c in self.choices]
        return tr("{first} or {last}", first=", ".join(keys[:-1]), last=keys[-1])

    @property
    def not_attempted(self) -> str:
        return tr(
            'set {function} to one letter, e.g. {function} = "b", then run the check.',
            function=self.function,
        )

    def read(self, value) -> tuple[str, str]:
        f = self.function
        ask = tr('answer with one letter in quotes, e.g. {function} = "b"', function=f)
        kind = type(value)
        if kind is bool:
            return FAIL, tr(
                "`{function}` is {value}, a yes/no value; {ask}.", function=f, value=value, ask=ask
            )
        if kind is int or kind is float:
            return FAIL, tr(
                "`{function}` is a number, but this question is answered with the letter of "
                "an option: {ask}.",
                function=f,
                ask=ask,
            )
        if kind is not str:
            return FAIL, tr(
                "`{function}` is {a_type}, not a letter: {ask}.",
                function=f,
                a_type=_a(type_name(value)),
                ask=ask,
            )
        if len(value) > MAX_TEXT:
            return FAIL, tr("`{function}` is a long text; {ask}.", function=f, ask=ask)
        text = value.strip()
        if not text:
            return FAIL, tr(
                "`{function}` is an empty string: put one letter between the quotes.", function=f
            )
        match = _LETTER.fullmatch(text)
        if match is None:
            folded = " ".join(text.lower().split())
            texts = {
                " ".join(t.lower().split()) for c in self.choices for t in (c.text, shown(c.text))
            }
            if folded in texts:  # an option's text, in English or in the language in use
                return FAIL, tr(
                    "`{function}` holds the text of an option; answer with its letter ({letters}).",
                    function=f,
                    letters=self.letters,
                )
            letters = [ch for ch in text.lower() if ch.isalpha()]
            if 1 < len(letters) <= len(self.choices) and all(
                ch in "abcde"[: len(self.choices)] for ch in letters
            ):
                return FAIL, tr(
                    "`{function}` names {count} options; exactly one is right: pick one letter.",
                    function=f,
                    count=len(letters),
                )
            return FAIL, tr("`{function}` is not one letter; {ask}.", function=f, ask=ask)
        key = match.group(1).lower()
        if key not in [c.key for c in self.choices]:
            return FAIL, tr(
                'there is no option "{key}": the options are {letters}; pick one of them.',
                key=key,
                letters=self.letters,
            )
        if key == self.answer:
            return PASS, tr("well done: {why}", why=shown(self.right.why))
        chosen = next(c for c in self.choices if c.key == key)
        return FAIL, tr('"({key})" is not the answer. {why}', key=key, why=shown(chosen.why))

    def _asked(self) -> tuple[str, str]:
        plain, markup = self._head()
        options = [(c.key, shown(c.text)) for c in self.choices]
        lines = [plain, *(f"  ({key}) {text}" for key, text in options)]
        lines.append(
            tr(
                "Set {function} to one letter ({letters}), then run {call}.",
                function=self.function,
                letters=self.letters,
                call=f"{self.name}.check({self.function})",
            )
        )
        items = "".join(
            f'<li style="list-style: none">({key}) {markup_html(text)}</li>'
            for key, text in options
        )
        line = tr(
            "Set {function} to one letter ({letters}), then run {call}.",
            function=f"<code>{self.function}</code>",
            letters=self.letters,
            call=f"<code>{self.name}.check({self.function})</code>",
        )
        markup += f'<ul style="padding-left: 1em">{items}</ul><p>{line}</p>'
        return "\n".join(lines), markup

    def solution(self) -> None:
        """Show the right option and why it is right."""
        option = shown(self.right.text).rstrip(".。")
        why = shown(self.right.why)
        text = tr(
            "{name}: the answer is ({key}) {option}. {why}",
            name=self.name,
            key=self.right.key,
            option=option,
            why=why,
        )
        markup = "<p>" + tr(
            "{name}: the answer is ({key}) {option}. {why}",
            name=f"<b>{self.name}</b>",
            key=self.right.key,
            option=markup_html(option),
            why=markup_html(why),
        ) + "</p>"  # fmt: skip
        show({"text/plain": text, "text/html": markup})


class Numeric(Concept):
    """A question answered with one number (an int or a float).

    answer: a zero-argument function computing the value with the library or ``math`` (never a
    typed-in constant); rel_tol: the relative error accepted (0.05 for "roughly"); why: how the
    answer is worked out; mistakes: named wrong numbers, each outside the accepted band and far
    enough from the others to tell apart; unit: the unit asked for ("positions"), or "";
    decimals: the number of decimals a prompt asks for ("Answer to one decimal": 1), which then
    sets the accepted band to half a unit of the last decimal (9.2 or 9.21 for 9.2103, not 9); a
    prompt that asks for a precision must give it. answer_keys: expressions of the working that no
    mistake's ``why`` may contain (the value itself is always one). A NumPy float or int is read as
    the number it holds.
    """

    kind = N_("numeric")

    def __init__(self, name: str, prompt: str, answer: Callable[[], float], rel_tol: float,
                 why: str, mistakes: tuple[Mistake, ...], section: str, unit: str = "",
                 decimals: int | None = None, answer_keys: tuple[str, ...] = (),
                 hint: str = ""):  # fmt: skip
        super().__init__(name, prompt, section, hint)
        _require(callable(answer) and not isinstance(answer, (int, float)), name,
                 "answer must be a zero-argument function that computes the value with the "
                 "library (e.g. answer=lambda: ...), not a number")  # fmt: skip
        _require(type(rel_tol) is float and 0 < rel_tol <= 0.5, name,
                 f"rel_tol must be a float in (0, 0.5], e.g. 0.05; got {rel_tol!r}")  # fmt: skip
        _require_text(why, name, "why", MAX_WHY)
        _require(isinstance(unit, str), name, "unit must be a str")
        _require(isinstance(mistakes, tuple) and all(type(m) is Mistake for m in mistakes), name,
                 "mistakes must be a tuple of Mistake(value, why)")  # fmt: skip
        _require(decimals is None or type(decimals) is int and 0 <= decimals <= 6, name,
                 f"decimals must be None or an int from 0 to 6; got {decimals!r}")  # fmt: skip
        _require((decimals is not None) == bool(_PRECISION.search(prompt)), name,
                 "a prompt that asks for a precision (\"to one decimal\", \"to the nearest whole "
                 "number\") needs decimals= (the number of decimals asked for), and decimals= needs "
                 "such a prompt")  # fmt: skip
        value = answer()
        _require(type(value) in (int, float) and math.isfinite(value), name,
                 f"answer() must return a finite int or float; it returned {value!r}")  # fmt: skip
        self.answer, self.value, self.rel_tol = answer, value, rel_tol
        # Asked "to one decimal", an answer is right when it is the value to that precision: within
        # half a unit of its last decimal (9.2 or 9.21 for 9.2103, not 9 or 9.3).
        self.decimals = decimals
        self.abs_tol = None if decimals is None else 0.5 * 10.0**-decimals + 1e-9
        self.why, self.unit, self.mistakes = why.strip(), unit.strip(), mistakes
        for m in mistakes:
            _require(type(m.value) in (int, float) and math.isfinite(m.value), name,
                     f"a mistake's value must be a finite number; got {m.value!r}")  # fmt: skip
            _require_text(m.why, name, f"the why of mistake {m.value!r}", MAX_WHY)
            _require(self._apart(m.value, value), name,
                     f"mistake {m.value!r} lies within rel_tol of the answer "
                     f"{format_number(value)}: it would pass, or be both right and wrong")  # fmt: skip
        for i, m in enumerate(mistakes):
            for other in mistakes[i + 1 :]:
                _require(self._apart(m.value, other.value), name,
                         f"mistakes {m.value!r} and {other.value!r} are within rel_tol of each "
                         "other: a number near both could not be named")  # fmt: skip
        self.shown_value = format_number(value)
        self.working = _source(answer)
        # No mistake's why may give the answer away: its value, and the expressions given.
        self.answer_keys = (self.shown_value, *_keys(answer_keys, name))
        if decimals is not None:
            self.answer_keys += (f"{value:.{decimals}f}",)
        self.hints = (
            (self.nudge,)
            if self.nudge
            else (
                f"re-read {self.section}; write the formula first, then put in the numbers"
                + (f" (the answer is in {self.unit})." if self.unit else "."),
            )
        )

    def _hint(self) -> str:
        if self.unit:
            return tr(
                "re-read {section}; write the formula first, then put in the numbers "
                "(the answer is in {unit}).",
                section=shown(self.section),
                unit=shown(self.unit),
            )
        return tr(
            "re-read {section}; write the formula first, then put in the numbers.",
            section=shown(self.section),
        )

    def _apart(self, a: float, b: float) -> bool:
        """True when no number is within rel_tol of both ``a`` and ``b``."""
        return abs(a - b) > self.rel_tol * (abs(a) + abs(b))

    def near(self, got: float, target: float) -> bool:
        return abs(got - target) <= self.rel_tol * abs(target)

    def accepts(self, got: float) -> bool:
        """True when ``got`` is the answer, to the precision the question asks for."""
        if self.abs_tol is not None:
            return abs(got - self.value) <= self.abs_tol
        return self.near(got, self.value)

    @property
    def not_attempted(self) -> str:
        return tr(
            "set {function} to a number (an int or a float, no quotes), then run the check.",
            function=self.function,
        )

    def read(self, value) -> tuple[str, str]:
        f = self.function
        ask = tr("set {function} to one number, without quotes", function=f)
        kind = type(value)
        if kind is bool:
            return FAIL, tr(
                "`{function}` is {value}, a yes/no value; {ask}.", function=f, value=value, ask=ask
            )
        if kind is str:
            text = value.strip()
            if len(value) <= MAX_TEXT and _NUMBERISH.fullmatch(text):
                return FAIL, tr(
                    "`{function}` is a string; write the number without quotes, "
                    "{function} = {text}.",
                    function=f,
                    text=text,
                )
            return FAIL, tr("`{function}` is a string, not a number; {ask}.", function=f, ask=ask)
        if kind in _NUMPY_NUMBERS:  # a NumPy float or int is a number (np.log(10) / 0.25)
            value, kind = _NUMPY_NUMBERS[kind](value), _NUMPY_NUMBERS[kind]
        if kind is not int and kind is not float:
            return FAIL, tr(
                "`{function}` is {a_type}, not a number; {ask}.",
                function=f,
                a_type=_a(type_name(value)),
                ask=ask,
            )
        try:
            got = float(value)
        except OverflowError:
            return FAIL, tr(
                "`{function}` is too large to be the answer; {ask}.", function=f, ask=ask
            )
        if math.isnan(got):
            return FAIL, tr("`{function}` is NaN (not a number): {ask}.", function=f, ask=ask)
        if math.isinf(got):
            return FAIL, tr("`{function}` is infinite; set it to a finite number.", function=f)
        if self.accepts(got):
            return PASS, tr("well done: {why}", why=shown(self.why))
        if self.decimals is not None and self.near(got, self.value):
            return FAIL, tr(
                "`{function}` is not given to the precision the question asks for ({decimals} "
                "decimal places): work the number out to that precision.",
                function=f,
                decimals=self.decimals,
            )
        for mistake in self.mistakes:
            if self.near(got, mistake.value):
                return FAIL, shown(mistake.why)  # the verdict's header already says "not yet"
        return FAIL, tr(
            "That is not the number {section} leads to. Re-read it, write the "
            "formula, then put in the numbers (`{name}.hint()` gives a nudge).",
            section=shown(self.section),
            name=self.name,
        )

    def _asked(self) -> tuple[str, str]:
        plain, markup = self._head()
        call = f"{self.name}.check({self.function})"
        if self.unit:
            sentence = N_("Set {function} to a number (in {unit}), then run {call}.")
        else:
            sentence = N_("Set {function} to a number, then run {call}.")
        unit = shown(self.unit)
        line = translate(sentence).format(function=self.function, unit=unit, call=call)
        markup += "<p>" + translate(sentence).format(
            function=f"<code>{self.function}</code>",
            unit=html.escape(unit),
            call=f"<code>{call}</code>",
        ) + "</p>"  # fmt: skip
        return f"{plain}\n{line}", markup

    def solution(self) -> None:
        """Show the answer (3 significant digits), how it is worked out, and the computation."""
        values = {"name": self.name, "value": self.shown_value, "why": shown(self.why)}
        if self.unit:
            head = tr(
                "{name}: the answer is {value} {unit}. {why}", unit=shown(self.unit), **values
            )
        else:
            head = tr("{name}: the answer is {value}. {why}", **values)
        text, markup = head, f"<p>{markup_html(head)}</p>"
        if self.working:
            text += "\n" + tr("Computed as: {working}", working=self.working)
            code = f"<code>{html.escape(self.working)}</code>"
            markup += "<p>" + tr("Computed as: {working}", working=code) + "</p>"
        show({"text/plain": text, "text/html": markup})


# The prompts that ask for a precision, which ``decimals`` must then give.
_PRECISION = re.compile(r"\bdecimals?\b|nearest whole|significant (digit|figure)", re.IGNORECASE)

# NumPy's number types (exact types, not subclasses, which could define anything), and the Python
# type a value of each is read as: the grader's child sends them converted the same way.
_NUMPY_NUMBERS = {
    **{t: float for t in (np.float16, np.float32, np.float64)},
    **{t: int for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
                        np.uint64)},
}  # fmt: skip


def _keys(keys, name) -> tuple[str, ...]:
    _require(isinstance(keys, tuple) and all(isinstance(k, str) and k.strip() for k in keys),
             name, "answer_keys must be a tuple of non-empty str")  # fmt: skip
    return keys


def _source(fn) -> str:
    """The expression a lambda computes (or a function's body), from its source file; "" if it
    cannot be read."""
    try:
        code = fn.__code__
        lines, _ = inspect.findsource(fn)
        tree = ast.parse("".join(lines))
    except (AttributeError, OSError, TypeError, SyntaxError):
        return ""
    source = "".join(lines)
    found = [
        node
        for node in ast.walk(tree)
        if isinstance(node, (ast.Lambda, ast.FunctionDef))
        and node.lineno == code.co_firstlineno
        and (not isinstance(node, ast.FunctionDef) or node.name == code.co_name)
    ]
    if len(found) != 1:
        return ""
    node = found[0]
    if isinstance(node, ast.Lambda):
        segment = ast.get_source_segment(source, node.body) or ""
    else:
        segment = "\n".join(ast.get_source_segment(source, s) or "" for s in node.body)
    return " ".join(segment.split()) if isinstance(node, ast.Lambda) else segment


def _require(condition, name, problem: str) -> None:
    if not condition:
        raise ValueError(f"concept question {name!r}: {problem}.")


def _require_text(text, name, what: str, limit: int | None = None) -> None:
    _require(isinstance(text, str) and text.strip(), name, f"{what} must be a non-empty str")
    _require("$" not in text, name,
             f"{what} uses $: concept questions are plain text and Unicode, no $math$")  # fmt: skip
    if limit is not None:
        _require(len(text.strip()) <= limit, name,
                 f"{what} has {len(text.strip())} characters; keep it to {limit} so a verdict "
                 "shows it whole")  # fmt: skip


if len(_LEAD) + MAX_WHY > MAX_MESSAGE:  # pragma: no cover - a verdict must show every why whole
    raise ImportError("MAX_WHY is too long for a verdict's MAX_MESSAGE")
