"""`make hub` in a real browser: three learners on one local JupyterHub, each in their own Chromium
context (their own cookies), each opening chapter 1 in JupyterLab and moving its dashboard.

The hub is started by the same code as ``make hub`` (``tools.hub.hub_server``, with
``hub/jupyterhub_config.py``), on a free port, with its state in a temporary folder. Each learner
logs in with the shared password, lands on chapter 1's lecture in their own server, runs its
import cell and its dashboard cell, ticks "add position vectors" and moves the position-strength
slider; after each move the figure's pixels must change. Then no learner can reach another's
files: alice's contents API lists only her own folders, a request by alice for bob's server is
refused, and her server will not read bob's file through ``..``. When the hub stops, it must have
stopped its proxy, every user's server and every kernel itself.

Skipped, saying how to enable it, where Chromium or the hub's proxy (``make hub`` installs it) is
missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time

import pytest

from tools.browser import CHROMIUM_ARGS, NOT_LOCAL
from tools.hub import PROXY, PROXY_MISSING, free_port, hub_server

from .browser_setup import INSTRUMENT, require_browser

USERS = ("alice", "bob", "carol")
CHAPTER = "notebooks/01_order_blindness.ipynb"
IMPORTS = "from posenc_lib.viz.ch01_order import"  # in chapter 1's first code cell
DASHBOARD = 'order_dashboard("dog bites man")'  # its dashboard cell
START_MS = 120_000  # log in, start a server (JupyterLab) and open the notebook, 3 users at once
RUN_MS = 90_000  # start the kernel, import torch and the library, draw the dashboard
MOVE_MS = 30_000  # one control's change to reach the figure
QUIET_MS = 300
SECRET = "bob's own work, for bob's eyes only"

PIXELS = "() => document.querySelector('.posenc-figure canvas').toDataURL()"
KERNEL_IDLE = ".jp-Notebook-ExecutionIndicator[data-status=idle]"
# The status bar once the kernel is connected; its name says it runs under tools/kernel_guard.py.
KERNEL_READY = re.compile(r"Python 3 \(course kernel\) \| Idle")
# The kernel has taken a cell: its prompt shows [*] (running) or another count than before.
TAKEN = """([el, before]) => { const t = el.innerText;
  return t.includes('[*]') || (/\\[\\d+\\]/.test(t) && t !== before); }"""
CHANGED = "before => document.querySelector('.posenc-figure canvas').toDataURL() !== before"
DRAWN = """([draws, quiet]) => window.__posenc.draws > draws
  && performance.now() - window.__posenc.last > quiet"""
# A request as JupyterLab makes it: with the _xsrf cookie's value in the X-XSRFToken header.
FETCH = """async ([url, method, body]) => {
  const xsrf = (document.cookie.match('\\\\b_xsrf=([^;]*)\\\\b') || [])[1];
  const response = await fetch(url, {method, body, headers: xsrf ? {'X-XSRFToken': xsrf} : {}});
  return {status: response.status, url: response.url, text: await response.text()};
}"""


def _run_cell(page, text: str) -> None:
    """Run the code cell whose source contains ``text`` (click into it, Shift+Enter), and wait
    until the kernel has taken it: its prompt shows ``[*]`` or a new count.

    The notebook's layout still moves while it renders (math, outputs), so a click can land on
    another cell, and a cell run while the kernel is still connecting is dropped: both are tried
    again.
    """
    from playwright.sync_api import TimeoutError as PageTimeout

    cell = (
        page.locator(".jp-CodeCell")
        .filter(has=page.locator(".jp-InputArea-editor", has_text=text))
        .first
    )
    editor, prompt = cell.locator(".jp-InputArea-editor"), cell.locator(".jp-InputPrompt")
    for _ in range(10):
        editor.scroll_into_view_if_needed()
        editor.click()
        if "jp-mod-active" not in (cell.get_attribute("class") or ""):
            page.wait_for_timeout(500)
            continue
        before = prompt.inner_text()
        page.keyboard.press("Shift+Enter")
        try:
            page.wait_for_function(
                TAKEN, arg=[prompt.element_handle(), before], timeout=10_000, polling=100
            )
            return
        except PageTimeout:
            continue
    raise AssertionError(f"the kernel never ran the cell with {text!r}")


def _figure_changes(page, move) -> None:
    """Do ``move`` on the page, then wait until the figure shows other pixels (a timeout fails)."""
    before, draws = page.evaluate(PIXELS), page.evaluate("window.__posenc.draws")
    move()
    page.wait_for_function(DRAWN, arg=[draws, QUIET_MS], timeout=MOVE_MS)
    page.wait_for_function(CHANGED, arg=before, timeout=MOVE_MS, polling=250)


@pytest.mark.timeout(300)
def test_three_learners_use_the_hub_each_in_their_own_files(tmp_path, artifacts, request):
    executable = require_browser()
    if not os.access(PROXY, os.X_OK):
        pytest.skip(f"the hub's browser test is skipped: {PROXY_MISSING}")
    # The process's one Playwright (another browser test in this worker may have started it).
    playwright = request.getfixturevalue("playwright_session")

    started = time.monotonic()
    with hub_server(tmp_path / "hub", free_port(), USERS) as hub:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, args=CHROMIUM_ARGS
        )
        pages = {}
        try:
            for user in USERS:  # each logs in; their servers start side by side
                context = browser.new_context(viewport={"width": 1400, "height": 1000})
                context.route(NOT_LOCAL, lambda route: route.abort())
                context.add_init_script(INSTRUMENT)
                page = pages[user] = context.new_page()
                page.goto(f"{hub.url}hub/login?next=/user/{user}/lab/tree/{CHAPTER}")
                page.fill("#username_input", user)
                page.fill("#password_input", hub.password)
                page.click("#login_submit")
            for user, page in pages.items():
                lab = re.compile(re.escape(f"{hub.url}user/{user}/lab/tree/{CHAPTER}"))
                page.wait_for_url(lab, timeout=START_MS)
                page.wait_for_selector(KERNEL_IDLE, timeout=START_MS)  # its kernel has started
                page.get_by_text(KERNEL_READY).first.wait_for(timeout=START_MS)
                _run_cell(page, IMPORTS)
                _run_cell(page, DASHBOARD)
            for user, page in pages.items():
                page.wait_for_selector(".posenc-control-positions input", timeout=RUN_MS)
                page.wait_for_function(DRAWN, arg=[0, QUIET_MS], timeout=RUN_MS)
                tick = page.locator(".posenc-control-positions input[type=checkbox]")
                _figure_changes(page, tick.click)
                slider = page.locator(".posenc-control-strength .noUi-handle")
                page.wait_for_function(  # the strength slider is enabled with positions on
                    "() => !document.querySelector('.posenc-control-strength [disabled]')",
                    timeout=MOVE_MS,
                )

                def nudge(slider=slider, page=page):
                    slider.focus()
                    page.keyboard.press("ArrowLeft")

                _figure_changes(page, nudge)
                assert (hub.home(user) / CHAPTER).is_file()  # the user's own copy is served

            alice, bob = pages["alice"], pages["bob"]
            saved = bob.evaluate(
                FETCH,
                [
                    "/user/bob/api/contents/bob-only.txt",
                    "PUT",
                    f'{{"type": "file", "format": "text", "content": "{SECRET}"}}',
                ],
            )
            assert saved["status"] in (200, 201), saved
            assert (hub.home("bob") / "bob-only.txt").read_text() == SECRET
            assert not (hub.home("alice") / "bob-only.txt").exists()

            listing = alice.evaluate(FETCH, ["/user/alice/api/contents/", "GET", None])
            assert listing["status"] == 200, listing
            names = {item["name"] for item in json.loads(listing["text"])["content"]}
            # Her copy of the course, nothing else: no other user's folder or file.
            assert names == {"notebooks", "exercises"}, names

            attempts = [
                "/user/bob/api/contents/bob-only.txt",  # bob's server, with alice's login
                "/user/bob/files/bob-only.txt",
                "/user/bob/lab",
                "/user/alice/api/contents/..%2Fbob%2Fbob-only.txt",  # out of her own folder
                "/user/alice/api/contents/%2E%2E/bob/bob-only.txt",
                "/user/alice/files/..%2Fbob%2Fbob-only.txt",
                "/user/alice/api/contents/..%2F..%2Fusers%2Fbob%2Fbob-only.txt",
            ]
            refused = {}
            for path in attempts:
                answer = alice.evaluate(FETCH, [path, "GET", None])
                refused[path] = answer["status"]
                assert SECRET not in answer["text"], (path, answer["status"], answer["url"])
                assert answer["status"] >= 400, (path, answer["status"], answer["url"])
        except Exception:
            for user, page in pages.items():  # what each learner saw, for the failure
                page.screenshot(path=str(artifacts / f"hub-{user}.png"))
            raise
        finally:
            browser.close()
    assert hub.leftovers == [], f"the hub left processes running: {hub.leftovers}"
    print(f"alice's requests for bob's files, refused with: {refused}")
    print(f"three learners on the hub, start to stop: {time.monotonic() - started:.0f} s")
    shutil.rmtree(tmp_path / "hub", ignore_errors=True)
