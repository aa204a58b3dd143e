"""The course website as a reader's browser shows it, with no network: math typeset by the MathJax
the site carries, every picture decoded, the Chinese key terms drawn with a CJK font, and every
chapter's dashboard live with no kernel (frames drawn at build time, ``tools/site_frames.py``).

The whole site is built once per test session (the build tests/tools/test_site.py checks) and
served from a local HTTP server; the browser fixture aborts every request that leaves 127.0.0.1, and a test fails if a page
asked for one. Each chapter's page is opened served and from ``file://``, and each live control is
moved as a reader would: an arrow key on a focused slider, another option of a dropdown, a click
on a checkbox.
Screenshots are kept in ``build/browser-artifacts/``.
"""

from __future__ import annotations

import functools
import http.server
import threading

import pytest

from tools.site import chapter_key, course_map
from tools.site_frames import PLANS

from .browser_setup import require_browser


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


# The whole site: about a minute on a loaded 2-core machine.
pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def site(whole_site):
    require_browser()
    built, _, _ = whole_site  # the one build tests/tools/test_site.py checks too (conftest.py)
    handler = functools.partial(_QuietHandler, directory=str(built.folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield built.folder, f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def site_url(site):
    return site[1]


def _lectures() -> dict[str, str]:
    """Chapter key ("start", "01" ...) -> the lecture page's path in the site."""
    stems = ["00_start_here", *(ch.stem for ch in course_map())]
    return {chapter_key(stem): f"notebooks/{stem}.html" for stem in stems}


def test_chapter_3_renders_offline_with_math_pictures_and_chinese(site_url, browser, artifacts):
    page = browser.new_page()
    outside = []
    page.on(
        "request",
        lambda r: outside.append(r.url) if not r.url.startswith(site_url) else None,
    )
    try:
        page.goto(site_url + "notebooks/03_sinusoidal.html", wait_until="load", timeout=60_000)
        # MathJax 3 replaces each formula with an <mjx-container>; wait until it has done so.
        page.wait_for_function(
            "() => document.querySelectorAll('mjx-container').length > 50", timeout=60_000
        )
        formulas = page.locator("mjx-container").count()
        errors = page.locator("mjx-merror").count()
        images = page.evaluate(
            """() => [...document.querySelectorAll('main img')].map(
                img => [img.complete && img.naturalWidth > 0, img.getAttribute('src').slice(0, 40)])"""
        )
        # The Chinese term is drawn with real glyphs: without a CJK font every character is the
        # same empty box, so two different characters would paint identical pixels.
        cjk = page.evaluate(
            """() => {
              const text = [...document.querySelectorAll('main td, main p')]
                .map(el => el.innerText).find(t => /[\\u4e00-\\u9fff]{3,}/.test(t));
              if (!text) return null;
              const word = text.match(/[\\u4e00-\\u9fff]{3,}/)[0];
              const font = getComputedStyle(document.querySelector('main p')).fontFamily;
              const paint = ch => {
                const c = document.createElement('canvas'); c.width = c.height = 48;
                const g = c.getContext('2d'); g.font = `40px ${font}`; g.fillText(ch, 2, 40);
                return c.toDataURL();
              };
              return [word, paint(word[0]) !== paint(word[1])];
            }"""
        )
        page.screenshot(path=str(artifacts / "site_03.png"))
    finally:
        page.close()
    print(f"\nsite chapter 3: {formulas} formulas typeset, {len(images)} pictures, CJK {cjk}")
    assert outside == [], f"the page asked the network for {outside[:5]}"
    assert formulas > 50 and errors == 0, (formulas, errors)
    assert len(images) >= 5, images
    broken = [src for ok, src in images if not ok]
    assert broken == [], f"pictures that did not decode: {broken}"
    assert cjk is not None, "no Chinese key term found on the page"
    assert cjk[1], f"no CJK font available to draw {cjk[0]}: install fonts-noto-cjk (see .ci/run)"


# The dashboard's state as the reader sees it: the frame's file, whether it decoded, the readout's
# text, the alt text, and each live control's value.
STATE = """root => {
  const img = root.querySelector('.posenc-live-figure');
  const data = window.posencFrames[root.dataset.key];
  let flat = 0;  // the frame the build stored for these values (row-major over the controls)
  root.querySelectorAll('input, select').forEach((el, i) => {
    const pick = el.type === 'checkbox' ? Number(el.checked) : Number(el.value);
    flat = flat * data.controls[i].labels.length + pick;
  });
  const stored = document.createElement('div');
  stored.innerHTML = data.readouts[data.frames[flat][1]];
  return {
    stored: [data.frames[flat][0], stored.textContent],
    src: img.getAttribute('src'),
    decoded: img.complete && img.naturalWidth > 0,
    readout: root.querySelector('.posenc-live-readout').textContent,
    alt: img.alt,
    values: [...root.querySelectorAll('input, select')].map(
      el => el.type === 'checkbox' ? String(el.checked) : el.value),
  };
}"""


DECODED = """() => {
  const img = document.querySelector('.posenc-live-figure');
  return img.complete && img.naturalWidth > 0;
}"""


def _move(control, kind: str, at_end: bool) -> None:
    """Move one control as a reader would: keyboard on a slider, a pick or a click otherwise."""
    if kind == "range":
        control.focus()
        control.press("ArrowLeft" if at_end else "ArrowRight")
    elif kind == "select-one":
        options = control.evaluate("el => [...el.options].map(o => o.value)")
        at = options.index(control.input_value())  # the next option, as ArrowDown would pick
        control.select_option(options[at - 1 if at == len(options) - 1 else at + 1])
    else:
        control.click()


@pytest.mark.parametrize("scheme", ["http", "file"])
@pytest.mark.parametrize("key", list(PLANS))
def test_every_live_control_changes_the_picture_and_the_readout(
    site, browser, artifacts, key, scheme
):
    folder, url = site
    path = _lectures()[key]
    address = url + path if scheme == "http" else (folder / path).as_uri()
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    try:
        page.goto(address, wait_until="load", timeout=60_000)
        root = page.locator(".posenc-live")
        assert root.count() == 1, f"{path}: one live dashboard expected"
        root.scroll_into_view_if_needed()
        page.wait_for_function("() => document.querySelector('.posenc-live[data-ready]')")
        controls = root.locator("input, select")
        labels = [
            page.locator(f"label[for='{controls.nth(i).get_attribute('id')}']").inner_text()
            for i in range(controls.count())
        ]
        assert controls.count() >= 1 and all(labels), (path, labels)  # a label for each
        moved = []
        for i in range(controls.count()):
            control = controls.nth(i)
            kind = control.evaluate("el => el.type")
            at_end = kind == "range" and control.get_attribute("max") == control.input_value()
            before = root.evaluate(STATE)
            _move(control, kind, at_end)
            page.wait_for_function(DECODED)
            after = root.evaluate(STATE)
            assert after["values"] != before["values"], (path, labels[i], "did not move")
            assert after["decoded"], (path, labels[i], after["src"])
            moved.append((labels[i], before, after))
        if scheme == "http":
            root.screenshot(path=str(artifacts / f"site_live_{key}.png"))
    finally:
        page.close()
    for label, before, after in moved:
        assert after["src"] != before["src"], f"{path}: moving {label!r} kept the picture"
        # The picture and readout shown are the ones the build stored for the new values; the
        # readout changes unless the dashboard prints the same numbers there (chapter 1's order
        # without positions: attention cannot tell, which is the lesson).
        assert after["src"].endswith(after["stored"][0]), (label, after["src"], after["stored"])
        assert after["readout"] == after["stored"][1], (label, after["readout"])
        if before["stored"][1] != after["stored"][1]:
            assert after["readout"] != before["readout"], f"{path}: {label!r} kept the readout"
        assert after["alt"] != before["alt"] and f"{label} = " in after["alt"], (
            label,
            after["alt"],
        )
        assert after["readout"][:40] in after["alt"], (label, after["alt"])
    changed = [label for label, before, after in moved if after["readout"] != before["readout"]]
    assert changed, f"{path}: no control changed the readout"
    ours = [e for e in errors if "posenc" in e or "dashboards/" in e or "frames" in e]
    assert ours == [], ours
    print(f"\n{key} ({scheme}): moved {[label for label, _, _ in moved]}; other errors {errors}")
