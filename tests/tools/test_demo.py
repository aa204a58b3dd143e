"""Classroom demo mode: the generated notebooks, the chapter names a teacher may type, the projector
style, and one real Voila server serving chapter 3 with no code and no traceback shown."""

import time
import urllib.error
import urllib.request

import matplotlib as mpl
import matplotlib.pyplot as plt
import nbformat
import pytest

from posenc_lib.viz import figures
from posenc_lib.viz.ch03_sinusoid import sinusoid_dashboard
from posenc_lib.viz.figures import AREA_SCALE, FONT_SCALE, projector_style
from posenc_lib.viz.registry import DASHBOARDS
from tools.demo import (
    chapter_key,
    chapters,
    demo_notebook,
    page_title,
    voila_command,
    voila_server,
    write_demos,
)

KEYS = ["start", "01", "02", "03", "04", "05", "06", "07", "08"]


def test_every_dashboard_has_a_chapter_and_back():
    assert sorted(chapters()) == sorted(KEYS)
    assert sorted(chapters().values()) == sorted(DASHBOARDS)


@pytest.mark.parametrize("typed", ["3", "03", "ch03", "CH03", " 3 ", "003"])
def test_chapter_keys_a_teacher_may_type(typed):
    assert chapter_key(typed) == "03"
    assert chapter_key("start") == "start"


@pytest.mark.parametrize("typed", ["9", "00", "3.0", "ch3a", "", "sinusoidal"])
def test_a_chapter_with_no_dashboard_gets_a_sentence_naming_the_choices(typed):
    with pytest.raises(SystemExit, match=r"no chapter .* Choose one of: start, 01, .*CHAPTER=03"):
        chapter_key(typed)


@pytest.mark.parametrize("key", KEYS)
def test_demo_notebook_is_valid_and_holds_one_dashboard(key):
    notebook = nbformat.from_dict(demo_notebook(key))
    nbformat.validate(notebook)
    code = [c.source for c in notebook.cells if c.cell_type == "code"]
    assert [c.cell_type for c in notebook.cells] == ["code", "code"]
    assert code[0].startswith("%matplotlib widget")
    assert "projector_style()" in code[0]
    shown = [name for name in DASHBOARDS if repr(name) in "\n".join(code)]
    assert shown == [chapters()[key]], "exactly this chapter's dashboard, once"
    assert code[1] == f"DASHBOARDS[{chapters()[key]!r}]().widget"
    assert notebook.metadata.title == page_title(key)
    assert page_title(key).startswith("Start page" if key == "start" else f"Chapter {int(key)} ·")


def test_demo_notebooks_are_written_the_same_on_every_run(tmp_path):
    first = {k: p.read_bytes() for k, p in write_demos(tmp_path / "a").items()}
    second = {k: p.read_bytes() for k, p in write_demos(tmp_path / "b").items()}
    assert sorted(first) == sorted(KEYS) and first == second


def test_voila_shows_no_code_and_no_traceback():
    command = voila_command(write_demos.__defaults__[0], 8899, open_browser=False)
    assert "--VoilaConfiguration.strip_sources=True" in command
    assert "--VoilaConfiguration.show_tracebacks=False" in command
    assert "--Voila.open_browser=False" in command and "--port=8899" in command
    assert "--Voila.ip=127.0.0.1" in command  # the class's page is served on this machine only


@pytest.fixture
def restore_style():
    saved, dpi = dict(mpl.rcParams), figures.DPI
    yield
    mpl.rcParams.update(saved)
    figures.DPI = dpi


def _text_sizes(dashboard):
    figure = dashboard.figure
    ticks = [t.get_fontsize() for ax in figure.axes for t in ax.get_xticklabels()]
    texts = [t.get_fontsize() for ax in figure.axes for t in ax.texts]  # explicitly sized labels
    return max(ticks), max(texts)


def test_projector_style_enlarges_every_label_with_little_more_area(restore_style):
    plain = sinusoid_dashboard()
    plain_ticks, plain_texts = _text_sizes(plain)
    plain_pixels = plain.figure.canvas.get_width_height()
    set_to = projector_style()
    big = sinusoid_dashboard()
    big_ticks, big_texts = _text_sizes(big)
    big_pixels = big.figure.canvas.get_width_height()
    area = big_pixels[0] * big_pixels[1] / (plain_pixels[0] * plain_pixels[1])
    on_screen = FONT_SCALE * set_to["dpi"] / 80  # points x dpi: how much larger text looks
    print(f"projector: text x{on_screen:.2f} on screen, figure area x{area:.2f}, {big_pixels} px")
    assert set_to == {"font.size": 10 * FONT_SCALE, "dpi": 91}
    # Tick labels follow rcParams; the headings the course sizes explicitly follow figures.points.
    assert big_ticks == pytest.approx(plain_ticks * FONT_SCALE)
    assert big_texts == pytest.approx(plain_texts * FONT_SCALE)  # the lead's version left these
    assert 1.2 <= area <= AREA_SCALE + 0.02
    assert on_screen >= 1.4
    plt.close(plain.figure)
    plt.close(big.figure)


@pytest.mark.parametrize("font, area", [(0.5, 1.3), (1.25, 9.0), (4.0, 1.0)])
def test_projector_style_refuses_sizes_that_break_the_figures(font, area, restore_style):
    with pytest.raises(ValueError, match="font_scale must be in"):
        projector_style(font, area)


def _get(url: str, timeout: float) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode("utf-8")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode("utf-8", "replace")


@pytest.mark.timeout(60)
def test_voila_serves_chapter_3_live_with_no_code(tmp_path):
    paths = write_demos(tmp_path / "demo")
    broken = tmp_path / "demo" / "broken.ipynb"
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("secret_variable_name = 1 / 0")],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}},
    )
    nbformat.write(notebook, broken)
    log = tmp_path / "voila.log"
    started = time.perf_counter()
    with voila_server(tmp_path / "demo", log, timeout=30) as base:
        status, page = _get(f"{base}voila/render/{paths['03'].name}", timeout=40)
        assert status == 200
        # The executed page: the dashboard's widget views, the chapter's title, and no code.
        assert page.count("application/vnd.jupyter.widget-view+json") >= 1
        assert f"<title>{page_title('03')}</title>" in page
        for code in ("DASHBOARDS[", "projector_style", "%matplotlib", "import "):
            assert code not in page, f"the page shows code: {code!r}"
        status, failed = _get(f"{base}voila/render/{broken.name}", timeout=40)
        # A failing cell: the class sees that it failed, not the traceback; the terminal does.
        assert status == 200 and "There was an error when executing cell" in failed
        assert "ZeroDivisionError" not in failed and "secret_variable_name" not in failed
        print(f"voila: page of {len(page):,} bytes, {time.perf_counter() - started:.1f} s in all")
    assert "ZeroDivisionError" in log.read_text(errors="replace")


def test_a_server_that_cannot_start_says_so_with_its_log(tmp_path):
    with pytest.raises(RuntimeError, match="Voila did not start"):
        with voila_server(tmp_path / "no such folder", tmp_path / "voila.log", timeout=30):
            pass
