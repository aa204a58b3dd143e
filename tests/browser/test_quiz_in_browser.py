"""The concept quiz in a real browser, where a class and a reader meet it: clicking an option
opens its feedback and nothing else, with no kernel and no script of ours.

* In demo mode (``make demo CHAPTER=03 DEMO_ARGS=--quiz``): Voila's page of chapter 3's quiz,
  from the demo server the dashboard tests already start, in projector type; the demo's index
  lists every chapter's quiz.
* On the website: the lecture page and the teachers' Quizzes page of a small site (the start page
  and chapter 3, no frames; about 10 s), the lecture's quiz cell given the output it has when run.
* On a light and a dark page (JupyterLab's two themes): the text keeps the page's colour.

Screenshots are kept in ``build/browser-artifacts/``.
"""

from __future__ import annotations

import contextlib
import io
import shutil

import pytest

from posenc_lib.checks.quiz import chapter_concepts, quiz, three_digits
from tools.demo import quiz_chapters, quiz_path, quiz_title
from tools.site import QUIZZES, ROOT, build_site

from .browser_setup import require_browser

pytestmark = pytest.mark.timeout(240)
KEY, STEM = "03", "03_sinusoidal"
LOAD_MS = 60_000  # Voila: a kernel starts and imports the library before the page shows

# Each quiz item as the reader sees it: its summary's text, whether it is open, and whether its
# feedback is on screen (a closed <details> renders nothing of its body).
ITEMS = """root => [...root.querySelectorAll('details')].map(d => {
  const body = d.querySelector('.posenc-quiz-feedback');
  const box = body.getBoundingClientRect();
  return {summary: d.querySelector('summary').innerText.trim(), open: d.open,
          shown: box.width > 0 && box.height > 0 && body.checkVisibility(),
          feedback: body.innerText.trim()};
})"""


def _questions():
    questions = chapter_concepts(KEY)
    if not questions:
        pytest.skip(f"chapter {KEY} has no concept questions yet")
    return questions


def _click_each_kind(page, root, artifact: str, artifacts) -> list[dict]:
    """Click the first option and the last item (a numeric answer when there is one); check that
    exactly the clicked items open, each showing its feedback, and no other."""
    before = root.evaluate(ITEMS)
    assert before and not any(item["open"] or item["shown"] for item in before), before
    summaries = root.locator("summary")
    clicked = [0, summaries.count() - 1]
    for index in clicked:
        summaries.nth(index).scroll_into_view_if_needed()
        summaries.nth(index).click()
    after = root.evaluate(ITEMS)
    page.screenshot(path=str(artifacts / artifact))
    assert [i for i, item in enumerate(after) if item["open"]] == clicked
    assert [i for i, item in enumerate(after) if item["shown"]] == clicked
    for index in clicked:
        assert after[index]["feedback"], after[index]
        assert after[index]["summary"] == before[index]["summary"]  # the summary gives nothing
    return after


def _expected_feedback(questions) -> list[str]:
    """The start of each item's feedback as the quiz writes it, as text, in page order: an
    option's verdict and why; a numeric question's answer to 3 significant digits."""
    out = []
    for q in questions:
        if hasattr(q, "choices"):
            right = str(q.answer).strip().lower()
            for c in q.choices:
                verdict = "✓ Right." if c.key == right else "✗ Not quite."
                out.append(f"{verdict} {c.why.replace('`', '')}")
        else:
            out.append(f"Answer: {three_digits(q.answer())}")
    return out


def _assert_feedback(after: list[dict], questions) -> None:
    """Every open item shows the feedback written for it (the clicked option's own why)."""
    expected = _expected_feedback(questions)
    assert len(after) == len(expected)
    opened = [(item, want) for item, want in zip(after, expected, strict=True) if item["open"]]
    assert opened
    for item, want in opened:
        assert " ".join(item["feedback"].split()).startswith(" ".join(want.split())), (item, want)


def test_the_demo_quiz_opens_each_options_feedback_on_a_click(demo_server, browser, artifacts):
    questions = _questions()
    folder = next(iter(demo_server.pages.values())).parent
    assert KEY in quiz_chapters() and quiz_path(KEY, folder).is_file()
    page = browser.new_page()
    try:
        page.goto(demo_server.base, timeout=LOAD_MS)  # the demo's index, listed by its script
        page.get_by_text(quiz_path(KEY, folder).name).wait_for(timeout=LOAD_MS)
        index = page.locator("body").inner_text()
        page.goto(f"{demo_server.base}voila/render/{quiz_path(KEY, folder).name}", timeout=LOAD_MS)
        root = page.locator(".posenc-quiz")
        root.wait_for(timeout=LOAD_MS)
        assert page.title() == quiz_title(KEY)
        size = root.evaluate("el => getComputedStyle(el).fontSize")
        after = _click_each_kind(page, root, "demo_quiz_03.png", artifacts)
        code = page.locator(".jp-InputArea, .jp-CodeCell .jp-Editor").count()
    finally:
        page.close()
    for key in quiz_chapters():  # every chapter's quiz listed beside its dashboard
        assert quiz_path(key, folder).name in index, key
    assert size == "28px" and code == 0
    _assert_feedback(after, questions)


@pytest.fixture(scope="module")
def small_site(tmp_path_factory):
    """The start page and chapter 3 as a site, the quiz cell given its output; no frames."""
    require_browser()
    questions = _questions()
    import nbformat

    folder = tmp_path_factory.mktemp("quiz_browser_site")
    root = folder / "course"
    for name in ("notebooks/00_start_here", *(f"{f}/{STEM}" for f in FOLDERS)):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f"{name}.ipynb", root / f"{name}.ipynb")
    lecture = root / "notebooks" / f"{STEM}.ipynb"
    notebook = nbformat.read(lecture, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code" and "quiz(" in c.source)
    bundle = quiz(questions)._repr_mimebundle_()
    cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    nbformat.write(notebook, lecture)
    with contextlib.redirect_stderr(io.StringIO()):
        built = build_site(folder / "site", folder / "src", root=root, live=False)
    return built.folder


FOLDERS = ("notebooks", "exercises", "solutions")


@pytest.mark.parametrize("path", [f"notebooks/{STEM}.html", f"{QUIZZES}.html"])
def test_the_website_quiz_opens_each_options_feedback_on_a_click(
    small_site, browser, artifacts, path
):
    questions = _questions()
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto((small_site / path).as_uri(), wait_until="load", timeout=60_000)
        root = page.locator(".posenc-quiz")
        assert root.count() == 1
        size = root.evaluate("el => getComputedStyle(el).fontSize")
        name = path.replace("/", "_").replace(".html", "")
        after = _click_each_kind(page, root, f"site_quiz_{name}.png", artifacts)
    finally:
        page.close()
    assert (size == "28px") == (path == f"{QUIZZES}.html")  # the teachers' page: projector type
    _assert_feedback(after, questions)
    # The theme's own scripts may complain (thebe's, twice declared); nothing of the quiz may.
    assert [e for e in errors if "quiz" in e.lower() or "details" in e.lower()] == []


@pytest.mark.parametrize(
    "theme, background, text", [("light", "#ffffff", "#111111"), ("dark", "#111111", "#dddddd")]
)
def test_the_quiz_reads_on_a_light_and_a_dark_page(
    browser, artifacts, tmp_path, theme, background, text
):
    questions = _questions()
    file = tmp_path / f"{theme}.html"
    file.write_text(
        f'<!doctype html><html><head><meta charset="utf-8"></head>'
        f'<body style="background: {background}; color: {text}; font-family: sans-serif">'
        f"{quiz(questions).html()}</body></html>",
        encoding="utf-8",
    )
    page = browser.new_page()
    try:
        page.goto(file.as_uri())
        root = page.locator(".posenc-quiz")
        after = _click_each_kind(page, root, f"quiz_{theme}.png", artifacts)
        colours = page.evaluate(
            """() => {
              const body = getComputedStyle(document.body).color;
              const els = document.querySelectorAll('.posenc-quiz p, .posenc-quiz summary');
              return [body, [...new Set([...els].map(el => getComputedStyle(el).color))]];
            }"""
        )
    finally:
        page.close()
    body, used = colours
    assert used == [body], f"the quiz's text must keep the page's colour {body}, not {used}"
    _assert_feedback(after, questions)
