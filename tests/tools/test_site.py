"""The course website: built offline from the committed notebooks, every chapter listed, every
link resolving, every page showing its figures, every dashboard live from frames drawn at build time
(within its budget), math served locally."""

import re
import shutil
from pathlib import Path

import nbformat
import pytest

from tools.authoring import lecture_notebooks
from tools.course_plan import load
from tools.site import ROOT, WIDGET_VIEW, build_site, chapter_key, course_map, stage
from tools.site_audit import DASHBOARD_BYTES, SITE_BYTES, check_site, png_outputs, references
from tools.site_frames import PLANS

HIDDEN = '<details class="admonition hide above-input">'  # myst-nb's collapsed source, closed

pytestmark = [
    pytest.mark.skipif(
        shutil.which("jupyter-book", path=str(Path(ROOT, ".venv", "bin"))) is None
        and shutil.which("jupyter-book") is None,
        reason="jupyter-book 1.x is not installed: run `make setup` (it is in the test extra)",
    ),
    # The first test builds the whole site (about 90 s on 2 quiet cores, more on a busy machine).
    pytest.mark.timeout(600),
]


@pytest.fixture(scope="module")
def site(whole_site):
    built, source, errors = whole_site  # built once for this file and the browser's (conftest.py)
    size = sum(p.stat().st_size for p in built.folder.rglob("*") if p.is_file())
    print(f"\nsite: {len(built.pages)} pages, {size / 1e6:.1f} MB, built in {built.seconds:.1f} s")
    for r in built.frames:
        print(f"  {r.key:>5}: {r.frames} frames, {r.bytes / 1e6:.2f} MB, {r.seconds:.0f} s")
    assert errors == ""
    return built, source


def _page(built, relative: str) -> str:
    return (built.folder / relative).read_text(encoding="utf-8")


def test_the_build_succeeds_with_an_index_at_the_top(site):
    built, _ = site
    assert (built.folder / "index.html").is_file()
    lectures = [p.relative_to(ROOT / "notebooks") for p in lecture_notebooks()]  # deep dives too
    assert any(p.parent.name == "deeper" for p in lectures)
    for lecture in lectures:
        assert (built.folder / "notebooks" / lecture.with_suffix(".html")).is_file(), lecture
    for folder in ("exercises", "solutions"):
        for notebook in (ROOT / folder).glob("*.ipynb"):
            assert (built.folder / folder / f"{notebook.stem}.html").is_file(), notebook


def test_one_edition_built_alone_links_to_no_other(site):
    built, _ = site  # make site builds both editions and links them (tests/tools/test_site_zh.py)
    for page in ("index.html", "notebooks/05_alibi.html"):
        assert "posenc-language" not in _page(built, page)


def test_the_index_lists_every_chapter_start_page_first(site):
    built, _ = site
    index = _page(built, "index.html")
    chapters = course_map()
    assert [ch.key for ch in chapters] == [f"{n:02d}" for n in range(1, len(chapters) + 1)]
    assert len(chapters) == len(list((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))) - 1
    hrefs = [value for tag, attr, value, _ in references(built.folder / "index.html")]
    order = [h for h in hrefs if re.fullmatch(r"notebooks/\d\d_\w+\.html", h)]
    assert order[0] == "notebooks/00_start_here.html"
    for ch in chapters:
        for folder in ("notebooks", "exercises", "solutions"):
            assert f"{folder}/{ch.stem}.html" in hrefs, (ch.stem, folder)
        assert ch.time in index and ch.title in index
    # One source of truth: the titles and times come from course.toml, as the start page's map.
    _pace, planned = load()
    sinusoidal = next(ch for ch in planned if ch.key == "03")
    time = f"{sinusoidal.lecture.minutes} + {sinusoidal.exercises.minutes} min"
    assert time in index and "The sinusoidal encoding, derived" in index
    for ch in chapters:  # deep dives: optional branches under their chapter, with their times
        for deep in ch.deeper:
            assert f"notebooks/deeper/{deep.stem}.html" in hrefs and deep.time in index


def test_each_chapter_page_links_its_exercises_and_solutions(site):
    built, _ = site
    for ch in course_map():
        hrefs = [v for _, _, v, _ in references(built.folder / "notebooks" / f"{ch.stem}.html")]
        assert f"../exercises/{ch.stem}.html" in hrefs
        assert f"../solutions/{ch.stem}.html" in hrefs
        title = _page(built, f"solutions/{ch.stem}.html")
        assert f"Chapter {int(ch.key)} solutions" in title  # not a second "exercises" page


def test_every_link_resolves_every_page_has_its_figures_nothing_loads_from_the_network(site):
    built, source = site
    assert check_site(built.folder, source) == []
    # Every figure counted, live dashboards included: image/png outputs and live dashboards.
    counts = {p.stem: png_outputs(p) for p in sorted((source / "notebooks").glob("*.ipynb"))}
    print("pictures per lecture:", counts)
    assert all(n >= 2 for n in counts.values())


def test_the_checker_fails_a_broken_site(site, tmp_path):
    built, source = site
    broken = tmp_path / "broken"
    shutil.copytree(built.folder, broken)
    page = broken / "notebooks" / "03_sinusoidal.html"
    text = page.read_text(encoding="utf-8")
    first_img = re.search(r"<img [^>]*>", text).group(0)
    text = text.replace(first_img, "", 1)  # a figure lost
    text = text.replace("</head>", '<script src="https://cdn.example.org/x.js"></script></head>')
    text = text.replace("</body>", '<a href="../nowhere.html">gone</a></body>')
    page.write_text(text, encoding="utf-8")
    problems = check_site(broken, source)
    assert len(problems) == 3, problems
    expected = png_outputs(source / "notebooks" / "03_sinusoidal.ipynb")
    assert any(f"pictures shown, but its notebook has {expected}" in p for p in problems)
    assert any("from the network" in p for p in problems)
    assert any("nowhere.html" in p and "missing file" in p for p in problems)


def test_every_dashboard_is_live_from_its_frames_within_budget(site):
    built, _ = site
    assert sorted(r.key for r in built.frames) == sorted(PLANS)
    for r in built.frames:
        assert r.errors == [], r.errors  # no setting the math refused
        assert r.bytes < DASHBOARD_BYTES and r.files <= r.frames, r
    size = sum(p.stat().st_size for p in built.folder.rglob("*") if p.is_file())
    assert size < SITE_BYTES
    dashboards = 0
    for lecture in sorted((ROOT / "notebooks").glob("*.ipynb")):  # the committed notebooks
        cells = nbformat.read(lecture, as_version=4).cells
        outputs = [o for c in cells for o in c.get("outputs", [])]
        if not any(WIDGET_VIEW in o.get("data", {}) for o in outputs):
            continue
        dashboards += 1
        key = chapter_key(lecture.stem)
        page = _page(built, f"notebooks/{lecture.stem}.html")
        assert "Loading widget" not in page and WIDGET_VIEW not in page, lecture.name
        assert "jupyter-widgets" not in page, "no widget script: there is no kernel to talk to"
        assert page.count('class="posenc-live"') == 1, lecture.name
        assert f'<script src="../dashboards/{key}/frames.js"></script>' in page, lecture.name
        assert "Live on this page:" in page and f"notebooks/{lecture.name}" in page
        assert "dashboard above is a still picture" not in page, lecture.name  # the old note
        # The lecture's "without a running kernel ... a still picture" note is not true here.
        assert "still picture of the dashboard" not in page, lecture.name
        frames = built.folder / "dashboards" / key
        assert len(list(frames.glob("*.webp"))) >= 8, key
    assert dashboards == len(list((ROOT / "notebooks").glob("*.ipynb")))  # one per lecture
    assert (built.folder / "dashboards" / "posenc-live.js").is_file()


def test_math_is_served_from_the_site_itself(site):
    built, _ = site
    page = _page(built, "notebooks/03_sinusoidal.html")
    sources = [v for tag, _, v, _ in references(built.folder / "notebooks" / "03_sinusoidal.html")]
    mathjax = [s for s in sources if "mathjax" in s.lower() or "tex-" in s]
    assert mathjax == ["../_static/mathjax/tex-chtml.js"]
    assert (built.folder / "_static" / "mathjax" / "tex-chtml.js").stat().st_size > 500_000
    assert (built.folder / "_static" / "mathjax" / "output" / "chtml" / "fonts").is_dir()
    assert page.count('class="math notranslate nohighlight"') > 100  # TeX left for MathJax


def test_chinese_terms_arrive_as_utf8(site):
    built, _ = site
    page = _page(built, "notebooks/03_sinusoidal.html")
    assert '<meta charset="utf-8"' in page.lower()
    assert "正弦位置编码" in page
    assert "置换等变性" in _page(built, "index.html")


def test_cells_tagged_hide_input_show_their_output_under_a_collapsed_source(site):
    built, source = site
    for notebook in sorted(source.rglob("*.ipynb")):
        if "_build" in notebook.parts:
            continue
        cells = nbformat.read(notebook, as_version=4).cells
        tagged = [c for c in cells if "hide-input" in c.metadata.get("tags", [])]
        page = _page(built, notebook.relative_to(source).with_suffix(".html").as_posix())
        assert page.count(HIDDEN) == len(tagged), notebook.name
        for cell in tagged:  # the figure or the printed numbers stay in view, after the source
            assert cell.cell_type == "code" and cell.outputs, notebook.name


def test_a_cell_tagged_hide_input_is_collapsed_and_the_bar_follows_the_build(tmp_path, capsys):
    root = tmp_path / "course"
    for name in ("notebooks/00_start_here", *(f"{f}/01_order_blindness" for f in FOLDERS)):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / f"{name}.ipynb", root / f"{name}.ipynb")
    lecture = root / "notebooks" / "01_order_blindness.ipynb"
    notebook = nbformat.read(lecture, as_version=4)
    for cell in notebook.cells:  # none tagged but the one below, whatever the course tags
        cell.metadata.pop("tags", None)
    figure = next(
        c
        for c in notebook.cells
        if any("image/png" in o.get("data", {}) for o in c.get("outputs", []))
    )
    figure.metadata["tags"] = ["hide-input"]
    nbformat.write(notebook, lecture)
    built = build_site(tmp_path / "site", tmp_path / "src", root=root, progress=True, live=False)
    page = _page(built, "notebooks/01_order_blindness.html")
    # Without frames (live=False) a dashboard is its still picture, with where it is live.
    assert "dashboard above is a still picture" in page and "CHAPTER=01" in page
    assert "posenc-live" not in page and not (built.folder / "dashboards").exists()
    assert page.count(HIDDEN) == 1  # <details> without `open`: the source is collapsed
    hidden = page[page.index(HIDDEN) :]
    assert "Show code cell source" in hidden[:2000]
    assert hidden.index("cell_output") < hidden.index("<img")  # the figure shown, after it
    assert check_site(built.folder, tmp_path / "src") == []
    printed, errors = capsys.readouterr()
    assert printed == ""
    assert (
        "website: 100%" in errors and "12/12" in errors
    )  # 6 pages (with the quizzes page), each read and written


FOLDERS = ("notebooks", "exercises", "solutions")


def test_a_subset_build_and_an_unknown_chapter(tmp_path):
    with pytest.raises(ValueError, match="No chapter 42 in the start page's map"):
        stage(tmp_path / "src", keys=["42"])
    chapters = stage(tmp_path / "src", keys=["03"])
    assert [ch.stem for ch in chapters] == ["03_sinusoidal"]
    staged = sorted(p.relative_to(tmp_path / "src").as_posix() for p in tmp_path.rglob("*.ipynb"))
    _pace, planned = load()
    deep_dives = [d.path for ch in planned if ch.key == "03" for d in ch.deeper]
    assert deep_dives, "chapter 3 has deep dives in course.toml"
    assert staged == sorted(
        [
            "exercises/03_sinusoidal.ipynb",
            "notebooks/00_start_here.ipynb",
            "notebooks/03_sinusoidal.ipynb",
            "solutions/03_sinusoidal.ipynb",
            *deep_dives,  # a chapter's deep dives go with it
        ]
    )


def test_the_map_is_required(tmp_path):
    (tmp_path / "notebooks").mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Start")])
    nbformat.write(notebook, tmp_path / "notebooks" / "00_start_here.ipynb")
    with pytest.raises(ValueError, match="has no map cell"):
        course_map(tmp_path)


@pytest.mark.parametrize("edition", [ROOT, ROOT / "zh"])
def test_the_still_picture_note_becomes_which_controls_move_here(edition):
    """Above a dashboard the lecture says that without a kernel it is a still picture; on the site
    it moves, so the site names the controls that move it instead, in the page's language."""
    from posenc_lib.i18n import in_language
    from tools.site import _with_live_dashboards
    from tools.site_frames import plan

    source = edition / "notebooks" / "02_naive_encodings.ipynb"
    cells = nbformat.read(source, as_version=4).cells
    language = "zh" if edition.name == "zh" else "en"
    with in_language(language):
        the_plan = plan("02")
        out = _with_live_dashboards(cells, source, {"02": the_plan})
    dashboard = next(i for i, c in enumerate(out) if c.cell_type == "code" and any(
        "posenc-live" in o.get("data", {}).get("text/html", "") for o in c.outputs))  # fmt: skip
    note = out[dashboard - 1].source
    assert "still picture" not in note and "静态图" not in note
    names = [f"**{control.label}**" for control in the_plan.live]
    assert all(name in note for name in names)
    assert note.rstrip().endswith(")*" if language == "en" else "）*")
