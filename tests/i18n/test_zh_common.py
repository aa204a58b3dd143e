"""The shared checking code speaks Chinese (中文) when asked, and English exactly as before.

What the chapters define at import time (a question's title and hints, a concept question's
prompt, options, whys, mistakes, unit and section: marked ``N_``) is translated where it is shown,
so switching the language after import switches them too. The numbers print the same in both
languages. A stand-in catalog gives the made-up questions below their Chinese, so these tests do
not depend on any chapter's translation.
"""

from __future__ import annotations

import re

import pytest
import torch

from posenc_lib import i18n
from posenc_lib.checks import FAIL, NOT_ATTEMPTED, PASS, TENSOR, Case, Question, as_tensor
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.quiz import quiz
from posenc_lib.checks.verdicts import Scorecard, Verdict
from posenc_lib.i18n import N_, in_language

CJK = re.compile(r"[\u4e00-\u9fff]")

# What the chapters would write, marked N_, and the Chinese their catalogs would hold.
TITLE = N_("Double a tensor")
HINTS = (N_("Multiply by two."), N_("Return x * 2."))
PROMPT = N_("How many sides has a triangle?")
SECTION = N_("section 1 of this chapter")
UNIT = N_("sides")
CHOICE_TEXTS = (N_("Two sides"), N_("Three sides"), N_("Four sides"))
WHYS = (
    N_("Two sides do not close a shape."),
    N_("Three: tri means three."),
    N_("That is a square."),
)
NUMERIC_WHY = N_("A triangle has three sides.")
MISTAKE_WHY = N_("You counted the corners twice.")
OUTPUT = N_("The output")
NAMED = N_("you forgot the factor 2.")
STAND_IN = {
    TITLE: "把张量翻倍",
    HINTS[0]: "乘以二。",
    HINTS[1]: "返回 x * 2。",
    PROMPT: "三角形有几条边？",
    SECTION: "本章第 1 节",
    UNIT: "条边",
    CHOICE_TEXTS[0]: "两条边",
    CHOICE_TEXTS[1]: "三条边",
    CHOICE_TEXTS[2]: "四条边",
    WHYS[0]: "两条边围不成图形。",
    WHYS[1]: "三条：tri 就是三。",
    WHYS[2]: "那是正方形。",
    NUMERIC_WHY: "三角形有三条边。",
    MISTAKE_WHY: "你把每个角数了两次。",
    OUTPUT: "输出",
    NAMED: "你漏掉了因子 2。",
}


class _WithStandIns:
    """The real Chinese catalogs, plus the made-up questions' sentences."""

    def __init__(self, real):
        self.real = real

    def gettext(self, message):
        return STAND_IN.get(message) or self.real.gettext(message)


@pytest.fixture(autouse=True)
def stand_in_catalog(monkeypatch):
    real = i18n._translations

    def translations(language):
        return _WithStandIns(real(language)) if language == "zh" else real(language)

    monkeypatch.setattr(i18n, "_translations", translations)


class Double(Question):
    name, function, points = "q1", "double", 2
    title = TITLE
    hints = HINTS
    returns = TENSOR

    def cases(self, seed=0):
        return [Case((torch.arange(3.0),), "x = [0, 1, 2]")]

    def diagnose(self, case, value):
        got, problem = as_tensor(value, OUTPUT, (3,))
        if problem:
            return problem
        mistakes = [(case.args[0], NAMED)]
        named = named_mistake(mistakes, lambda wrong: torch.equal(got, wrong.double()))
        if named:
            return named
        return None if torch.equal(got, case.args[0].double() * 2) else "wrong"


def choice_question():
    choices = tuple(
        Choice(key, text, why) for key, text, why in zip("abc", CHOICE_TEXTS, WHYS, strict=True)
    )
    return MultipleChoice("c1", prompt=PROMPT, choices=choices, answer="b", section=SECTION)


def numeric_question():
    return Numeric("c2", prompt=PROMPT, answer=lambda: 3.0, rel_tol=0.05, why=NUMERIC_WHY,
                   mistakes=(Mistake(6.0, MISTAKE_WHY),), section=SECTION, unit=UNIT)  # fmt: skip


def numbers(text: str) -> list[str]:
    return re.findall(r"\d+(?:\.\d+)?", text)


def shown(capsys, action) -> str:
    action()
    return capsys.readouterr().out


def stub(x):
    raise NotImplementedError


def test_a_verdict_and_a_hint_speak_chinese(capsys):
    q = Double()
    with in_language("zh"):
        verdicts = [
            q.evaluate(lambda x: None),
            q.evaluate(lambda x: x.numpy()),
            q.evaluate(lambda x: x.clone()),
            q.evaluate(lambda x: x * 2),
            q.evaluate(stub),
        ]
        hint = shown(capsys, lambda: q.hint(2))
        title = q.shown_title()
    assert [v.status for v in verdicts] == [FAIL, FAIL, FAIL, PASS, NOT_ATTEMPTED]
    for verdict in verdicts:
        assert CJK.search(verdict.message), verdict.message
    with in_language("zh"):
        text = str(verdicts[0])
    assert "还不对" in text and "（0/2 分）" in text and "返回了 None" in text
    assert "很接近了，但你漏掉了因子 2。" in verdicts[2].message  # the lead and the named mistake
    assert "（输入：x = [0, 1, 2]。）" in verdicts[2].message  # the input, described in code
    assert hint == "q1：提示 2/2：返回 x * 2。\n"
    assert title == "把张量翻倍"
    # The same verdicts in English, from the same (already imported) question.
    with in_language("en"):
        english = q.evaluate(lambda x: None)
        assert q.shown_title() == TITLE and shown(capsys, lambda: q.hint(1)).startswith(
            "q1: Hint 1 of 2: Multiply by two."
        )
    assert str(english).startswith("q1 ✗ not yet (0/2 points): `double` returned None")
    assert numbers(str(english)) == numbers(text)


def test_a_scorecard_speaks_chinese():
    card = Scorecard([Verdict("q1", PASS, "", 2, 2), Verdict("q2", NOT_ATTEMPTED, "", 0, 3)])
    with in_language("zh"):
        text = str(card)
    assert "正确" in text and "尚未作答" in text and text.endswith("总分：2/5 分")
    with in_language("en"):
        assert str(card).endswith("total: 2/5 points")


def test_a_concept_question_asks_checks_and_explains_in_chinese(capsys):
    c1, c2 = choice_question(), numeric_question()
    with in_language("zh"):
        asked = shown(capsys, c1.ask)
        wrong, right = c1.evaluate("a"), c1.evaluate("b")
        by_text = c1.evaluate("三条边")  # the text of an option, in Chinese
        solution = shown(capsys, c1.solution)
        hint = shown(capsys, c1.hint)
        asked2 = shown(capsys, c2.ask)
        near, mistaken, far = c2.evaluate(3), c2.evaluate(6), c2.evaluate(40)
        solution2 = shown(capsys, c2.solution)
        title = c1.shown_title()
    assert "三角形有几条边？" in asked and "(b) 三条边" in asked and "选择题" in asked
    assert wrong.status == FAIL and "两条边围不成图形。" in wrong.message
    assert right.status == PASS and "三条：tri 就是三。" in right.message
    assert by_text.status == FAIL and "字母" in by_text.message
    assert "答案是 (b) 三条边" in solution
    assert "本章第 1 节" in hint
    assert "条边" in asked2 and "数值题" in asked2
    assert near.passed and mistaken.message == "你把每个角数了两次。"  # the header says 还不对
    assert "本章第 1 节" in far.message
    assert "答案是 3.00 条边" in solution2 and "计算方式：3.0" in solution2
    assert title == "三角形有几条边？"
    # English: the same question objects, as they were built.
    with in_language("en"):
        english = shown(capsys, c2.solution)
        assert c1.evaluate("a").message.endswith(WHYS[0])
    assert english.startswith("c2: the answer is 3.00 sides. A triangle has three sides.")
    assert numbers(english) == numbers(solution2)


def test_the_quiz_speaks_chinese():
    questions = (choice_question(), numeric_question())
    with in_language("zh"):
        text, page = quiz(questions).text(), quiz(questions).html()
    with in_language("en"):
        english_text, english_page = quiz(questions).text(), quiz(questions).html()
    assert text.startswith("检验你的理解：2 道题。") and "(a) 两条边" in text
    assert "用一个数作答（单位：条边）。" in text
    for chinese in ("三角形有几条边？", "两条边围不成图形。", "显示答案", "常见错误：", "✓ 正确。"):
        assert chinese in page
    assert english_text.startswith("Check your understanding: 2 questions.")
    assert "Show the answer" in english_page and "显示答案" not in english_page
    assert numbers(page) == numbers(english_page)


def test_class_report_words_are_chinese():
    from posenc_lib.grading.report import mistake_sentence

    with in_language("zh"):
        message = Double().evaluate(lambda x: x.clone()).message
    assert mistake_sentence(message) == "很接近了，但你漏掉了因子 2。"
