"""Grade a class: ``posenc-grade SUBMISSION_OR_FOLDER... --out grades.csv`` (docs/grading.md).

The same program as ``python -m posenc_lib.grading`` and ``python -m posenc_lib.grading.cli``.
The command line only: it lists the submissions (``submissions.py``), grades them in sandboxed
child processes (``grader.py``, ``sandbox.py``), writes the grade sheet and the feedback files
(``sheet.py``) and prints a summary. The progress bar goes to stderr, on a terminal only; stdout
gets the seed (when it was drawn), what is resumed, and the summary.

Each row is kept as it is graded: appended to the journal beside the sheet (``journal.py``) and
the sheet rewritten, atomically. A run stopped by Ctrl-C, SIGTERM, a kill or a full disk leaves a
valid sheet of what was graded, and its journal; running the same command again resumes (the
default): it reuses the journal's rows whose file and settings are unchanged and grades the rest.
``--fresh`` starts over. A run that finishes removes the journal.
"""

from __future__ import annotations

import argparse
import errno
import secrets
import signal
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from posenc_lib.grading import journal as _journal
from posenc_lib.grading.grader import grade_all
from posenc_lib.grading.lms import LMS, learner_key, read_roster, write_lms
from posenc_lib.grading.report import write_report
from posenc_lib.grading.sheet import summary, write_feedback, write_sheet
from posenc_lib.grading.submissions import submissions
from posenc_lib.i18n import ENV, LANGUAGES, _, get_language, in_language, tr


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="posenc-grade",
        description="Grade exercise notebooks; write a grade sheet (CSV) and feedback (JSON).",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks, or folders of notebooks")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="the grade sheet")
    parser.add_argument("--json", type=Path, help="a folder for one feedback file per submission")
    parser.add_argument(
        "--report",
        type=Path,
        action="append",
        default=[],
        help="a class report: per question the pass rate and the named mistakes, ranked; "
        "class.html (one self-contained page) or class.md (text); may be given twice",
    )
    parser.add_argument(
        "--seed", type=int, help="secret seed of the hidden inputs (default: random)"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per submission")
    parser.add_argument("--workers", type=int, default=2, help="submissions graded at once")
    parser.add_argument("--memory-mb", type=int, default=2048, help="memory per submission")
    parser.add_argument(
        "--lms",
        choices=LMS,
        action="append",
        default=[],
        help="also write the sheet in the layout Canvas or Moodle imports: one row per learner, "
        "a column per chapter, as OUT-canvas.csv / OUT-moodle.csv beside --out",
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        help=f"the language of the feedback and the report: en (English) or zh (Chinese, 中文) "
        f"(default: ${ENV}, else en)",
    )
    parser.add_argument(
        "--roster",
        type=Path,
        help="a CSV with a 'file' column (each submission's file name) and the learners' name, "
        "email, canvas_id, sis_user_id, sis_login_id, section, id_number (docs/grading.md)",
    )
    parser.add_argument(
        "--fresh",
        action="store_true",
        help="grade every submission again; by default a run resumes: it keeps the rows of the "
        "journal beside --out (OUT.journal.jsonl) whose file and settings are unchanged",
    )
    args = parser.parse_args(argv)
    try:
        language = args.lang or get_language()
    except ValueError as error:  # $POSENC_LANG holds something else
        parser.error(str(error))
    with in_language(language):  # the feedback, the report and what is printed
        return _grade(parser, args, language)


def _grade(parser: argparse.ArgumentParser, args: argparse.Namespace, language: str) -> int:
    if args.workers < 1 or args.timeout <= 0 or args.memory_mb < 256:
        parser.error(_("--workers must be >= 1, --timeout > 0 and --memory-mb >= 256"))
    bad = [r.name for r in args.report if r.suffix.lower() not in (".html", ".htm", ".md")]
    if bad:
        parser.error(
            tr("--report needs a name ending in .html or .md, not {names}", names=", ".join(bad))
        )
    paths = submissions(args.paths)
    if not paths:
        parser.error(tr("no notebooks found in {paths}", paths=", ".join(map(str, args.paths))))
    if args.roster is not None:  # before grading: a missing learner is found in a second
        try:
            roster = read_roster(args.roster)
        except ValueError as error:
            parser.error(str(error))
        lost = [name for _, name in paths if learner_key(name) not in roster]
        if lost:
            parser.error(
                tr(
                    "{count} submission(s) match no roster row: {names}. Add a row "
                    "whose 'file' is each one's file name, or rename the file.",
                    count=len(lost),
                    names=", ".join(lost),
                )
            )
    journal_file = _journal.journal_path(args.out)
    earlier = _journal.Loaded() if args.fresh else _journal.load(journal_file)
    if earlier.unreadable:
        print(
            tr(
                "Warning: {count} line(s) of {journal} could not be read (a run stopped while "
                "writing them?); those submissions are graded again.",
                count=earlier.unreadable,
                journal=journal_file,
            ),
            file=sys.stderr,
        )
    seed = args.seed
    if (
        seed is None
        and earlier.settings is not None
        and isinstance(earlier.settings.get("seed"), int)
    ):
        seed = earlier.settings["seed"]  # the same command again: the same hidden inputs
    elif seed is None:
        seed = 1 + secrets.randbelow(2**31 - 2)
        print(
            tr(
                "Hidden inputs from seed {seed} (pass --seed {seed} to grade the same way again).",
                seed=seed,
            )
        )
    now = _journal.settings(seed, args.timeout, args.memory_mb, language)
    if earlier.settings is not None:
        changed = _journal.differences(earlier.settings, now)
        if changed:
            print(
                tr(
                    "{journal} was graded with other settings ({what}): none of its {count} "
                    "row(s) is reused, every submission is graded again.",
                    journal=journal_file,
                    what=", ".join(_(_journal.SETTINGS[c]) for c in changed),
                    count=len(earlier.rows),
                )
            )
            earlier = _journal.Loaded()
    # Every file is hashed before any submission runs (grade_all then reads them, also before).
    hashes = [_journal.content_hash(path) for path, _name in paths]
    rows: list = [
        _journal.reusable(earlier, n, h) for (_p, n), h in zip(paths, hashes, strict=True)
    ]
    todo = [i for i, row in enumerate(rows) if row is None]
    kept = len(paths) - len(todo)
    if earlier.settings is not None:
        print(
            tr(
                "Resuming from {journal}: {kept} submission(s) already graded are reused, "
                "{todo} graded now (new, changed since, or not graded before).",
                journal=journal_file,
                kept=kept,
                todo=len(todo),
            )
        )

    saved = [i for i, row in enumerate(rows) if row is not None]  # in the journal, in this order

    def on_disk() -> list:  # the rows in the journal, in the order of the files
        return [rows[i] for i in sorted(saved)]

    def graded(index: int, row) -> None:  # as each submission is graded: on disk at once
        rows[todo[index]] = row
        journal.add(hashes[todo[index]], row)
        saved.append(todo[index])
        write_sheet(on_disk(), args.out)

    started = time.perf_counter()
    journal = None
    try:
        with _sigterm_as_interrupt():
            journal = _journal.Journal(journal_file, now, [(hashes[i], rows[i]) for i in saved])
            write_sheet(on_disk(), args.out)
            grade_all(
                [paths[i] for i in todo],
                seed,
                args.timeout,
                args.workers,
                args.memory_mb,
                progress=None,
                language=language,
                done=graded,
            )
            if args.json:
                write_feedback(rows, args.json)
            for report in args.report:
                write_report(rows, report)
            for lms in args.lms:
                target = args.out.with_name(f"{args.out.stem}-{lms}.csv")
                write_lms(rows, target, lms, args.roster)
                print(tr("{lms} sheet: {path}", lms=lms.capitalize(), path=target))
            journal.remove()  # finished: the next run grades everyone again
    except KeyboardInterrupt:
        done = len(saved)
        try:  # stopped between the journal and the sheet: the sheet gets the same rows
            write_sheet(on_disk(), args.out)
        except OSError:
            pass
        print(
            "\n"
            + tr(
                "Grading stopped: {done} of {total} submissions graded, kept in {sheet} and "
                "{journal}. Run the same command again to grade the other {left} (add --fresh "
                "to start over).",
                done=done,
                total=len(rows),
                sheet=args.out,
                journal=journal_file,
                left=len(rows) - done,
            ),
            file=sys.stderr,
        )
        return 130
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        done = len(saved)
        print(
            tr(
                "The disk holding {folder} is full: grading stopped with {done} of {total} "
                "submissions graded and kept (in {sheet} and its journal). Free some space, then "
                "run the same command again: it grades only the rest.",
                folder=args.out.resolve().parent,
                done=done,
                total=len(rows),
                sheet=args.out,
            ),
            file=sys.stderr,
        )
        return 1
    finally:
        if journal is not None:
            journal.close()
    print("\n".join(summary(rows, time.perf_counter() - started, args.out)))
    return 0


@contextmanager
def _sigterm_as_interrupt():
    """SIGTERM (``kill PID``, a job scheduler) stops the run as Ctrl-C does: the running
    submissions are stopped, their scratch folders removed, the rows graded so far kept."""

    def stop(signum, frame):
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (main() called from a thread): leave it
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
