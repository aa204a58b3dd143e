"""The course on a JupyterHub: ``make hub`` serves it to a few named users on this machine, and
``python -m tools.hub link --hub URL`` prints the nbgitpuller link that hands it out on a real hub.

``make hub`` (``python -m tools.hub serve``) starts the official JupyterHub with the configuration
in ``hub/jupyterhub_config.py`` and its proxy (configurable-http-proxy, installed by ``make hub``
from ``hub/package-lock.json`` into ``hub/node_modules/``); first it converts chapter 8's model once
into the shared cache every user's server reads (``POSENC_CACHE``). It prints the address, the
users and their shared password; Ctrl-C stops the hub, its proxy and every user's server. The
hub's state and each user's files are in ``build/hub/`` (git-ignored): delete the folder to start
afresh. It is for a teacher to try the course on a hub before asking for a real one
(docs/teaching-at-scale.md): it listens on 127.0.0.1 only, and its users are not isolated from
one another at the operating-system level.

``python -m tools.hub link --hub https://hub.example.edu`` prints a link that, clicked by a
learner logged in to that hub, clones this repository into their home folder (or merges the
latest version into their copy) with nbgitpuller and opens the chapter given by ``--path`` in
JupyterLab.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode, urlsplit, urlunsplit

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


@dataclass(frozen=True)
class Hub:
    """A running local hub: its address, users, shared password and state folder."""

    url: str  # http://127.0.0.1:PORT/
    users: tuple[str, ...]
    password: str
    state: Path
    log: Path
    # Filled in when the hub has stopped: the pids of processes it left running (its proxy, a
    # user's server or kernel), which were then stopped by pid. Empty when it stopped them all.
    leftovers: list[int] = field(default_factory=list)

    def home(self, user: str) -> Path:
        """The user's home folder: their copy of the notebooks and exercises."""
        return self.state / "users" / user


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


def _processes_in(folder: Path) -> list[int]:
    """Pids of this user's processes whose working folder is ``folder`` or inside it: for the
    hub's state folder, the hub and its proxy (which run there), the users' servers (which run in
    their home folders) and their kernels (which run where their notebook is)."""
    pids, me, inside = [], os.getuid(), str(folder.resolve()) + os.sep
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != me:
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


@contextlib.contextmanager
def hub_server(
    state: Path = STATE,
    port: int = 8000,
    users: tuple[str, ...] = USERS,
    password: str | None = None,
    timeout: float = 90.0,
) -> Iterator[Hub]:
    """Run the local hub (``hub/jupyterhub_config.py``) until the block ends; yields its ``Hub``.

    JupyterHub runs in its own process group, logging to ``<state>/jupyterhub.log``. On the way
    out it is sent SIGTERM, on which it stops its proxy and every user's server; whatever is left
    (a user's server or kernel, the proxy) is then stopped by its pid and listed in
    ``Hub.leftovers``.
    """
    _check_users(users)
    if not os.access(PROXY, os.X_OK):
        raise SystemExit(PROXY_MISSING)
    state = Path(state).resolve()
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
    (state / "users").mkdir(parents=True, exist_ok=True)
    # Every course notebook's kernel ("python3" in its metadata) runs under the kernel guard: after
    # a kernel dies of memory, the learner's next cell says so (tools/kernel_guard.py).
    install_kernel_guard(state / "jupyter", "python3", None)
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
    env = dict(os.environ)
    env.update(
        POSENC_HUB_STATE=str(state),
        POSENC_HUB_PORT=str(port),
        POSENC_HUB_API_PORT=str(free_port()),
        POSENC_HUB_PROXY_API_PORT=str(free_port()),
        POSENC_HUB_USERS=" ".join(users),
        POSENC_HUB_PASSWORD=password,
        POSENC_CACHE=shared_model_cache(),
    )
    log = state / "jupyterhub.log"
    with open(log, "wb") as sink:
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(CONFIG)],
            cwd=state,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}/"
    hub = Hub(url, tuple(users), password, state, log)
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
        hub.leftovers[:] = [pid for pid in _processes_in(state) if pid != os.getpid()]
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


def _serve(args) -> int:
    users = tuple(args.users.split())
    with hub_server(Path(args.state), args.port, users) as hub:
        where = (
            hub.state.relative_to(Path.cwd()) if hub.state.is_relative_to(Path.cwd()) else hub.state
        )
        print(f"==> The course on a local JupyterHub: {hub.url}")
        print(f"    users: {', '.join(hub.users)}; shared password: {hub.password}")
        print(
            f"    each user's files: {where}/users/<name>/; the hub's log: {where}/jupyterhub.log"
        )
        print(
            "    Only this machine can reach it. Ctrl-C stops the hub, its proxy and every user's server."
        )
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
    link = commands.add_parser("link", help="print an nbgitpuller link for a hub")
    link.add_argument("--hub", required=True, help="the hub's address, https://hub.example.edu")
    link.add_argument("--repo", help="the course's git URL (default: this clone's origin)")
    link.add_argument("--branch", default="main", help="the branch to hand out (default: main)")
    link.add_argument("--path", default="notebooks/00_start_here.ipynb", help="the file to open")
    args = parser.parse_args(argv)
    return _serve(args) if args.command == "serve" else _link(args)


if __name__ == "__main__":
    sys.exit(main())
