"""The course website as a reader's browser shows it, with no network: math typeset by the MathJax
the site carries, every picture decoded, the Chinese key terms drawn with a CJK font.

The site is built for chapter 3 only (the chapter with the most math), served from a local HTTP
server; the browser fixture aborts every request that leaves 127.0.0.1, and the test fails if the
page asked for one. A screenshot is kept in ``build/browser-artifacts/site_03.png``.
"""

from __future__ import annotations

import functools
import http.server
import threading

import pytest

from tools.site import build_site

from .browser_setup import require_browser

pytestmark = pytest.mark.timeout(180)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def site_url(tmp_path_factory):
    require_browser()
    folder = tmp_path_factory.mktemp("site")
    built = build_site(folder / "site", folder / "src", keys=["03"])
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(built.folder))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


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
