"""The Chinese reads as Chinese technical writing: one glossary (术语表), spacing and punctuation."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tools import translate

GLOSSARY = translate.ROOT / "translations" / "zh" / "glossary.md"


def glossary() -> list[tuple[list[str], str]]:
    """(English spellings, Chinese term) from the glossary's table."""
    terms = []
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and cells[0] not in ("English", "---"):
            terms.append(([s.strip() for s in cells[0].split(" / ")], cells[1]))
    return terms


def translated_cells(catalog: Path):
    english = translate.markdown_cells(dict(translate.groups())[catalog])
    for cell_id, entry in translate.read_catalog(catalog).items():
        if entry.translated and cell_id in english:
            yield cell_id, english[cell_id], entry.text


def _prose(markdown: str) -> str:
    """The text a reader reads: code blocks, inline code, math, links' targets and HTML removed."""
    text = re.sub(r"```.*?```", " ", markdown, flags=re.S)
    text = re.sub(r"\$\$.*?\$\$", " ", text, flags=re.S)
    text = re.sub(r"`[^`]*`|\$[^$]*\$|<[^>]+>|\]\([^)]*\)", " ", text)
    return text


CATALOGS = [g[0] for g in translate.groups()]


def test_glossary_has_the_issue_terms():
    chinese = {zh for _, zh in glossary()}
    for term in ("位置编码", "自注意力", "旋转位置编码", "长度外推", "线性偏置"):
        assert term in chinese


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_translations_use_the_glossary(catalog):
    misses = []
    for cell_id, english, chinese in translated_cells(catalog):
        for spellings, term in glossary():
            pattern = r"\b(" + "|".join(re.escape(s) for s in spellings) + r")\b"
            if re.search(pattern, _prose(english), re.I) and term not in chinese:
                misses.append(
                    f"cell {cell_id}: English says {spellings[0]!r}, Chinese lacks {term}"
                )
    assert not misses, "\n".join(misses)


@pytest.mark.parametrize("catalog", CATALOGS, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_spacing_and_punctuation(catalog):
    """autocorrect-py, the linter of Chinese copywriting, finds nothing to change."""
    autocorrect = pytest.importorskip("autocorrect_py")
    problems = []
    for cell_id, _english, chinese in translated_cells(catalog):
        result = autocorrect.lint_for(chinese, "md")
        for line in result.lines:
            problems.append(f"cell {cell_id}, line {line.line}: {line.old!r} -> {line.new!r}")
    assert not problems, "\n".join(problems[:40])


def test_seed_examples_in_chapter_one():
    """The seed documents' own example, 我爱你 / 你爱我, stands where the English has its example."""
    text = (translate.CATALOGS / "notebooks" / "01_order_blindness.md").read_text(encoding="utf-8")
    assert "我爱你" in text and "你爱我" in text
