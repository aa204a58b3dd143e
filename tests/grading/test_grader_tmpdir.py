"""The grader grades whatever $TMPDIR is and leaves no scratch folder behind.

The forkserver listens on a Unix socket, whose path holds at most 104-108 bytes; under a long
$TMPDIR (pytest's under xdist, a university's network home) every submission used to come back
"error", and each failure left a posenc-grade-* folder. A grader-side failure names its cause.
"""

import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from posenc_lib.grading.grader import Grader

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "01_order_blindness.ipynb"


def test_a_class_is_graded_under_a_temporary_folder_of_120_characters(tmp_path):
    long_tmp = tmp_path / "t"
    while len(str(long_tmp)) < 120:
        long_tmp = long_tmp / "a-rather-long-folder-name"
    long_tmp.mkdir(parents=True)
    (tmp_path / "class").mkdir()
    (tmp_path / "class" / "ada-01_order_blindness.ipynb").write_bytes(SOLUTIONS.read_bytes())
    env = dict(os.environ, TMPDIR=str(long_tmp), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-m", "posenc_lib.grading.cli", "class", "--out", "g.csv", "--seed", "3"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "AF_UNIX" not in done.stderr
    with open(tmp_path / "g.csv", newline="", encoding="utf-8") as sheet:
        rows = list(csv.DictReader(sheet))
    assert [row["status"] for row in rows] == ["ok"], rows
    assert float(rows[0]["score"]) == float(rows[0]["max_score"]) > 0
    assert list(long_tmp.iterdir()) == [], "the grader left scratch in $TMPDIR"


def test_a_failure_of_the_grader_itself_names_its_cause_and_leaves_no_scratch(monkeypatch, capsys):
    def broken(*args):
        raise OSError("the disk is full")

    monkeypatch.setattr(Grader, "_run_in", broken)
    before = set(Path(tempfile.gettempdir()).glob("posenc-grade-*"))
    row = Grader(seed=1).grade(SOLUTIONS, "ada")
    assert row.status == "error"
    assert "the grader itself failed" in row.reason and "OSError: the disk is full" in row.reason
    assert "ada: " in capsys.readouterr().err  # the same sentence in the console
    assert set(Path(tempfile.gettempdir()).glob("posenc-grade-*")) == before


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
def test_an_interrupted_grading_leaves_no_scratch(monkeypatch, interrupt):
    def stopped(*args):
        raise interrupt()

    monkeypatch.setattr(Grader, "_run_in", stopped)
    before = set(Path(tempfile.gettempdir()).glob("posenc-grade-*"))
    with pytest.raises(interrupt):
        Grader(seed=1).grade(SOLUTIONS, "ada")
    assert set(Path(tempfile.gettempdir()).glob("posenc-grade-*")) == before
