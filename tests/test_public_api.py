"""The public API (posenc_lib/__init__.py) is what the exercises import: every exported name
resolves, the heavy parts load only when used, and the exercise and solutions notebooks import
nothing else of the package but the checks of their chapter."""

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import posenc_lib

ROOT = Path(__file__).resolve().parents[1]
LEARNER_NOTEBOOKS = sorted([*ROOT.glob("exercises/*.ipynb"), *ROOT.glob("solutions/*.ipynb")])
# the public API, the checks, and the language switch (tr, for a notebook's printed sentences)
ALLOWED = re.compile(r"posenc_lib(\.checks(\.ch0\d)?|\.i18n)?")


def test_every_exported_name_resolves():
    for name in posenc_lib.__all__:
        assert getattr(posenc_lib, name) is not None, name
    assert set(posenc_lib.__all__) <= set(dir(posenc_lib))


def test_an_unknown_name_says_so():
    with pytest.raises(AttributeError, match="no attribute 'rope_demo'"):
        posenc_lib.rope_demo  # noqa: B018 - the old module name is not part of the API


def test_importing_the_package_loads_no_model():
    code = (
        "import sys, posenc_lib\n"
        "heavy = [m for m in sys.modules if m.startswith(('transformers', 'posenc_lib.models',"
        " 'posenc_lib.viz', 'matplotlib'))]\n"
        "print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def imported_modules(notebook: Path) -> set[str]:
    modules = set()
    for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        source = "\n".join(
            line for line in "".join(cell["source"]).splitlines() if not line.startswith(("%", "!"))
        )
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and node.module:
                modules.add(node.module)
            elif isinstance(node, ast.Import):
                modules.update(alias.name for alias in node.names)
    return {m for m in modules if m.split(".")[0] == "posenc_lib"}


@pytest.mark.parametrize("notebook", LEARNER_NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_learner_notebooks_import_only_the_public_api_and_their_checks(notebook):
    chapter = notebook.name[:2]
    for module in imported_modules(notebook):
        assert ALLOWED.fullmatch(module), f"{notebook.name} imports {module}"
        assert not module.startswith("posenc_lib.checks.ch") or module.endswith(chapter), module
