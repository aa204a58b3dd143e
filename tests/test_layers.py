"""The package's layers hold (import-linter's contracts in pyproject.toml), and the check is real:
a copy of the package with one upward import fails it, naming the contract and the import."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINT = Path(sys.executable).with_name("lint-imports")
NAMES = {  # the contracts' names in pyproject.toml, as lint-imports reports them
    "layers": "posenc_lib's layers: grading > checks | viz > analysis > models > the core",
    "tools": "The installed package never imports the repository's tools",
}


def lint(where: Path) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(where)}
    return subprocess.run(
        [str(LINT), "--no-cache"], cwd=where, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.fixture
def copy(tmp_path):
    for folder in ("posenc_lib", "tools"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("data"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path)
    return tmp_path


def test_the_layers_hold_on_the_tree_as_it_is(copy):
    result = lint(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


@pytest.mark.parametrize(
    ("module", "upward", "contract"),
    [
        # the core reaches into a chapter's measurements
        ("rope.py", "from posenc_lib.analysis import ch07_scaling", "layers"),
        # a chapter's measurements reach into the figures
        ("analysis/ch05_alibi.py", "from posenc_lib.viz import figures", "layers"),
        # the figures reach into the checks (siblings: neither imports the other)
        ("viz/figures.py", "import posenc_lib.checks.ch01", "layers"),
        # the checks reach into the grader
        ("checks/ch03/__init__.py", "from posenc_lib.grading import cli", "layers"),
        # a model reaches into the measurements made of it
        ("models/tinylm.py", "from posenc_lib.analysis import ch07_extrapolation", "layers"),
        # the installed package reads the repository's tools
        ("models/minilm.py", "import tools.site_audit", "tools"),
    ],
)
def test_one_upward_import_breaks_the_contract(copy, module, upward, contract):
    path = copy / "posenc_lib" / module
    path.write_text(path.read_text() + f"\n{upward}  # deliberate: must fail\n")
    result = lint(copy)
    assert result.returncode == 1, result.stdout
    assert "1 broken" in result.stdout and f"{NAMES[contract]} BROKEN" in result.stdout
    shown = upward.split()[1]  # the module imported, as lint-imports names it
    assert shown in result.stdout, result.stdout
