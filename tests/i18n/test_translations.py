"""The Chinese edition cannot drift from the English: stale, missing and hand-edited translations fail.

Each cell catalog entry carries the fingerprint of the English it translates, each message catalog
entry the English sentence itself (tools/translate.py); the Chinese notebooks must be exactly what
the generator writes from them, with every code cell identical to the English one.
"""

from __future__ import annotations

import ast
import re

import nbformat
import pytest

from tools import translate

GROUPS = translate.groups()
TARGETS = translate.targets()
CJK = re.compile(r"[\u3400-\u9fff]")


@pytest.mark.parametrize(
    "catalog", [g[0] for g in GROUPS], ids=lambda p: f"{p.parent.name}/{p.stem}"
)
def test_every_cell_translated_and_fresh(catalog, monkeypatch):
    monkeypatch.setattr(translate, "ONLY", [catalog.stem[:2]])
    problems = [str(p) for p in translate.cell_problems() if p.catalog == catalog]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("english, chinese, entries", TARGETS, ids=lambda x: getattr(x, "name", ""))
def test_chinese_notebook_is_what_the_generator_writes(english, chinese, entries):
    assert chinese.exists(), f"{chinese} is missing: run python -m tools.translate build"
    written = nbformat.read(chinese, as_version=4)
    expected = translate.translate_notebook(english, entries, chinese)
    assert translate.sources(written) == translate.sources(expected), (
        f"{chinese.relative_to(translate.ROOT)} differs from what python -m tools.translate build "
        "writes: edit the English notebook or the catalog, never the Chinese notebook"
    )


@pytest.mark.parametrize("english, chinese, entries", TARGETS, ids=lambda x: getattr(x, "name", ""))
def test_code_cells_identical_to_english(english, chinese, entries):
    if not chinese.exists():
        pytest.skip("no Chinese notebook yet (the generator test fails for it)")
    en = [c.source for c in nbformat.read(english, as_version=4).cells if c.cell_type == "code"]
    cells = nbformat.read(chinese, as_version=4).cells
    zh = [c.source for c in cells if c.cell_type == "code" and c.id != translate.LANGUAGE_CELL_ID]
    assert zh == en
    first_code = next(c for c in cells if c.cell_type == "code")
    assert first_code.source == translate.LANGUAGE_CELL


def test_every_message_translated_and_fresh():
    problems = translate.message_problems()
    assert not problems, f"{len(problems)} message problem(s):\n" + "\n".join(problems[:60])


def test_stale_cell_is_caught(tmp_path, monkeypatch):
    """An English cell edited after its translation is reported stale, with the new fingerprint."""
    catalog, notebooks = GROUPS[0]
    english = translate.markdown_cells(notebooks)
    cell_id = next(iter(english))
    entries = [
        translate.Entry(i, translate.fingerprint(s), "中文" + s, True) for i, s in english.items()
    ]
    fake = tmp_path / catalog.name
    translate.write_catalog(fake, entries, ["x"])
    assert translate.read_catalog(fake)[cell_id].fingerprint == translate.fingerprint(
        english[cell_id]
    )
    edited = english[cell_id] + " One more sentence."
    assert translate.fingerprint(edited) != translate.read_catalog(fake)[cell_id].fingerprint


def test_fields_must_survive_translation():
    assert translate.fields("gap {gap:.2e} at {k}") == ["gap:.2e", "k"]
    assert translate.fields("{{literal}} {x}") == ["x"]


def test_unmarked_calls_are_found():
    source = (
        'a = _(f"x {y}")\nb = tr("ok {y}", y=1)\nc = N_(name)\nd = _(title)\n'
        'e = tr("a" + b)\nf = _("{x}".format(x=1))\n'
    )
    found = translate.unmarked_calls(source, "f.py")
    assert [f.split(":")[1] for f in found] == ["1", "3", "5", "6"]


def test_catalog_round_trip(tmp_path):
    entries = [
        translate.Entry("a1", "0" * 12, "## 标题\n\n正文 $x$。", True),
        translate.Entry("b2", "1" * 12, "English", False),
    ]
    path = tmp_path / "c.md"
    translate.write_catalog(path, entries, ["notebooks/x.ipynb"])
    back = translate.read_catalog(path)
    assert [(e.cell_id, e.fingerprint, e.text, e.translated) for e in back.values()] == [
        (e.cell_id, e.fingerprint, e.text, e.translated) for e in entries
    ]


def test_cells_skipped_in_chinese_are_unchecked_leaves_of_their_english_notebook():
    """A cell nbval skips in Chinese runs in English in the same suite, checks no output, and
    defines nothing a later cell reads (else the skip would break the notebook)."""
    english = {
        c.id: (i, nb, c)
        for nb in (translate.ROOT / "notebooks").glob("**/*.ipynb")
        for i, c in enumerate(nbformat.read(nb, as_version=4).cells)
    }
    for cell_id in translate.NBVAL_SKIP_IN_ZH:
        index, path, cell = english[cell_id]
        assert "NBVAL_CHECK_OUTPUT" not in cell.source
        names = {
            t.id
            for t in ast.walk(ast.parse(cell.source))
            if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
        }
        later = nbformat.read(path, as_version=4).cells[index + 1 :]
        used = {
            n
            for c in later
            if c.cell_type == "code"
            for n in names
            if re.search(rf"\b{n}\b", c.source)
        }
        assert not used, f"{cell_id} defines {used}, used by a later cell"
