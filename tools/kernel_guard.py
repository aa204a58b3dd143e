"""A learner's kernel that says, after a restart, why the last one stopped and what to do.

On a hub, a kernel that runs out of memory is killed outright (SIGKILL, by the kernel's OOM
killer or the server's cgroup limit). JupyterLab restarts it and shows "the kernel appears to have
died", and the learner is left to guess. This guard sits between Jupyter and ipykernel:

    Jupyter --starts--> guard (this file, a kernelspec's argv) --starts--> ipykernel (child)

* The guard starts ipykernel as its child in the same process group, so Jupyter's interrupt
  (SIGINT to the group), its shutdown request (a message to ipykernel) and its kill (SIGKILL to the
  group) reach ipykernel exactly as without a guard. The guard itself ignores SIGINT (forwarding
  it would interrupt the cell twice), passes SIGTERM on, and waits for the child.
* It measures the child's memory as it runs (the resident set of the kernel and its children,
  with psutil, and the kernel's own high-water mark from /proc), and, if ``POSENC_KERNEL_MEMORY_MB``
  is set, kills the child with SIGKILL above that many MB: a limit a teacher can set on a hub
  without cgroups (a cgroup limit, if there is one, still applies).
* If the child dies of a signal that nobody asked for (the guard was not told to stop), the guard
  writes a small JSON marker next to the connection file (``.kernel-ID.json.stopped``; a
  restart keeps the same connection file, see ``KernelManager.restart_kernel``: ``newports``
  picks new ports but the same file name) and exits with 128 + the signal's number.
* The restarted kernel sees the marker and, at the learner's first cell, shows what happened (the
  kernel stopped, most likely out of memory; its peak and the limit, where known), that the
  notebook itself is intact and only variables were lost, and what to do; then deletes it.

The guard's own limit is checked every POLL_SECONDS, so a cell that allocates very fast can pass it
by a few hundred MB before it is stopped: set it below the machine's (or cgroup's) real limit. Its
cost, measured on the 2-core reference machine: about 14 MB resident (8 MB of its own) and about
0.4% of a core per kernel with a limit set, less without.

Usage (``install`` writes the kernelspec; the rest is the kernelspec's argv):

    python tools/kernel_guard.py install DATA_DIR [--name python3] [--memory-mb MB]
        writes DATA_DIR/kernels/NAME/kernel.json; a Jupyter server finds it when DATA_DIR is on
        its JUPYTER_PATH (which comes before the environment's own kernels, so NAME=python3
        guards every course notebook, whose metadata asks for python3).
    python /abs/path/tools/kernel_guard.py -f CONNECTION_FILE       (the guard)
    python /abs/path/tools/kernel_guard.py kernel -f CONNECTION_FILE  (the child: ipykernel)

The kernelspec runs this file by its path, not as ``-m tools.kernel_guard``: a kernel starts in
the notebook's folder, where the repository's ``tools`` package is not importable. The child drops
this file's folder from ``sys.path`` first, so a learner's ``import site`` or ``import demo`` never
finds tools/ modules.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

MEMORY_VARIABLE = "POSENC_KERNEL_MEMORY_MB"
HERE = Path(__file__).resolve()
POLL_SECONDS = 0.1  # with a memory limit: a kernel allocating 1 GB/s overshoots by ~100 MB
POLL_SECONDS_NO_LIMIT = 1.0  # only the peak, for the message
CHILDREN_EVERY = 1.0  # seconds between looks for the kernel's own child processes
STALE_SECONDS = 86400  # a marker no kernel picked up in a day is deleted by the next guard


def marker_path(connection_file: str | os.PathLike) -> Path:
    """The marker beside a connection file; hidden, and not named kernel-*.json, which tools that
    look for a running kernel (``jupyter console --existing``) read."""
    path = Path(connection_file).absolute()
    return path.with_name(f".{path.name}.stopped")


def memory_limit_mb() -> int | None:
    """The guard's own limit, ``POSENC_KERNEL_MEMORY_MB``, or None (unset, empty, not a number > 0)."""
    try:
        value = int(os.environ.get(MEMORY_VARIABLE, "").strip())
    except ValueError:
        return None
    return value if value > 0 else None


def known_limit_mb() -> tuple[int | None, str]:
    """The memory limit a learner's kernel lives under, as far as it can tell, and whose it is.

    The guard's own (``POSENC_KERNEL_MEMORY_MB``); else JupyterHub's ``MEM_LIMIT`` (bytes, set by
    a spawner with ``mem_limit``, for the learner's whole server); else the cgroup's memory.max.
    """
    if (own := memory_limit_mb()) is not None:
        return own, "kernel"
    try:
        return int(os.environ["MEM_LIMIT"]) // 2**20, "server"
    except (KeyError, ValueError):
        pass
    try:
        line = Path("/proc/self/cgroup").read_text().splitlines()[0]
        if line.startswith("0::"):
            value = Path("/sys/fs/cgroup", line[3:].lstrip("/"), "memory.max").read_text().strip()
            if value != "max":
                return int(value) // 2**20, "server"
    except (OSError, IndexError, ValueError):
        pass
    return None, ""


def _high_water_mb(pid: int) -> float:
    """The process's peak resident set so far (VmHWM, Linux), or 0 where /proc has none."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0


class Guard:
    """Runs one ipykernel child and watches it (see the module's docstring)."""

    def __init__(self, connection_file: str, extra: list[str]):
        import psutil  # ipykernel's own dependency

        self.psutil = psutil
        self.connection_file = connection_file
        self.marker = marker_path(connection_file)
        self.limit_mb = memory_limit_mb()
        self.peak_mb = 0.0
        self.stopping = False  # told to stop (SIGTERM/SIGHUP): a death by signal is expected
        self.killed_at_limit = False
        command = [sys.executable, str(HERE), "kernel", "-f", connection_file, *extra]
        # ipykernel exits when its parent changes: its parent is this guard, not the server.
        env = {**os.environ, "JPY_PARENT_PID": str(os.getpid())}
        self.server = int(os.environ.get("JPY_PARENT_PID") or 0)
        if self.server != os.getppid():
            self.server = 0  # started by hand, or the server is not the parent: nothing to watch
        # A Python-level handler (not SIG_IGN, which a child would inherit through exec) so the
        # group's SIGINT leaves the guard alone while ipykernel gets the default one.
        signal.signal(signal.SIGINT, lambda *_: None)
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGHUP, self._stop)
        self.child = subprocess.Popen(command, env=env)
        clear_stale_markers(self.marker.parent)

    def _stop(self, signum, _frame) -> None:
        self.stopping = True
        try:
            self.child.send_signal(signum)  # also sent to the group, usually; twice is harmless
        except (OSError, AttributeError):
            pass

    def _measure(self, kernel, full: bool) -> float:
        """The kernel's resident set now, in MB, and its children's on a ``full`` look (which also
        reads the kernel's high-water mark); updates the peak."""
        try:
            rss = kernel.memory_info().rss  # one read of /proc/PID/statm
            if full:
                for process in kernel.children(recursive=True):
                    try:
                        rss += process.memory_info().rss
                    except self.psutil.Error:
                        pass
        except self.psutil.Error:
            return 0.0
        now_mb = rss / 2**20
        self.peak_mb = max(self.peak_mb, now_mb)
        if full:
            self.peak_mb = max(self.peak_mb, _high_water_mb(kernel.pid))
        return now_mb

    def _kill_at_limit(self) -> None:
        """SIGKILL the kernel and its children (not the group: that holds the guard too)."""
        self.killed_at_limit = True
        try:
            kernel = self.psutil.Process(self.child.pid)
            for process in [*kernel.children(recursive=True), kernel]:
                try:
                    process.kill()
                except self.psutil.Error:
                    pass
        except self.psutil.Error:
            pass

    def wait(self) -> int:
        """Wait for the child; write the marker if it died unasked; return the guard's exit code.

        One short wait and one read of the kernel's memory per round (about 0.4% of a core at
        POLL_SECONDS on the 2-core reference machine); the kernel's children, its high-water mark
        and the server every second. The wait ends early when the child exits (SIGCHLD, where
        ``sigtimedwait`` exists), so a shutdown or restart does not wait for the next round.
        """
        interval = POLL_SECONDS if self.limit_mb else POLL_SECONDS_NO_LIMIT
        try:
            kernel = self.psutil.Process(self.child.pid)
        except self.psutil.Error:
            kernel = None
        last_full = 0.0
        wake = getattr(signal, "sigtimedwait", None)
        if wake:  # blocked after the child started, so the child's signal mask stays as it was
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        while (code := self.child.poll()) is None:
            if wake:
                wake({signal.SIGCHLD}, interval)
            else:
                time.sleep(interval)
            if kernel is None:
                continue
            now = time.monotonic()
            full = now - last_full >= CHILDREN_EVERY
            if full:
                last_full = now
                if self.server and os.getppid() != self.server:  # the server is gone
                    self._stop(signal.SIGTERM, None)
            rss_mb = self._measure(kernel, full)
            if self.limit_mb and rss_mb > self.limit_mb and not self.killed_at_limit:
                self._kill_at_limit()
        if code < 0 and (not self.stopping or self.killed_at_limit):
            self._write_marker(-code)
        return 128 - code if code < 0 else code

    def _write_marker(self, signum: int) -> None:
        limit, whose = (self.limit_mb, "kernel") if self.limit_mb else known_limit_mb()
        record = {
            "signal": signal.Signals(signum).name,
            "by_guard": self.killed_at_limit,
            "peak_mb": round(self.peak_mb),
            "limit_mb": limit,
            "limit_of": whose,
            "when": time.strftime("%H:%M:%S"),
            "notebook": os.environ.get("JPY_SESSION_NAME", ""),
        }
        try:
            self.marker.write_text(json.dumps(record), encoding="utf-8")
        except OSError:
            pass  # no message next time, but the kernel still restarts


def _gb(mb: float) -> str:
    """A size for a learner: "400 MB" below a GB, else "2.5 GB"."""
    return f"{mb:.0f} MB" if mb < 1024 else f"{mb / 1024:.1f} GB"


def clear_stale_markers(folder: Path, older_than: float = STALE_SECONDS) -> None:
    """Delete markers of kernels that were shut down after dying and never restarted (their
    connection file is gone) and are older than a day: nobody will see them."""
    cutoff = time.time() - older_than
    for marker in folder.glob(".kernel-*.stopped"):
        try:
            if not marker.with_name(marker.name[1:-8]).exists() and marker.stat().st_mtime < cutoff:
                marker.unlink()
        except OSError:
            pass


def notice(record: dict) -> tuple[str, str]:
    """The message for a kernel that stopped, as (Markdown, plain text); a tutor's words."""
    peak = record.get("peak_mb") or 0
    limit, whose = record.get("limit_mb"), record.get("limit_of", "")
    when = f" at {record['when']}" if record.get("when") else ""
    if record.get("by_guard"):
        why = (
            f"it used more memory than a kernel may use here: it reached {_gb(peak)} and the "
            f"limit is {_gb(limit)}"
        )
    elif record.get("signal") == "SIGKILL":
        why = "most likely because it ran out of memory"
        if peak:
            why += f" (it was using about {_gb(peak)} when last measured"
            why += f"; this {whose}'s memory limit is {_gb(limit)})" if limit else ")"
        elif limit:
            why += f" (this {whose}'s memory limit is {_gb(limit)})"
    else:
        why = f"it crashed ({record.get('signal', 'a signal')})"
    chapter8 = "08_" in Path(record.get("notebook") or "").name
    shorter = (
        "In this chapter, keep `LENGTH` (the context) at 2048 tokens or less before running the "
        "long-context cells again."
        if chapter8
        else "In chapter 8, keep `LENGTH` (the context) at 2048 tokens or less."
    )
    markdown = (
        f"**Your kernel stopped{when} and was restarted**: {why}.\n\n"
        "Your notebook is safe: every cell and everything you typed or saved is still here. Only "
        "the kernel's memory was lost (your variables, loaded models, imports).\n\n"
        "**What to do:** run the notebook again from the top (menu *Run* > *Run All Above Selected "
        f"Cell*, then this cell). {shorter}"
    )
    plain = markdown.replace("**", "").replace("`", "").replace("*", "")
    return markdown, plain


def install_notice(shell, marker: Path) -> None:
    """If the last kernel left a marker, show its message at the first cell run, then delete it."""
    if not marker.is_file():
        return

    def show(_info=None) -> None:
        shell.events.unregister("pre_run_cell", show)
        try:
            record = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = {}
        marker.unlink(missing_ok=True)
        from IPython.display import display

        markdown, plain = notice(record)
        display({"text/markdown": markdown, "text/plain": plain}, raw=True)

    shell.events.register("pre_run_cell", show)


def run_kernel(argv: list[str]) -> None:
    """The child: ipykernel, as ``python -m ipykernel_launcher`` runs it, plus the notice."""
    if sys.path and Path(sys.path[0]).resolve() == HERE.parent:
        del sys.path[0]  # tools/ (this file's folder): none of its modules for the learner
    from ipykernel.kernelapp import IPKernelApp

    app = IPKernelApp.instance()
    app.initialize(argv)
    install_notice(app.shell, marker_path(app.connection_file))
    app.start()


def kernelspec(memory_mb: int | None = None, display_name: str = "") -> dict:
    """The kernel.json: ipykernel's own, with this guard in its argv."""
    from ipykernel.kernelspec import get_kernel_dict

    spec = get_kernel_dict()
    spec["argv"] = [sys.executable, str(HERE), "-f", "{connection_file}"]
    spec["display_name"] = display_name or "Python 3 (course kernel)"
    if memory_mb:
        spec["env"] = {MEMORY_VARIABLE: str(memory_mb)}
    return spec


def install(data_dir: Path, name: str, memory_mb: int | None) -> Path:
    folder = Path(data_dir) / "kernels" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "kernel.json").write_text(json.dumps(kernelspec(memory_mb), indent=1) + "\n")
    return folder


def main(argv: list[str]) -> int:
    if argv[:1] == ["install"]:
        import argparse

        parser = argparse.ArgumentParser(prog="python tools/kernel_guard.py install")
        parser.add_argument("data_dir", type=Path, help="a folder for JUPYTER_PATH")
        parser.add_argument("--name", default="python3", help="the kernelspec's name")
        parser.add_argument("--memory-mb", type=int, help=f"sets {MEMORY_VARIABLE} in the spec")
        args = parser.parse_args(argv[1:])
        print(install(args.data_dir, args.name, args.memory_mb))
        return 0
    if argv[:1] == ["kernel"]:
        run_kernel(argv[1:])
        return 0
    if len(argv) < 2 or argv[0] != "-f":
        print(
            "usage: python tools/kernel_guard.py -f CONNECTION_FILE [ipykernel options]\n"
            "       python tools/kernel_guard.py install DATA_DIR [--name NAME] [--memory-mb MB]",
            file=sys.stderr,
        )
        return 2
    return Guard(argv[1], argv[2:]).wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
