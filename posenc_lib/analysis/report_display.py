"""How the yardstick's verdicts show themselves: one report as a table, several side by side.

``report.position_report`` measures an encoding and returns a ``PositionReport``: one ``Property``
row per property (its measurement, threshold and verdict). This module holds those rows and how
they print, as plain text (``str``, IPython's pretty printer) and as HTML in a notebook, and
``compare_reports``, which puts several reports in one table, encodings as columns.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field

from posenc_lib.i18n import _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable


@dataclass
class Property:
    """One row of the report. ``passed`` is None when the property could not be measured."""

    name: str  # the key, in English (marked N_ in ``report``; ``label`` shows it translated)
    value: float | None
    shown: str  # the measurement as printed
    threshold: str
    passed: bool | None
    detail: str  # what was measured, on which table

    @property
    def mark(self) -> str:
        return {True: "✓", False: "✗", None: "–"}[self.passed]

    @property
    def label(self) -> str:
        """The property's name in the language in use."""
        return translate(self.name)


def _holds(report) -> str:
    return tr(
        "{passed} of {measured} properties hold", passed=report.score[0], measured=report.score[1]
    )


def _of(report) -> str:
    return tr("{passed} of {measured}", passed=report.score[0], measured=report.score[1])


@dataclass(repr=False)
class PositionReport:
    """The yardstick's verdicts for one encoding; shows itself as a table."""

    name: str
    rows: list[Property]
    note: str = ""
    _lengths: dict = field(default_factory=dict, repr=False)

    @property
    def passed(self) -> dict[str, bool | None]:
        return {row.name: row.passed for row in self.rows}

    @property
    def score(self) -> tuple[int, int]:
        """(properties passed, properties measured)."""
        measured = [r.passed for r in self.rows if r.passed is not None]
        return sum(measured), len(measured)

    def __getitem__(self, name: str) -> Property:
        for row in self.rows:
            if row.name == name:
                return row
        raise KeyError(
            tr(
                "no property {name!r}; the report has {names}.",
                name=name,
                names=", ".join(self.passed),
            )
        )

    def __str__(self) -> str:
        header = (_("property"), _("measured"), _("threshold"), "")
        lines = [(r.label, r.shown, r.threshold, r.mark) for r in self.rows]
        widths = [max(len(x[i]) for x in [header, *lines]) for i in range(3)]
        text = [f"{self.name}: {_holds(self)}"]
        for row in [header, *lines]:
            text.append(
                "  ".join(c.ljust(w) for c, w in zip(row[:3], widths, strict=True)) + "  " + row[3]
            )
        if self.note:
            text.append(self.note)
        return "\n".join(line.rstrip() for line in text)

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer, cycle) -> None:  # IPython's plain-text view
        printer.text(str(self))

    def _repr_html_(self) -> str:
        body = "".join(
            f"<tr><td>{r.label}</td><td>{_mark_html(r)}</td><td>{html.escape(r.shown)}</td>"
            f"<td>{html.escape(r.threshold)}</td><td style='color:#555'>{html.escape(r.detail)}</td></tr>"
            for r in self.rows
        )
        note = f"<p style='color:#555'>{html.escape(self.note)}</p>" if self.note else ""
        heads = "".join(
            f"<th>{h}</th>"
            for h in (_("property"), "", _("measured"), _("threshold"), _("on what"))
        )
        return (
            f"<b>{html.escape(self.name)}</b>: {_holds(self)}"
            f"<table><tr>{heads}</tr>{body}</table>{note}"
        )


@dataclass(repr=False)
class Comparison:
    """Several reports side by side: properties as rows, encodings as columns."""

    reports: list[PositionReport]

    def _cells(self):
        names = [row.name for row in self.reports[0].rows]
        return [translate(n) for n in names], [[r[name] for r in self.reports] for name in names]

    def __str__(self) -> str:
        names, cells = self._cells()
        header = [_("property"), *(r.name for r in self.reports)]
        lines = [
            [n, *(f"{p.mark} {p.shown}" for p in row)] for n, row in zip(names, cells, strict=True)
        ]
        lines.append([_("holds"), *(_of(r) for r in self.reports)])
        widths = [max(len(x[i]) for x in [header, *lines]) for i in range(len(header))]
        return "\n".join(
            "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            for row in [header, *lines]
        )

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer, cycle) -> None:
        printer.text(str(self))

    def _repr_html_(self) -> str:
        names, cells = self._cells()
        head = "".join(f"<th>{html.escape(r.name)}</th>" for r in self.reports)
        body = "".join(
            f"<tr><td>{n}</td>"
            + "".join(f"<td>{_mark_html(p)} {html.escape(p.shown)}</td>" for p in row)
            + "</tr>"
            for n, row in zip(names, cells, strict=True)
        )
        score = "".join(f"<td><b>{_of(r)}</b></td>" for r in self.reports)
        prop, holds = _("property"), _("holds")
        return (
            f"<table><tr><th>{prop}</th>{head}</tr>{body}<tr><td>{holds}</td>{score}</tr></table>"
        )


def _mark_html(row: Property) -> str:
    colour = {True: "#1b7f3b", False: "#b42318", None: "#6b7280"}[row.passed]
    return f"<b style='color:{colour}'>{row.mark}</b>"


def compare_reports(reports) -> Comparison:
    """One table of several reports (all from ``position_report``), encodings as columns."""
    reports = list(reports)
    if not reports or not all(isinstance(r, PositionReport) for r in reports):
        raise ValueError(_("compare_reports takes a list of reports made by position_report."))
    return Comparison(reports)
