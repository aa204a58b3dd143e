"""The test session's settings for every test path (tests/, notebooks/, solutions/, exercises/,
zh/), whichever of them a run names; tests/conftest.py holds the fixtures of tests/ alone.

One `make test` runs on two processor code paths, so every checked number is shown to be the same
on both:

* this process and its xdist workers (every test in tests/, the library's numeric tests among
  them) and the Chinese notebooks' kernels (zh/) take the plain path without SIMD, what an unknown
  CPU gets (``ATEN_CPU_CAPABILITY=default``, fixed here before any test imports torch);
* the English notebooks' kernels, and every other process the tests start (the grader's
  sandboxes, JupyterLab, Voila), take this machine's own path (AVX-512 here, AVX2 on most laptops),

and tests/i18n holds the two editions' printed numbers equal digit for digit. A setting the caller
gives (`make test-portable`) applies to everything instead.
"""

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
PLAIN_PATH = {"ATEN_CPU_CAPABILITY": "default"}
# The variables the caller set (make test-portable) apply to everything, unchanged.
CALLER_SET = frozenset(name for name in PLAIN_PATH if name in os.environ)


def _plain_path_for_this_process() -> None:
    """This process's torch on the plain path: set the variable, let torch read it (it reads it
    once, at the first dispatch), then take it away again, so that what this process starts (the
    English kernels, the grader's sandboxes, JupyterLab and Voila in the browser tests) keeps the
    machine's own path. xdist's workers, started without it, do the same for themselves."""
    missing = {k: v for k, v in PLAIN_PATH.items() if k not in CALLER_SET}
    if not missing:
        return
    os.environ.update(missing)
    try:
        import torch

        torch.backends.cpu.get_cpu_capability()  # fixes the path for this process's lifetime
    finally:
        for name in missing:
            os.environ.pop(name, None)


_plain_path_for_this_process()


def kernel_environment(notebook: Path, caller_set=CALLER_SET) -> dict[str, str | None]:
    """The variables this notebook's kernel sees on top of the session's environment: a Chinese
    notebook's kernel takes the plain path (an English one inherits the machine's)."""
    chinese = notebook.suffix == ".ipynb" and (ROOT / "zh") in notebook.resolve().parents
    return {k: v for k, v in PLAIN_PATH.items() if chinese and k not in caller_set}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """Around the setup of a notebook's first cell, where nbval starts its kernel (which inherits
    this process's environment), the kernel's variables; the session's own torch is unaffected."""
    changed = kernel_environment(item.path)
    saved = {name: os.environ.get(name) for name in changed}
    for name, value in changed.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    try:
        return (yield)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# The longest test files first. `make test` hands whole files to its xdist workers in the order
# collected (--dist loadfile --no-loadscope-reorder), each worker taking the next when it runs dry;
# a long file taken last keeps one worker busy while the other waits, so the files go out longest
# first, by the seconds each took in a measured whole run (tests/data/test_seconds.json, refreshed
# by `python -m benchmarks.bench_tests --save` after a `make test`). A file not yet measured counts
# as NEW_FILE_SECONDS. Cells of a notebook, and tests within a file, keep their order.
TEST_SECONDS = ROOT / "tests" / "data" / "test_seconds.json"
NEW_FILE_SECONDS = 10.0


def pytest_collection_modifyitems(session, config, items):
    try:
        seconds = json.loads(TEST_SECONDS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return  # no measurements: the collected order
    items.sort(key=lambda item: -seconds.get(item.nodeid.split("::")[0], NEW_FILE_SECONDS))
