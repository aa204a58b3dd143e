"""Fixtures for the browser tests: one Voila server with every chapter's demo page, and a headless
Chromium driven by Playwright.

Chromium is Debian's package (``/usr/bin/chromium``), never Playwright's download. On a machine
without it, or without the ``playwright`` package, every browser test is skipped with a message
saying how to enable them (``browser_setup.require_browser``).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tools.browser import launch_offline
from tools.demo import chapters, voila_server, write_demos

from .browser_setup import INSTRUMENT, require_browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "browser-artifacts"


@dataclass
class DemoServer:
    base: str
    pages: dict[str, Path]  # DASHBOARDS name -> demo notebook

    def url(self, name: str) -> str:
        return f"{self.base}voila/render/{self.pages[name].name}"


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory):
    """One Voila server for every demo page; each page it renders gets its own kernel.

    Kernels of closed pages are culled after 30 idle seconds, so only a few run at once. Not
    sooner: Voila runs the page's notebook before the browser opens the kernel's websocket, and a
    kernel idle with no connection for the timeout is culled. On a loaded machine the browser took
    longer than 2 s to connect, found its kernel gone and never drew (a CI run of 2026-11-25).
    """
    require_browser()
    folder = tmp_path_factory.mktemp("demo")
    names = chapters()  # chapter key -> DASHBOARDS name
    pages = {names[key]: path for key, path in write_demos(folder).items()}
    with voila_server(folder, folder / "voila.log", idle_kernel_seconds=30) as base:
        yield DemoServer(base, pages)


@pytest.fixture(scope="session")
def playwright_session():
    """Playwright, started once per test process: its sync API allows one running at a time."""
    require_browser()
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    try:
        yield playwright
    finally:
        playwright.stop()


@pytest.fixture(scope="session")
def browser(playwright_session):
    """A headless Chromium with a fresh profile; requests leaving localhost fail at once."""
    executable = require_browser()
    profile = tempfile.mkdtemp(prefix="posenc-chromium-")
    context = launch_offline(playwright_session, profile, executable)
    context.add_init_script(INSTRUMENT)
    try:
        yield context
    finally:
        context.close()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
