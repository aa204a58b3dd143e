"""Fixtures for the browser tests: one Voila server with every chapter's demo page, and a headless
Chromium driven by Playwright.

Chromium is Debian's package (``/usr/bin/chromium``), never Playwright's download. On a machine
without it, or without the ``playwright`` package, every browser test is skipped with a message
saying how to enable them (``browser_setup.require_browser``).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from posenc_lib.demo import chapters, voila_command, write_demos

from .browser_setup import CHROMIUM_ARGS, INSTRUMENT, require_browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "build" / "browser-artifacts"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class DemoServer:
    base: str
    pages: dict[str, Path]  # DASHBOARDS name -> demo notebook

    def url(self, name: str) -> str:
        return f"{self.base}voila/render/{self.pages[name].name}"


@pytest.fixture(scope="session")
def demo_server(tmp_path_factory):
    """One Voila server for every demo page; each page it renders gets its own kernel.

    Kernels of closed pages are culled after 2 idle seconds, so at most a couple run at once.
    """
    require_browser()
    folder = tmp_path_factory.mktemp("demo")
    names = chapters()  # chapter key -> DASHBOARDS name
    pages = {names[key]: path for key, path in write_demos(folder).items()}
    port = _free_port()
    command = voila_command(folder, port, open_browser=False, idle_kernel_seconds=2)
    log = open(folder / "voila.log", "wb")  # closed at teardown
    proc = subprocess.Popen(
        command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base, timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.flush()
                    tail = (folder / "voila.log").read_text(errors="replace")[-2000:]
                    raise AssertionError(
                        f"Voila did not start: {' '.join(command)}\n{tail}"
                    ) from None
                time.sleep(0.3)
        yield DemoServer(base, pages)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)  # Voila shuts its kernels down on SIGTERM
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium with a fresh profile; requests leaving localhost fail at once."""
    executable = require_browser()
    from playwright.sync_api import sync_playwright

    profile = tempfile.mkdtemp(prefix="posenc-chromium-")
    playwright = sync_playwright().start()
    context = playwright.chromium.launch_persistent_context(
        profile,
        executable_path=executable,
        headless=True,
        args=CHROMIUM_ARGS,
        viewport={"width": 1400, "height": 1000},
    )
    context.route(re.compile(r"^https?://(?!127\.0\.0\.1[:/])"), lambda route: route.abort())
    context.add_init_script(INSTRUMENT)
    try:
        yield context
    finally:
        context.close()
        playwright.stop()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS
