"""The test session's settings for every test path (tests/, notebooks/, solutions/, exercises/,
zh/), whichever of them a run names; tests/conftest.py holds the fixtures of tests/ alone.

Each edition of the notebooks runs on another processor code path, so one `make test` proves that
every checked number is the same on both: the English notebooks' kernels take this machine's own
path (AVX-512 here, AVX2 on most laptops), the Chinese ones' (zh/) the plain path without SIMD
(what an unknown CPU gets), and tests/i18n holds the two editions' printed numbers equal digit for
digit. A setting the caller gives (`make test-portable`) applies to both editions instead.
"""

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent
CHINESE_KERNELS = {"ATEN_CPU_CAPABILITY": "default"}


def kernel_environment(notebook: Path, environ=os.environ) -> dict[str, str]:
    """The variables this notebook's kernel gets on top of the test session's environment."""
    chinese = notebook.suffix == ".ipynb" and (ROOT / "zh") in notebook.resolve().parents
    return {k: v for k, v in CHINESE_KERNELS.items() if chinese and k not in environ}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    """Around the setup of a notebook's first cell, where nbval starts its kernel (which inherits
    this process's environment), the kernel's variables; the session's own torch is unaffected."""
    extra = kernel_environment(item.path)
    os.environ.update(extra)
    try:
        return (yield)
    finally:
        for name in extra:
            os.environ.pop(name, None)
