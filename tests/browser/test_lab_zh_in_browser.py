"""`make lab-zh` in Chromium: JupyterLab's own menus are Chinese, the Chinese start page opens, and
running its first cells makes the library speak Chinese in the kernel."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(
    Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
    reason="`make lab-zh` sets up .venv; this test runs only inside it (as `make test` does)",
)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def lab_zh(tmp_path):
    port = _free_port()
    args = (
        f"--no-browser --port={port} --IdentityProvider.token=course --ServerApp.open_browser=False"
    )
    env = dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    proc = subprocess.Popen(
        ["make", "-s", "lab-zh", f"LAB_ARGS={args}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token=course", timeout=2):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stdout.read().decode()[-2000:]) from None
                time.sleep(0.5)
        yield base
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def test_jupyterlab_menus_and_the_start_page_are_chinese(lab_zh, browser):
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
