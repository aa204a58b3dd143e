"""The journal beside the grade sheet: every graded submission, kept the moment it is graded.

``posenc-grade --out grades.csv`` keeps ``grades.journal.jsonl`` beside the sheet: one JSON line
of grading settings, then one line per graded submission (its name on the sheet, the SHA-256 of
its file, its whole row), appended, flushed and synced to disk as each one is graded. A run that
is stopped (Ctrl-C, a killed process, a full disk) leaves every finished row in it, and the next
run reuses a row only when all of these still hold (``reusable``):

- the file's bytes hash the same (a changed submission is graded again);
- the settings are the same: the seed, the timeout, the memory limit, the feedback's language, and
  ``code_fingerprint()``, a hash of the course library's code and catalogs (the questions, their
  references, the grader, the feedback's words); a different question set or grader version is
  a different fingerprint;
- the row is not a failure of the grader itself (``Row.grader_failed``), which is retried.

A line that cannot be read (the last one, half-written when the process was killed) is skipped,
and its submission graded again. A run that finishes removes its journal: the journal is there
only while a run is unfinished.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from posenc_lib import checks
from posenc_lib.grading.sheet import Row, _write_atomically
from posenc_lib.i18n import N_

FORMAT = 1
LIBRARY = Path(__file__).resolve().parents[1]  # posenc_lib/
# The settings a row depends on, as named to the teacher when they differ (marked N_).
SETTINGS = {
    "code": N_("the course's questions or grader (its code changed)"),
    "seed": N_("the seed"),
    "timeout": N_("the timeout"),
    "memory_mb": N_("the memory limit"),
    "language": N_("the language"),
}


def journal_path(sheet: Path) -> Path:
    """grades.csv -> grades.journal.jsonl, in the sheet's folder."""
    return sheet.with_name(f"{sheet.stem}.journal.jsonl")


def content_hash(path: Path) -> str:
    """SHA-256 of a file's bytes; "" when it cannot be read (such a row is never reused)."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(2**20), b""):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()


def code_fingerprint(language: str = "en") -> str:
    """A hash of the library's code: the questions, the references they compare with, the grader
    and the feedback's English sentences; and, for feedback in another language, its translation
    catalogs. Any edit makes earlier rows stale."""
    digest = hashlib.sha256()
    files = [*LIBRARY.rglob("*.py")]
    if language != "en":
        files += (LIBRARY / "locale" / language).rglob("*.po")
    for path in sorted(p for p in files if "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(LIBRARY)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def settings(seed: int, timeout: float, memory_mb: int, language: str) -> dict:
    """The journal's first line: what a row's grading depended on."""
    return {
        "journal": FORMAT,
        "code": code_fingerprint(language),
        "seed": seed,
        "timeout": timeout,
        "memory_mb": memory_mb,
        "language": language,
    }


def differences(old: dict, new: dict) -> list[str]:
    """The settings (keys of ``SETTINGS``) that differ between two journals' first lines."""
    if old.get("journal") != new.get("journal"):
        return ["code"]
    return [key for key in SETTINGS if old.get(key) != new.get(key)]


def row_data(row: Row) -> dict:
    return {
        "submission": row.submission,
        "chapter": row.chapter,
        "status": row.status,
        "score": row.score,
        "max_score": row.max_score,
        "verdicts": [
            [v.question, v.status, v.message, v.points, v.max_points] for v in row.verdicts
        ],
        "reason": row.reason,
        "failed_cells": row.failed_cells,
        "seconds": row.seconds,
        "hidden_only": row.hidden_only,
        "grader_failed": row.grader_failed,
    }


def row_from(data: dict) -> Row:
    """The row written by ``row_data``; ValueError (or KeyError, TypeError) if it is not one."""
    row = Row(**{**data, "verdicts": [checks.Verdict(*v) for v in data["verdicts"]]})
    for name, kind in (("submission", str), ("status", str), ("score", int), ("max_score", int)):
        if not isinstance(getattr(row, name), kind):
            raise ValueError(name)
    return row


@dataclass
class Loaded:
    """What an earlier run left: its settings (None: no journal, or its first line is unreadable),
    name on the sheet -> (file hash, row), and how many lines could not be read."""

    settings: dict | None = None
    rows: dict[str, tuple[str, Row]] = field(default_factory=dict)
    unreadable: int = 0


def load(path: Path) -> Loaded:
    """Read a journal; a line that is not whole (a run killed while writing it) is skipped."""
    try:
        lines = path.read_bytes().split(b"\n")
    except FileNotFoundError:
        return Loaded()
    if lines and lines[-1] == b"":
        lines.pop()  # the newline that ends the last whole line
    loaded = Loaded()
    for number, line in enumerate(lines):
        try:
            data = json.loads(line)
            if number == 0:
                if not isinstance(data, dict) or data.get("journal") is None:
                    raise ValueError("no settings")
                loaded.settings = data
            else:
                sha, row = data["sha256"], row_from(data["row"])
                if not isinstance(sha, str):
                    raise ValueError("sha256")
                loaded.rows[row.submission] = (sha, row)
        except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
            loaded.unreadable += 1
            if number == 0:  # without its settings no row can be trusted
                return Loaded(unreadable=len(lines))
    return loaded


def reusable(loaded: Loaded, name: str, sha: str) -> Row | None:
    """The journal's row for this submission if its file is unchanged and the grader did not fail."""
    entry = loaded.rows.get(name)
    if entry is None or not sha or entry[0] != sha or entry[1].grader_failed:
        return None
    return entry[1]


class Journal:
    """Written afresh with the settings and the rows kept (atomically), then one line per row."""

    def __init__(self, path: Path, settings: dict, kept: list[tuple[str, Row]]):
        self.path = path
        lines = [json.dumps(settings)] + [_line(sha, row) for sha, row in kept]
        _write_atomically(path, "".join(line + "\n" for line in lines))
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed by close()

    def add(self, sha: str, row: Row) -> None:
        """Append one row, on disk before this returns (a killed run keeps it)."""
        self._file.write(_line(sha, row) + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        try:
            self._file.close()
        except OSError:  # a full disk: what was synced is kept
            pass

    def remove(self) -> None:
        """The run finished and its sheet and other files are written: nothing left to resume."""
        self.close()
        self.path.unlink(missing_ok=True)


def _line(sha: str, row: Row) -> str:
    return json.dumps({"sha256": sha, "row": row_data(row)}, ensure_ascii=False)
