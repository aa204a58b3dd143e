"""Two teachers grading two classes at the same time on one hub do not collide.

On a hub, every teacher's ``posenc-grade`` runs on the same machine: the same temporary folder for
the sandboxes' scratch folders, the same shared cache of chapter 8's converted model, the same
working folder with one sub-folder per class. Here two ``posenc-grade`` processes start together
on two classes collected from learners' home folders laid out as ``make hub`` lays them out
(``users/<name>/exercises/``). Both classes have chapter 8 and the model cache starts empty, so
both graders ask for the converted model at the same moment (``smollm.convert``: the first converts
while holding a lock beside the cache, the other waits for it and then reads the same model).

Each sheet must then hold exactly its own class, each learner graded as when graded alone
(worked solutions earn full marks, a wrong ``attention`` loses q1 and nothing else, an untouched
exercise earns nothing), the cache one complete model and no half-written copy, and the shared
temporary folder no scratch folder left behind.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from attack_notebooks import ROOT, WRONG_ATTENTION, solutions_with
from policy_notebooks import filled

from posenc_lib.models.smollm import CACHE_FILES, CACHE_NAME

# class -> learner -> (chapter, what the learner saved, what the sheet should say)
CLASSES = {
    "class-a": {
        "ann": ("01", lambda: filled("01"), "full"),
        "bo": ("01", lambda: solutions_with(replace=("attention", WRONG_ATTENTION)), "q1 wrong"),
        "cai": ("08", lambda: filled("08"), "full"),
    },
    "class-b": {
        "dee": ("08", lambda: filled("08"), "full"),
        "eli": ("03", lambda: filled("03"), "full"),
        "fox": ("08", lambda: next((ROOT / "exercises").glob("08_*.ipynb")).read_text(), "none"),
    },
}


def _exercise_name(chapter: str) -> str:
    return next((ROOT / "exercises").glob(f"{chapter}_*.ipynb")).name


@pytest.mark.timeout(900)  # a fresh conversion of chapter 8's model and two classes, 2 cores
def test_two_classes_graded_at_once_share_the_machine_without_collisions(tmp_path, request):
    hub = tmp_path / "hub"
    for group in CLASSES.values():  # each learner's saved exercise in their own home folder
        for learner, (chapter, text, _) in group.items():
            path = hub / "users" / learner / "exercises" / _exercise_name(chapter)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text(), encoding="utf-8")
    teacher = hub / "teacher"  # both teachers work here, one folder per class
    for name, group in CLASSES.items():
        for learner, (chapter, _, _) in group.items():
            source = hub / "users" / learner / "exercises" / _exercise_name(chapter)
            target = teacher / name / "submissions" / f"{learner}-{source.name}"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, target)
    cache = tmp_path / "model-cache"
    # One temporary folder for both graders, with a short path: each grader's forkserver listens on
    # a Unix socket inside it, and a socket's path must fit in 107 bytes (pytest's tmp_path under
    # xdist does not leave room).
    shared_tmp = Path(tempfile.mkdtemp(prefix="grade-tmp-"))
    request.addfinalizer(lambda: shutil.rmtree(shared_tmp, ignore_errors=True))
    env = dict(os.environ, POSENC_CACHE=str(cache), TMPDIR=str(shared_tmp), OMP_NUM_THREADS="1")
    grader = Path(sys.executable).with_name("posenc-grade")
    runs = {
        name: subprocess.Popen(
            [
                str(grader),
                f"{name}/submissions",
                "--out",
                f"{name}/grades.csv",
                "--json",
                f"{name}/feedback",
                "--report",
                f"{name}/class.html",
                "--seed",
                "2026",
                "--workers",
                "1",
                "--timeout",
                "120",
            ],
            cwd=teacher,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        for name in CLASSES
    }
    errors = {}  # each grader's stderr: where it prints a failure's traceback for the teacher
    for name, run in runs.items():
        out, err = run.communicate(timeout=840)
        errors[name] = err
        assert run.returncode == 0, (name, out, err[-3000:])
        assert f"Graded {len(CLASSES[name])} submissions" in out, (name, out)

    for name, group in CLASSES.items():
        rows = list(csv.DictReader((teacher / name / "grades.csv").open(encoding="utf-8")))
        graded = {row["submission"].split("-", 1)[0]: row for row in rows}
        assert set(graded) == set(group), (name, sorted(graded))  # its own class, no one else's
        for learner, (chapter, _, expected) in group.items():
            row = graded[learner]
            assert (row["chapter"], row["status"]) == (chapter, "ok"), (row, errors[name][-3000:])
            feedback = next((teacher / name / "feedback").glob(f"{learner}-*.json"))
            questions = json.loads(feedback.read_text(encoding="utf-8"))["questions"]
            lost = {q["question"] for q in questions if q["points"] < q["max_points"]}
            if expected == "full":
                assert row["score"] == row["max_score"] and not lost, (learner, row, lost)
            elif expected == "q1 wrong":
                assert lost == {"q1"}, (learner, lost)
            else:
                assert int(row["score"]) == 0, (learner, row)
        assert (teacher / name / "class.html").stat().st_size > 0
        assert len(list((teacher / name / "feedback").iterdir())) == len(group)

    assert sorted(p.name for p in cache.iterdir()) == [CACHE_NAME]  # no half-written copy left
    assert all((cache / CACHE_NAME / f).is_file() for f in CACHE_FILES)
    assert [p.name for p in shared_tmp.iterdir() if p.name.startswith("posenc-grade-")] == []
