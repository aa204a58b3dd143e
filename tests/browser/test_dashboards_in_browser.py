"""Every dashboard in a real browser, as a class sees it in demo mode (Voila, no code cells).

For each dashboard in ``DASHBOARDS`` the page is opened and every control is moved the way a
person moves it: the first slider dragged with the mouse to the end of its track, the other sliders
nudged one step with the arrow keys, a dropdown set to its next option, a checkbox clicked, a
toggle button pressed. After each move the test waits until the figure has repainted and gone
quiet, then asserts that

* the figure's pixels changed (the visible canvas, read back with ``toDataURL``);
* the control itself shows the new value (a slider's readout, the selected option, the tick),
  in full: no text of the control is cut off by its box (the demo's fonts are larger);
* the dashboard's readout says exactly what the same dashboard, built in this process and set to
  the same values, says: the kernel behind the page computed the new numbers and the page shows
  them.

A screenshot of each dashboard is kept in ``build/browser-artifacts/<page>.png``.
"""

from __future__ import annotations

import html
import math
import re
import sys

import ipywidgets as W
import matplotlib.pyplot as plt
import pytest

from posenc_lib.viz.registry import DASHBOARDS

from .browser_setup import require_browser

QUIET_MS = 300  # a figure has finished repainting once no new frame came for this long
WAIT_MS = 20_000  # longest wait for one control's change to reach the page
LOAD_MS = 60_000  # longest wait for a page's first picture (kernel start, torch import)

SLIDERS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider)

SETTLED = """([draws, expected, quiet]) => {
  const s = window.__posenc, el = document.querySelector('.posenc-readout');
  const shown = el ? el.innerText.replace(/\\s+/g, ' ').trim() : null;
  return s.draws > draws && performance.now() - s.last > quiet && shown === expected;
}"""
PIXELS = "() => document.querySelector('.posenc-figure canvas').toDataURL()"
# Texts of a control cut off by its box, as [text, width needed, width shown] in CSS pixels: a
# dropdown's chosen option (measured: a <select> does not report overflow), buttons, readouts.
CLIPPED = """sel => {
  const root = document.querySelector(sel), out = [];
  for (const el of root.querySelectorAll('button, .widget-readout')) {
    if (el.scrollWidth > el.clientWidth + 1) out.push([el.innerText, el.scrollWidth, el.clientWidth]);
  }
  const select = root.querySelector('select');
  if (select) {
    const style = getComputedStyle(select), text = select.options[select.selectedIndex].text;
    const pen = document.createElement('canvas').getContext('2d');
    pen.font = `${style.fontSize} ${style.fontFamily}`;
    const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    const need = Math.ceil(pen.measureText(text).width);
    if (need > room + 1) out.push([text, need, room]);
  }
  return out;
}"""
STATE = """() => [window.__posenc.draws,
  document.querySelector('.posenc-readout')?.innerText.replace(/\\s+/g, ' ').trim()]"""


def _text(value: str) -> str:
    """What a browser shows of a readout's HTML: tags dropped, entities decoded, spaces collapsed."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", "", value)).split())


def _slider_scale(control) -> tuple[float, float, float, float]:
    """(position, lowest, highest, step) on the slider's track: the exponent for a log slider."""
    if isinstance(control, W.FloatLogSlider):
        position = round(math.log(control.value, control.base), 10)
        return position, control.min, control.max, control.step
    return control.value, control.min, control.max, control.step


def _slider_value(control, position: float):
    if isinstance(control, W.FloatLogSlider):
        return control.base ** round(position, 10)
    if isinstance(control, W.IntSlider):
        return int(position)
    return round(position, 10)


def _move(page, name: str, control, by_mouse: bool) -> tuple[object, str]:
    """Move one control in the page as a person would; returns (the value it should now have, how)."""
    root = page.locator(f".posenc-control-{name}")
    if isinstance(control, W.SelectionSlider):  # a slider over named stops: one key, one stop
        values = [value for _, value in control._options_full]
        right = control.index + 1 < len(values)
        root.locator(".noUi-handle").focus()
        page.keyboard.press("ArrowRight" if right else "ArrowLeft")
        return values[control.index + (1 if right else -1)], "ArrowRight" if right else "ArrowLeft"
    if isinstance(control, SLIDERS):
        position, low, high, step = _slider_scale(control)
        handle = root.locator(".noUi-handle")
        if by_mouse:  # drag the handle past the end of the track
            right = position < high
            box, track = handle.bounding_box(), root.locator(".noUi-base").bounding_box()
            x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
            end = track["x"] + track["width"] + 30 if right else track["x"] - 30
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(end, y, steps=6)
            page.mouse.up()
            return _slider_value(control, high if right else low), "mouse drag to the end"
        right = position + step <= high + 1e-9
        handle.focus()
        page.keyboard.press("ArrowRight" if right else "ArrowLeft")
        target = position + step if right else position - step
        return _slider_value(control, target), "ArrowRight" if right else "ArrowLeft"
    if isinstance(control, W.Checkbox):
        root.locator("input[type=checkbox]").click()
        return not control.value, "click"
    options = list(control.options)  # (label, value) pairs
    index = [value for _, value in options].index(control.value)
    label, value = options[(index + 1) % len(options)]
    if isinstance(control, W.Dropdown):
        root.locator("select").select_option(label=label)
        return value, f"select {label!r}"
    if isinstance(control, W.ToggleButtons):
        root.get_by_role("button", name=label, exact=True).click()
        return value, f"press {label!r}"
    raise TypeError(f"the browser test cannot move a {type(control).__name__} ({name})")


def _shown(page, name: str, control) -> str:
    """What the control itself shows in the page."""
    root = page.locator(f".posenc-control-{name}")
    if isinstance(control, (*SLIDERS, W.SelectionSlider)):
        return " ".join(root.locator(".widget-readout").inner_text().split())
    if isinstance(control, W.Checkbox):
        return "on" if root.locator("input[type=checkbox]").is_checked() else "off"
    if isinstance(control, W.Dropdown):
        shown = root.locator("select").evaluate("s => s.options[s.selectedIndex].text")
    else:
        shown = root.locator("button.mod-active").inner_text()
    return " ".join(shown.split())  # ipywidgets writes option labels with no-break spaces


def _shows_value(shown: str, control) -> bool:
    if isinstance(control, W.Checkbox):
        return shown == ("on" if control.value else "off")
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.SelectionSlider)):
        label = control._options_labels[control.index]  # .label can lag a value set in Python
        return shown == " ".join(label.split())
    try:  # a slider's readout is rounded (a log slider shows 3 significant digits)
        return math.isclose(float(shown.replace("\u2212", "-")), control.value, rel_tol=1e-2)
    except ValueError:
        return False


def _wait_enabled(page, name: str) -> None:
    """A control another one switches on (chapter 1's strength) must be enabled before use."""
    page.wait_for_function(
        "sel => { const el = document.querySelector(sel);"
        " return el && !el.matches('[disabled], .mod-disabled') && !el.querySelector('[disabled]'); }",
        arg=f".posenc-control-{name}",
        timeout=WAIT_MS,
    )


@pytest.mark.timeout(100)  # one page: ~5 s to start its kernel, then ~1 s per control
@pytest.mark.parametrize("name", list(DASHBOARDS))
def test_every_control_changes_the_figure_and_the_readout(name, demo_server, browser, artifacts):
    from playwright.sync_api import TimeoutError as PageTimeout

    model = DASHBOARDS[name]()  # the same dashboard in this process: what the page should say
    page = browser.new_page()
    problems = []
    try:
        page.goto(demo_server.url(name))
        page.wait_for_function(  # the first picture, and no frame since for QUIET_MS
            "quiet => window.__posenc.draws > 0 && performance.now() - window.__posenc.last > quiet",
            arg=QUIET_MS,
            timeout=LOAD_MS,
        )
        page.wait_for_selector(".posenc-readout", timeout=LOAD_MS)
        expected = _text(model.readout.value)
        page.wait_for_function(
            "text => document.querySelector('.posenc-readout').innerText.replace(/\\s+/g, ' ')"
            ".trim() === text",
            arg=expected,
            timeout=WAIT_MS,
        )
        pixels = page.evaluate(PIXELS)
        first_slider = next((n for n, c in model.controls.items() if isinstance(c, SLIDERS)), None)
        for control_name, control in model.controls.items():
            _wait_enabled(page, control_name)
            draws = page.evaluate("window.__posenc.draws")
            before = _shown(page, control_name, control)
            value, how = _move(page, control_name, control, control_name == first_slider)
            model.set(**{control_name: value})
            expected = _text(model.readout.value)
            where = f"{control_name} ({how}, to {value!r})"
            try:
                page.wait_for_function(SETTLED, arg=[draws, expected, QUIET_MS], timeout=WAIT_MS)
            except PageTimeout:
                frames, shown = page.evaluate(STATE)
                problems.append(
                    f"{where}: after {WAIT_MS} ms the page had {frames - draws} new frames and "
                    f"its readout said\n    {shown!r}\n  where this process computes\n    "
                    f"{expected!r}"
                )
                continue
            now = _shown(page, control_name, control)
            if now == before or not _shows_value(now, control):
                problems.append(f"{where}: the control shows {now!r} (before: {before!r})")
            for text, need, room in page.evaluate(CLIPPED, f".posenc-control-{control_name}"):
                problems.append(f"{where}: {text!r} is cut off ({need} px wide, {room} px shown)")
            new_pixels = page.evaluate(PIXELS)
            if new_pixels == pixels:
                problems.append(f"{where}: the figure's pixels did not change")
            pixels = new_pixels
    finally:  # the page as it ended, kept also (above all) when the test fails
        shot = artifacts / f"{demo_server.pages[name].stem}.png"
        dashboard = page.locator(".posenc-dashboard")
        if dashboard.count():
            dashboard.screenshot(path=shot)
        else:
            page.screenshot(path=shot)
        page.close()
        plt.close(model.figure)
    assert not problems, f"{name} in the browser:\n" + "\n".join(problems)


@pytest.mark.parametrize("missing", ["chromium", "playwright"])
def test_without_a_browser_the_tests_are_skipped_saying_how_to_enable_them(missing, monkeypatch):
    if missing == "chromium":
        monkeypatch.setattr("tools.browser.os.access", lambda path, mode: False)
    else:
        monkeypatch.setitem(sys.modules, "playwright.sync_api", None)  # import fails
    with pytest.raises(pytest.skip.Exception) as skipped:
        require_browser()
    message = str(skipped.value)
    assert missing in message
    assert "apt-get install --no-install-recommends chromium fonts-noto-cjk" in message
    assert ".ci/run" in message and "never `playwright install`" in message
