"""What the browser tests need from the machine: Debian's Chromium and the playwright package.

Without them every browser test is skipped with a message saying how to enable them.
"""

from __future__ import annotations

import pytest

from tools.browser import chromium_path

ENABLE = (
    "to run them, install Chromium and a CJK font (sudo apt-get install --no-install-recommends "
    "chromium fonts-noto-cjk; .ci/run does this in CI) and the test extra (pip install -e "
    "'.[test]', which brings playwright; never `playwright install`, Debian's chromium is used)"
)

# Runs in every page before its scripts: counts the figure's repaints. ipympl draws each frame it
# receives on an offscreen canvas, then copies that canvas onto the visible one with drawImage; a
# copy onto a canvas in the page is a repaint of a figure.
INSTRUMENT = """
window.__posenc = {draws: 0, last: 0};
(() => {
  const drawImage = CanvasRenderingContext2D.prototype.drawImage;
  CanvasRenderingContext2D.prototype.drawImage = function (...args) {
    const out = drawImage.apply(this, args);
    if (this.canvas.isConnected && args[0] instanceof HTMLCanvasElement) {
      window.__posenc.draws += 1;
      window.__posenc.last = performance.now();
    }
    return out;
  };
})();
"""


def require_browser() -> str:
    """The Chromium to launch; skips the calling test, saying how to enable it, when there is none."""
    path = chromium_path()
    if path is None:
        pytest.skip(f"browser tests skipped: no Chromium (/usr/bin/chromium or on PATH); {ENABLE}")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        pytest.skip(f"browser tests skipped: the playwright package is not installed; {ENABLE}")
    return path
