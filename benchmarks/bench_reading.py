"""How long is each lecture to read? Prints, per core lecture and deep dive: prose words, code lines,
figures, the minutes course.toml states and the reading-pace model's minutes before rounding, and
which of issue 35's floors for a core lecture it misses (at most 3,000 words of prose, 250 lines
of code and 60 minutes). Asserts nothing here; tests/tools/test_reading_floors.py holds the floors.

Run: make bench   (or, from the repository root: .venv/bin/python -m benchmarks.bench_reading)

The model: tools/course_plan.py; its constants, and the cold readers' estimates they are fitted to
(the fit is printed last): course.toml.
"""

from __future__ import annotations

from dataclasses import dataclass

from tools import course_plan

MAX_WORDS, MAX_CODE_LINES, MAX_MINUTES = 3000, 250, 60  # issue 35, for a core lecture


@dataclass
class Reading:
    path: str
    kind: str  # "core" or "deep dive"
    words: int
    code_lines: int
    figures: int
    stated: int  # minutes, as course.toml states them
    model: float  # minutes, the model's before rounding

    def misses(self) -> list[str]:
        """The floors a core lecture misses (a deep dive has none; chapter 0 is the start page)."""
        if self.kind != "core":
            return []
        missed = []
        if self.words > MAX_WORDS:
            missed.append(f"words {self.words:,} > {MAX_WORDS:,}")
        if self.code_lines > MAX_CODE_LINES:
            missed.append(f"code {self.code_lines} > {MAX_CODE_LINES}")
        if self.model > MAX_MINUTES:  # the model's minutes, not the rounded ones it states
            missed.append(f"{self.model:.1f} min > {MAX_MINUTES}")
        return missed


def readings() -> list[Reading]:
    pace, chapters = course_plan.load()
    found = []
    for ch in chapters:
        for entry, kind in [(ch.lecture, "core"), *((d, "deep dive") for d in ch.deeper)]:
            feats = course_plan.features(course_plan.ROOT / entry.path)
            model = course_plan.model_minutes(feats, entry.run_s, pace)
            found.append(
                Reading(
                    entry.path,
                    kind,
                    feats.words,
                    feats.code_lines,
                    feats.figures,
                    entry.minutes,
                    model,
                )
            )
    return found


def main() -> None:
    print("Reading and running time per lecture (course.toml; model: tools/course_plan.py)")
    print(
        f"{'notebook':<48} {'kind':<9} {'words':>6} {'code':>5} {'figs':>4} "
        f"{'stated':>6} {'model':>6}  floors missed"
    )
    for r in readings():
        print(
            f"{r.path:<48} {r.kind:<9} {r.words:6,d} {r.code_lines:5d} {r.figures:4d} "
            f"{r.stated:6d} {r.model:6.1f}  {'; '.join(r.misses()) or '-'}"
        )
    print(
        f"floors for a core lecture (issue 35): <= {MAX_WORDS:,} words of prose, "
        f"<= {MAX_CODE_LINES} lines of code, <= {MAX_MINUTES} min"
    )
    fit = course_plan.fit_pace()
    pace, _ = course_plan.load()
    print(
        f"the pace fitted to {fit.estimates} cold readers' estimates (course.toml [[calibration]]): "
        f"{fit.words_per_minute:.1f} words a minute, {fit.seconds_per_code_line:.2f} s a code line, "
        f"{fit.minutes_per_coding_question:.2f} min a coding question (error {fit.rms:.1f} min rms); "
        f"course.toml uses {pace['words_per_minute']}, {pace['seconds_per_code_line']} and "
        f"{pace['minutes_per_coding_question']}"
    )


if __name__ == "__main__":
    main()
