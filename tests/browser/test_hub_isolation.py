"""``make hub HUB_MODE=isolated HUB_LANG=zh`` in a real browser: learners kept apart by the
operating system, and a Chinese class handed the Chinese notebooks.

One hub (``tools.hub.hub_server``, mode isolated, language zh) serves two learners, each a system
user the hub creates (a unique prefix and group for this test, removed at the end even on
failure). Learner A logs in in Chromium, runs chapter 1's Chinese lecture (imports and dashboard:
her own notebook works), then runs a cell in a notebook of her own that tries to list and open
learner B's home and files, the hub's secrets (database, cookie secret, proxy token, log) and the
teacher's grading folder: every attempt must raise PermissionError, while her own files open.
The same cell reports her uid and the library's language (zh, from POSENC_LANG). From outside,
as root: each home is mode 0700 and owned by its learner, holds zh/notebooks and zh/exercises,
and the hub's state files are mode 0600.

Needs root (to create system users), Chromium, the hub's proxy, and a Python every user can run:
the course's ``.venv`` here leads into ``/root`` (mode 0700), which the isolated mode refuses
(checked below). The test then gives the learners a stand-in for a course installed where every
user can read it: a virtual environment of the system's Python (same minor version) in a
world-readable folder that reuses the course's installed packages. Skipped, saying why, where any
of that is missing.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tools.browser import CHROMIUM_ARGS, NOT_LOCAL
from tools.hub import (
    PROXY,
    PROXY_MISSING,
    ROOT,
    closed_to_others,
    free_port,
    hub_server,
    learner_python_problem,
    remove_learners,
)

from .browser_setup import INSTRUMENT, require_browser
from .test_hub_in_browser import DASHBOARD, FETCH, IMPORTS, KERNEL_IDLE, _run_cell

A, B = "ann", "ben"
CHAPTER = "notebooks/01_order_blindness.ipynb"
START_MS = 90_000  # log in and start A's server (JupyterLab) and open two notebooks
RUN_MS = 60_000  # import torch and the library, draw the dashboard
SECRET = "ben's own work"
PROBE_MARK = "# isolation probe"
# A's cell: try to list (or open) each path; print what happened as one JSON line.
PROBE = (
    PROBE_MARK
    + """
import json, os
from posenc_lib.i18n import get_language
def attempt(kind, path):
    try:
        os.listdir(path) if kind == "list" else open(path, "rb").read(1)
        return "read"
    except OSError as error:
        return type(error).__name__
tries = json.loads({tries!r})
print("PROBE-RESULT" + json.dumps({{"uid": os.getuid(), "lang": get_language(),
    "POSENC_LANG": os.environ.get("POSENC_LANG"),
    "results": {{name: attempt(*how) for name, how in tries.items()}}}}))
"""
)


def _learner_python(folder: Path) -> str:
    """A Python every user can run, with the course's packages: a venv of the system's Python in
    ``folder`` whose site-packages adds the course's, and whose share/ and etc/ (JupyterLab's
    assets, the server extensions' settings) are the course's."""
    system = shutil.which(
        f"python{sys.version_info.major}.{sys.version_info.minor}", path="/usr/bin"
    )
    if system is None or closed_to_others(Path(system)) is not None:
        pytest.skip(
            f"the isolation test is skipped: the course's Python leads into a folder other users "
            f"cannot enter, and there is no /usr/bin/python{sys.version_info.major}."
            f"{sys.version_info.minor} to stand in for a course installed where they can"
        )
    venv = folder / "venv"
    subprocess.run([system, "-m", "venv", "--without-pip", str(venv)], check=True)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    course = Path(sys.prefix) / "lib" / version / "site-packages"
    (venv / "lib" / version / "site-packages" / "_posenc_course.pth").write_text(
        f"import site; site.addsitedir({str(course)!r})\n"
    )
    for name in ("share", "etc"):
        (venv / name).symlink_to(Path(sys.prefix) / name)
    for path in [folder, *folder.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | stat.S_IROTH | (stat.S_IXOTH if path.is_dir() else 0))
    return str(venv / "bin" / "python")


@pytest.mark.timeout(300)
def test_learners_cannot_read_each_other_and_a_chinese_class_gets_zh(artifacts, request):
    executable = require_browser()
    if os.geteuid() != 0:
        pytest.skip("the isolation test is skipped: it creates system users, which needs root")
    if not os.access(PROXY, os.X_OK):
        pytest.skip(f"the isolation test is skipped: {PROXY_MISSING}")
    if shutil.which("useradd") is None:
        pytest.skip("the isolation test is skipped: no useradd on this machine")
    playwright = request.getfixturevalue("playwright_session")

    # The course's own .venv must be refused when other users cannot reach its Python.
    blocked = closed_to_others(Path(sys.executable))
    if blocked is not None:
        problem = learner_python_problem(sys.executable)
        assert problem and str(blocked) in problem and "--python" in problem, problem

    prefix = f"pt{secrets.token_hex(2)}-"  # this test's system users: pt1a2b-ann, pt1a2b-ben
    group = f"{prefix}learners"
    base = Path(tempfile.mkdtemp(prefix="posenc-hub-isolation-", dir="/tmp"))
    base.chmod(0o755)  # other users may pass through to the learners' Python and homes
    started = time.monotonic()
    try:
        python = sys.executable if blocked is None else _learner_python(base / "python")
        assert learner_python_problem(python) is None
        state = base / "hub"
        with hub_server(
            state, free_port(), (A, B), mode="isolated", lang="zh", python=python,
            prefix=prefix, group=group,
        ) as hub:  # fmt: skip
            import grp
            import pwd

            gid = grp.getgrnam(group).gr_gid
            accounts = {u: pwd.getpwnam(prefix + u) for u in (A, B)}
            for user, account in accounts.items():
                home = hub.home(user)
                assert account.pw_gid == gid and Path(account.pw_dir) == home
                info = home.stat()
                assert stat.S_IMODE(info.st_mode) == 0o700, oct(info.st_mode)
                assert (info.st_uid, info.st_gid) == (account.pw_uid, gid)
                copied = home / CHAPTER
                assert copied.stat().st_uid == account.pw_uid
                # A Chinese class: zh/notebooks and zh/exercises, byte for byte.
                assert copied.read_bytes() == (ROOT / "zh" / CHAPTER).read_bytes()
                exercise = "exercises/01_order_blindness.ipynb"
                assert (home / exercise).read_bytes() == (ROOT / "zh" / exercise).read_bytes()
                lab = home / ".jupyter/lab/user-settings/@jupyterlab/translation-extension"
                assert json.loads((lab / "plugin.jupyterlab-settings").read_text()) == {
                    "locale": "zh_CN"
                }
            ben = accounts[B]
            secret = hub.home(B) / "ben-only.txt"
            secret.write_text(SECRET)
            os.chown(secret, ben.pw_uid, ben.pw_gid)
            secret.chmod(0o644)  # even a file ben left readable: his home keeps it from ann
            grades = hub.grading / "week1-grades.csv"
            grades.write_text("learner,points\nben,9\n")
            for name in ("jupyterhub.sqlite", "jupyterhub_cookie_secret", "proxy_token"):
                mode = stat.S_IMODE((state / name).stat().st_mode)
                assert mode == 0o600 and (state / name).stat().st_uid == 0, (name, oct(mode))
            assert stat.S_IMODE(hub.grading.stat().st_mode) == 0o700

            tries = {
                "list ben's home": ["list", str(hub.home(B))],
                "list ben's notebooks": ["list", str(hub.home(B) / "notebooks")],
                "open ben's notebook": ["open", str(hub.home(B) / CHAPTER)],
                "open ben's file": ["open", str(secret)],
                "list the hub's state": ["list", str(state)],
                "open the hub's database": ["open", str(state / "jupyterhub.sqlite")],
                "open the cookie secret": ["open", str(state / "jupyterhub_cookie_secret")],
                "open the proxy token": ["open", str(state / "proxy_token")],
                "open the hub's log": ["open", str(state / "jupyterhub.log")],
                "list the grading folder": ["list", str(hub.grading)],
                "open the grades": ["open", str(grades)],
                "list her own home": ["list", str(hub.home(A))],
                "open her own notebook": ["open", str(hub.home(A) / CHAPTER)],
            }
            probe = {
                "type": "notebook",
                "content": {
                    "cells": [{"cell_type": "code", "source": PROBE.format(tries=json.dumps(tries)),
                               "metadata": {}, "outputs": [], "execution_count": None}],
                    "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                "language": "python"}},
                    "nbformat": 4, "nbformat_minor": 5,
                },
            }  # fmt: skip

            browser = playwright.chromium.launch(
                executable_path=executable, headless=True, args=CHROMIUM_ARGS
            )
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.route(NOT_LOCAL, lambda route: route.abort())
            context.add_init_script(INSTRUMENT)
            page = context.new_page()
            try:
                page.goto(f"{hub.url}hub/login?next=/user/{A}/lab/tree/{CHAPTER}")
                page.fill("#username_input", A)
                page.fill("#password_input", hub.password)
                page.click("#login_submit")
                page.wait_for_url(
                    re.compile(re.escape(f"{hub.url}user/{A}/lab/tree/{CHAPTER}")),
                    timeout=START_MS,
                )
                saved = page.evaluate(
                    FETCH, [f"/user/{A}/api/contents/probe.ipynb", "PUT", json.dumps(probe)]
                )
                assert saved["status"] in (200, 201), saved
                assert (hub.home(A) / "probe.ipynb").stat().st_uid == accounts[A].pw_uid
                probe_page = context.new_page()  # opens while the lecture's kernel starts
                probe_page.goto(f"{hub.url}user/{A}/lab/tree/probe.ipynb")

                page.wait_for_selector(KERNEL_IDLE, timeout=START_MS)
                page.get_by_text("文件").first.wait_for(timeout=START_MS)  # JupyterLab in Chinese
                _run_cell(page, IMPORTS)
                _run_cell(page, DASHBOARD)
                page.wait_for_selector(".posenc-control-positions input", timeout=RUN_MS)

                probe_page.wait_for_selector(KERNEL_IDLE, timeout=START_MS)
                _run_cell(probe_page, PROBE_MARK)
                output = probe_page.locator(".jp-OutputArea-output", has_text="PROBE-RESULT")
                output.first.wait_for(timeout=RUN_MS)
                text = output.first.inner_text()
                report = json.loads(text[text.index("PROBE-RESULT") + len("PROBE-RESULT") :])
            except Exception:
                for name, shot in (("page", page), ("probe", locals().get("probe_page"))):
                    if shot is not None:
                        shot.screenshot(path=str(artifacts / f"hub-isolation-{name}.png"))
                raise
            finally:
                browser.close()

            results = report["results"]
            assert report["uid"] == accounts[A].pw_uid, report
            assert report["lang"] == "zh" and report["POSENC_LANG"] == "zh", report
            own = {"list her own home", "open her own notebook"}
            assert {k: v for k, v in results.items() if k in own} == dict.fromkeys(own, "read")
            refused = {k: v for k, v in results.items() if k not in own}
            assert refused == dict.fromkeys(refused, "PermissionError"), refused
        assert hub.leftovers == [], f"the hub left processes running: {hub.leftovers}"
        print(f"ann's cell (uid {report['uid']}), as the isolated hub answered it: {results}")
        print(f"isolated hub, start to stop: {time.monotonic() - started:.0f} s")
    finally:
        removed = remove_learners(prefix, group, drop_group=True)
        shutil.rmtree(base, ignore_errors=True)
        import pwd

        left = [a.pw_name for a in pwd.getpwall() if a.pw_name.startswith(prefix)]
        assert not left, f"system users left behind: {left} (removed: {removed})"
