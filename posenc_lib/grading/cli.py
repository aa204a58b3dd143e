"""Grade a class: ``posenc-grade SUBMISSION_OR_FOLDER... --out grades.csv`` (docs/grading.md).

The same program as ``python -m posenc_lib.grading`` and ``python -m posenc_lib.grading.cli``.
The command line only: it lists the submissions (``submissions.py``), grades them in sandboxed
child processes (``grader.py``, ``sandbox.py``), writes the grade sheet and the feedback files
(``sheet.py``) and prints a summary. The progress bar goes to stderr, on a terminal only; stdout
gets the seed (when it was drawn) and the summary.
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from pathlib import Path

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
    seed = args.seed if args.seed is not None else 1 + secrets.randbelow(2**31 - 2)
    if args.seed is None:
        print(
            tr(
                "Hidden inputs from seed {seed} (pass --seed {seed} to grade the same way again).",
                seed=seed,
            )
        )
    started = time.perf_counter()
    rows = grade_all(
        paths, seed, args.timeout, args.workers, args.memory_mb, progress=None, language=language
    )
    write_sheet(rows, args.out)
    if args.json:
        write_feedback(rows, args.json)
    for report in args.report:
        write_report(rows, report)
    for lms in args.lms:
        target = args.out.with_name(f"{args.out.stem}-{lms}.csv")
        write_lms(rows, target, lms, args.roster)
        print(tr("{lms} sheet: {path}", lms=lms.capitalize(), path=target))
    print("\n".join(summary(rows, time.perf_counter() - started, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
