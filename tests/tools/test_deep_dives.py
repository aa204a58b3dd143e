"""Moving cells from a core lecture into a deep dive (python -m tools.authoring move): the cells keep
their ids, outputs and order, and their Chinese entries move with them, fingerprints kept."""

from __future__ import annotations

import nbformat
import pytest

from tools import authoring, translate


@pytest.fixture
def course(tmp_path, monkeypatch):
    monkeypatch.setattr(authoring, "ROOT", tmp_path)
    monkeypatch.setattr(translate, "ROOT", tmp_path)
    monkeypatch.setattr(translate, "CATALOGS", tmp_path / "translations" / "zh")
    core = nbformat.v4.new_notebook(metadata={"posenc": {"chapter": "03", "kind": "lecture"}})
    for cell_id, kind in (("a", "markdown"), ("b", "code"), ("c", "markdown"), ("d", "code")):
        cell = (nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell)(
            f"text of {cell_id}"
        )
        cell.id = cell_id
        core.cells.append(cell)
    (tmp_path / "notebooks").mkdir()
    path = tmp_path / "notebooks" / "03_x.ipynb"
    path.write_text(authoring.render(core), encoding="utf-8")
    entries = [
        translate.Entry(i, translate.fingerprint(f"text of {i}"), f"中文 {i}", True) for i in "ac"
    ]
    translate.write_catalog(translate.CATALOGS / "notebooks" / "03_x.md", entries, ["x"])
    return tmp_path


def test_cells_move_with_their_translations(course):
    deep = course / "notebooks" / "deeper" / "03_more.ipynb"
    authoring.move_cells("notebooks/03_x.ipynb", "notebooks/deeper/03_more.ipynb", ["c", "d"])
    left = nbformat.read(course / "notebooks" / "03_x.ipynb", as_version=4)
    moved = nbformat.read(deep, as_version=4)
    assert [c.id for c in left.cells] == ["a", "b"]
    assert [c.id for c in moved.cells] == ["c", "d"]
    assert moved.metadata["posenc"] == {"chapter": "03", "kind": "deeper"}
    core_zh = translate.read_catalog(course / "translations/zh/notebooks/03_x.md")
    deep_zh = translate.read_catalog(course / "translations/zh/notebooks/deeper/03_more.md")
    assert list(core_zh) == ["a"] and list(deep_zh) == ["c"]
    assert deep_zh["c"].text == "中文 c" and deep_zh["c"].fingerprint == translate.fingerprint(
        "text of c"
    )
    assert not [p for p in translate.cell_problems() if p.kind != "missing"]


def test_a_missing_cell_moves_nothing(course):
    with pytest.raises(ValueError, match="no cell"):
        authoring.move_cells("notebooks/03_x.ipynb", "notebooks/deeper/03_more.ipynb", ["zz"])
    assert not (course / "notebooks" / "deeper").exists()
