"""A grading run that is stopped loses nothing, and the next run grades only what is missing.

One small class (chapter 1: a worked solution, a wrong ``attention``, and a worked solution with a
2-second cell, so that a run is still grading when it is stopped) is graded once from scratch;
each test compares with that sheet. A run killed with SIGKILL or stopped with Ctrl-C (SIGINT to
its process group, as a terminal sends it) leaves a valid sheet and journal, and the same command
again grades only the rest. A changed file is graded again; a half-written journal line is
skipped. The tests of settings and of a full disk use notebooks the grader refuses at once
(``invalid``), which cost no sandbox.
"""

from __future__ import annotations

import csv
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from attack_notebooks import FULL, WRONG_ATTENTION, solutions_with

from posenc_lib.grading import journal as _journal
from posenc_lib.grading.cli import main

SEED = 5
NAMES = ("a.ipynb", "b.ipynb", "c.ipynb")


@pytest.fixture(scope="module", autouse=True)
def _same_code_throughout():
    """The course's code as it is when these tests start, for every run in this process: work
    elsewhere in the tree meanwhile would otherwise (rightly) make the journal's rows stale. The
    test of settings checks that another fingerprint is refused."""
    with pytest.MonkeyPatch.context() as patch:
        frozen = _journal.code_fingerprint()
        patch.setattr(_journal, "code_fingerprint", lambda language="en": frozen)
        yield


@pytest.fixture(scope="module")
def klass(tmp_path_factory):
    folder = tmp_path_factory.mktemp("resume") / "class"
    folder.mkdir()
    texts = (
        solutions_with(),
        solutions_with(replace=("attention", WRONG_ATTENTION)),
        solutions_with(first="import time\ntime.sleep(2)"),
    )
    for name, text in zip(NAMES, texts, strict=True):
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def from_scratch(klass):
    """The sheet of one uninterrupted run, and its journal (kept here: a finished run removes it)."""
    out = klass.parent / "scratch" / "grades.csv"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_journal.Journal, "remove", _journal.Journal.close)
        assert main([str(klass), "--out", str(out), "--seed", str(SEED), "--workers", "1"]) == 0
    assert _journal_rows(_journal.journal_path(out)) == len(NAMES)
    return out


def _rows(sheet: Path) -> list[dict]:
    with sheet.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return rows


def _journal_rows(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) - 1  # the first line: settings


def _stopped_run(klass: Path, out: Path, how: signal.Signals):
    """posenc-grade in a child process, sent ``how`` once its first row is on disk."""
    tmp = Path(tempfile.mkdtemp(prefix="resume-tmp-"))  # short: the forkserver's socket is in it
    env = dict(os.environ, TMPDIR=str(tmp), OMP_NUM_THREADS="1")
    command = [sys.executable, "-m", "posenc_lib.grading.cli", str(klass), "--out", str(out)]
    run = subprocess.Popen(
        [*command, "--seed", str(SEED), "--workers", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not (out.exists() and len(_rows(out)) >= 1):
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.02)
    sent = time.monotonic()
    if how == signal.SIGKILL:
        os.kill(run.pid, how)  # the grader only, as the kernel's out-of-memory killer does
    else:
        os.killpg(run.pid, how)  # Ctrl-C in a terminal: the whole foreground process group
    stdout, stderr = run.communicate(timeout=60)
    try:
        os.killpg(run.pid, signal.SIGKILL)  # what a killed grader left: its forkserver
    except ProcessLookupError:
        pass
    return run.returncode, stdout, stderr, time.monotonic() - sent, tmp


def _check_valid(out: Path, killed: bool) -> int:
    """The sheet on disk is whole and holds the journal's rows; the number of rows in the journal.

    A run killed between writing a row to the journal and to the sheet (or while writing the
    sheet's temporary file) has one row more in the journal; one stopped by Ctrl-C has none."""
    rows = _rows(out)
    assert list(rows[0])[:5] == ["submission", "chapter", "status", "score", "max_score"]
    assert [r["status"] for r in rows] == ["ok"] * len(rows)
    journal = _journal.load(_journal.journal_path(out))
    assert [r.submission for _sha, r in journal.rows.values()][: len(rows)] == [
        r["submission"] for r in rows
    ]
    assert len(journal.rows) - len(rows) in ((0, 1) if killed else (0,))
    if not killed:
        assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no temporary file
    return len(journal.rows)


@pytest.mark.timeout(300)
def test_a_killed_run_leaves_a_valid_sheet_and_the_next_grades_only_the_rest(
    klass, from_scratch, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "grades.csv"
    code, *_ = _stopped_run(klass, out, signal.SIGKILL)
    assert code == -signal.SIGKILL
    kept = _check_valid(out, killed=True)
    assert 1 <= kept < len(NAMES)
    fingerprint = _journal.load(_journal.journal_path(out)).settings["code"]  # its own
    monkeypatch.setattr(_journal, "code_fingerprint", lambda language="en": fingerprint)
    # The same command again (no --seed: the journal's), in this process.
    assert main([str(klass), "--out", str(out), "--workers", "1"]) == 0
    printed = capsys.readouterr().out
    assert f"{kept} submission(s) already graded are reused, {len(NAMES) - kept} graded now" in (
        printed
    )
    assert "Hidden inputs from seed" not in printed  # the seed came from the journal
    assert out.read_text(encoding="utf-8") == from_scratch.read_text(encoding="utf-8")
    assert not _journal.journal_path(out).exists()  # finished: nothing left to resume


@pytest.mark.timeout(300)
def test_ctrl_c_stops_promptly_keeps_the_rows_and_says_how_to_resume(klass, tmp_path, capsys):
    out = tmp_path / "grades.csv"
    code, _, stderr, seconds, tmp = _stopped_run(klass, out, signal.SIGINT)
    try:
        assert code == 130, stderr[-2000:]
        assert "Run the same command again to grade the other" in stderr, stderr[-2000:]
        assert "Traceback" not in stderr
        assert seconds < 20  # not the minute a submission may take
        assert _check_valid(out, killed=False) >= 1
        assert [p.name for p in tmp.iterdir() if p.name.startswith("posenc-grade-")] == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _copy_run(from_scratch: Path, klass: Path, tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(klass, tmp_path / "class")
    shutil.copytree(from_scratch.parent, tmp_path / "out")
    return tmp_path / "class", tmp_path / "out" / from_scratch.name


def test_a_submission_changed_since_it_was_graded_is_graded_again(
    klass, from_scratch, tmp_path, capsys
):
    folder, out = _copy_run(from_scratch, klass, tmp_path)
    assert _rows(out)[1]["score"] != str(FULL)
    (folder / "b.ipynb").write_text(solutions_with(), encoding="utf-8")  # handed in again, fixed
    assert main([str(folder), "--out", str(out), "--seed", str(SEED), "--workers", "1"]) == 0
    assert "2 submission(s) already graded are reused, 1 graded now" in capsys.readouterr().out
    assert [r["score"] for r in _rows(out)] == [str(FULL)] * 3


def test_a_half_written_journal_line_is_skipped_with_a_warning(
    klass, from_scratch, tmp_path, capsys
):
    folder, out = _copy_run(from_scratch, klass, tmp_path)
    journal = _journal.journal_path(out)
    text = journal.read_bytes()
    journal.write_bytes(text[: len(text) - 200])  # killed while writing its last line
    assert main([str(folder), "--out", str(out), "--workers", "1"]) == 0
    printed, errors = capsys.readouterr()
    assert "1 line(s) of" in errors and "could not be read" in errors
    assert "2 submission(s) already graded are reused, 1 graded now" in printed
    assert out.read_text(encoding="utf-8") == from_scratch.read_text(encoding="utf-8")


def _invalid_class(tmp_path: Path, count: int = 3) -> Path:
    folder = tmp_path / "class"
    folder.mkdir()
    for n in range(count):
        (folder / f"s{n}.ipynb").write_text("{}", encoding="utf-8")  # refused at once: invalid
    return folder


def test_rows_of_other_settings_or_another_grader_version_are_not_reused(
    tmp_path, capsys, monkeypatch
):
    folder, out = _invalid_class(tmp_path), tmp_path / "grades.csv"
    grade = [str(folder), "--out", str(out), "--seed", "1"]
    monkeypatch.setattr(_journal.Journal, "remove", _journal.Journal.close)  # keep it to read
    assert main(grade) == 0
    assert main(grade) == 0
    assert "3 submission(s) already graded are reused, 0 graded now" in capsys.readouterr().out
    assert main([*grade[:-1], "2"]) == 0  # another seed
    printed = capsys.readouterr().out
    assert "other settings (the seed)" in printed and "Resuming" not in printed
    journal = _journal.journal_path(out)
    lines = journal.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    journal.write_text(  # as if graded by an earlier version of the course's code
        "\n".join([json.dumps({**header, "code": "0" * 64}), *lines[1:]]) + "\n", encoding="utf-8"
    )
    assert main([*grade[:-1], "2", "--timeout", "30"]) == 0
    printed = capsys.readouterr().out
    assert "other settings (the course's questions or grader (its code changed), the timeout)" in (
        printed
    )
    assert "Resuming" not in printed
    assert main([*grade[:-1], "2", "--timeout", "30", "--fresh"]) == 0
    assert "Resuming" not in capsys.readouterr().out
    assert len(_rows(out)) == 3
    monkeypatch.undo()
    assert main([*grade[:-1], "2", "--timeout", "30"]) == 0
    assert "3 submission(s) already graded are reused" in capsys.readouterr().out
    assert not _journal.journal_path(out).exists()  # a run that finishes removes its journal
    assert main([*grade[:-1], "2", "--timeout", "30"]) == 0
    assert "Resuming" not in capsys.readouterr().out


def test_a_full_disk_stops_with_one_sentence_and_a_valid_sheet(tmp_path, capsys, monkeypatch):
    folder, out = _invalid_class(tmp_path), tmp_path / "grades.csv"
    grade = [str(folder), "--out", str(out), "--seed", "1", "--workers", "1"]
    add = _journal.Journal.add
    calls = []

    def full_disk(self, sha, row):
        calls.append(row)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        add(self, sha, row)

    monkeypatch.setattr(_journal.Journal, "add", full_disk)
    assert main(grade) == 1
    printed, errors = capsys.readouterr()
    assert errors.strip().startswith("The disk holding") and "is full" in errors
    assert "Free some space, then run the same command again" in errors
    assert "Traceback" not in errors and "Graded" not in printed
    assert [r["submission"] for r in _rows(out)] == ["s0.ipynb"]  # whole, with the row kept
    monkeypatch.setattr(_journal.Journal, "add", add)
    assert main(grade) == 0
    assert "1 submission(s) already graded are reused, 2 graded now" in capsys.readouterr().out
    assert len(_rows(out)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["class", "grades.csv"]
