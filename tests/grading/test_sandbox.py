"""The sandbox around each submission: an empty environment, and nothing printed reaches anyone.

The attacks on the sandbox itself (limits, exits, endless loops, patched comparisons, files
written, processes left behind) are graded in one batch in ``test_grader.py``.
"""

import os

from attack_notebooks import CORRECT_ATTENTION, FULL, TIMEOUT, solutions_with

from posenc_lib.grading.grader import Grader


def test_the_child_cannot_see_the_parents_environment(tmp_path):
    os.environ["POSENC_SECRET_FOR_TEST"] = "42"
    try:
        source = (
            "import os\n"
            "def attention(x, w_q, w_k, w_v):\n"
            "    assert 'POSENC_SECRET_FOR_TEST' not in os.environ\n"
            "    q, k, v = x @ w_q, x @ w_k, x @ w_v\n"
            "    return torch.softmax(q @ k.T / w_k.shape[1] ** 0.5, -1) @ v"
        )
        path = tmp_path / "env.ipynb"
        path.write_text(solutions_with(replace=("attention", source)), encoding="utf-8")
        row = Grader(seed=3, timeout=TIMEOUT).grade(path)
        assert row.score == FULL, [str(v) for v in row.verdicts]
    finally:
        del os.environ["POSENC_SECRET_FOR_TEST"]


def test_what_a_submission_prints_reaches_nobody(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "loud.ipynb"
    loud = CORRECT_ATTENTION.replace("    q, k, v", "    print('LEAKED-MARKER')\n    q, k, v")
    path.write_text(
        solutions_with(first="import sys\nprint('LEAKED-MARKER')\nprint('LEAKED-MARKER', file=sys.stderr)",
              replace=("attention", loud)),
        encoding="utf-8",
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "posenc_lib.grading", str(path), "--out", str(tmp_path / "g.csv")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1 ok" in done.stdout
    assert "LEAKED-MARKER" not in done.stdout + done.stderr
    assert (tmp_path / "g.csv").read_text(encoding="utf-8").splitlines()[1].split(",")[3] == str(
        FULL
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv", "loud.ipynb"]  # cwd untouched
    assert "grading:" not in done.stderr  # the progress bar: on a terminal only, not in a pipe
