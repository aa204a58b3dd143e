"""The course on a JupyterHub: ``make hub`` serves it to a few named users on this machine, and
``python -m tools.hub link --hub URL`` prints the nbgitpuller link that hands it out on a real hub.

``make hub`` (``python -m tools.hub serve``) starts the official JupyterHub with the configuration
in ``hub/jupyterhub_config.py`` and its proxy (configurable-http-proxy, installed by ``make hub``
from ``hub/package-lock.json`` into ``hub/node_modules/``); first it converts chapter 8's model once
into the shared cache every user's server reads (``POSENC_CACHE``). It prints the address, the
users and their shared password; Ctrl-C stops the hub, its proxy and every user's server. The
hub's state and each user's files are in ``build/hub/`` (git-ignored): delete the folder to start
afresh. It listens on 127.0.0.1 only. Two modes (``--mode``, ``make hub HUB_MODE=...``):

* ``trial`` (the default, no root needed): every user's server runs as the account that started
  the hub (SimpleLocalProcessSpawner). NOT isolated: a learner's code cell can read every other
  learner's files. For a teacher trying the course, never for a class.
* ``isolated`` (root needed): one system user per learner (``posenc-<name>``, in the group
  ``posenc-learners``, created if missing; JupyterHub's LocalProcessSpawner), home folders mode
  0700 owned by the learner, the hub's secrets (database, cookie secret, proxy token, log) and the
  teacher's grading folder (``<state>/grading/``) readable by root only, each kernel stopped above
  ``POSENC_KERNEL_MEMORY_MB`` (3500 by default) by the course's kernel guard. The learners'
  Python (the course's ``.venv``, or ``--python``) must be one every user can run: a course under
  a folder only its owner can enter (``/root``, a 0700 home) is refused, saying what to do.

``--lang zh`` (``make hub HUB_LANG=zh``) hands a class the Chinese notebooks and exercises
(``zh/notebooks``, ``zh/exercises``) and sets ``POSENC_LANG=zh`` and JupyterLab's Chinese
interface for every learner, as ``make lab-zh`` does; one hub serves one class.

``python -m tools.hub link --hub https://hub.example.edu`` prints a link that, clicked by a
learner logged in to that hub, clones this repository into their home folder (or merges the
latest version into their copy) with nbgitpuller and opens the chapter given by ``--path`` in
JupyterLab.
"""

from __future__ import annotations

import argparse
import contextlib
import grp
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

from posenc_lib.i18n import tr
from tools.kernel_guard import MEMORY_VARIABLE
from tools.kernel_guard import install as install_kernel_guard

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "hub" / "jupyterhub_config.py"
PROXY = ROOT / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
STATE = ROOT / "build" / "hub"
USERS = ("alice", "bob", "carol")
PROXY_MISSING = (
    "JupyterHub's proxy (configurable-http-proxy) is not installed in hub/node_modules/. "
    "`make hub` installs it with npm (Node.js 20 or newer: sudo apt-get install nodejs npm); "
    "or run `npm ci` in the hub/ folder."
)

MODES = ("trial", "isolated")
# What each learner gets in their home folder on first start, per class language: the course
# folder it is copied from -> its name in the home folder (the same in both languages, so links
# and the start page work alike).
COURSE = {
    "en": {"notebooks": ROOT / "notebooks", "exercises": ROOT / "exercises"},
    "zh": {"notebooks": ROOT / "zh" / "notebooks", "exercises": ROOT / "zh" / "exercises"},
}
LAB_LOCALE = {"zh": "zh_CN"}  # JupyterLab's interface language per class language
# Isolated mode: the system users it creates are named PREFIX + name and have GROUP as their
# primary group; it changes or removes no account outside that group.
PREFIX = "posenc-"
GROUP = "posenc-learners"
# Each kernel's limit under the kernel guard in isolated mode, in MB: chapter 8's lecture peaks
# at 2.48 GB (docs/teaching-at-scale.md, section 4), so 3.5 GB leaves room for a raised setting.
KERNEL_MEMORY_MB = 3500
# A learner's whole server in isolated mode (the sizing rule: 3.49 GB x 1.2 and the server).
# JupyterHub's LocalProcessSpawner does not enforce it (it only sets MEM_LIMIT for the server);
# systemdspawner and Z2JH do.
LEARNER_MEMORY = "4.5G"


@dataclass(frozen=True)
class Hub:
    """A running local hub: its address, users, shared password and state folder."""

    url: str  # http://127.0.0.1:PORT/
    users: tuple[str, ...]
    password: str
    state: Path
    log: Path
    mode: str = "trial"
    lang: str = "en"
    prefix: str = PREFIX  # isolated mode: the system user of learner NAME is PREFIX + NAME
    group: str = GROUP  # isolated mode: the learners' accounts' primary group
    # Filled in when the hub has stopped: the pids of processes it left running (its proxy, a
    # user's server or kernel), which were then stopped by pid. Empty when it stopped them all.
    leftovers: list[int] = field(default_factory=list)

    def home(self, user: str) -> Path:
        """The user's home folder: their copy of the notebooks and exercises."""
        return self.state / "users" / user

    @property
    def grading(self) -> Path:
        """The teacher's grading folder (isolated mode): readable by root only."""
        return self.state / "grading"

    def system_user(self, user: str) -> str:
        """The system account the user's server runs as."""
        return self.prefix + user if self.mode == "isolated" else pwd.getpwuid(os.getuid()).pw_name


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _check_users(users: tuple[str, ...]) -> None:
    bad = [
        u for u in users if not u.isascii() or not u.replace("-", "").isalnum() or u != u.lower()
    ]
    if not users or bad:
        raise SystemExit(
            f"HUB_USERS needs one or more user names in lower-case letters, digits and dashes, "
            f'separated by spaces (for example HUB_USERS="alice bob carol"); not {" ".join(bad)!r}.'
        )


def shared_model_cache() -> str:
    """Convert chapter 8's model once into the cache every user reads; return that cache's folder.

    Without it, each user's server (whose HOME is their own folder) would convert the model into
    their own ~/.cache on first use: about 20 s and 520 MB per user. A failure (the model package
    is missing) is reported and the hub starts anyway: chapter 8 then tells each user what to do.
    """
    from posenc_lib.models.smollm import _is_converted, cache_dir, convert

    if not _is_converted(cache_dir()):
        print(
            f"==> Converting chapter 8's model once for every user into {cache_dir()} (20 s to a minute)"
        )
        try:
            convert()
        except (OSError, ValueError, ImportError) as error:
            print(f"    Not converted ({error}); chapter 8 will say what to do.")
    return str(cache_dir().parent)


def _hub_pid(state: Path) -> int | None:
    """The pid of a hub still running from ``state``, if there is one."""
    try:
        pid = int((state / "jupyterhub.pid").read_text().strip())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return None
    return pid


def _processes_in(folder: Path, uids: frozenset[int] = frozenset()) -> list[int]:
    """Pids of this user's processes (and those of ``uids``, the learners' accounts in isolated
    mode) whose working folder is ``folder`` or inside it: for the hub's state folder, the hub and
    its proxy (which run there), the users' servers (which run in their home folders) and their
    kernels (which run where their notebook is)."""
    pids, mine, inside = [], {os.getuid(), *uids}, str(folder.resolve()) + os.sep
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid not in mine:
                continue
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if (cwd + os.sep).startswith(inside):
            pids.append(int(entry.name))
    return pids


def _stop(pids: list[int], seconds: float) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.2)
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    with contextlib.suppress(OSError):  # a zombie (exited, not yet reaped) counts as gone
        if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
            return False
    return True


def _wait_until_served(url: str, process: subprocess.Popen, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url + "hub/api", timeout=2) as response:
                json.load(response)
            return
        except (OSError, ValueError):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
                why = (
                    "stopped" if process.poll() is not None else f"did not answer in {timeout:g} s"
                )
                raise RuntimeError(
                    f"JupyterHub {why}; the end of its log ({log}):\n{tail}"
                ) from None
            time.sleep(0.3)


# -- what each learner gets, and (isolated mode) their system account ---------------------------


def hand_out(home: Path, lang: str = "en", owner: tuple[int, int] | None = None) -> list[Path]:
    """Copy the class's notebooks and exercises (``COURSE[lang]``) into ``home`` where they are
    not there yet, and for a Chinese class JupyterLab's Chinese interface setting; return what was
    written. Later starts leave the folder alone, so a learner's saved work is never overwritten.

    With ``owner`` (uid, gid; isolated mode, run as root) the home folder is the learner's, mode
    0700, and everything written here becomes theirs. Only what this call wrote is given away,
    never followed through a link, so a link a learner left in their home cannot make root
    change another file's owner.
    """
    if lang not in COURSE:
        raise SystemExit(f"The hub hands out the course in {' or '.join(COURSE)}, not {lang!r}.")
    written = []
    if not home.exists():
        home.mkdir(parents=True)
        written.append(home)
    for name, source in COURSE[lang].items():
        if not os.path.lexists(home / name):
            shutil.copytree(source, home / name)
            written.append(home / name)
    locale = LAB_LOCALE.get(lang)
    settings = home / ".jupyter/lab/user-settings/@jupyterlab/translation-extension"
    chain = [f for f in (*reversed(settings.parents), settings) if f.is_relative_to(home)][1:]
    file = settings / "plugin.jupyterlab-settings"
    # Never through a link a learner left in their home: root writes nothing outside it.
    if locale and not os.path.lexists(file) and not any(f.is_symlink() for f in chain):
        new = [f for f in chain if not f.exists()]
        settings.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps({"locale": locale}) + "\n")
        written.append(new[0] if new else file)
    if owner is not None:
        for path in written:
            os.chown(path, *owner, follow_symlinks=False)
            for folder, dirs, files in os.walk(path):  # os.walk does not follow links
                for name in (os.path.join(folder, n) for n in dirs + files):
                    os.chown(name, *owner, follow_symlinks=False)
        os.chown(home, *owner, follow_symlinks=False)
        home.chmod(0o700)
    return written


def learner_group(group: str = GROUP) -> int:
    """The gid of the learners' group, created (groupadd) if missing."""
    try:
        return grp.getgrnam(group).gr_gid
    except KeyError:
        subprocess.run(["groupadd", group], check=True, capture_output=True)
        return grp.getgrnam(group).gr_gid


def ensure_learner(name: str, home: Path, group: str = GROUP) -> pwd.struct_passwd:
    """The system account ``name`` (useradd if missing: primary group ``group``, home ``home``,
    no password, so only the hub starts anything as them). An existing account outside ``group``
    is someone else's: refused, never changed."""
    gid = learner_group(group)
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(
            ["useradd", "--gid", group, "--no-user-group", "--home-dir", str(home),
             "--no-create-home", "--shell", "/bin/bash", "--comment", "posenc course learner",
             name],
            check=True, capture_output=True,
        )  # fmt: skip
        return pwd.getpwnam(name)
    if account.pw_gid != gid:
        raise SystemExit(
            tr(
                "The system user {name} exists and is not in the group {group}: it is not one "
                "the course created, so the hub will not use it. Choose another prefix "
                "(make hub HUB_PREFIX=...) or another user name.",
                name=name,
                group=group,
            )
        )
    if Path(account.pw_dir) != home:
        subprocess.run(["usermod", "--home", str(home), name], check=True, capture_output=True)
        account = pwd.getpwnam(name)
    return account


def remove_learners(
    prefix: str = PREFIX, group: str = GROUP, drop_group: bool = False
) -> list[str]:
    """Remove the system users named ``prefix...`` whose primary group is ``group`` (the ones
    ``ensure_learner`` creates; their home folders are the hub's to delete), stopping their
    processes first; with ``drop_group``, the group too when no account is left in it. Return the
    names removed. Accounts outside the group are never touched."""
    try:
        gid = grp.getgrnam(group).gr_gid
    except KeyError:
        return []
    removed = []
    for account in pwd.getpwall():
        if account.pw_name.startswith(prefix) and account.pw_gid == gid and account.pw_uid != 0:
            pids = [
                int(e.name)
                for e in Path("/proc").iterdir()
                if e.name.isdigit() and _owner(e) == account.pw_uid
            ]
            _stop(pids, 5)
            subprocess.run(["userdel", account.pw_name], check=True, capture_output=True)
            removed.append(account.pw_name)
    if drop_group and not any(a.pw_gid == gid for a in pwd.getpwall()):
        subprocess.run(["groupdel", group], check=False, capture_output=True)
    return removed


def _owner(entry: Path) -> int | None:
    try:
        return entry.stat().st_uid
    except OSError:
        return None


def closed_to_others(path: Path) -> Path | None:
    """The first folder on the way to ``path`` that a user other than its owner cannot enter, or
    ``path`` itself if such a user cannot read it; None when every user can. Links are checked
    on both sides: the path as written and where it leads."""
    for candidate in dict.fromkeys([Path(os.path.abspath(path)), Path(path).resolve()]):
        for folder in reversed(candidate.parents):
            if not os.stat(folder).st_mode & stat.S_IXOTH:
                return folder
        mode = os.stat(candidate).st_mode
        need = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
        if mode & need != need:
            return candidate
    return None


def learner_python_problem(python: str) -> str | None:
    """Why learners' accounts could not run ``python`` with the course's packages, in one
    sentence with what to do; None when they can. Checks the interpreter, its standard library
    and packages, and the course folder for read and enter rights for every user."""
    probe = (
        "import importlib.util as u, json, sys, sysconfig; "
        "print(json.dumps([sys.executable, sysconfig.get_path('stdlib'), "
        "sysconfig.get_path('purelib'), u.find_spec('posenc_lib').origin, "
        "u.find_spec('jupyterhub').origin]))"
    )
    try:
        done = subprocess.run([python, "-c", probe], capture_output=True, text=True, timeout=60)
        paths = json.loads(done.stdout)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return tr(
            "{python} cannot import the course's packages (posenc_lib, jupyterhub): give the "
            "Python of the course's environment, e.g. --python /srv/posenc-course/.venv/bin/python.",
            python=python,
        )
    for path in [python, *paths, str(ROOT / "tools" / "kernel_guard.py"), *map(str, _sources())]:
        closed = closed_to_others(Path(path))
        if closed is not None:
            return tr(
                "The learners' accounts could not start the course's Python: {path} is in, or "
                "leads into, {closed}, which only its owner can open (mode {mode:o}). Put the course and its "
                "Python where every user can read them (for example clone it into "
                "/srv/posenc-course and run make setup there with a system Python, "
                "PYTHON=/usr/bin/python3), or pass --python with such an interpreter.",
                path=path,
                closed=closed,
                mode=stat.S_IMODE(os.stat(closed).st_mode),
            )
    return None


def _sources() -> list[Path]:
    return [folder for course in COURSE.values() for folder in course.values()]


@contextlib.contextmanager
def hub_server(
    state: Path = STATE,
    port: int = 8000,
    users: tuple[str, ...] = USERS,
    password: str | None = None,
    timeout: float = 90.0,
    mode: str = "trial",
    lang: str = "en",
    python: str | None = None,
    prefix: str = PREFIX,
    group: str = GROUP,
) -> Iterator[Hub]:
    """Run the local hub (``hub/jupyterhub_config.py``) until the block ends; yields its ``Hub``.

    JupyterHub runs in its own process group, logging to ``<state>/jupyterhub.log``. On the way
    out it is sent SIGTERM, on which it stops its proxy and every user's server; whatever is left
    (a user's server or kernel, the proxy) is then stopped by its pid and listed in
    ``Hub.leftovers``.

    ``mode="isolated"`` (root only) first makes each user's system account (``prefix + name`` in
    ``group``) and home folder with the class's files (``lang``), after checking that those
    accounts can run ``python`` (default: this Python, the course's ``.venv``). The system
    accounts are left in place for the next start; ``remove_learners`` removes them.
    """
    _check_users(users)
    if mode not in MODES:
        raise SystemExit(f"HUB_MODE is trial or isolated, not {mode!r}.")
    if lang not in COURSE:
        raise SystemExit(f"HUB_LANG is {' or '.join(COURSE)}, not {lang!r}.")
    isolated = mode == "isolated"
    if isolated and os.geteuid() != 0:
        raise SystemExit(
            tr(
                "The isolated hub needs root, to run each learner's server as their own system "
                "user: sudo make hub HUB_MODE=isolated. Without root, make hub runs the trial "
                "mode, in which learners are not isolated from one another."
            )
        )
    if not os.access(PROXY, os.X_OK):
        raise SystemExit(PROXY_MISSING)
    state = Path(state).resolve()
    python = python or sys.executable
    running = _hub_pid(state)
    if running is not None:
        raise SystemExit(
            f"A hub is already running from {state} (pid {running}): stop it with Ctrl-C in its "
            "terminal first."
        )
    if not _port_is_free(port):
        raise SystemExit(
            f"Port {port} on 127.0.0.1 is in use: choose another, e.g. make hub HUB_PORT={port + 10}"
        )
    if isolated and (problem := learner_python_problem(python)):
        raise SystemExit(problem)
    (state / "users").mkdir(parents=True, exist_ok=True)
    # Every course notebook's kernel ("python3" in its metadata) runs under the kernel guard: after
    # a kernel dies of memory, the learner's next cell says so (tools/kernel_guard.py). In
    # isolated mode it sits in a folder every learner can read, and runs the learners' Python.
    jupyter = state / ("shared/jupyter" if isolated else "jupyter")
    spec = install_kernel_guard(jupyter, "python3", None) / "kernel.json"
    if python != sys.executable:
        kernel = json.loads(spec.read_text())
        kernel["argv"][0] = python
        spec.write_text(json.dumps(kernel, indent=1) + "\n")
    uids: frozenset[int] = frozenset()
    if isolated:
        # The hub's secrets (database, cookie secret, proxy token, log, pid files) are root's:
        # the folder can be passed through (to the learners' homes and the shared kernelspec) but
        # not listed, and every file in it is mode 0600 (the hub itself runs with umask 077).
        state.chmod(0o711)
        (state / "users").chmod(0o711)
        for folder in (state / "shared", *(p for p in jupyter.rglob("*") if p.is_dir())):
            folder.chmod(0o755)
        for file in jupyter.rglob("*"):
            if file.is_file():
                file.chmod(0o644)
        (state / "grading").mkdir(exist_ok=True)
        (state / "grading").chmod(0o700)  # the teacher's: submissions, feedback, grades
        for file in state.iterdir():
            if file.is_file():
                file.chmod(0o600)
        accounts = [ensure_learner(prefix + user, state / "users" / user, group) for user in users]
        for user, account in zip(users, accounts, strict=True):
            hand_out(state / "users" / user, lang, (account.pw_uid, account.pw_gid))
        uids = frozenset(a.pw_uid for a in accounts)
    else:
        state.chmod(0o700)  # the database, cookie secret and proxy token are the hub's secrets
    token = state / "proxy_token"
    if not token.is_file():
        token.touch(mode=0o600)
        token.write_text(secrets.token_hex(32) + "\n")
    password = password or os.environ.get("HUB_PASSWORD") or secrets.token_urlsafe(9)
    if len(password) < 8:  # JupyterHub's SharedPasswordAuthenticator requires 8 or more
        raise SystemExit(
            "HUB_PASSWORD needs at least 8 characters; or leave it unset for a new one."
        )
    cache = shared_model_cache()
    if isolated and closed_to_others(Path(cache)) is not None:
        print(
            tr(
                "    Chapter 8's shared model ({cache}) is in a folder learners cannot read: each "
                "learner's server converts its own copy (20 s, 520 MB each). To share one, convert "
                "it into a folder every user can read (POSENC_CACHE=/srv/posenc-cache, "
                "docs/teaching-at-scale.md) and start again.",
                cache=cache,
            )
        )
        cache = ""
    env = dict(os.environ)
    env.update(
        POSENC_HUB_STATE=str(state),
        POSENC_HUB_PORT=str(port),
        POSENC_HUB_API_PORT=str(free_port()),
        POSENC_HUB_PROXY_API_PORT=str(free_port()),
        POSENC_HUB_USERS=" ".join(users),
        POSENC_HUB_PASSWORD=password,
        POSENC_HUB_MODE=mode,
        POSENC_HUB_LANG=lang,
        POSENC_HUB_PYTHON=python,
        POSENC_HUB_PREFIX=prefix,
        POSENC_HUB_JUPYTER=str(jupyter),
        POSENC_CACHE=cache,
    )
    if isolated and not env.get(MEMORY_VARIABLE):
        env[MEMORY_VARIABLE] = str(KERNEL_MEMORY_MB)
    log = state / "jupyterhub.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)],
            cwd=state,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            umask=0o077 if isolated else -1,
        )
    if isolated:
        log.chmod(0o600)
    url = f"http://127.0.0.1:{port}/"
    hub = Hub(url, tuple(users), password, state, log, mode, lang, prefix, group)
    try:
        _wait_until_served(url, process, log, timeout)
        yield hub
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)  # the hub stops its servers and proxy
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        hub.leftovers[:] = [pid for pid in _processes_in(state, uids) if pid != os.getpid()]
        _stop(hub.leftovers, 10)


# -- nbgitpuller links ---------------------------------------------------------------------------


def origin_url(folder: Path = ROOT) -> str:
    """The git URL of ``folder``'s remote 'origin'; a clear error when there is none."""
    done = subprocess.run(
        ["git", "-C", str(folder), "config", "--get", "remote.origin.url"],
        capture_output=True,
        text=True,
    )
    url = done.stdout.strip()
    if done.returncode != 0 or not url:
        raise SystemExit(
            "This copy of the course has no git remote 'origin' to hand out. Pass the address "
            "learners' hub can clone, e.g. --repo https://github.com/your-school/posenc-course"
        )
    return url


def public_url(url: str) -> str:
    """The address a hub can clone without keys: an SSH address (git@host:owner/name.git)
    becomes its https form, and a user name or token in an https address is dropped."""
    if "://" not in url and ":" in url and "@" in url.split(":", 1)[0]:
        host, path = url.split("@", 1)[1].split(":", 1)
        return f"https://{host}/{path.lstrip('/')}"
    parts = urlsplit(url)
    if parts.scheme in ("http", "https") and "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    return urlunsplit(parts)


def nbgitpuller_link(
    hub: str, repo: str, branch: str = "main", path: str = "notebooks/00_start_here.ipynb"
) -> str:
    """The nbgitpuller link that clones ``repo`` (``branch``) into a learner's home folder on
    ``hub`` and opens ``path`` (inside the repository) in JupyterLab.

    The link is ``HUB/hub/user-redirect/git-pull?repo=...&branch=...&urlpath=...&targetpath=...``
    (nbgitpuller's documented options): ``user-redirect`` sends the learner to their own server,
    ``targetpath`` names the folder the repository is cloned into (its name, without ``.git``),
    and ``urlpath`` opens ``lab/tree/<folder>/<path>``.
    """
    parts = urlsplit(hub)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SystemExit(
            f"--hub needs the hub's address, e.g. https://hub.example.edu, not {hub!r}"
        )
    folder = repo.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
    if not folder:
        raise SystemExit(f"Cannot tell the repository's name from {repo!r}.")
    query = urlencode(
        [
            ("repo", repo),
            ("branch", branch),
            ("urlpath", f"lab/tree/{folder}/{path.lstrip('/')}"),
            ("targetpath", folder),
        ]
    )
    return f"{hub.rstrip('/')}/hub/user-redirect/git-pull?{query}"


# -- the command line ----------------------------------------------------------------------------


def banner(hub: Hub) -> list[str]:
    """What ``make hub`` prints when the hub serves: where, who, and how isolated the users are."""
    cwd = Path.cwd()
    where = hub.state.relative_to(cwd) if hub.state.is_relative_to(cwd) else hub.state
    lines = [
        f"==> The course on a local JupyterHub: {hub.url}",
        f"    users: {', '.join(hub.users)}; shared password: {hub.password}",
        f"    each user's files: {where}/users/<name>/; the hub's log: {where}/jupyterhub.log",
    ]
    if hub.lang != "en":
        lines.append(
            tr("    class language: {lang} (the notebooks and exercises of zh/)", lang=hub.lang)
        )
    if hub.mode == "isolated":
        lines += [
            tr(
                "    ISOLATED: each learner's server runs as their own system user ({prefix}<name>, "
                "group {group}); homes are mode 0700; the hub's secrets and the grading folder "
                "{grading}/ are readable by root only.",
                prefix=hub.prefix,
                group=hub.group,
                grading=where / "grading",
            ),
            tr(
                "    Limits: the kernel guard stops a kernel above {mb} MB (enforced); "
                "{memory} per learner is advisory here (LocalProcessSpawner does not enforce it; "
                "systemdspawner and Zero to JupyterHub do).",
                mb=os.environ.get(MEMORY_VARIABLE) or KERNEL_MEMORY_MB,
                memory=LEARNER_MEMORY,
            ),
        ]
    else:
        lines.append(
            tr(
                "    NOT ISOLATED (trial mode): every learner's code runs as you, so a learner can "
                "read every other learner's files. For a class on this machine use "
                "sudo make hub HUB_MODE=isolated; for a larger class, Zero to JupyterHub "
                "(docs/teaching-at-scale.md)."
            )
        )
    lines.append(
        "    Only this machine can reach it. Ctrl-C stops the hub, its proxy and every user's server."
    )
    return lines


def _serve(args) -> int:
    users = tuple(args.users.split())
    with hub_server(
        Path(args.state),
        args.port,
        users,
        mode=args.mode,
        lang=args.lang,
        python=args.python,
        prefix=args.prefix,
    ) as hub:
        print("\n".join(banner(hub)))
        sys.stdout.flush()
        try:
            signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
            while True:
                time.sleep(3600)
        except (KeyboardInterrupt, SystemExit):
            print("\n==> Stopping the hub, its proxy and the users' servers")
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut that short
    print("==> Stopped")
    return 0


def _remove(args) -> int:
    if os.geteuid() != 0:
        raise SystemExit("Removing system users needs root: sudo make hub-remove-learners")
    removed = remove_learners(args.prefix, GROUP)
    print(f"==> Removed {len(removed)} system user(s): {' '.join(removed) or '-'}")
    return 0


def _link(args) -> int:
    repo = public_url(args.repo or origin_url())
    if not (ROOT / args.path).exists():
        raise SystemExit(f"{args.path} is not in the course folder: give a path such as "
                         "notebooks/01_order_blindness.ipynb")  # fmt: skip
    print(nbgitpuller_link(args.hub, repo, args.branch, args.path))
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.hub", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the course on a local JupyterHub (make hub)")
    serve.add_argument("--port", type=int, default=8000, help="the hub's port on 127.0.0.1")
    serve.add_argument("--users", default=" ".join(USERS), help='user names, e.g. "alice bob"')
    serve.add_argument("--state", default=str(STATE), help="the hub's state and users' files")
    serve.add_argument(
        "--mode",
        choices=MODES,
        default="trial",
        help="trial: no root, users NOT isolated; isolated: root, one system user per learner",
    )
    serve.add_argument("--lang", choices=tuple(COURSE), default="en", help="the class's language")
    serve.add_argument("--python", help="isolated mode: the learners' Python (default: this one)")
    serve.add_argument("--prefix", default=PREFIX, help="isolated mode: system users' prefix")
    remove = commands.add_parser(
        "remove-learners", help=f"remove the system users the isolated mode made (group {GROUP})"
    )
    remove.add_argument("--prefix", default=PREFIX, help="their names' prefix")
    link = commands.add_parser("link", help="print an nbgitpuller link for a hub")
    link.add_argument("--hub", required=True, help="the hub's address, https://hub.example.edu")
    link.add_argument("--repo", help="the course's git URL (default: this clone's origin)")
    link.add_argument("--branch", default="main", help="the branch to hand out (default: main)")
    link.add_argument("--path", default="notebooks/00_start_here.ipynb", help="the file to open")
    args = parser.parse_args(argv)
    return {"serve": _serve, "link": _link, "remove-learners": _remove}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
