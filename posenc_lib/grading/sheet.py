"""The grade sheet: one ``Row`` per submission, written as ``grades.csv`` and as feedback JSON.

Every submission gets one row, whatever it does: ``status`` is one of ``STATUSES`` (ok, error,
timeout, invalid or tampered), with the reason when it is not ok. ``posenc-grade`` rewrites the CSV
after each submission it grades, atomically (a temporary file, synced, then renamed over the sheet),
so the file on disk is always a whole sheet; its cells are never run as formulas by a spreadsheet.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from posenc_lib.i18n import N_, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

STATUSES = ("ok", "error", "timeout", "invalid", "tampered")
# The sheet's first columns, as a teacher reads them (marked N_: in the grader's language).
COLUMNS = (N_("submission"), N_("chapter"), N_("status"), N_("score"), N_("max_score"))


@dataclass
class Row:
    """One submission's result: a line of the grade sheet and its feedback file."""

    submission: str
    chapter: str = ""
    status: str = "ok"
    score: int = 0
    max_score: int = 0
    verdicts: list = field(default_factory=list)  # checks.Verdict per question
    reason: str = ""  # why the status is not ok
    failed_cells: list = field(default_factory=list)
    seconds: float = 0.0
    hidden_only: list = field(default_factory=list)  # questions that failed on hidden inputs only
    grader_failed: bool = False  # the grader itself failed (not the notebook): regraded on resume

    def feedback(self) -> dict:
        return {
            "submission": self.submission,
            "chapter": self.chapter,
            "status": self.status,
            "score": self.score,
            "max_score": self.max_score,
            "reason": self.reason,
            "cells_that_failed": self.failed_cells,
            "questions": [
                {
                    "question": v.question,
                    "status": v.status,
                    "points": v.points,
                    "max_points": v.max_points,
                    "message": v.message,
                    "failed_on_hidden_inputs_only": v.question in self.hidden_only,
                }
                for v in self.verdicts
            ],
        }


def _cell(value) -> str:
    """A CSV cell that a spreadsheet will not run as a formula."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_sheet(rows: list[Row], path: Path) -> None:
    """grades.csv: submission, chapter, status, score, max_score, then one column per question
    (the coding questions q1, q2, ..., then the concept questions c1, c2, ...)."""
    names = sorted(
        {v.question for r in rows for v in r.verdicts},
        key=lambda n: (n.startswith("c"), len(n), n),
    )
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([*(translate(c) for c in COLUMNS), *names])
    for row in rows:
        points = {v.question: v.points for v in row.verdicts}
        writer.writerow(
            [_cell(row.submission), row.chapter, row.status, row.score, row.max_score]
            + [points.get(n, "") for n in names]
        )
    _write_atomically(path, buffer.getvalue())


def write_feedback(rows: list[Row], folder: Path) -> None:
    """One JSON file per submission, named after it."""
    folder.mkdir(parents=True, exist_ok=True)
    used = set()
    for row in rows:
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(row.submission).stem)
        name, n = stem or "submission", 1
        while name in used:
            n += 1
            name = f"{stem}-{n}"
        used.add(name)
        text = json.dumps(row.feedback(), ensure_ascii=False, indent=1)
        _write_atomically(folder / f"{name}.json", text)


def summary(rows: list[Row], seconds: float, sheet: Path) -> list[str]:
    """The lines the command prints at the end: the counts, then each row that is not ok."""
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    lines = [
        tr(
            "Graded {total} submissions in {seconds:.1f} s: {ok} ok, "
            "{error} failed to run, {timeout} timed out, "
            "{invalid} invalid, {tampered} tampered. Sheet: {sheet}",
            total=len(rows),
            seconds=seconds,
            sheet=sheet,
            **counts,
        )
    ]
    lines += [
        f"  {r.submission}: {status_word(r.status)}: {r.reason}" for r in rows if r.status != "ok"
    ]
    return lines


_STATUS = {  # a row's status as a teacher reads it (the sheet keeps the code)
    "ok": N_("ok"),
    "error": N_("error"),
    "timeout": N_("timeout"),
    "invalid": N_("invalid"),
    "tampered": N_("tampered"),
}


def status_word(status: str) -> str:
    """A row's status (ok, error, timeout, invalid, tampered) in the language in use."""
    return translate(_STATUS.get(status, status))


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # a new file
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())  # on disk before it replaces the old file: never a torn sheet
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:  # a full disk, Ctrl-C: the old file stays, and no temporary one
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
