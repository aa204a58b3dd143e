"""The grader against an attack suite: every submission gets its right row and no unearned points.

All attack submissions (``attack_notebooks.py``) are graded in one batch (two workers, one
forkserver) at module scope; each test then reads its own row. Then every chapter end to end
(``policy_notebooks.py``): the worked solutions, the type policy, side effects and shortcuts.
Each batch takes tens of seconds, so every test that reads them lives in this one file: under
``--dist loadfile`` each is graded once, by one pytest worker.
"""

import csv
import json
import re
import time
from pathlib import Path

import pytest
from attack_notebooks import FULL, ROOT, SEED, TIMEOUT, UNSCALED_ATTENTION, attack_submissions
from policy_notebooks import POLICY_SEEDS, filled, policy_submissions

from posenc_lib.checks.ch01 import q1
from posenc_lib.grading.grader import grade_all
from posenc_lib.grading.sheet import write_sheet
from posenc_lib.grading.submissions import chapters

INTERNAL_NAMES = re.compile(r"_TimedOut|SwitchedOff|TooMany|Collected|Outcome|_Opaque|Traceback")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    sheet, canary = folder / "grades.csv", folder / "canary.txt"
    attacks = attack_submissions(sheet, canary)
    paths = []
    for name, (text, *_) in attacks.items():  # the last one is a target of an earlier one
        path = folder / (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + ".ipynb")
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    exercises = sorted((ROOT / "exercises").glob("*.ipynb"))
    rows = grade_all(paths + exercises, SEED, timeout=TIMEOUT, workers=2, memory_mb=512)
    write_sheet(rows, sheet)
    time.sleep(4)  # longer than the process left behind would wait before writing
    by_name = dict(zip(attacks, rows, strict=False))
    return attacks, by_name, rows[len(attacks) :], exercises, sheet, canary


ATTACK_NAMES = list(attack_submissions(Path("/x"), Path("/y")))


@pytest.mark.parametrize("name", ATTACK_NAMES)
def test_each_submission_ends_with_its_right_row(graded, name):
    attacks, rows, *_ = graded
    _, status, score, points = attacks[name]
    row = rows[name]
    assert (row.status, row.score) == (status, score), (row.reason, [str(v) for v in row.verdicts])
    if status != "invalid":
        assert row.chapter == "01" and row.max_score == FULL
        for question, expected in (points or {}).items():
            assert next(v.points for v in row.verdicts if v.question == question) == expected


def test_every_shipped_exercise_grades_to_zero_and_ok(graded):
    *_, exercise_rows, exercises, _, _ = graded
    assert len(exercise_rows) == len(exercises) >= 1
    for path, row in zip(exercises, exercise_rows, strict=True):
        assert (row.status, row.score) == ("ok", 0), (path.name, row.reason)
        assert row.chapter == path.name[:2] and row.max_score > 0
        assert all(v.status == "not attempted" for v in row.verdicts)


def test_the_sheet_has_one_row_per_submission_and_nothing_written_by_them(graded):
    attacks, _, exercise_rows, _, sheet, canary = graded
    with sheet.open(encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    assert lines[0][:5] == ["submission", "chapter", "status", "score", "max_score"]
    assert lines[0][5:10] == ["q1", "q2", "q3", "q4", "q5"]
    assert len(lines) == 1 + len(attacks) + len(exercise_rows)
    assert not any("999" in cell for line in lines for cell in line)
    assert not canary.exists(), "a process a submission started outlived its grading"
    assert not (sheet.parent / "pickle-canary").exists(), "the parent unpickled learner data"
    assert not (sheet.parent / "atexit-canary").exists(), "a submission's atexit hook ran"


def test_feedback_gives_the_sentences_check_gives(graded):
    _, rows, *_ = graded
    namespace = {}
    exec("import torch\n" + UNSCALED_ATTENTION, namespace)
    in_class = q1.evaluate(namespace["attention"]).message
    assert "unscaled" in in_class
    feedback = rows["unscaled scores"].feedback()
    assert feedback["questions"][0]["message"] == in_class
    assert rows["a wrong signature"].verdicts[0].message.startswith("`attention` raised TypeError")


def test_the_reason_says_what_happened(graded):
    _, rows, *_ = graded
    assert "os._exit" in rows["os._exit before the functions"].reason
    assert "did not finish within" in rows["infinite loop that swallows every interrupt"].reason
    assert "np.allclose" in rows["patch numpy and torch comparisons"].reason.replace("numpy", "np")
    assert "metadata.posenc.chapter" in rows["an empty notebook"].reason
    assert "call" in rows["patch only the runner's call"].reason
    assert "ch01" in rows["replace the chapter module in sys.modules"].reason
    assert "garbled" in rows["send a pickle down the grading channel"].reason
    assert "not valid JSON" in rows["invalid JSON"].reason
    assert rows["memory bomb at once"].failed_cells[0].startswith("cell 2: MemoryError")


def test_a_class_shows_a_tqdm_bar_when_asked_and_none_in_a_pipe(tmp_path, capsys):
    from tqdm.auto import tqdm

    from posenc_lib.grading import grader

    assert grader.tqdm is tqdm  # tqdm.auto: the widget inside Jupyter, text on a terminal
    paths = []
    for n in range(3):  # invalid files: graded without starting a child
        paths.append(tmp_path / f"{n}.ipynb")
        paths[-1].write_text("{}", encoding="utf-8")
    rows = grade_all(paths, SEED, progress=True)
    printed, errors = capsys.readouterr()
    assert [r.status for r in rows] == ["invalid"] * 3
    assert printed == "" and "grading: 100%" in errors and "3/3" in errors
    for progress in (None, False):  # None: a bar only on a terminal; pytest's stderr is not one
        grade_all(paths, SEED, progress=progress)
        assert capsys.readouterr() == ("", "")


# -- every chapter, end to end: the worked solutions, the type policy, side effects, shortcuts -----


@pytest.fixture(scope="module")
def policy_graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("policy")
    attacks = policy_submissions()
    paths = []
    for name, (_, text, _) in attacks.items():
        path = folder / (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + ".ipynb")
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    solved = []
    for chapter in chapters():
        path = folder / f"solved-{chapter}.ipynb"
        path.write_text(filled(chapter), encoding="utf-8")
        solved.append(path)
    rows = grade_all(paths + solved, POLICY_SEEDS[0], timeout=60.0, workers=2)
    by_seed = {POLICY_SEEDS[0]: rows[len(paths) :]}
    for seed in POLICY_SEEDS[1:]:
        by_seed[seed] = grade_all(solved, seed, timeout=60.0, workers=2)
    return attacks, dict(zip(attacks, rows, strict=False)), by_seed


@pytest.mark.parametrize("seed", POLICY_SEEDS)
def test_every_worked_solution_earns_full_marks_from_the_grader(policy_graded, seed):
    *_, by_seed = policy_graded
    for row in by_seed[seed]:
        failed = [str(v) for v in row.verdicts if not v.passed]
        assert (row.status, row.score) == ("ok", row.max_score), (row.submission, failed)
        assert row.failed_cells == [], row.failed_cells


@pytest.mark.parametrize("name", list(policy_submissions()))
def test_near_misses_side_effects_and_shortcuts_earn_nothing(policy_graded, name):
    attacks, rows, _ = policy_graded
    _, _, lost = attacks[name]
    row = rows[name]
    points = {v.question: v.points for v in row.verdicts}
    full = {v.question: v.max_points for v in row.verdicts}
    assert row.status == "ok", row.reason
    assert points == {**full, **lost}, [str(v) for v in row.verdicts]


def test_the_feedback_names_the_near_miss_the_side_effect_and_the_shortcut(policy_graded):
    _, rows, _ = policy_graded

    def message(name, question):
        return next(v.message for v in rows[name].verdicts if v.question == question)

    assert "returned a NumPy array, but the question asks for a torch tensor" in message(
        "near miss: a NumPy array for a tensor", "q1"
    )
    assert "not in increasing order" in message("near miss: rows in decreasing order", "q5")
    assert "changed its argument `x` in place" in message(
        "side effect: the input changed in place", "q4"
    )
    shortcut = message("shortcut: a reference imported into the notebook", "q1")
    assert "`posenc_lib.attention.self_attention` is switched off" in shortcut
    assert "write `alibi_slopes` yourself" in message(
        "shortcut: a reference through its module", "q1"
    )
    helper = message("shortcut: a helper of the checks module", "q3")
    assert "`posenc_lib.checks.ch01.equivariance._gap` is switched off" in helper, helper
    assert "spread of |score|" in message("known wrong: the spread of |score|", "q2")
    ignored = message("known wrong: YaRN's attention_factor ignored", "q1")
    assert "gives its own attention_factor" in ignored, ignored


def test_feedback_never_shows_an_internal_name(graded, policy_graded):
    _, attack_rows, exercise_rows, *_ = graded
    _, policy_rows, by_seed = policy_graded
    rows = [*attack_rows.values(), *exercise_rows, *policy_rows.values()]
    rows += [row for seed_rows in by_seed.values() for row in seed_rows]
    for row in rows:
        feedback = row.feedback()
        if row.status == "tampered":  # the reason lists what the notebook itself replaced
            feedback.pop("reason")
        text = json.dumps(feedback)
        assert not INTERNAL_NAMES.search(text), (row.submission, text[:2000])
    stopped = attack_rows["infinite loop in a cell"].failed_cells
    assert stopped and "did not finish within" in stopped[0], stopped
