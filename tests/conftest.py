import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, settings

# One torch thread for the whole test session. The tests make many small tensor calls, where
# threads only add hand-offs: on a busy 2-core machine a chapter 7 check test went from 1.8 s to
# 24 s with torch's default thread pool, and one thread also makes every sum run in one order.
torch.set_num_threads(1)

# Property tests: enough examples to find a broken law, few enough to keep the suite fast.
settings.register_profile(
    "course", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "course"))

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _close_pyplot_figures():
    """Release the figures a test drew through pyplot (which keeps every one until closed), so a
    worker running hundreds of figure tests neither warns of too many figures nor holds their
    memory. A Figure object a fixture still holds stays usable: closing only unregisters it."""
    yield
    import sys

    if "matplotlib.pyplot" in sys.modules:
        sys.modules["matplotlib.pyplot"].close("all")


@pytest.fixture(scope="session")
def whole_site(tmp_path_factory, worker_id):
    """The English website, every page and every dashboard frame, built once per test session
    (about a minute and a half on 2 cores) for every test file that reads it, on whichever xdist
    worker asks first: it builds under a file lock in the session's shared temporary folder and the
    others wait, then read what it left there. Returns (SiteBuild, the staged source folder,
    what the build wrote to stderr)."""
    import contextlib
    import fcntl
    import io
    import pickle

    from tools.site import build_site

    shared = tmp_path_factory.getbasetemp()
    if worker_id != "master":
        shared = shared.parent  # the folder all workers' temporary folders share
    stored = shared / "whole-site.pickle"
    with open(shared / "whole-site.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not stored.exists():
            folder = shared / "whole-site"
            with contextlib.redirect_stderr(io.StringIO()) as errors:  # no progress bar either
                built = build_site(folder / "site", folder / "src")
            stored.write_bytes(pickle.dumps((built, folder / "src", errors.getvalue())))
        return pickle.loads(stored.read_bytes())


@pytest.fixture
def make_lab():
    """``make_lab("lab")`` or ``make_lab("lab-zh")``: that make target serving JupyterLab on a free
    local port with the token ``course``; returns its base URL once ``/api/status`` answers. Every
    server started is stopped (its whole process group) when the test ends."""
    started = []

    def start(target: str, timeout: float = 90.0) -> str:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        args = f"--no-browser --port={port} --IdentityProvider.token=course"
        proc = subprocess.Popen(
            ["make", "-s", target, f"LAB_ARGS={args} --ServerApp.open_browser=False"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        started.append(proc)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(f"{base}/api/status?token=course", timeout=2):
                    return base
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(proc.stdout.read().decode()[-2000:]) from None
                time.sleep(0.5)

    yield start
    for proc in started:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def _whole_suite(config) -> bool:
    """True when this session runs every test, as `make test` does (no paths, -k, -m, --ignore)."""
    return (
        config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and not config.option.keyword
        and not config.option.markexpr
        and not config.option.deselect
        and not config.getoption("ignore")
    )


def pytest_collection_finish(session):
    """Note the size of this session on the config, for tests/test_readme.py: the README states
    the suite's size, and `make test` (which collects everything) checks it at no cost."""
    session.config.posenc_items = len(session.items)
    session.config.posenc_whole_suite = _whole_suite(session.config)


# Seconds spent in each test file (setup, call and teardown), gathered where the reports arrive
# (the controller under xdist) and written after a whole-suite run for `make bench`
# (benchmarks/bench_tests.py prints the slowest files), so the next growth of the suite is seen.
TEST_TIMES = ROOT / "build" / "test-times.json"
_FILE_SECONDS: dict[str, float] = {}


def pytest_runtest_logreport(report):
    path = report.nodeid.split("::")[0]
    _FILE_SECONDS[path] = _FILE_SECONDS.get(path, 0.0) + report.duration


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if hasattr(config, "workerinput") or not _whole_suite(config) or not _FILE_SECONDS:
        return  # an xdist worker, or a partial run
    import json

    TEST_TIMES.parent.mkdir(exist_ok=True)
    TEST_TIMES.write_text(json.dumps(dict(sorted(_FILE_SECONDS.items())), indent=1) + "\n")
