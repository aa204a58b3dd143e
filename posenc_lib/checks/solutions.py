"""The worked solutions, for ``q1.solution()``: read from the course's solutions notebook near the
learner's working folder, or else from the copy the package ships (``worked.py``).

The package reads no file above itself: the notebook is looked for from the learner's working
folder (a notebook runs in its own folder): ``../solutions/NN.ipynb`` from ``exercises/``,
``solutions/NN.ipynb`` from the course folder, ``NN.ipynb`` from ``solutions/`` itself. Only a cell
between ``### BEGIN SOLUTION`` and ``### END SOLUTION`` markers counts: an exercise notebook of the
same name holds the learner's stub, not a solution. A notebook copied anywhere else (a learner's
own folder, a course platform) finds no solutions notebook: the code then comes from ``worked.py``,
which ``python -m posenc_lib.checks.ship_solutions solutions`` writes from the solutions notebooks
(``tests/checks/test_solutions_shipped.py`` fails when it is out of step with them).
"""

from __future__ import annotations

import json
from pathlib import Path

from posenc_lib.checks.verdicts import show
from posenc_lib.i18n import tr

BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
SHIPPED = Path(__file__).with_name("worked.py")  # the package's own copy of the worked code


def solutions_notebook(notebook: str, cwd: Path | None = None) -> list[Path]:
    """Where ``notebook`` may be, from the working folder ``cwd`` (default: the current one)."""
    here = Path.cwd() if cwd is None else Path(cwd)
    return [here.parent / "solutions" / notebook, here / "solutions" / notebook, here / notebook]


def worked_in(cells: list) -> dict[str, str]:
    """function name -> its worked code (markers removed), for a notebook's cells (JSON dicts)."""
    found = {}
    for cell in cells:
        source = "".join(cell.get("source", ""))
        if cell.get("cell_type") != "code" or BEGIN not in source:
            continue
        lines = [ln for ln in source.splitlines() if BEGIN not in ln and END not in ln]
        code = "\n".join(lines).strip()
        for line in lines:
            if line.startswith("def ") and "(" in line:
                found.setdefault(line[4 : line.index("(")].strip(), code)
    return found


def _near(notebook: str, function: str, cwd: Path | None) -> str | None:
    for path in solutions_notebook(notebook, cwd):
        try:
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            code = worked_in(cells).get(function)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
        if code is not None:
            return code
    return None


def shipped_code(notebook: str, function: str) -> str | None:
    """The worked code the package ships for ``function`` of ``notebook``, or None."""
    from posenc_lib.checks.worked import WORKED

    return WORKED.get(notebook, {}).get(function)


def solution_code(notebook: str, function: str, cwd: Path | None = None) -> str | None:
    """The code of ``def function``: from the solutions notebook near ``cwd`` if there is one,
    else the package's own copy; None if neither has it."""
    return _near(notebook, function, cwd) or shipped_code(notebook, function)


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


# -- the package's copy, written from the solutions notebooks ------------------------------------------


def collect(folder: Path) -> dict[str, dict[str, str]]:
    """notebook name -> {function: worked code}, for every solutions notebook in ``folder``."""
    found = {}
    for path in sorted(Path(folder).glob("[0-9][0-9]_*.ipynb")):
        worked = worked_in(json.loads(path.read_text(encoding="utf-8"))["cells"])
        if worked:
            found[path.name] = dict(sorted(worked.items()))
    return found


def module_text(worked: dict[str, dict[str, str]]) -> str:
    """The source of ``worked.py`` holding ``worked`` (one string literal per line of code)."""
    out = [
        '"""The worked solutions\' code, by solutions notebook and function: what `q1.solution()`',
        "shows when no solutions notebook is near the learner's folder. Generated: do not edit.",
        "Write it again with `python -m posenc_lib.checks.ship_solutions solutions` after changing a",
        'solution (tests/checks/test_solutions_shipped.py fails until then)."""',
        "",
        "WORKED = {",
    ]
    for notebook, functions in worked.items():
        out.append(f"    {_literal(notebook)}: {{")
        for function, code in functions.items():
            lines = code.split("\n")
            out.append(f"        {_literal(function)}: (")
            out += [f"            {_literal(line + chr(10))}" for line in lines[:-1]]
            out.append(f"            {_literal(lines[-1])}")
            out.append("        ),")
        out.append("    },")
    out.append("}")
    return "\n".join(out) + "\n"


def _literal(text: str) -> str:
    """A Python string literal for ``text``, in double quotes unless it holds one (as ruff writes)."""
    literal = repr(text)
    if literal.startswith("'") and '"' not in text:
        literal = '"' + literal[1:-1].replace("\\'", "'") + '"'
    return literal


def write_shipped(folder: Path) -> Path:
    """Write ``worked.py`` from the solutions notebooks in ``folder``; return its path."""
    SHIPPED.write_text(module_text(collect(Path(folder))), encoding="utf-8")
    return SHIPPED
