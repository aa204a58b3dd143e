"""The website in both languages: the Chinese edition in zh/, each page linking to itself in the
other edition, every link resolving both ways, the Chinese pages in Chinese (Sphinx's words too)."""

from __future__ import annotations

import contextlib
import io
import shutil
from pathlib import Path

import pytest

from tools.site import ROOT, ZH, build_site
from tools.site_audit import check_site

pytestmark = pytest.mark.skipif(
    shutil.which("jupyter-book", path=str(Path(ROOT, ".venv", "bin"))) is None
    and shutil.which("jupyter-book") is None,
    reason="jupyter-book 1.x is not installed: run `make setup` (it is in the test extra)",
)
KEY, STEM = "05", "05_alibi"
DEEP_KEY, DEEP = "02", "deeper/02_what_training_learns"  # a chapter with a deep dive


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    folder = tmp_path_factory.mktemp("site_zh")
    with contextlib.redirect_stderr(io.StringIO()):
        english = build_site(
            folder / "site", folder / "src", keys=[KEY, DEEP_KEY], live=False, switch=True
        )
        chinese = build_site(
            folder / "site" / ZH,
            folder / "src-zh",
            keys=[KEY, DEEP_KEY],
            live=False,
            language=ZH,
            switch=True,
        )
    return english, chinese, folder


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def test_both_editions_pass_the_audit(both):
    english, chinese, folder = both
    assert check_site(english.folder, folder / "src", skip=(ZH,)) == []
    assert check_site(chinese.folder, folder / "src-zh") == []


def test_each_page_links_to_itself_in_the_other_edition(both):
    english, chinese, _ = both
    en_page = english.folder / "notebooks" / f"{STEM}.html"
    zh_page = chinese.folder / "notebooks" / f"{STEM}.html"
    assert f'href="../zh/notebooks/{STEM}.html"' in _read(en_page)
    assert f'href="../../notebooks/{STEM}.html"' in _read(zh_page)
    assert 'href="zh/index.html"' in _read(english.folder / "index.html")
    assert 'href="../index.html"' in _read(chinese.folder / "index.html")


def test_the_chinese_pages_are_chinese(both):
    _, chinese, _ = both
    index = _read(chinese.folder / "index.html")
    assert "Transformer 中的位置编码" in index and "起始页" in index
    assert 'lang="zh-CN"' in index or 'lang="zh_CN"' in index  # Sphinx's own words in Chinese
    lecture = _read(chinese.folder / "notebooks" / f"{STEM}.html")
    assert "第 5 章" in lecture
    assert "[练习]" not in lecture and "练习" in lecture  # the link cell, rendered as a link


def test_a_deep_dive_is_a_page_in_both_editions_linked_both_ways(both):
    english, chinese, _ = both
    en_page = english.folder / "notebooks" / f"{DEEP}.html"
    zh_page = chinese.folder / "notebooks" / f"{DEEP}.html"
    assert f'href="../../zh/notebooks/{DEEP}.html"' in _read(en_page)
    assert f'href="../../../notebooks/{DEEP}.html"' in _read(zh_page)
    assert "深入阅读" in _read(zh_page) and "It assumes" in _read(en_page)
    # listed in each index under its chapter, as an optional branch
    assert f'href="notebooks/{DEEP}.html"' in _read(english.folder / "index.html")
    assert f'href="notebooks/{DEEP}.html"' in _read(chinese.folder / "index.html")
    assert "深入阅读（可选）" in _read(chinese.folder / "index.html")
