"""What a check says: a ``Verdict`` per question (pass, fail or not attempted, with a tutor's
sentence and the points), and a chapter's ``Scorecard``; each shown once in a notebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from posenc_lib.checks.run import NOT_ATTEMPTED
from posenc_lib.i18n import N_, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

PASS, FAIL = "pass", "fail"

_SYMBOL = {PASS: "✓", FAIL: "✗", NOT_ATTEMPTED: "○"}
_COLOUR = {PASS: "#1b7f3b", FAIL: "#b42318", NOT_ATTEMPTED: "#6b7280"}
_HEADLINE = {PASS: N_("correct"), FAIL: N_("not yet"), NOT_ATTEMPTED: N_("not attempted")}


def headline(status: str) -> str:
    """The word a verdict's status is shown with, in the language in use."""
    return translate(_HEADLINE[status])


def _line(head: str, points: int, max_points: int, message: str) -> str:
    """ "q1 ✓ correct (4/4 points): well done." (``head`` may be "", for the HTML's bold head)."""
    return tr(
        "{head} ({points}/{max_points} points): {message}",
        head=head,
        points=points,
        max_points=max_points,
        message=message,
    )


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
        head = f"{self.question} {_SYMBOL[self.status]} {headline(self.status)}"
        return _line(head, self.points, self.max_points, self.message)

    def _repr_html_(self) -> str:
        colour = _COLOUR[self.status]
        head = f"{self.question} {_SYMBOL[self.status]} {headline(self.status)}"
        return (
            f'<div style="border-left: 4px solid {colour}; padding: 2px 8px">'
            f'<b style="color: {colour}">{escape_html(head)}</b>'
            f"{_line('', self.points, self.max_points, escape_html(self.message))}</div>"
        )

    def _ipython_display_(self) -> None:
        # ``check`` shows the verdict as it returns it; when the call is also the cell's last line,
        # IPython would show it a second time. Show each verdict once.
        if not self._shown:
            self._shown = True
            show({"text/plain": str(self), "text/html": self._repr_html_()})


def escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def show(bundle: dict) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:  # pragma: no cover - IPython comes with the course
        get_ipython = None
    if get_ipython is not None and get_ipython() is not None:
        display(bundle, raw=True)
    else:
        print(bundle["text/plain"])


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
            f"{v.question}  {_SYMBOL[v.status]} {headline(v.status):<13} {v.points}/{v.max_points}"
            for v in self
        ]
        total = tr(
            "total: {points}/{max_points} points", points=self.points, max_points=self.max_points
        )
        return "\n".join([*lines, total])

    def _ipython_display_(self) -> None:
        if not self._shown:
            self._shown = True
            show({"text/plain": str(self), "text/html": f"<pre>{escape_html(str(self))}</pre>"})
