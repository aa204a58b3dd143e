"""The start page's chapter times are each lecture's own estimate plus its exercises', in both
editions, and each lecture's exercise time is the one its exercises notebook states."""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[2]
LECTURES = sorted((ROOT / "notebooks").glob("0[1-9]_*.ipynb"))


def markdown(path: Path) -> str:
    cells = nbformat.read(path, as_version=4).cells
    return "\n".join(c.source for c in cells if c.cell_type == "markdown")


def lecture_times(path: Path) -> tuple[int, int]:
    """(lecture minutes, exercise minutes) as the lecture's opening states them."""
    found = re.search(r"about (\d+) minutes, plus (\d+) for the exercises", markdown(path))
    assert found, f"{path.name} should state 'about N minutes, plus M for the exercises'"
    return int(found[1]), int(found[2])


def start_page_times(path: Path, unit: str) -> dict[int, int]:
    """{chapter: minutes} from the start page's map."""
    rows = re.findall(rf"^\| (\d) \|.*\| (\d+) {unit} \|", markdown(path), re.M)
    return {int(chapter): int(minutes) for chapter, minutes in rows}


@pytest.mark.parametrize(
    "start, unit",
    [("notebooks/00_start_here.ipynb", "min"), ("zh/notebooks/00_start_here.ipynb", "分钟")],
)
def test_the_start_page_adds_each_lectures_time_and_its_exercises(start, unit):
    expected = {int(p.name[:2]): sum(lecture_times(p)) for p in LECTURES}
    assert start_page_times(ROOT / start, unit) == expected


@pytest.mark.parametrize("lecture", LECTURES, ids=lambda p: p.stem)
def test_the_lecture_states_the_exercise_time_the_exercises_notebook_states(lecture):
    exercises = ROOT / "exercises" / lecture.name
    stated = re.search(r"about (\d+) minutes", markdown(exercises))
    assert stated, f"{exercises.name} should state its time ('about N minutes')"
    assert lecture_times(lecture)[1] == int(stated[1])
