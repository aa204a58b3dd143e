"""The worked solutions, read from the course's solutions notebooks for ``q1.solution()``.

The package reads no file above itself: the notebook is looked for from the learner's working
folder (a notebook runs in its own folder): ``../solutions/NN.ipynb`` from ``exercises/``,
``solutions/NN.ipynb`` from the course folder, ``NN.ipynb`` from ``solutions/`` itself. Only a cell
between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` markers counts: an exercise notebook of the
same name holds the learner's stub, not a solution.
"""

from __future__ import annotations

import json
from pathlib import Path

from posenc_lib.checks.verdicts import show
from posenc_lib.i18n import tr

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def solutions_notebook(notebook: str, cwd: Path | None = None) -> list[Path]:
    """Where ``notebook`` may be, from the working folder ``cwd`` (default: the current one)."""
    here = Path.cwd() if cwd is None else Path(cwd)
    return [here.parent / "solutions" / notebook, here / "solutions" / notebook, here / notebook]


def solution_code(notebook: str, function: str, cwd: Path | None = None) -> str | None:
    """The code of ``def function`` in the solutions notebook, markers removed; None if not found."""
    for path in solutions_notebook(notebook, cwd):
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        for cell in cells:
            source = "".join(cell.get("source", ""))
            if cell.get("cell_type") == "code" and f"def {function}(" in source and BEGIN in source:
                lines = [ln for ln in source.splitlines() if BEGIN not in ln]
                return "\n".join(ln for ln in lines if END not in ln).strip()
    return None


def show_solution(notebook: str, function: str) -> None:
    """Show the worked solution of ``function``, or say where the solutions are."""
    code = solution_code(notebook, function)
    if code is None:
        text = tr(
            "The worked solution is in solutions/{notebook} in the course repository.",
            notebook=notebook,
        )
        show({"text/plain": text, "text/markdown": text})
    else:
        intro = tr("Worked solution (from solutions/{notebook}):", notebook=notebook)
        show(
            {
                "text/plain": f"{intro}\n\n{code}",
                "text/markdown": f"{intro}\n\n```python\n{code}\n```",
            }
        )
