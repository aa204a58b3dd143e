"""The test session's settings for every test path (tests/, notebooks/, solutions/, exercises/,
zh/), whichever of them a run names; tests/conftest.py holds the fixtures of tests/ alone.

One `make test` runs on two processor code paths, so every checked number is shown to be the same
on both:

* this process and its xdist workers (every test in tests/, the library's numeric tests among
  them), the Chinese notebooks' kernels (zh/) and the English deep dives' (notebooks/deeper/) take
  the plain path without SIMD, what an unknown CPU gets (``ATEN_CPU_CAPABILITY=default``, set here
  before anything imports torch);
* the other English notebooks' kernels (the cores, exercises and solutions) take this machine's own
  path (AVX-512 here, AVX2 on most laptops), the path their committed outputs were made on,

and tests/i18n holds the two editions' printed numbers equal digit for digit. A setting the caller
gives (`make test-portable`) applies to everything instead.

The Chinese deep dives are the English ones' code cell for cell (tools/translate.py) with printed
numbers held equal to theirs, so a bare `make test` leaves them out (about a minute and a half on 2
cores): the English deep dives check their numbers on the plain path in their place, and
`make test-zh-deeper` (or naming the folder: `pytest zh/notebooks/deeper`) runs them.
"""

import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
PLAIN_PATH = {"ATEN_CPU_CAPABILITY": "default"}
# The variables the caller set (make test-portable): those apply to every kernel, unchanged. xdist's
# workers inherit this process's environment, setting included: the first process (the one the
# caller started) writes down which were the caller's.
_CALLERS = "POSENC_CALLER_SET"
if _CALLERS not in os.environ:
    os.environ[_CALLERS] = " ".join(name for name in PLAIN_PATH if name in os.environ)
CALLER_SET = frozenset(os.environ[_CALLERS].split())
for _name, _value in PLAIN_PATH.items():
    os.environ.setdefault(_name, _value)  # torch reads it once, at its first import


def kernel_environment(notebook: Path, caller_set=CALLER_SET) -> dict[str, str | None]:
    """The variables this notebook's kernel sees changed from the session's environment: None
    unsets one (an English core's, exercises' or solutions' kernel takes this machine's own
    path)."""
    parents = notebook.resolve().parents
    plain = ROOT / "zh" in parents or ROOT / "notebooks" / "deeper" in parents
    if plain or notebook.suffix != ".ipynb":
        return {}
    return {name: None for name in PLAIN_PATH if name not in caller_set}


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


ZH_DEEPER = ROOT / "zh" / "notebooks" / "deeper"


def pytest_ignore_collect(collection_path, config):
    """The Chinese deep dives, in a run that did not name them (see the module's docstring)."""
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS:
        return None  # paths named on the command line: collected as named
    if collection_path == ZH_DEEPER or ZH_DEEPER in collection_path.parents:
        return True
    return None
