"""A chapter's concept questions as a quiz: click an option to see why it is right or wrong.

``quiz(CONCEPTS)`` ends each lecture; ``quiz(CONCEPTS, projector=True)`` is the same quiz in large
type, one question to a screen, for the classroom (``make demo CHAPTER=03 DEMO_ARGS=--quiz``, and
the website's Quizzes page). The questions are ``concepts.MultipleChoice`` and ``concepts.Numeric``
objects; only their public attributes are read (name, prompt, section; choices with key, text and
why, and answer, for a multiple choice; answer(), rel_tol, why, mistakes and unit for a numeric).

Why plain HTML: the feedback must open with no kernel and look the same in JupyterLab, in Voila
and on the static website. So each option is a ``<details>`` element whose ``<summary>`` is the
option and whose body is its feedback, and a numeric question's answer sits in a closed
``<details>``: the browser opens them on a click, with no script. JupyterLab sanitizes the HTML
of a notebook it does not trust (no ``<style>``, no script, inline styles from a fixed list of
properties whose colours are hex, rgb or named), so every style here is inline, colours are greys
with transparency that read on the light and the dark theme, and the text keeps the theme's colour.

The plain-text version (what nbval compares) lists the questions and options, never the answers.
"""

from __future__ import annotations

import html
import importlib
import math
import re

from posenc_lib.i18n import N_, _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

# Greys with transparency read on a white page and on JupyterLab's dark theme alike.
BORDER = "rgba(128, 128, 128, 0.45)"
SHADE = "rgba(128, 128, 128, 0.10)"
RIGHT_COLOUR = "#2e9e4f"  # mid-tone green and red: readable on light and dark backgrounds
WRONG_COLOUR = "#d9534f"
CLICK_NOTE = N_(
    "Click an option in JupyterLab or on the course website to see why it is right or wrong; "
    "a numeric question shows its answer the same way."
)


def shown(text) -> str:
    """A question's text (marked ``N_`` where the chapter defines it) in the language in use."""
    return translate(text).strip() if isinstance(text, str) and text else text


def quiz(questions, *, projector: bool = False) -> Quiz:
    """The concept questions as a quiz for a notebook, the website or the projector.

    questions: a chapter's ``CONCEPTS`` (a tuple of questions), or one question.
    projector: large type (about 28 px) and one question to a screen, for the classroom.
    The returned object shows itself when it is a cell's last value.
    """
    return Quiz(questions, projector=projector)


def chapter_concepts(key: str) -> tuple:
    """A chapter's concept questions (``posenc_lib.checks.chNN.CONCEPTS``); () when it has none.

    key: "01" ... "08" ("start" and unknown keys have none). The demo and the website list a
    chapter's quiz only when this is not empty.
    """
    if not re.fullmatch(r"\d\d", str(key)):
        return ()
    name = f"posenc_lib.checks.ch{key}"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name:  # the chapter exists but something it imports does not: say so
            raise
        return ()
    return tuple(getattr(module, "CONCEPTS", ()))


class Quiz:
    """Concept questions shown as clickable HTML (text/html) and a plain listing (text/plain)."""

    def __init__(self, questions, *, projector: bool = False):
        if _is_question(questions):
            questions = (questions,)
        try:
            questions = tuple(questions)
        except TypeError:
            questions = (questions,)
        wrong = [q for q in questions if not _is_question(q)]
        if not questions or wrong:
            raise TypeError(
                "quiz() shows concept questions: pass a chapter's CONCEPTS (for example "
                "`from posenc_lib.checks.ch03 import CONCEPTS` then `quiz(CONCEPTS)`), not "
                f"{_describe(wrong[0] if wrong else questions)}."
            )
        self.questions = questions
        self.projector = bool(projector)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/plain": self.text(), "text/html": self.html()}

    def __repr__(self) -> str:
        return self.text()

    def text(self) -> str:
        """The questions and their options, numbered, without any answer or feedback."""
        n = len(self.questions)
        if n == 1:
            lines = [_("Check your understanding: 1 question."), ""]
        else:
            lines = [tr("Check your understanding: {n} questions.", n=n), ""]
        for number, q in enumerate(self.questions, start=1):
            prompt = shown(q.prompt).replace("\n", "\n   ")
            lines.append(f"{number}. ({q.name}) {prompt}")
            if _is_choice(q):
                lines += [f"   ({c.key}) {shown(c.text)}" for c in q.choices]
            else:
                unit = shown(getattr(q, "unit", ""))
                if unit:
                    lines.append("   " + tr("Answer with a number (in {unit}).", unit=unit))
                else:
                    lines.append("   " + _("Answer with a number."))
            lines.append("")
        lines.append(translate(CLICK_NOTE))
        return "\n".join(lines)

    def html(self) -> str:
        """The quiz as self-contained HTML: inline styles only, no script, nothing loaded."""
        size = "font-size: 28px; line-height: 1.45" if self.projector else "line-height: 1.5"
        blocks = [
            _question_html(number, q, self.projector)
            for number, q in enumerate(self.questions, start=1)
        ]
        note = f'<p style="opacity: 0.75; font-size: 0.85em">{_inline(translate(CLICK_NOTE))}</p>'
        mode = "posenc-quiz posenc-quiz-projector" if self.projector else "posenc-quiz"
        return f'<div class="{mode}" style="{size}">{"".join(blocks)}{note}</div>'


def _is_question(q) -> bool:
    return hasattr(q, "prompt") and hasattr(q, "name") and hasattr(q, "answer")


def _is_choice(q) -> bool:
    return hasattr(q, "choices")


def _describe(value) -> str:
    if value is None or value == ():
        return "None" if value is None else "an empty list"
    kind = type(value).__name__
    return f"{'an' if kind[:1] in 'aeiouAEIOU' else 'a'} {kind}"


def _inline(text: str) -> str:
    """Text as HTML: escaped, with `code` in backticks shown as code."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(str(text)))


def three_digits(value: float) -> str:
    """A number to 3 significant digits, as a reader writes it: 62,800; 6.28; 0.5; 1.23e-07.

    A whole number below a billion is shown whole (8,192, not 8,190): it is exact on every CPU.
    """
    value = float(value)
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    if value.is_integer() and abs(value) < 1e9:
        return f"{int(value):,}"
    rounded = float(f"{value:.2e}")  # 3 significant digits
    exponent = math.floor(math.log10(abs(rounded)))
    if exponent < -4 or exponent >= 9:
        return f"{value:.2e}"
    shown = f"{rounded:,.{max(0, 2 - exponent)}f}"
    return shown.rstrip("0").rstrip(".") if "." in shown else shown


def _question_html(number: int, q, projector: bool) -> str:
    spacing = (
        "margin: 0 0 2.5em 0; padding: 0.6em 0 1.2em 0; min-height: 85vh; page-break-inside: avoid"
        if projector
        else "margin: 0 0 1.4em 0"
    )
    head = (
        f'<p style="margin: 0 0 0.5em 0"><strong>{number}.</strong> {_inline(shown(q.prompt))} '
        f'<span style="opacity: 0.6; font-size: 0.8em">({html.escape(q.name)})</span></p>'
    )
    body = _choices_html(q) if _is_choice(q) else _numeric_html(q)
    return f'<div class="posenc-quiz-question" style="{spacing}">{head}{body}</div>'


SUMMARY = f"cursor: pointer; padding: 0.35em 0.7em; border: 1px solid {BORDER}; border-radius: 6px"
DETAILS = "margin: 0.4em 0"
FEEDBACK = "margin: 0.35em 0 0.6em 1.2em; padding: 0.3em 0.8em; border-left: 4px solid {colour}"


def _choices_html(q) -> str:
    """Each option a closed <details>: the summary is the option, the body its feedback."""
    answer = str(q.answer).strip().lower()
    options = []
    for c in q.choices:
        right = c.key.strip().lower() == answer
        colour = RIGHT_COLOUR if right else WRONG_COLOUR
        verdict = _("✓ Right.") if right else _("✗ Not quite.")
        options.append(
            f'<details class="posenc-quiz-option" style="{DETAILS}">'
            f'<summary style="{SUMMARY}; background-color: {SHADE}">'
            f"({html.escape(c.key)}) {_inline(shown(c.text))}</summary>"
            f'<div class="posenc-quiz-feedback" style="{FEEDBACK.format(colour=colour)}">'
            f'<strong style="color: {colour}">{verdict}</strong> {_inline(shown(c.why))}</div>'
            "</details>"
        )
    return "".join(options)


def _numeric_html(q) -> str:
    """The answer (3 significant digits), its working and the named mistakes, in a <details>."""
    value = q.answer() if callable(q.answer) else q.answer
    unit = shown(getattr(q, "unit", ""))
    answer = three_digits(value) + (f" {html.escape(unit)}" if unit else "")
    tolerance = f"{q.rel_tol * 100:.3g}%"
    if getattr(q, "decimals", None) is not None:  # asked to a precision: half its last unit
        tolerance = f"±{0.5 * 10.0**-q.decimals:.{q.decimals + 1}f}"
    mistakes = "".join(
        "<li>"
        + tr(
            "{value}: {why}",
            value=f"<strong>{three_digits(m.value)}</strong>",
            why=_inline(shown(m.why)),
        )
        + "</li>"
        for m in getattr(q, "mistakes", ())
    )
    common = _("Common mistakes:")
    listed = (
        f'<p style="margin: 0.5em 0 0.2em 0">{common}</p>'
        f'<ul style="margin: 0 0 0.3em 0">{mistakes}</ul>'
        if mistakes
        else ""
    )
    if unit:
        ask = tr("A number (in {unit}).", unit=html.escape(unit))
    else:
        ask = _("A number.")
    said = tr(
        "Answer: {answer} (within {tolerance} counts as right). {why}",
        answer=f"<strong>{answer}</strong>",
        tolerance=tolerance,
        why=_inline(shown(q.why)),
    )
    show_answer = _("Show the answer")
    return (
        f'<p style="margin: 0 0 0.4em 0; opacity: 0.8">{ask}</p>'
        f'<details class="posenc-quiz-answer" style="{DETAILS}">'
        f'<summary style="{SUMMARY}; background-color: {SHADE}">{show_answer}</summary>'
        f'<div class="posenc-quiz-feedback" style="{FEEDBACK.format(colour=RIGHT_COLOUR)}">'
        f'<p style="margin: 0.2em 0">{said}</p>{listed}</div>'
        "</details>"
    )
