"""How fast does the grader mark a class? Prints seconds per submission and submissions per minute.

Grades N copies of a solved submission and N of a broken one (every function raises a TypeError
or returns the wrong thing) for chapter 1, with 1 and then 2 workers, through the same code path
as ``posenc-grade`` (``grader.grade_all``, without its progress bar). The first figure includes
starting the forkserver (importing torch once). Targets on the course's reference machine (2 cores): under 2 s per submission with
one worker, and a class of 100 in under 3 minutes with two.

    python -m benchmarks.bench_grade [N]        (default N = 25: 50 submissions per run)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import nbformat

from posenc_lib.grading.grader import grade_all

ROOT = Path(__file__).resolve().parents[1]


def _broken() -> str:
    notebook = nbformat.read(ROOT / "solutions" / "01_order_blindness.ipynb", as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code" and "def " in cell.source and "BEGIN SOLUTION" in cell.source:
            name = cell.source.split("def ", 1)[1].split("(", 1)[0]
            cell.source = f"def {name}(*args):\n    return [1, 2, 3]"  # wrong type everywhere
    return nbformat.writes(notebook)


def main(n: int = 25) -> None:
    solved = (ROOT / "solutions" / "01_order_blindness.ipynb").read_text(encoding="utf-8")
    broken = _broken()
    with tempfile.TemporaryDirectory() as folder:
        paths = []
        for i in range(n):
            for kind, text in (("solved", solved), ("broken", broken)):
                path = Path(folder) / f"{kind}-{i:03d}.ipynb"
                path.write_text(text, encoding="utf-8")
                paths.append(path)
        print(f"{len(paths)} chapter-1 submissions ({n} solved, {n} broken)")
        for workers in (1, 2):
            started = time.perf_counter()
            rows = grade_all(paths, seed=11, timeout=60, workers=workers, progress=False)
            seconds = time.perf_counter() - started
            scores = sorted({r.score for r in rows})
            assert all(r.status == "ok" for r in rows) and scores == [0, 12], scores
            per = seconds / len(rows)
            print(
                f"  {workers} worker{'s' if workers > 1 else ' '}: {seconds:6.1f} s in all, "
                f"{per:5.2f} s per submission, {60 / per:6.0f} per minute; "
                f"a class of 100: {100 * per:5.0f} s"
            )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 25)
