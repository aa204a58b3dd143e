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
    # Fixed before any test imported torch: the library's numeric tests run on it. The variable is
    # gone again, so what the tests start (kernels, the grader, servers) takes the machine's path.
    assert torch.backends.cpu.get_cpu_capability() == "DEFAULT"
    assert "ATEN_CPU_CAPABILITY" not in os.environ


def test_chinese_kernels_take_the_plain_path_and_english_ones_the_machines(conftest):
    english = ROOT / "notebooks" / "01_order_blindness.ipynb"
    chinese = ROOT / "zh" / "notebooks" / "01_order_blindness.ipynb"
    plain = {"ATEN_CPU_CAPABILITY": "default"}
    assert conftest.kernel_environment(english, caller_set=frozenset()) == {}
    assert conftest.kernel_environment(chinese, caller_set=frozenset()) == plain
    assert conftest.kernel_environment(ROOT / "tests" / "test_readme.py", frozenset()) == {}
    # A caller's setting (make test-portable) reaches every kernel unchanged.
    assert conftest.kernel_environment(chinese, caller_set=frozenset(plain)) == {}


def test_a_process_the_tests_start_takes_the_machines_own_path(conftest):
    if "ATEN_CPU_CAPABILITY" in conftest.CALLER_SET:
        pytest.skip("the caller chose the code path (make test-portable)")
    probe = "import os; print(os.environ.get('ATEN_CPU_CAPABILITY', 'unset'))"
    seen = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert seen == "unset"  # so its torch chooses this machine's own path
