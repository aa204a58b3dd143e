"""JupyterHub's configuration for `make hub`: the course served to a few named users on this machine.

Started by ``tools/hub.py`` (``make hub``), which sets the environment variables read below; it is
JupyterHub's own configuration format, so a teacher can read it as a starting point for a real hub
(docs/teaching-at-scale.md). What it sets up:

* the hub and its proxy listen on 127.0.0.1 only (this authenticator is for trying things out);
* the users named in POSENC_HUB_USERS log in with one shared password (JupyterHub's built-in
  SharedPasswordAuthenticator, which replaced DummyAuthenticator's password in JupyterHub 5.3);
* each user's server is a local process of this course's Python (``.venv``) in its own home
  folder ``<state>/users/<name>/``, into which the class's notebooks/ and exercises/ (English, or
  Chinese from zh/ with POSENC_HUB_LANG=zh) are copied on the first start, so each user edits
  their own files. Two modes (POSENC_HUB_MODE):
  - ``trial``: SimpleLocalProcessSpawner, every server runs as the account that started the hub,
    without root. NOT isolated: a learner's code can read the other learners' files.
  - ``isolated`` (root): LocalProcessSpawner, each server runs as the learner's own system user
    (POSENC_HUB_PREFIX + name, made by tools/hub.py), whose home is theirs alone (mode 0700);
    the hub's state files are root's (mode 0600). (Where systemd runs as PID 1, systemdspawner
    does the same and also enforces each learner's memory and CPU limits with cgroups; this
    machine's container has no systemd, so the course uses LocalProcessSpawner.)
* chapter 8's converted model is read by every user from one shared cache (POSENC_CACHE), converted
  once by ``tools/hub.py`` before the hub starts, instead of once per user;
* the hub's state (its sqlite database, cookie secret and proxy token) lives in the state folder
  (``build/hub/``, git-ignored), never in the repository.
"""

from __future__ import annotations

import ipaddress
import os
import pwd
import sys
from pathlib import Path

c = get_config()  # noqa: F821 - JupyterHub defines get_config when it loads this file

ROOT = Path(__file__).resolve().parent.parent  # the course folder
sys.path.insert(0, str(ROOT))  # tools.hub: what each learner is handed
from jupyterhub.spawner import LocalProcessSpawner, set_user_setuid  # noqa: E402

from tools.hub import hand_out  # noqa: E402

STATE = Path(os.environ.get("POSENC_HUB_STATE", ROOT / "build" / "hub")).resolve()
IP = os.environ.get("POSENC_HUB_IP", "127.0.0.1")
PORT = int(os.environ.get("POSENC_HUB_PORT", "8000"))
USERS = os.environ.get("POSENC_HUB_USERS", "alice bob carol").split()
PASSWORD = os.environ.get("POSENC_HUB_PASSWORD", "")
MODE = os.environ.get("POSENC_HUB_MODE", "trial")
LANG = os.environ.get("POSENC_HUB_LANG", "en")  # the class's notebooks: en, or zh from zh/
PYTHON = os.environ.get("POSENC_HUB_PYTHON") or sys.executable  # the learners' servers' Python
PREFIX = os.environ.get("POSENC_HUB_PREFIX", "posenc-")  # isolated: system user = PREFIX + name
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
if MODE == "isolated":

    class LearnerSpawner(LocalProcessSpawner):
        """LocalProcessSpawner, with hub user NAME run as the system user PREFIX + NAME (made by
        tools/hub.py in the learners' group, home ``<state>/users/<name>``)."""

        def system_user(self) -> str:
            return PREFIX + self.user.name

        def make_preexec_fn(self, name):
            return set_user_setuid(self.system_user())

        def user_env(self, env):
            account = pwd.getpwnam(self.system_user())
            env.update(USER=account.pw_name, HOME=account.pw_dir, SHELL=account.pw_shell)
            return env

    c.JupyterHub.spawner_class = LearnerSpawner
    c.Spawner.notebook_dir = "~"
    # What a learner's server may use, from the sizing tables (docs/teaching-at-scale.md,
    # section 4): 4.5 GB per learner. LocalProcessSpawner does not enforce it (JupyterHub only
    # passes MEM_LIMIT to the server); the kernel guard's POSENC_KERNEL_MEMORY_MB (below, 3500
    # by default in this mode) is what stops a kernel. systemdspawner would enforce it.
    c.Spawner.mem_limit = "4.5G"
    c.Spawner.args = []
else:
    c.JupyterHub.spawner_class = "jupyterhub.spawner.SimpleLocalProcessSpawner"
    c.SimpleLocalProcessSpawner.home_dir_template = HOME
    c.Spawner.notebook_dir = HOME
    # Jupyter refuses to run as root unless told; containers and CI often run as root.
    c.Spawner.args = ["--allow-root"] if os.getuid() == 0 else []
# The course's own Python (.venv), so posenc_lib, the widgets and chapter 8's model are there.
c.Spawner.cmd = [PYTHON, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/lab/tree/notebooks/00_start_here.ipynb"
c.Spawner.environment = {
    # Chapter 8's converted model, shared by every user (tools/hub.py converts it once).
    "POSENC_CACHE": os.environ.get("POSENC_CACHE", ""),
    # A kernel's tensors are small; one thread each keeps many learners' kernels from fighting
    # over the cores.
    "OMP_NUM_THREADS": "1",
}
if LANG != "en":
    c.Spawner.environment["POSENC_LANG"] = LANG  # the library speaks the class's language
# A link into a user's server (/user/<name>/..., as an nbgitpuller link opens) starts the server
# when it is not running, instead of showing a "Launch Server" button.
c.JupyterHub.implicit_spawn_seconds = 0.5
# A busy machine takes a while to start a server that imports JupyterLab.
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 90


def copy_course(spawner) -> None:
    """pre_spawn_hook: on a user's first start, copy the class's notebooks into their home folder
    (``tools.hub.hand_out``; in isolated mode owned by the learner, mode 0700).

    Later starts leave the folder alone, so a user's saved work is never overwritten.
    """
    if MODE == "isolated":
        account = pwd.getpwnam(spawner.system_user())
        hand_out(Path(account.pw_dir), LANG, (account.pw_uid, account.pw_gid))
    else:
        hand_out(Path(spawner.home_dir), LANG)


c.Spawner.pre_spawn_hook = copy_course

# -- Kernel guard (issue 26, item 4) -------------------------------------------------------------
# tools/hub.py writes <state>/jupyter/kernels/python3/kernel.json (isolated mode:
# <state>/shared/jupyter/..., readable by every learner): ipykernel run under
# tools/kernel_guard.py. JUPYTER_PATH is searched before the environment's own kernels, so every
# course notebook gets it; a kernel that dies of memory says so at the learner's next cell, and
# the notebook file is never touched.
c.Spawner.environment["JUPYTER_PATH"] = os.environ.get("POSENC_HUB_JUPYTER", str(STATE / "jupyter"))
# Optional: the guard stops a kernel above this many MB (empty: no guard limit; a cgroup or the
# OOM killer still applies, with the same message). Chapter 8's lecture peaks near 2.5 GB, so
# stay above 3000.
c.Spawner.environment["POSENC_KERNEL_MEMORY_MB"] = os.environ.get("POSENC_KERNEL_MEMORY_MB", "")
# An open (or closed but not shut down) notebook's kernel keeps its memory: cull idle ones.
c.Spawner.args += [
    "--MappingKernelManager.cull_idle_timeout=1200",
    "--MappingKernelManager.cull_interval=120",
]
