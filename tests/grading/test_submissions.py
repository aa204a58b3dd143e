"""What the grader is handed: the files named, their names on the sheet, each one's chapter."""

from attack_notebooks import ROOT, solutions_with

from posenc_lib.grading.submissions import chapters, read_submission


def test_a_renamed_file_is_graded_by_its_metadata(tmp_path):
    path = tmp_path / "homework final (1).txt"
    path.write_text(solutions_with(), encoding="utf-8")
    chapter, cells = read_submission(path, chapters())
    assert chapter == "01" and any("def attention(" in c for c in cells)


def test_the_grader_finds_every_chapter_with_checks():
    found = chapters()
    assert "01" in found
    solutions = {p.name[:2] for p in (ROOT / "solutions").glob("*.ipynb")}
    assert solutions <= set(found)


def test_submissions_from_several_folders_keep_their_folder_in_the_name(tmp_path):
    from posenc_lib.grading.submissions import submissions

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "01.ipynb").write_text("{}", encoding="utf-8")
    names = [name for _, name in submissions([tmp_path / "a", tmp_path / "b"])]
    assert names == ["a/01.ipynb", "b/01.ipynb"]
    assert [name for _, name in submissions([tmp_path / "a"])] == ["01.ipynb"]
