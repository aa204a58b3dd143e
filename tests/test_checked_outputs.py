"""Nothing printed is lost (issue 35): every checked output the lectures printed when the manifest
was made is printed still, word for word, by a checked cell of the same id somewhere under
notebooks/ (a core lecture or a deep dive), so chapters can be cut into a core and deep dives
without losing a measurement.

The manifest, ``tests/data/checked_outputs.json``, maps each ``# NBVAL_CHECK_OUTPUT`` cell's id to
the notebook it was in and its printed text. A deliberate change (a fix changed a number) goes
through ``python -m tools.authoring outputs ID``, which rewrites that entry; a cell is forgotten
only with ``--drop ID``. A move from a core lecture to a deep dive needs no update.
"""

from __future__ import annotations

import json

import nbformat
import pytest

from tools.authoring import (
    CHECKED_OUTPUTS,
    ROOT,
    checked_cells,
    lecture_notebooks,
    read_manifest,
    update_manifest,
)

MANIFEST = read_manifest()
CELLS = checked_cells()


def test_the_manifest_holds_the_course_checked_outputs():
    assert len(MANIFEST) >= 181, "the manifest lost entries: see python -m tools.authoring outputs"


@pytest.mark.parametrize("cell_id", sorted(MANIFEST))
def test_each_checked_output_is_still_printed_by_a_checked_cell(cell_id):
    entry = MANIFEST[cell_id]
    assert cell_id in CELLS, (
        f"checked cell {cell_id} (in {entry['notebook']} when the manifest was made) is in no "
        "notebook under notebooks/ as a checked cell: move it with its id, keep its "
        "# NBVAL_CHECK_OUTPUT mark, or drop it by name (python -m tools.authoring outputs "
        f"--drop {cell_id}) saying why in the commit"
    )
    where, text = CELLS[cell_id][0]
    assert text == entry["text"], (
        f"{where}#{cell_id} prints other text than the manifest; a deliberate change: "
        f"python -m tools.authoring outputs {cell_id}"
    )


def test_every_checked_cell_is_in_the_manifest():
    new = sorted(set(CELLS) - set(MANIFEST))
    assert not new, (
        f"checked cells not in the manifest yet: {new}: python -m tools.authoring outputs"
    )


def test_cell_ids_are_unique_across_the_lectures_and_deep_dives():
    seen: dict[str, str] = {}
    twice = []
    for path in lecture_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            where = path.relative_to(ROOT).as_posix()
            if cell.id in seen:
                twice.append(f"{cell.id}: {seen[cell.id]} and {where}")
            seen[cell.id] = where
    assert not twice, "cell ids used twice under notebooks/: " + "; ".join(twice)


def _notebook(path, cells):
    notebook = nbformat.v4.new_notebook()
    for cell_id, text in cells:
        cell = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)")
        cell.id = cell_id
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        notebook.cells.append(cell)
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


def test_the_update_command_moves_adds_and_rewrites_only_what_it_is_told(tmp_path):
    manifest = tmp_path / "m.json"
    _notebook(tmp_path / "notebooks" / "02_x.ipynb", [("a", "1\n"), ("b", "2\n")])
    update_manifest(root=tmp_path, path=manifest)
    assert json.loads(manifest.read_text())["a"] == {
        "notebook": "notebooks/02_x.ipynb",
        "text": "1\n",
    }
    # moved to a deep dive: recorded without being named
    _notebook(tmp_path / "notebooks" / "02_x.ipynb", [("b", "2\n")])
    _notebook(tmp_path / "notebooks" / "deeper" / "02_y.ipynb", [("a", "1\n")])
    assert update_manifest(root=tmp_path, path=manifest) == [
        "moved a: notebooks/02_x.ipynb -> notebooks/deeper/02_y.ipynb"
    ]
    # a changed number is refused unless named, and then rewritten
    _notebook(tmp_path / "notebooks" / "02_x.ipynb", [("b", "3\n")])
    with pytest.raises(ValueError, match="outputs b"):
        update_manifest(root=tmp_path, path=manifest)
    update_manifest(["b"], root=tmp_path, path=manifest)
    assert json.loads(manifest.read_text())["b"]["text"] == "3\n"
    # a lost cell is refused unless dropped by name
    _notebook(tmp_path / "notebooks" / "02_x.ipynb", [])
    with pytest.raises(ValueError, match="--drop b"):
        update_manifest(root=tmp_path, path=manifest)
    assert "b" in json.loads(manifest.read_text())
    update_manifest(drop=["b"], root=tmp_path, path=manifest)
    assert sorted(json.loads(manifest.read_text())) == ["a"]


def test_the_manifest_is_the_committed_file():
    assert CHECKED_OUTPUTS == ROOT / "tests" / "data" / "checked_outputs.json"
