"""Grade sheets a learning-management system imports: ``posenc-grade ... --lms canvas|moodle``.

One row per learner, one column per chapter graded ("Chapter 01 exercises (posenc)"), in the
column layout each system's CSV grade import reads (docs/grading.md shows a sample of each):

- **Canvas** (Gradebook > Import): ``Student, ID, SIS User ID, SIS Login ID, Section``, then one
  column per assignment; a column whose name Canvas does not know becomes a new assignment.
  Canvas matches a row by its ID, SIS User ID or SIS Login ID.
- **Moodle** (Grades > Import > CSV file): a header row and one row per learner; at import you
  map one identifying column ("Email address", "ID number" or "Username") to the user and each
  chapter column to a grade item (as in Moodle's own test, grade/tests/fixtures/grade_import.csv).

Who a submission belongs to: without a roster, its file name (``ada.ipynb`` is learner ``ada``);
with ``--roster roster.csv``, the roster row whose ``file`` column is that name (the stem, any case),
which also gives the name, e-mail and LMS identifiers. A submission with no roster row is an error
that names it, so no grade is silently lost.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

from posenc_lib.grading.sheet import Row, _cell, _write_atomically
from posenc_lib.i18n import tr

LMS = ("canvas", "moodle")
ROSTER_COLUMNS = ("file", "name", "email", "canvas_id", "sis_user_id", "sis_login_id", "section",
                  "id_number")  # fmt: skip


@dataclass(frozen=True)
class Learner:
    """One learner, as a roster row gives them (only ``file`` is required)."""

    file: str
    name: str = ""
    email: str = ""
    canvas_id: str = ""
    sis_user_id: str = ""
    sis_login_id: str = ""
    section: str = ""
    id_number: str = ""


def learner_key(submission: str) -> str:
    """The name a submission is known by: its file name without folder or suffix, lower case."""
    return Path(submission).stem.strip().lower()


def read_roster(path: Path) -> dict[str, Learner]:
    """The roster CSV: a ``file`` column (the submission's file name) and any of ROSTER_COLUMNS."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(
            tr("the roster {path} does not exist; give the path of a CSV file.", path=path)
        )
    with open(path, encoding="utf-8-sig", newline="") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip().lower() for h in reader.fieldnames or []]
        if "file" not in header:
            raise ValueError(
                tr(
                    "the roster {name} needs a 'file' column naming each learner's submission "
                    "(ada.ipynb or ada); its columns are {header}. Optional: {optional}.",
                    name=path.name,
                    header=header,
                    optional=", ".join(ROSTER_COLUMNS[1:]),
                )
            )
        roster: dict[str, Learner] = {}
        for number, raw in enumerate(reader, start=2):
            row = {k.strip().lower(): (v or "").strip() for k, v in raw.items() if k}
            key = learner_key(row["file"]) if row.get("file") else ""
            if not key:
                raise ValueError(
                    tr(
                        "line {number} of the roster {name} has no file name.",
                        number=number,
                        name=path.name,
                    )
                )
            if key in roster:
                raise ValueError(
                    tr("the roster {name} names {file!r} twice.", name=path.name, file=row["file"])
                )
            roster[key] = Learner(**{c: row.get(c, "") for c in ROSTER_COLUMNS} | {"file": key})
    return roster


def _column(chapter: str) -> str:
    return f"Chapter {chapter} exercises (posenc)"


def lms_sheet(rows: list[Row], lms: str, roster: dict[str, Learner] | None = None) -> str:
    """The CSV text for ``lms`` ("canvas" or "moodle"): one row per learner, a column per chapter."""
    if lms not in LMS:
        raise ValueError(f"unknown LMS {lms!r}; choose one of {', '.join(LMS)}.")
    graded = [r for r in rows if r.chapter]  # a notebook with no chapter has nowhere to go
    unmatched = [
        r.submission
        for r in graded
        if roster is not None and learner_key(r.submission) not in roster
    ]
    if unmatched:
        raise ValueError(
            tr(
                "{count} submission(s) match no roster row: {names}. Add a row whose 'file' is "
                "each one's file name, or rename the file to the roster's name.",
                count=len(unmatched),
                names=", ".join(unmatched),
            )
        )
    chapters = sorted({r.chapter for r in graded})
    scores: dict[str, dict[str, int]] = {}
    sources: dict[tuple[str, str], str] = {}
    for row in graded:
        key = learner_key(row.submission)
        if (key, row.chapter) in sources:
            raise ValueError(
                tr(
                    "two submissions of chapter {chapter} belong to {key!r}: {first} and "
                    "{second}; keep one.",
                    chapter=row.chapter,
                    key=key,
                    first=sources[key, row.chapter],
                    second=row.submission,
                )
            )
        sources[key, row.chapter] = row.submission
        scores.setdefault(key, {})[row.chapter] = row.score
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    if lms == "canvas":
        writer.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                         *map(_column, chapters)])  # fmt: skip
    else:
        writer.writerow(["Full name", "Email address", "ID number", "Username",
                         *map(_column, chapters)])  # fmt: skip
    for key in sorted(scores):
        who = (roster or {}).get(key, Learner(key, name=key))
        if lms == "canvas":
            ids = [who.canvas_id, who.sis_user_id, who.sis_login_id or who.file, who.section]
        else:
            ids = [who.email, who.id_number, who.file]
        grades = [scores[key].get(c, "") for c in chapters]
        writer.writerow([_cell(who.name or who.file), *map(_cell, ids), *grades])
    return buffer.getvalue()


def write_lms(rows: list[Row], path: Path, lms: str, roster_path: Path | None = None) -> None:
    """Write the ``lms`` sheet to ``path``, learners identified by the roster if one is given."""
    roster = read_roster(roster_path) if roster_path is not None else None
    _write_atomically(Path(path), lms_sheet(rows, lms, roster))
