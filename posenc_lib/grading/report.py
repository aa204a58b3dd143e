"""The class report: what a teacher reads the morning after the deadline.

    posenc-grade submissions/ --out grades.csv --report class.html --report class.md

From the graded rows (``grader.grade_all``) it gathers, per chapter and question: how many
submissions passed, the named mistakes the checks recognised, ranked by how many learners made
them (each check's ``diagnose`` names the usual mistakes: a missing scale, a softmax over the
wrong axis ...), and the answers that passed the notebook's own public check but failed on the
grader's hidden inputs. Then the score distribution (a figure), and the submissions that could
not be graded, with why. ``to_html`` writes one self-contained page (the figure inlined, no
network: it opens from ``file://``); ``to_markdown`` the same as plain text.
"""

from __future__ import annotations

import base64
import html
import importlib
import io
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from posenc_lib.grading.sheet import Row, _write_atomically, status_word
from posenc_lib.grading.submissions import chapters
from posenc_lib.i18n import _, get_language, tr

NOT_GRADED = ("error", "timeout", "invalid")  # rows whose questions did not all run
# The input a verdict names at its end (``checks.question.with_input``), in English or Chinese.
_INPUT = re.compile(r"\s*(\(Input: .*\)|（输入：.*）)\s*$", re.DOTALL)
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def mistake_sentence(message: str) -> str:
    """A verdict's sentence without the input it failed on: the mistake, the same for everyone."""
    return _INPUT.sub("", message).strip()


@dataclass
class QuestionSummary:
    """One question over the class: counts, and the named mistakes ranked by how many made them."""

    question: str
    title: str
    points: int
    hint: str
    graded: int = 0
    passed: int = 0
    not_attempted: int = 0
    hidden_only: int = 0  # passed the public check, failed on hidden inputs
    mistakes: list = field(default_factory=list)  # [(sentence, learners)], most frequent first

    @property
    def pass_rate(self) -> float:
        return self.passed / self.graded if self.graded else 0.0


@dataclass
class ChapterSummary:
    chapter: str
    max_score: int
    scores: list  # one per graded submission
    questions: list  # QuestionSummary per question, in the chapter's order


@dataclass
class ClassReport:
    chapters: list  # ChapterSummary, by chapter number
    not_graded: list  # (submission, status, reason)
    tampered: list  # (submission, reason): graded, but the notebook replaced checking code
    total: int


def _questions(chapter: str) -> list:
    module = importlib.import_module(chapters()[chapter])
    return list(module.QUESTIONS)


def class_report(rows: list[Row]) -> ClassReport:
    """Gather the rows of a graded class into per-chapter, per-question summaries."""
    if not rows:
        raise ValueError("there are no graded submissions to report on; grade some first.")
    by_chapter: dict[str, list[Row]] = {}
    not_graded, tampered = [], []
    for row in rows:
        if row.status in NOT_GRADED or not row.chapter:
            not_graded.append((row.submission, row.status, row.reason))
            continue
        if row.status == "tampered":
            tampered.append((row.submission, row.reason))
        by_chapter.setdefault(row.chapter, []).append(row)
    summaries = []
    for chapter in sorted(by_chapter):
        graded = by_chapter[chapter]
        questions = []
        for q in _questions(chapter):
            hints = q.shown_hints()
            summary = QuestionSummary(q.name, q.shown_title(), q.points, hints[0] if hints else "")
            named: Counter = Counter()
            first_wording: dict[str, str] = {}
            for row in graded:
                verdict = next((v for v in row.verdicts if v.question == q.name), None)
                if verdict is None:
                    continue
                summary.graded += 1
                summary.passed += verdict.status == "pass"
                summary.not_attempted += verdict.status == "not attempted"
                summary.hidden_only += q.name in row.hidden_only
                if verdict.status == "fail":
                    sentence = mistake_sentence(verdict.message)
                    key = _NUMBER.sub("#", sentence)  # the same mistake on other shapes
                    first_wording.setdefault(key, sentence)
                    named[key] += 1
            summary.mistakes = [(first_wording[k], n) for k, n in named.most_common()]
            questions.append(summary)
        summaries.append(
            ChapterSummary(chapter, graded[0].max_score, [r.score for r in graded], questions)
        )
    return ClassReport(summaries, not_graded, tampered, len(rows))


def _histogram_png(chapter: ChapterSummary) -> str:
    """The chapter's score distribution as a base64 PNG, for the HTML page."""
    from posenc_lib.viz.figures import new_figure

    fig = new_figure(4.2, 1.9)
    ax = fig.subplots()
    ax.hist(chapter.scores, bins=range(chapter.max_score + 2), align="left", rwidth=0.8,
            color="tab:blue")  # fmt: skip
    ax.set(xlabel=tr("score (of {max_score})", max_score=chapter.max_score),
           ylabel=_("submissions"), xlim=(-0.7, chapter.max_score + 0.7))  # fmt: skip
    ax.yaxis.get_major_locator().set_params(integer=True)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _distribution(chapter: ChapterSummary) -> str:
    scores = sorted(chapter.scores)
    middle = scores[len(scores) // 2]
    full = sum(s == chapter.max_score for s in scores)
    return tr(
        "{graded} graded; median {median} of {max_score}; "
        "{full} with full marks; lowest {lowest}, highest {highest}",
        graded=len(scores),
        median=middle,
        max_score=chapter.max_score,
        full=full,
        lowest=scores[0],
        highest=scores[-1],
    )


def _question_line(q: QuestionSummary) -> str:
    return tr(
        "{question}: {title} ({points} points): {passed} of {graded} passed ({rate:.0%}), "
        "{not_attempted} not attempted",
        question=q.question,
        title=q.title,
        points=q.points,
        passed=q.passed,
        graded=q.graded,
        rate=q.pass_rate,
        not_attempted=q.not_attempted,
    )


def to_markdown(report: ClassReport) -> str:
    """The report as plain text (Markdown)."""
    lines = ["# " + tr("Class report: {total} submissions", total=report.total), ""]
    for chapter in report.chapters:
        heading = tr("Chapter {chapter}", chapter=chapter.chapter)
        lines += [f"## {heading}", "", _distribution(chapter), ""]
        for q in chapter.questions:
            lines.append(f"### {_question_line(q)}")
            if q.hidden_only:
                lines.append(
                    "- "
                    + tr(
                        "{count} passed the notebook's own check but failed on hidden inputs.",
                        count=q.hidden_only,
                    )
                )
            for sentence, n in q.mistakes:
                lines.append(f"- {n} × {sentence}")
            if q.mistakes and q.hint:
                lines.append("- " + tr("hint the checks give: {hint}", hint=q.hint))
            lines.append("")
    lines += ["## " + _("Not graded"), ""]
    lines += [
        "- "
        + tr("{name}: {status}: {reason}", name=name, status=status_word(status), reason=reason)
        for name, status, reason in report.not_graded
    ] or ["- " + _("none")]
    if report.tampered:
        lines += ["", "## " + _("Graded, but the notebook replaced checking code"), ""]
        lines += [f"- {name}: {reason}" for name, reason in report.tampered]
    return "\n".join(lines) + "\n"


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60em; margin: 1em auto; padding: 0 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; }
td, th { border: 1px solid #ccc; padding: 3px 8px; text-align: left; vertical-align: top; }
.count { text-align: right; } .hint { color: #555; font-style: italic; }
"""


def to_html(report: ClassReport) -> str:
    """The report as one self-contained HTML page (the figures inlined as PNG data)."""
    e = html.escape
    language = "zh-Hans" if get_language() == "zh" else "en"
    title = _("Class report")
    parts = [
        f'<!DOCTYPE html><html lang="{language}"><head><meta charset="utf-8">',
        f"<title>{e(title)}</title><style>{_STYLE}</style></head><body>",
        "<h1>" + e(tr("Class report: {total} submissions", total=report.total)) + "</h1>",
    ]
    for chapter in report.chapters:
        heading = e(tr("Chapter {chapter}", chapter=chapter.chapter))
        parts.append(f'<h2 id="chapter-{e(chapter.chapter)}">{heading}</h2>')
        parts.append(f"<p>{e(_distribution(chapter))}</p>")
        alt = e(tr("score distribution, chapter {chapter}", chapter=chapter.chapter))
        parts.append(f'<img alt="{alt}" src="data:image/png;base64,{_histogram_png(chapter)}">')
        for q in chapter.questions:
            head = tr(
                "{question}: {title} ({points} points)",
                question=e(q.question),
                title=e(q.title),
                points=q.points,
            )
            counts = {
                "passed": q.passed,
                "graded": q.graded,
                "rate": q.pass_rate,
                "not_attempted": q.not_attempted,
            }
            if q.hidden_only:
                counts = tr(
                    "{passed} of {graded} passed ({rate:.0%}); {not_attempted} not attempted; "
                    "{count} passed the notebook's own check but failed on hidden inputs.",
                    count=f"<b>{q.hidden_only}</b>",
                    **counts,
                )
            else:
                counts = tr(
                    "{passed} of {graded} passed ({rate:.0%}); {not_attempted} not attempted.",
                    **counts,
                )
            parts.append(f"<h3>{head}</h3><p>{counts}</p>")
            if q.mistakes:
                rows = "".join(
                    f'<tr><td class="count">{n}</td><td>{e(sentence)}</td></tr>'
                    for sentence, n in q.mistakes
                )
                learners, named = _("learners"), _("the mistake the check named")
                parts.append(f"<table><tr><th>{learners}</th><th>{named}</th></tr>{rows}</table>")
                if q.hint:
                    hint = e(tr("Hint the checks give: {hint}", hint=q.hint))
                    parts.append(f'<p class="hint">{hint}</p>')
    parts.append("<h2>" + _("Not graded") + "</h2>")
    if report.not_graded:
        rows = "".join(
            f"<tr><td>{e(name)}</td><td>{e(status_word(status))}</td><td>{e(reason)}</td></tr>"
            for name, status, reason in report.not_graded
        )
        heads = "".join(f"<th>{h}</th>" for h in (_("submission"), _("status"), _("why")))
        parts.append(f"<table><tr>{heads}</tr>{rows}</table>")
    else:
        parts.append("<p>" + _("None: every submission was graded.") + "</p>")
    if report.tampered:
        parts.append("<h2>" + _("Graded, but the notebook replaced checking code") + "</h2><ul>")
        parts += [f"<li>{e(name)}: {e(reason)}</li>" for name, reason in report.tampered]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_report(rows: list[Row], path: Path) -> None:
    """Write the class report to ``path``: HTML for .html/.htm, Markdown for .md."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".html", ".htm", ".md"):
        raise ValueError(
            f"the report {path.name!r} needs a name ending in .html (a web page) or .md (text)."
        )
    report = class_report(rows)
    _write_atomically(path, to_html(report) if suffix in (".html", ".htm") else to_markdown(report))
