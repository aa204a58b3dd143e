"""`make lab-zh` in Chromium: JupyterLab's own menus are Chinese, and the Chinese start page opens
(the server comes from the ``make_lab`` fixture in tests/conftest.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
    reason="`make lab-zh` sets up .venv; this test runs only inside it (as `make test` does)",
)


def test_jupyterlab_menus_and_the_start_page_are_chinese(make_lab, browser):
    lab_zh = make_lab("lab-zh")
    page = browser.new_page()
    try:
        page.goto(f"{lab_zh}/lab/tree/zh/notebooks/00_start_here.ipynb?token=course")
        menubar = page.locator("#jp-menu-panel, .lm-MenuBar").first
        menubar.wait_for(timeout=60_000)
        page.wait_for_function(
            "() => document.querySelector('.lm-MenuBar') &&"
            " document.querySelector('.lm-MenuBar').innerText.includes('文件')",
            timeout=60_000,
        )
        assert "编辑" in page.locator(".lm-MenuBar").first.inner_text()  # Edit
        heading = page.locator(".jp-RenderedMarkdown h1").first
        heading.wait_for(timeout=60_000)
        assert any("\u4e00" <= c <= "\u9fff" for c in heading.inner_text())
    finally:
        page.close()
