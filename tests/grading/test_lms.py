"""Grade sheets for Canvas and Moodle: the documented column layouts (the samples in docs/samples/
are what the code writes), learners from file names or a roster, and a clear error for a
submission no roster row claims."""

import csv
import io
from pathlib import Path

import pytest
from attack_notebooks import FULL, SEED, UNSCALED_ATTENTION, solutions_with

from posenc_lib.grading.cli import main
from posenc_lib.grading.lms import lms_sheet, read_roster
from posenc_lib.grading.sheet import Row

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "docs" / "samples"
# The class of the documentation's samples: three learners, two chapters, one notebook that
# could not be graded (no chapter: nowhere to put it).
ROWS = [
    Row("ada.ipynb", "01", "ok", 12, 12),
    Row("ben.ipynb", "01", "ok", 9, 12),
    Row("Cai.ipynb", "01", "timeout", 0, 12, reason="the notebook did not finish within 60 s"),
    Row("ada-05.ipynb", "", "invalid", reason="no chapter"),
    Row("sub/ben.ipynb", "05", "ok", 10, 10),
]


def _table(text):
    return list(csv.reader(io.StringIO(text)))


def test_canvas_layout_one_row_per_learner_a_column_per_chapter():
    table = _table(lms_sheet(ROWS, "canvas", read_roster(SAMPLES / "roster.csv")))
    assert table[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section",
                        "Chapter 01 exercises (posenc)", "Chapter 05 exercises (posenc)"]  # fmt: skip
    assert table[1] == ["Lovelace, Ada", "1001", "S-0001", "ada", "Section A", "12", ""]
    assert table[2] == ["Okafor, Ben", "1002", "S-0002", "ben", "Section A", "9", "10"]
    assert table[3] == ["Chen, Cai", "1003", "S-0003", "cai", "Section B", "0", ""]
    assert len(table) == 4


def test_moodle_layout_identifies_learners_by_email_id_number_or_username():
    table = _table(lms_sheet(ROWS, "moodle", read_roster(SAMPLES / "roster.csv")))
    assert table[0] == ["Full name", "Email address", "ID number", "Username",
                        "Chapter 01 exercises (posenc)", "Chapter 05 exercises (posenc)"]  # fmt: skip
    assert table[2] == ["Okafor, Ben", "ben@example.edu", "0002", "ben", "9", "10"]


@pytest.mark.parametrize("lms", ["canvas", "moodle"])
def test_the_documented_samples_are_what_the_code_writes(lms):
    written = lms_sheet(ROWS, lms, read_roster(SAMPLES / "roster.csv"))
    sample = (SAMPLES / f"grades-{lms}.csv").read_bytes().decode("utf-8")  # CRLF, as csv writes
    assert written == sample, f"docs/samples/grades-{lms}.csv is out of date"


def test_without_a_roster_the_file_name_is_the_learner():
    table = _table(lms_sheet(ROWS, "canvas"))
    assert [row[0] for row in table[1:]] == ["ada", "ben", "cai"]
    assert [row[3] for row in table[1:]] == ["ada", "ben", "cai"]  # SIS Login ID


def test_a_submission_no_roster_row_claims_is_named():
    roster = read_roster(SAMPLES / "roster.csv")
    with pytest.raises(ValueError, match=r"1 submission\(s\) match no roster row: dan\.ipynb"):
        lms_sheet([*ROWS, Row("dan.ipynb", "01", "ok", 3, 12)], "canvas", roster)


def test_two_submissions_of_one_chapter_by_one_learner_are_refused():
    with pytest.raises(ValueError, match="two submissions of chapter 01 belong to 'ada'"):
        lms_sheet([*ROWS, Row("late/ada.ipynb", "01", "ok", 3, 12)], "moodle")


def test_a_formula_in_a_name_is_not_run_by_a_spreadsheet(tmp_path):
    roster = tmp_path / "r.csv"
    roster.write_text('file,name\nada,=HYPERLINK("x")\n', encoding="utf-8")
    text = lms_sheet([Row("ada.ipynb", "01", "ok", 1, 12)], "canvas", read_roster(roster))
    assert _table(text)[1][0] == '\'=HYPERLINK("x")'


@pytest.mark.parametrize(
    "content, message",
    [
        ("name,email\nAda,a@x\n", "needs a 'file' column"),
        ("file,name\n,Ada\n", "line 2 .* has no file name"),
        ("file,name\nada,Ada\nada.ipynb,Ada again\n", "names 'ada.ipynb' twice"),
    ],
)
def test_a_bad_roster_gets_a_sentence(tmp_path, content, message):
    path = tmp_path / "roster.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ValueError, match=message):
        read_roster(path)
    with pytest.raises(ValueError, match="does not exist"):
        read_roster(tmp_path / "missing.csv")


def test_the_command_checks_the_roster_before_grading(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "dan.ipynb").write_text(solutions_with(), encoding="utf-8")
    with pytest.raises(SystemExit):
        main([str(folder), "--roster", str(SAMPLES / "roster.csv"), "--lms", "canvas"])
    assert "match no roster row: dan.ipynb" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(folder), "--lms", "blackboard"])
    assert "invalid choice: 'blackboard'" in capsys.readouterr().err


def test_the_command_writes_both_lms_sheets_beside_the_grade_sheet(tmp_path, capsys):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "ada.ipynb").write_text(solutions_with(), encoding="utf-8")
    (folder / "ben.ipynb").write_text(solutions_with(replace=("attention", UNSCALED_ATTENTION)),
                                      encoding="utf-8")  # fmt: skip
    out = tmp_path / "grades.csv"
    code = main([str(folder), "--seed", str(SEED), "--out", str(out), "--timeout", "20",
                 "--roster", str(SAMPLES / "roster.csv"), "--lms", "canvas", "--lms", "moodle"])  # fmt: skip
    assert code == 0
    canvas = _table((tmp_path / "grades-canvas.csv").read_text(encoding="utf-8"))
    moodle = _table((tmp_path / "grades-moodle.csv").read_text(encoding="utf-8"))
    assert [r[0] for r in canvas[1:]] == ["Lovelace, Ada", "Okafor, Ben"]
    scores = [str(FULL), str(FULL - 3)]  # ben's attention is unscaled: q1's 3 points lost
    assert [r[-1] for r in canvas[1:]] == scores and [r[-1] for r in moodle[1:]] == scores
    assert "Canvas sheet:" in capsys.readouterr().out
