"""The website's live dashboards (tools/site_frames.py): every frame drawn by the dashboard's own
code, one per setting of the live controls, each setting finding its frame and its readout."""

import json
import re

import ipywidgets as W
import pytest
from PIL import Image

from posenc_lib.viz.dashboard import choices
from posenc_lib.viz.registry import DASHBOARDS, chapters
from tools import site_frames
from tools.site_frames import PLANS, plan, render, widget_html


def _frames(folder, key):
    text = (folder / key / "frames.js").read_text(encoding="utf-8")
    prefix = f'(window.posencFrames = window.posencFrames || {{}})["{key}"] = '
    assert text.startswith(prefix) and text.endswith(";\n")
    return json.loads(text[len(prefix) : -2])


def test_every_dashboard_has_a_plan_within_budget():
    assert set(PLANS) == set(chapters())
    total = 0
    for key in PLANS:
        the_plan = plan(key)
        assert the_plan.live, key
        assert 8 <= the_plan.count <= 150, (key, the_plan.count)  # ~20 kB a frame, 4 MB at most
        main = the_plan.live[0]
        if PLANS[key][main.name] == 1:  # every value of the main control
            dash = DASHBOARDS[the_plan.name]()
            assert len(main.choices) == len(choices(dash.controls[main.name])), key
        total += the_plan.count
        assert "<" not in the_plan.summary and the_plan.summary, key
    assert total <= 800  # about a minute of drawing on two processes


def test_a_dashboard_s_frames_are_its_own_figures_and_readouts(tmp_path):
    """Chapter 8: every setting of the two controls has a frame; each frame's readout is what the
    dashboard says at that setting, and the pictures differ."""
    result = render("08", tmp_path)
    data = _frames(tmp_path, "08")
    the_plan = plan("08")
    assert result.frames == the_plan.count == len(data["frames"]) == 16
    assert result.errors == []
    assert [c["labels"] for c in data["controls"]] == [
        [label for label, _ in c.choices] for c in the_plan.live
    ]
    sizes = {(tmp_path / "08" / file).stat().st_size for file, _ in data["frames"]}
    assert max(sizes) < 60_000 and result.bytes < site_frames.MAX_DASHBOARD_BYTES
    with Image.open(tmp_path / "08" / data["frames"][0][0]) as picture:
        assert picture.format == "WEBP" and picture.size == the_plan.size
    assert len({file for file, _ in data["frames"]}) == 16  # every setting its own picture
    assert len(set(data["readouts"])) == 16  # and its own numbers
    # Index i, j of the two controls -> frame i * 4 + j, as the page's script computes it.
    dash = DASHBOARDS[the_plan.name]()
    (method, window) = the_plan.live
    for i, (_, m) in enumerate(method.choices):
        for j, (_, w) in enumerate(window.choices):
            dash.set(method=m, window=w)
            _, readout = data["frames"][i * len(window.choices) + j]
            assert data["readouts"][readout] == dash.readout.value, (m, w)
    assert data["frames"][the_plan.initial][0] == f"f{the_plan.initial:04d}.webp"


def test_checkboxes_and_dropdowns_and_a_stored_once_frame(tmp_path):
    """Chapter 1: a dropdown and two checkboxes, 24 settings; every file a frame names exists."""
    result = render("01", tmp_path)
    data = _frames(tmp_path, "01")
    assert result.frames == 24 and result.errors == []
    files = {file for file, _ in data["frames"]}
    assert all((tmp_path / "01" / file).is_file() for file in files)
    assert result.files == len(list((tmp_path / "01").glob("*.webp"))) == len(files)
    assert len(set(data["readouts"])) > 4  # the readout follows the controls


def test_the_page_s_widget_names_every_control_and_what_is_live(tmp_path):
    the_plan = plan("03")
    page = widget_html(the_plan, "notebooks/03_sinusoidal.ipynb")
    for control in the_plan.live:
        cid = f"posenc-03-{control.name}".replace("_", "-")
        assert f'<label for="{cid}">{control.label}</label>' in page
        assert f'id="{cid}" min="0" max="{len(control.choices) - 1}"' in page
    assert 'type="range"' in page and 'aria-live="polite"' in page
    assert f'src="../dashboards/03/f{the_plan.initial:04d}.webp"' in page
    alt = re.search(r'alt="([^"]*)"', page)[1]
    assert "base = 10,000" in alt and "position t = 20" in alt and "longest wavelength" in alt
    caption = re.search(r"<figcaption>(.*)</figcaption>", page)[1]
    assert "Live on this page: base (50 values, 1.25 to 100,000); d_model (16, 64)." in caption
    assert "Fixed here at position t = 20, offset k = 8" in caption
    assert "make demo CHAPTER=03" in caption and "make lab" in caption
    assert '<script src="../dashboards/posenc-live.js"></script>' in page
    # The page's script looks frames up and computes nothing of the course.
    assert "Math." not in site_frames.LIVE_JS and "sin(" not in site_frames.LIVE_JS


def test_a_plan_naming_a_value_the_control_cannot_take_is_refused(monkeypatch):
    monkeypatch.setitem(PLANS, "08", {"window": (4096, 5000)})
    with pytest.raises(ValueError, match=r"PLANS\['08'\]\['window'\] lists \[5000\]"):
        plan("08")
    monkeypatch.setitem(PLANS, "08", {"windows": 1})
    with pytest.raises(ValueError, match="names \\['windows'\\], not controls of"):
        plan("08")
    with pytest.raises(ValueError, match="No dashboard plan for chapter '42'"):
        plan("42")


def test_choices_lists_every_value_of_a_control():
    assert choices(W.IntSlider(value=8, min=8, max=32, step=8)) == [
        ("8", 8), ("16", 16), ("24", 24), ("32", 32),
    ]  # fmt: skip
    log = choices(W.FloatLogSlider(value=100, base=10, min=1, max=3, step=0.5))
    assert [v for _, v in log] == [10.0, 31.6227766017, 100.0, 316.227766017, 1000.0]
    assert choices(W.Checkbox(value=True)) == [("off", False), ("on", True)]
    assert choices(W.Dropdown(options=[("a", 1), ("b", 2)], value=2)) == [("a", 1), ("b", 2)]


# Words a Chinese caption keeps in Latin letters: the controls' own names (parameters, as the code
# spells them), methods' names, the course's example sentence, and JupyterLab. Commands and paths
# sit in <code> and are left out before the words are read.
LATIN_IN_CHINESE = {
    "JupyterLab",
    "base",
    "d_model",
    "factor",
    "num_buckets",
    "max_distance",
    "NTK",
    "NTK-aware",
    "PI",
    "YaRN",
    "RoPE",
    "ALiBi",
    "token",
    "dog",
    "bites",
    "man",
}


def _english_words(fragment: str) -> list[str]:
    text = re.sub(r"<code>.*?</code>", "", fragment)
    text = re.sub(r"<[^>]+>", " ", text)
    words = re.findall(r"[A-Za-z][A-Za-z_'-]*[A-Za-z]", text)  # two letters or more
    return [word for word in words if word not in LATIN_IN_CHINESE]


def test_the_chinese_pages_captions_and_notes_are_chinese():
    from posenc_lib.i18n import in_language
    from tools.site import live_here_note

    with in_language("zh"):
        for key in PLANS:
            the_plan = plan(key)
            page = widget_html(the_plan, f"notebooks/{key}.ipynb")
            caption = re.search(r"<figcaption>(.*)</figcaption>", page)[1]
            assert caption.startswith("本页可直接操作："), key
            assert _english_words(caption) == [], (key, caption)
            assert _english_words(live_here_note(the_plan)) == [], key
            assert "Drawn for" not in page, key
