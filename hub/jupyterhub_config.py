"""JupyterHub's configuration for `make hub`: the course served to a few named users on this machine.

Started by ``tools/hub.py`` (``make hub``), which sets the environment variables read below; it is
JupyterHub's own configuration format, so a teacher can read it as a starting point for a real hub
(docs/teaching-at-scale.md). What it sets up:

* the hub and its proxy listen on 127.0.0.1 only (this authenticator is for trying things out);
* the users named in POSENC_HUB_USERS log in with one shared password (JupyterHub's built-in
  SharedPasswordAuthenticator, which replaced DummyAuthenticator's password in JupyterHub 5.3);
* each user's server is a local process of this course's Python (``.venv``), started without root
  and without Unix users (SimpleLocalProcessSpawner), in its own home folder
  ``<state>/users/<name>/``, into which the course's notebooks/ and exercises/ are copied on the
  first start, so each user edits their own files;
* chapter 8's converted model is read by every user from one shared cache (POSENC_CACHE), converted
  once by ``tools/hub.py`` before the hub starts, instead of once per user;
* the hub's state (its sqlite database, cookie secret and proxy token) lives in the state folder
  (``build/hub/``, git-ignored), never in the repository.
"""

from __future__ import annotations

import ipaddress
import os
import shutil
import sys
from pathlib import Path

c = get_config()  # noqa: F821 - JupyterHub defines get_config when it loads this file

ROOT = Path(__file__).resolve().parent.parent  # the course folder
STATE = Path(os.environ.get("POSENC_HUB_STATE", ROOT / "build" / "hub")).resolve()
IP = os.environ.get("POSENC_HUB_IP", "127.0.0.1")
PORT = int(os.environ.get("POSENC_HUB_PORT", "8000"))
USERS = os.environ.get("POSENC_HUB_USERS", "alice bob carol").split()
PASSWORD = os.environ.get("POSENC_HUB_PASSWORD", "")
# What each user gets in their home folder on first start: the lectures and the exercises.
COURSE_FOLDERS = ("notebooks", "exercises")
PROXY = ROOT / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"

if not ipaddress.ip_address(IP).is_loopback:
    raise SystemExit(
        f"make hub serves on this machine only (127.0.0.1), not on {IP}: its shared password is "
        "for trying the course out. For a class, set up a real hub (docs/teaching-at-scale.md)."
    )

# -- the hub, its proxy and their state ----------------------------------------------------------
c.JupyterHub.ip = IP
c.JupyterHub.port = PORT
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ.get("POSENC_HUB_API_PORT", "8081"))
c.JupyterHub.db_url = f"sqlite:///{STATE / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(STATE / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(STATE / "jupyterhub.pid")
c.ConfigurableHTTPProxy.command = [str(PROXY)]
c.ConfigurableHTTPProxy.pid_file = str(STATE / "proxy.pid")
c.ConfigurableHTTPProxy.api_url = (
    f"http://127.0.0.1:{os.environ.get('POSENC_HUB_PROXY_API_PORT', PORT + 1)}"
)
token_file = STATE / "proxy_token"
if token_file.is_file():
    c.ConfigurableHTTPProxy.auth_token = token_file.read_text().strip()
# On Ctrl-C the hub stops its proxy and every user's server (JupyterHub's defaults, kept explicit).
c.JupyterHub.cleanup_proxy = True
c.JupyterHub.cleanup_servers = True

# -- who may log in ------------------------------------------------------------------------------
c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = PASSWORD or None
c.Authenticator.allowed_users = set(USERS)

# -- each user's server: this course's Python, in the user's own folder --------------------------
HOME = str(STATE / "users" / "{username}")
c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
c.SimpleLocalProcessSpawner.home_dir_template = HOME
c.Spawner.notebook_dir = HOME
# The course's own Python (.venv), so posenc_lib, the widgets and chapter 8's model are there.
c.Spawner.cmd = [str(Path(sys.executable).with_name("jupyterhub-singleuser"))]
c.Spawner.default_url = "/lab/tree/notebooks/00_start_here.ipynb"
# Jupyter refuses to run as root unless told; containers and CI often run as root.
c.Spawner.args = ["--allow-root"] if os.getuid() == 0 else []
c.Spawner.environment = {
    # Chapter 8's converted model, shared by every user (tools/hub.py converts it once).
    "POSENC_CACHE": os.environ.get("POSENC_CACHE", ""),
    # A kernel's tensors are small; one thread each keeps many learners' kernels from fighting
    # over the cores.
    "OMP_NUM_THREADS": "1",
}
# A link into a user's server (/user/<name>/..., as an nbgitpuller link opens) starts the server
# when it is not running, instead of showing a "Launch Server" button.
c.JupyterHub.implicit_spawn_seconds = 0.5
# A busy machine takes a while to start a server that imports JupyterLab.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90


def copy_course(spawner) -> None:
    """pre_spawn_hook: on a user's first start, copy the course's notebooks into their home folder.

    Later starts leave the folder alone, so a user's saved work is never overwritten.
    """
    home = Path(spawner.home_dir)
    home.mkdir(parents=True, exist_ok=True)
    for name in COURSE_FOLDERS:
        if not (home / name).exists():
            shutil.copytree(ROOT / name, home / name)


c.Spawner.pre_spawn_hook = copy_course

# -- Kernel guard (issue 26, item 4) -------------------------------------------------------------
# tools/hub.py writes <state>/jupyter/kernels/python3/kernel.json: ipykernel run under
# tools/kernel_guard.py. JUPYTER_PATH is searched before the environment's own kernels, so every
# course notebook gets it; a kernel that dies of memory says so at the learner's next cell, and
# the notebook file is never touched.
c.Spawner.environment["JUPYTER_PATH"] = str(STATE / "jupyter")
# Optional: the guard stops a kernel above this many MB (empty: no guard limit; a cgroup or the
# OOM killer still applies, with the same message). Chapter 8's lecture peaks near 2.5 GB, so
# stay above 3000.
c.Spawner.environment["POSENC_KERNEL_MEMORY_MB"] = os.environ.get("POSENC_KERNEL_MEMORY_MB", "")
# An open (or closed but not shut down) notebook's kernel keeps its memory: cull idle ones.
c.Spawner.args += [
    "--MappingKernelManager.cull_idle_timeout=1200",
    "--MappingKernelManager.cull_interval=120",
]
