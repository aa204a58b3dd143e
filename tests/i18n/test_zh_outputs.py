"""The Chinese notebooks' stored outputs are current and Chinese, and print the English numbers.

nbval re-executes the Chinese notebooks and compares the marked cells; these tests cover what it
does not: the quiz's HTML (nbval reads only text/plain), and that every Chinese notebook has been
executed in Chinese (its outputs came from the language cell's kernel, not from the English).
"""

from __future__ import annotations

import json
import re

import pytest
from zh_text import english_twin, printed_cells

from posenc_lib.checks.quiz import chapter_concepts, quiz
from posenc_lib.i18n import in_language
from tools import translate

LECTURES = sorted((translate.OUT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
DEEP_DIVES = sorted((translate.OUT / "notebooks" / "deeper").glob("*.ipynb"))
EXECUTED = LECTURES + DEEP_DIVES + sorted((translate.OUT / "solutions").glob("*.ipynb"))
# a printed number; not the "2" of "2-D" / "1-D" (a name, 二维 / 一维 in Chinese)
NUMBER = re.compile(r"(?<![\w.])[-+]?\d(?:,?\d)*(?:\.\d+)?(?:e[-+]?\d+)?%?(?!-?D\b)")


@pytest.mark.parametrize(
    "lecture", [p for p in LECTURES if p.name[:2] != "00"], ids=lambda p: p.stem
)
def test_each_chinese_lecture_shows_the_chinese_quiz_of_its_questions(lecture):
    notebook = json.loads(lecture.read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if "quiz(CONCEPTS)" in "".join(c.get("source", ""))]
    shown = [o["data"] for o in cells[0]["outputs"] if "text/html" in o.get("data", {})]
    assert len(shown) == 1, f"zh/notebooks/{lecture.name}: its quiz cell has not been run"
    with in_language("zh"):
        expected = quiz(chapter_concepts(lecture.name[:2])).html()
    assert "".join(shown[0]["text/html"]) == expected, (
        f"zh/notebooks/{lecture.name}'s quiz is stale: make notebooks-zh (or execute it alone)"
    )


@pytest.mark.parametrize("chinese", EXECUTED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_chinese_outputs_were_made_in_chinese_with_the_same_numbers(chinese):
    english = english_twin(chinese, translate.OUT)
    zh, en = ({k: text for k, (_, text) in printed_cells(p).items()} for p in (chinese, english))
    assert zh.get(translate.LANGUAGE_CELL_ID) == "", "the language cell prints nothing"
    missing = [i for i, text in en.items() if text and not zh.get(i)]
    assert not missing, f"{chinese.name}: cells not executed in Chinese: {missing[:5]}"
    # the numbers the English checks (cells marked NBVAL_CHECK_OUTPUT, stable by construction)
    # print in Chinese too, every one of them: only the words around them are translated
    checked = [
        c["id"]
        for c in json.loads(english.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code" and "NBVAL_CHECK_OUTPUT" in "".join(c["source"])
    ]
    differ = [
        i for i in checked if sorted(NUMBER.findall(en[i])) != sorted(NUMBER.findall(zh.get(i, "")))
    ]
    assert not differ, f"{chinese.name}: the printed numbers differ in cells {differ}"
