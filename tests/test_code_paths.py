"""`make test` runs on two processor code paths (conftest.py at the root): this session's own
torch, the Chinese notebooks' and the English deep dives' kernels on the plain path without SIMD,
the other English notebooks' kernels on this machine's own; the Chinese deep dives run when named."""

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
    deeper = ROOT / "notebooks" / "deeper" / "05_alibi_trained.ipynb"
    assert conftest.kernel_environment(deeper, caller_set=frozenset()) == {}
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


def test_a_bare_run_leaves_the_chinese_deep_dives_out_and_a_named_one_runs_them(conftest):
    class Run:  # what pytest_ignore_collect reads of the run's config
        def __init__(self, source):
            self.args_source = source

    bare, named = Run(pytest.Config.ArgsSource.TESTPATHS), Run(pytest.Config.ArgsSource.ARGS)
    zh_deeper = ROOT / "zh" / "notebooks" / "deeper"
    for path in (zh_deeper, zh_deeper / "05_alibi_trained.ipynb"):
        assert conftest.pytest_ignore_collect(path, bare) is True
        assert conftest.pytest_ignore_collect(path, named) is None
    for kept in ("notebooks/deeper/05_alibi_trained.ipynb", "zh/notebooks/05_alibi.ipynb",
                 "zh/solutions/05_alibi.ipynb", "zh/notebooks"):  # fmt: skip
        assert conftest.pytest_ignore_collect(ROOT / kept, bare) is None, kept
    assert "test-zh-deeper:" in (ROOT / "Makefile").read_text(encoding="utf-8")
