"""The quizzes on the website: a lecture's quiz output (plain HTML, each option a ``<details>``)
reaches its page intact under a collapsed source, the teachers' Quizzes page carries every
chapter's quiz in projector type and is linked from the index, and the audit notices a lost
option. One small site (the start page and chapter 3, no frames) is built for all of them."""

import contextlib
import io
import re
import shutil
from pathlib import Path

import nbformat
import pytest

import tools.site as site
from posenc_lib.checks.quiz import chapter_concepts, quiz
from tools.site import QUIZZES, ROOT, build_site, course_map, quizzes_page
from tools.site_audit import QUIZ_ITEM, check_site, quiz_items

pytestmark = pytest.mark.skipif(
    shutil.which("jupyter-book", path=str(Path(ROOT, ".venv", "bin"))) is None
    and shutil.which("jupyter-book") is None,
    reason="jupyter-book 1.x is not installed: run `make setup` (it is in the test extra)",
)
STEM = "03_sinusoidal"


def _with_quiz_output(lecture: Path) -> int:
    """Give the lecture's quiz cell the output it has once executed; returns its item count."""
    notebook = nbformat.read(lecture, as_version=4)
    cell = next(c for c in notebook.cells if c.cell_type == "code" and "quiz(" in c.source)
    bundle = quiz(chapter_concepts("03"))._repr_mimebundle_()
    cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    nbformat.write(notebook, lecture)
    return bundle["text/html"].count(QUIZ_ITEM)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not chapter_concepts("03"):
        pytest.skip("chapter 3 has no concept questions yet")
    folder = tmp_path_factory.mktemp("quiz_site")
    root = folder / "course"
    for name in ("notebooks/00_start_here", *(f"{f}/{STEM}" for f in FOLDERS)):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f"{name}.ipynb", root / f"{name}.ipynb")
    items = _with_quiz_output(root / "notebooks" / f"{STEM}.ipynb")
    with contextlib.redirect_stderr(io.StringIO()):
        result = build_site(folder / "site", folder / "src", root=root, live=False)
    return result, folder / "src", items


FOLDERS = ("notebooks", "exercises", "solutions")


def test_the_lecture_page_keeps_every_option_and_its_feedback(built):
    result, source, items = built
    page = (result.folder / "notebooks" / f"{STEM}.html").read_text(encoding="utf-8")
    assert items == quiz_items(source / "notebooks" / f"{STEM}.ipynb") > 0
    assert page.count(QUIZ_ITEM) == items  # myst-nb keeps the <details>, none lost
    assert page.count("<summary") >= items
    # Every option's feedback and the numeric answers, exactly as the quiz wrote them.
    feedback = re.findall(r"</summary>(.*?)</details>", quiz(chapter_concepts("03")).html())
    assert len(feedback) == items
    assert [part for part in feedback if part not in page] == []
    # The quiz cell is tagged hide-input: its source collapsed, its output (the quiz) in view.
    start = page.index(QUIZ_ITEM)
    hidden = page.rindex('<details class="admonition hide above-input">', 0, start)
    source_shown = re.sub(r"<[^>]+>", "", page[hidden:start])
    assert "quiz(CONCEPTS)" in source_shown and "Show code cell source" in source_shown


def test_the_quizzes_page_has_every_chapter_in_projector_type_and_the_index_links_it(built):
    result, source, _ = built
    page = (result.folder / f"{QUIZZES}.html").read_text(encoding="utf-8")
    assert "Quizzes for the classroom" in page and "Chapter 3 · " in page
    assert page.count("posenc-quiz-projector") == 1  # only the chapter this site holds
    expected = quiz(chapter_concepts("03"), projector=True).html()
    assert expected in page  # the raw HTML block, byte for byte
    assert f'href="notebooks/{STEM}.html"' in page and f'href="exercises/{STEM}.html"' in page
    index = (result.folder / "index.html").read_text(encoding="utf-8")
    assert f'href="{QUIZZES}.html"' in index
    assert check_site(result.folder, source) == []


def test_the_audit_notices_a_quiz_option_the_page_lost(built, tmp_path):
    result, source, items = built
    broken = tmp_path / "site"
    shutil.copytree(result.folder, broken)
    page = broken / "notebooks" / f"{STEM}.html"
    text = page.read_text(encoding="utf-8")
    page.write_text(
        re.sub(
            r"<details class=\"posenc-quiz-option\".*?</details>",
            "",
            text,
            count=1,
            flags=re.DOTALL,
        ),
        encoding="utf-8",
    )
    problems = check_site(broken, source)
    assert problems == [
        f"notebooks/{STEM}.html: {items - 1} quiz options shown, but its notebook's quiz has {items}"
    ]


def test_the_quizzes_page_lists_each_chapter_with_questions_and_none_without(monkeypatch, tmp_path):
    chapters = course_map()
    text = quizzes_page(chapters)
    with_quiz = [ch for ch in chapters if chapter_concepts(ch.key)]
    assert text.count("```{raw} html") == len(with_quiz) > 0
    for ch in with_quiz:
        assert f"## Chapter {int(ch.key)} · {ch.title}" in text
        assert f"(notebooks/{ch.stem}.ipynb)" in text
    monkeypatch.setattr(site, "chapter_concepts", lambda key: ())
    assert quizzes_page(chapters) is None
    # With no quiz anywhere: no page, no link, nothing in the table of contents.
    site.stage(tmp_path / "src", keys=["03"])
    assert not (tmp_path / "src" / f"{QUIZZES}.md").exists()
    assert QUIZZES not in (tmp_path / "src" / "index.md").read_text(encoding="utf-8")
    assert QUIZZES not in (tmp_path / "src" / "_toc.yml").read_text(encoding="utf-8")
