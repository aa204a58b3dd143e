"""`make test` runs on two processor code paths (conftest.py at the root): this session's own
torch and the Chinese notebooks' kernels on the plain path without SIMD, the English notebooks'
kernels on this machine's own."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def conftest(request):
    """The root conftest.py, as pytest loaded it (tests/ has a conftest.py of its own)."""
    return request.config.pluginmanager.get_plugin(str(ROOT / "conftest.py"))


def test_the_sessions_own_tests_take_the_plain_path(conftest):
    if "ATEN_CPU_CAPABILITY" in conftest.CALLER_SET:
        pytest.skip("the caller chose the code path (make test-portable)")
    # Set before anything imported torch: the library's numeric tests run on it.
    assert torch.backends.cpu.get_cpu_capability() == "DEFAULT"


def test_english_kernels_take_the_machines_own_path_and_chinese_ones_the_plain_path(conftest):
    english = ROOT / "notebooks" / "01_order_blindness.ipynb"
    chinese = ROOT / "zh" / "notebooks" / "01_order_blindness.ipynb"
    assert conftest.kernel_environment(english, caller_set=frozenset()) == {
        "ATEN_CPU_CAPABILITY": None
    }
    assert conftest.kernel_environment(chinese, caller_set=frozenset()) == {}
    assert conftest.kernel_environment(ROOT / "tests" / "test_readme.py", frozenset()) == {}
    # A caller's setting (make test-portable) reaches every kernel unchanged.
    assert conftest.kernel_environment(english, caller_set=frozenset({"ATEN_CPU_CAPABILITY"})) == {}


def test_a_kernel_without_the_setting_takes_another_path_than_the_session():
    environ = {k: v for k, v in os.environ.items() if k != "ATEN_CPU_CAPABILITY"}
    probe = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    own = subprocess.run(
        [sys.executable, "-c", probe], env=environ, capture_output=True, text=True, check=True
    ).stdout.strip()
    assert own in {"DEFAULT", "AVX2", "AVX512", "NO AVX", "ZVECTOR", "VSX", "SVE256", "SVE"}, own
