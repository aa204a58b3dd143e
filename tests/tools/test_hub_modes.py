"""``make hub``'s two modes and two languages, without starting a hub (the browser tests do that:
tests/browser/test_hub_in_browser.py for the trial mode, test_hub_isolation.py for the isolated
mode with a Chinese class).

What each learner is handed (English or Chinese; a second start keeps their edits; in isolated
mode everything is theirs and nothing is written through a link they left), how the hub says
whether learners are isolated, when the isolated mode refuses (no root; a Python other users
cannot reach), and the configuration JupyterHub reads in each mode.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

import pytest
from traitlets.config import Config

from tools import hub as hubmod
from tools.hub import (
    CONFIG,
    ROOT,
    Hub,
    banner,
    closed_to_others,
    hand_out,
    hub_server,
    learner_python_problem,
    remove_learners,
)

CHAPTER = "notebooks/01_order_blindness.ipynb"
SETTINGS = ".jupyter/lab/user-settings/@jupyterlab/translation-extension/plugin.jupyterlab-settings"


@pytest.mark.parametrize("lang, source", [("en", ROOT), ("zh", ROOT / "zh")])
def test_each_class_gets_its_language(tmp_path, lang, source):
    home = tmp_path / "ann"
    hand_out(home, lang)
    for name in ("notebooks", "exercises"):
        expected = sorted(p.name for p in (source / name).iterdir())
        assert sorted(p.name for p in (home / name).iterdir()) == expected
    assert (home / CHAPTER).read_bytes() == (source / CHAPTER).read_bytes()
    if lang == "zh":
        assert json.loads((home / SETTINGS).read_text()) == {"locale": "zh_CN"}
    else:
        assert not (home / SETTINGS).exists()
    # A second start keeps the learner's work.
    (home / CHAPTER).write_text("ann's edits")
    assert hand_out(home, lang) == []
    assert (home / CHAPTER).read_text() == "ann's edits"


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to another user needs root")
def test_isolated_hand_out_gives_the_learner_their_files_and_nothing_else(tmp_path):
    nobody = (65534, 65534)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = tmp_path / "ann"
    home.mkdir()
    (home / ".jupyter").symlink_to(elsewhere)  # a link the learner left in their home
    hand_out(home, "zh", nobody)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    for path in [home, *home.rglob("*")]:
        if path != home / ".jupyter":  # the link itself is left as it was
            assert (path.lstat().st_uid, path.lstat().st_gid) == nobody, path
    assert list(elsewhere.iterdir()) == [], "root wrote through the learner's link"
    assert elsewhere.stat().st_uid == os.getuid()


def test_closed_folders_are_found():
    base = Path(tempfile.mkdtemp(prefix="posenc-hub-modes-", dir="/tmp"))
    try:
        base.chmod(0o755)
        closed = base / "closed"
        closed.mkdir()
        closed.chmod(0o700)
        (closed / "python").write_text("")
        open_file = base / "open.txt"
        open_file.write_text("")
        open_file.chmod(0o644)
        assert closed_to_others(closed / "python") == closed
        assert closed_to_others(open_file) is None
        link = base / "link"
        link.symlink_to(closed / "python")  # an open path leading into a closed folder
        assert closed_to_others(link) == closed
        open_file.chmod(0o600)
        assert closed_to_others(open_file) == open_file
    finally:
        shutil.rmtree(base)


def test_a_python_under_a_closed_folder_is_refused_saying_what_to_do(tmp_path):
    closed = tmp_path / "home"
    closed.mkdir()
    closed.chmod(0o700)
    python = closed / "python"
    python.symlink_to(sys.executable)
    problem = learner_python_problem(str(python))
    assert problem is not None
    assert str(closed) in problem or str(tmp_path) in problem, problem
    assert "--python" in problem and "/srv/posenc-course" in problem, problem


def test_isolated_mode_without_root_refuses(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(SystemExit, match="needs root"):
        with hub_server(tmp_path / "hub", mode="isolated"):
            pass
    assert not (tmp_path / "hub").exists()


def test_the_banner_says_whether_learners_are_isolated(tmp_path):
    trial = Hub("http://127.0.0.1:8000/", ("ann",), "password", tmp_path, tmp_path / "log")
    text = "\n".join(banner(trial))
    assert "NOT ISOLATED" in text and "HUB_MODE=isolated" in text and "Zero to JupyterHub" in text
    isolated = Hub(
        "http://127.0.0.1:8000/", ("ann",), "pw", tmp_path, tmp_path / "l", "isolated", "zh"
    )
    text = "\n".join(banner(isolated))
    assert "NOT ISOLATED" not in text and "ISOLATED" in text and "0700" in text
    assert "3500 MB (enforced)" in text and "advisory" in text and "zh" in text


def test_removing_learners_touches_no_account_outside_the_group(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"ran {args}")

    monkeypatch.setattr(hubmod.subprocess, "run", refuse)
    # No such group: nothing is the course's, nothing is removed (root has prefix "r").
    assert remove_learners("r", "posenc-no-such-group") == []


def _config(monkeypatch, tmp_path, **env) -> Config:
    for key, value in {"POSENC_HUB_STATE": str(tmp_path), **env}.items():
        monkeypatch.setenv(key, value)
    config = Config()
    code = compile(CONFIG.read_text(), str(CONFIG), "exec")
    exec(code, {"get_config": lambda: config, "__file__": str(CONFIG), "__name__": "config"})
    return config


def test_the_config_in_each_mode(monkeypatch, tmp_path):
    from jupyterhub.spawner import LocalProcessSpawner

    trial = _config(monkeypatch, tmp_path, POSENC_HUB_MODE="trial", POSENC_HUB_LANG="en")
    assert trial.JupyterHub.spawner_class.endswith("SimpleLocalProcessSpawner")
    assert "POSENC_LANG" not in trial.Spawner.environment
    isolated = _config(
        monkeypatch, tmp_path, POSENC_HUB_MODE="isolated", POSENC_HUB_LANG="zh",
        POSENC_HUB_PREFIX="pt-", POSENC_HUB_PYTHON="/srv/posenc-course/.venv/bin/python",
    )  # fmt: skip
    spawner = isolated.JupyterHub.spawner_class
    assert issubclass(spawner, LocalProcessSpawner)
    assert isolated.Spawner.environment["POSENC_LANG"] == "zh"
    assert isolated.Spawner.cmd[:1] == ["/srv/posenc-course/.venv/bin/python"]
    assert isolated.Spawner.mem_limit == "4.5G"
    assert "--allow-root" not in isolated.Spawner.args
