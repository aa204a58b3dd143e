"""The class report opens in Chromium from ``file://``, with nothing fetched from anywhere: its
headings, its ranked mistakes and its inlined score figure all show."""

from __future__ import annotations

from posenc_lib.checks import Verdict
from posenc_lib.grading.report import write_report
from posenc_lib.grading.sheet import Row

UNSCALED = "Close, but the scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax."


def _class() -> list[Row]:
    def row(name, q1_message=None, hidden=()):
        q1 = (
            Verdict("q1", "pass", "well done.", 3, 3)
            if q1_message is None
            else Verdict("q1", "fail", f"{q1_message} (Input: x (4, 6).)", 0, 3)
        )
        rest = [Verdict(f"q{i}", "pass", "well done.", 2, 2) for i in (2, 3, 4)]
        rest.append(Verdict("q5", "pass", "well done.", 3, 3))
        return Row(name, "01", "ok", sum(v.points for v in [q1, *rest]), 12, [q1, *rest],
                   hidden_only=list(hidden))  # fmt: skip

    return [
        row("ada"),
        row("ben", UNSCALED),
        row("cai", UNSCALED),
        row("dan", "Close, but you divide the scores by d_k; the scale is 1/sqrt(d_k)."),
        row("fay", UNSCALED, hidden=["q1"]),
        Row("gus", "", "invalid", reason="metadata.posenc.chapter is missing"),
    ]


def test_the_class_report_opens_from_file_with_its_figure(browser, tmp_path, artifacts):
    path = tmp_path / "class.html"
    write_report(_class(), path)
    page = browser.new_page()
    outside = []
    page.on("request", lambda r: outside.append(r.url) if not r.url.startswith(("file:", "data:")) else None)  # fmt: skip
    try:
        page.goto(path.as_uri(), wait_until="load", timeout=30_000)
        assert page.locator("h1").inner_text() == "Class report: 6 submissions"
        assert page.locator("h2").first.inner_text() == "Chapter 01"
        first = page.locator("table tr").nth(1).inner_text()
        assert first.startswith("3") and "not scaled" in first  # the most frequent mistake first
        width = page.evaluate("() => document.querySelector('img').naturalWidth")
        assert width > 100  # the inlined PNG decoded
        body = page.locator("body").inner_text()
        assert "passed the notebook's own check but failed on hidden inputs" in body
        assert "gus" in body and "metadata.posenc.chapter" in body
        page.screenshot(path=str(artifacts / "class-report.png"), full_page=True)
    finally:
        page.close()
    assert outside == []
