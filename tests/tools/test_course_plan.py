"""Times from one source (issue 35): course.toml lists every chapter's core lecture, deep dives and
exercises with their minutes, which are the reading-pace model's; every place that states a time
(each notebook's time cell in both languages, the start page's map, the README) prints exactly
what the plan says. After a notebook changes: python -m tools.authoring times."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import nbformat
import pytest

from tools import course_plan, translate
from tools.course_plan import PLAN_TAG, ROOT

PACE, CHAPTERS = course_plan.load()
ENTRIES = [(ch, e) for ch in CHAPTERS for e in ch.entries()]


def _id(item):
    return item[1].path if isinstance(item, tuple) else str(item)


def _plan_paths() -> set[str]:
    return {e.path for _ch, e in ENTRIES}


def test_the_plan_lists_every_lecture_deep_dive_and_solutions_notebook_and_nothing_else():
    found = {
        p.relative_to(ROOT).as_posix()
        for folder in ("notebooks", "notebooks/deeper", "solutions")
        for p in (ROOT / folder).glob("*.ipynb")
    }
    assert _plan_paths() == found, "add the notebook to its chapter in course.toml (or remove it)"


def test_chapters_are_in_order_and_each_deep_dive_belongs_to_its_chapter():
    assert [ch.key for ch in CHAPTERS] == [f"{n:02d}" for n in range(len(CHAPTERS))]
    for ch in CHAPTERS:
        assert Path(ch.lecture.path).name.startswith(ch.key)
        for deep in ch.deeper:
            assert re.fullmatch(rf"notebooks/deeper/{ch.key}_[a-z0-9_]+\.ipynb", deep.path)
            assert deep.title and deep.title_zh and deep.question and deep.question_zh


@pytest.mark.parametrize("item", ENTRIES, ids=_id)
def test_the_stated_minutes_are_the_models(item):
    _ch, entry = item
    modelled = course_plan.modelled(entry, PACE)
    assert entry.minutes == modelled, (
        f"course.toml says {entry.minutes} min for {entry.path}, the reading-pace model "
        f"{modelled}: run python -m tools.authoring times"
    )


def _notebooks(entry):
    paths = [entry.path]
    if entry.path.startswith("solutions/"):
        paths.append(entry.path.replace("solutions/", "exercises/", 1))
    return [(lang, ROOT / pre / p) for p in paths for lang, pre in course_plan.LANG_DIRS]


@pytest.mark.parametrize("item", ENTRIES, ids=_id)
def test_every_notebook_prints_its_time_from_the_plan_in_both_languages(item):
    ch, entry = item
    cell_id = course_plan.time_cell_id(ch, entry)
    for lang, path in _notebooks(entry):
        assert path.exists(), f"{path.relative_to(ROOT)} is missing"
        cells = nbformat.read(path, as_version=4).cells
        found = [c for c in cells if c.id == cell_id]
        where = f"{path.relative_to(ROOT)}#{cell_id}"
        assert found, f"{where} is missing: python -m tools.authoring times"
        assert PLAN_TAG in found[0].metadata.get("tags", []), where
        assert found[0].source == course_plan.time_line(ch, entry, lang), (
            f"{where} is not what course.toml says: python -m tools.authoring times"
        )
        # the time cell sits right after the opening cell (its language cell aside)
        opening = [c for c in cells if c.id != translate.LANGUAGE_CELL_ID]
        assert opening[1].id == cell_id, where


@pytest.mark.parametrize("item", ENTRIES, ids=_id)
def test_no_other_cell_of_the_opening_states_a_time(item):
    """The time lives in the plan cell only: a time typed into prose would drift from the plan."""
    for lang, path in _notebooks(item[1]):
        cells = nbformat.read(path, as_version=4).cells[:4]
        for cell in cells:
            if cell.cell_type != "markdown" or PLAN_TAG in cell.metadata.get("tags", []):
                continue
            typed = r"\d+\s*分钟" if lang == "zh" else r"about \d+ minutes|\*\*Time\*\*"
            assert not re.search(typed, cell.source), f"{path.relative_to(ROOT)}#{cell.id}"


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_start_pages_map_is_the_plans(lang):
    path = ROOT / ("zh" if lang == "zh" else "") / "notebooks" / "00_start_here.ipynb"
    cells = {c.id: c for c in nbformat.read(path, as_version=4).cells}
    assert course_plan.MAP_CELL in cells, f"{path}: no map: python -m tools.authoring times"
    table = cells[course_plan.MAP_CELL].source
    assert table == course_plan.map_table(CHAPTERS, lang)
    for ch in CHAPTERS[1:]:  # core chapters in order, deep dives as optional branches
        assert f"| {int(ch.key)} | {ch.text('title', lang)} |" in table
        for deep in ch.deeper:
            assert "↳" in table and f"(deeper/{deep.stem}.ipynb)" in table
    rows = [line for line in table.splitlines() if re.match(r"\| \d", line)]
    assert [int(r.split("|")[1]) for r in rows] == list(range(1, len(CHAPTERS)))


def test_the_readme_prints_the_plans_times():
    text = course_plan.README.read_text(encoding="utf-8")
    assert course_plan.readme_block(CHAPTERS) in text, "python -m tools.authoring times"


def test_the_translation_generator_and_the_plan_share_the_tag():
    assert translate.PLAN_TAG == course_plan.PLAN_TAG


def test_plan_cells_are_in_no_catalog_so_a_time_never_makes_a_translation_stale():
    for catalog, notebooks in translate.groups():
        ids = set(translate.read_catalog(catalog))
        for path in notebooks:
            tagged = {
                c.id
                for c in nbformat.read(path, as_version=4).cells
                if PLAN_TAG in c.metadata.get("tags", [])
            }
            assert not ids & tagged, catalog


def test_the_model_adds_its_terms_and_rounds_to_five_minutes():
    pace = {
        "words_per_minute": 200,
        "seconds_per_code_line": 6,
        "seconds_per_figure": 30,
        "minutes_per_coding_question": 6,
        "minutes_per_concept_question": 1,
    }
    feats = course_plan.Features(words=2000, code_lines=100, figures=4)
    assert course_plan.model_minutes(feats, run_s=60, pace=pace) == 10 + 10 + 2 + 1
    exercises = course_plan.Features(200, 10, 0, coding_questions=5, concept_questions=4)
    assert course_plan.model_minutes(exercises, 0, pace) == 1 + 1 + 30 + 4
    assert [course_plan.round5(m) for m in (0.4, 7.4, 7.5, 62.4, 62.6)] == [5, 5, 10, 60, 65]


def test_the_pace_is_the_fit_to_the_recorded_cold_reads():
    """[pace] holds the least-squares fit to course.toml's [[calibration]] estimates, rounded (within
    5 %), and a code line's seconds are the time of words_per_code_line words at that speed. The
    cores, whose hour is a floor, are fitted within 4 minutes rms; the exercise estimates are the
    roughest (readers gave ranges of 10 to 15 minutes), so the whole fit is held within 7."""
    pace, _ = course_plan.load()
    fit = course_plan.fit_pace()
    assert fit.estimates >= 14 and fit.rms < 7, fit
    assert pace["words_per_minute"] == pytest.approx(fit.words_per_minute, rel=0.05), fit
    assert pace["minutes_per_coding_question"] == pytest.approx(
        fit.minutes_per_coding_question, rel=0.05
    ), fit
    per_line = pace["words_per_code_line"] * 60 / pace["words_per_minute"]
    assert pace["seconds_per_code_line"] == pytest.approx(per_line, abs=0.05)
    records = tomllib.loads(course_plan.PLAN.read_text(encoding="utf-8"))["calibration"]
    misses = [
        course_plan.model_minutes(*course_plan.read_as(r), pace) - r["minutes"]
        for r in records
        if r["path"].startswith("notebooks/")
    ]
    assert len(misses) >= 8 and math.sqrt(sum(m * m for m in misses) / len(misses)) < 4, misses


def test_a_calibration_record_keeps_the_notebook_as_it_was_read(tmp_path):
    """The fit reads each estimate's recorded counts, never the notebook as it is now: a record
    without them is refused with a sentence naming what to do."""
    plan = course_plan.PLAN.read_text(encoding="utf-8")
    cut = tmp_path / "course.toml"
    cut.write_text(re.sub(r"\nwords = \d+\n", "\n", plan, count=1), encoding="utf-8")
    with pytest.raises(ValueError, match="lacks words: record the notebook as it was read"):
        course_plan.fit_pace(cut)
    record = course_plan.record_calibration("notebooks/01_order_blindness.ipynb", 60, "a read")
    entry = tomllib.loads(record)["calibration"][0]
    feats, run_s = course_plan.read_as(entry)
    assert feats == course_plan.features(course_plan.ROOT / entry["path"]) and run_s > 0


def test_the_fit_refuses_a_plan_with_too_few_estimates(tmp_path):
    plan = course_plan.PLAN.read_text(encoding="utf-8")
    cut = tmp_path / "course.toml"
    cut.write_text(plan[: plan.index("\n[[calibration]]\n")], encoding="utf-8")
    with pytest.raises(ValueError, match="the fit needs at least 3"):
        course_plan.fit_pace(cut)


def test_a_deep_dive_opens_with_what_it_assumes_and_answers_and_its_core_links_to_it():
    for ch in CHAPTERS:
        core = nbformat.read(ROOT / ch.lecture.path, as_version=4).cells
        for deep in ch.deeper:
            for lang, path in (("en", ROOT / deep.path), ("zh", ROOT / "zh" / deep.path)):
                opening = next(c for c in nbformat.read(path, as_version=4).cells)
                assert f"(../{ch.lecture.stem}.ipynb)" in opening.source, path
                words = ("前提", "要回答") if lang == "zh" else ("It assumes", "It answers")
                assert all(w in opening.source for w in words), path
            # linked from the core at the point a reader asks, not only from the time line
            links = [
                c.id
                for c in core
                if f"(deeper/{deep.stem}.ipynb)" in c.source
                and PLAN_TAG not in c.metadata.get("tags", [])
            ]
            assert links, f"{ch.lecture.path} never links to {deep.path} in its prose"
