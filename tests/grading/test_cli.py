"""The command line: ``posenc-grade``, ``python -m posenc_lib.grading`` and ``...grading.cli``."""

import csv
import json
from pathlib import Path

import pytest
from attack_notebooks import FULL, solutions_with

from posenc_lib.checks.ch01 import QUESTIONS
from posenc_lib.grading.cli import main


def test_the_command_writes_the_sheet_and_feedback(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "=cmd().ipynb").write_text(solutions_with(), encoding="utf-8")
    (tmp_path / "in" / "broken.ipynb").write_text("not json", encoding="utf-8")
    for name in ("+a", "-b", "@c"):  # more names a spreadsheet would run as formulas
        (tmp_path / "in" / f"{name}.ipynb").write_text("{}", encoding="utf-8")
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    code = main([str(tmp_path / "in"), "--out", str(out), "--json", str(feedback), "--seed", "7"])
    assert code == 0
    printed, errors = capsys.readouterr()
    assert "Graded 5 submissions" in printed and "1 ok" in printed and "4 invalid" in printed
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["status"] for r in rows] == ["invalid", "invalid", "ok", "invalid", "invalid"]
    names = [r["submission"] for r in rows]  # none starts a formula in a spreadsheet
    assert names == ["'+a.ipynb", "'-b.ipynb", "'=cmd().ipynb", "'@c.ipynb", "broken.ipynb"]
    rows = [r for r in rows if r["status"] == "ok"]
    assert rows[0]["score"] == str(FULL)
    files = sorted(p.name for p in feedback.iterdir())
    assert files == ["-b.json", "_a.json", "_c.json", "_cmd__.json", "broken.json"]
    data = json.loads((feedback / "_cmd__.json").read_text(encoding="utf-8"))
    assert data["score"] == FULL and len(data["questions"]) == len(QUESTIONS)
    # stdout is the seed line (none: --seed given) and the summary; stderr is not a terminal here,
    # so no progress bar either.
    assert printed.startswith("Graded 5 submissions") and errors == ""


def test_bad_arguments_get_a_message(capsys):
    with pytest.raises(SystemExit):
        main(["nowhere-at-all", "--workers", "0"])
    assert "--workers must be >= 1" in capsys.readouterr().err


def test_the_command_runs_as_posenc_grade_and_as_the_cli_module(tmp_path):
    import shutil
    import subprocess
    import sys

    (tmp_path / "empty.ipynb").write_text("{}", encoding="utf-8")
    script = shutil.which("posenc-grade", path=str(Path(sys.executable).parent))
    for command in ([script] if script else []) + [
        [sys.executable, "-m", "posenc_lib.grading.cli"]
    ]:
        command = [command] if isinstance(command, str) else command
        done = subprocess.run(
            [*command, "empty.ipynb", "--out", "g.csv", "--seed", "1"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.startswith("Graded 1 submissions") and "1 invalid" in done.stdout
        assert done.stderr == ""
