"""The concept quiz (``posenc_lib.checks.quiz``): every option opens its own feedback with no
kernel, no answer shows before a click, text is escaped, the plain text gives nothing away, and
the HTML survives JupyterLab's sanitizer (the tags, attributes and inline styles it keeps)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from posenc_lib.checks.quiz import CLICK_NOTE, Quiz, chapter_concepts, quiz, three_digits


# Stand-ins with the public attributes of concepts.Choice / Mistake / MultipleChoice / Numeric.
@dataclass(frozen=True)
class Choice:
    key: str
    text: str
    why: str


@dataclass(frozen=True)
class Mistake:
    value: float
    why: str


@dataclass
class MultipleChoice:
    name: str
    prompt: str
    choices: tuple
    answer: str
    section: str


@dataclass
class Numeric:
    name: str
    prompt: str
    answer: object
    rel_tol: float
    why: str
    mistakes: tuple
    section: str
    unit: str = ""


CHOICE = MultipleChoice(
    "c1",
    "Which encoding adds a vector to the token embedding? Compare `x + pe` & <x, pe>.",
    (
        Choice("a", "RoPE", "WHY-A: RoPE rotates q and k; nothing is added (section 6)."),
        Choice("b", "Sinusoidal", "WHY-B: it adds `pe[t]` to x < 1 + 1 & so on."),
        Choice("c", "ALiBi", "WHY-C: ALiBi adds a bias to the scores, not the embedding."),
    ),
    answer="b",
    section="section 2",
)
NUMERIC = Numeric(
    "c2",
    "At base 10000, how many positions before pair 0 repeats?",
    answer=lambda: 2 * 3.141592653589793,
    rel_tol=0.05,
    why="WHY-NUM: the period of pair 0 is 2π / 1.",
    mistakes=(Mistake(1.0, "WHY-MISTAKE: one radian is not a turn."),),
    section="section 3",
    unit="positions",
)


class _Tree(HTMLParser):
    """Each element as (tag, attrs, text inside it, parent tags), and the stack while parsing."""

    def __init__(self):
        super().__init__()
        self.stack: list[list] = []
        self.elements: list[list] = []

    def handle_starttag(self, tag, attrs):
        element = [tag, dict(attrs), "", [e[0] for e in self.stack]]
        self.elements.append(element)
        self.stack.append(element)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1][0] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        for element in self.stack:
            element[2] += data


def _parse(page: str) -> list[list]:
    tree = _Tree()
    tree.feed(page)
    tree.close()
    assert tree.stack == [], "every element is closed"
    return tree.elements


def test_each_option_opens_its_own_why_and_the_summaries_give_nothing_away():
    page = quiz([CHOICE]).html()
    details = [e for e in _parse(page) if e[0] == "details"]
    summaries = [e for e in _parse(page) if e[0] == "summary"]
    assert len(details) == len(summaries) == 3
    for choice, element, summary in zip(CHOICE.choices, details, summaries, strict=True):
        assert "open" not in element[1], "closed until clicked"
        assert choice.why.replace("`", "") in element[2]  # the why inside its own details
        assert summary[2].startswith(f"({choice.key}) ")
        assert "WHY" not in summary[2] and "Right" not in summary[2] and "✓" not in summary[2]
    # Only the right option's feedback says so; the summaries of right and wrong look alike.
    assert ["✓ Right." in e[2] for e in details] == [False, True, False]
    assert ["✗ Not quite." in e[2] for e in details] == [True, False, True]
    assert len({tuple(sorted(s[1].items())) for s in summaries}) == 1
    assert len({tuple(sorted(d[1].items())) for d in details}) == 1
    outside = re.sub(r"<details.*?</details>", "", page, flags=re.DOTALL)
    assert "WHY" not in outside and "Right" not in outside and "CHOICE" not in outside
    assert outside.count("<summary") == 0 and page.count("<details") == 3


def test_a_numeric_answer_its_why_and_its_mistakes_stay_inside_a_closed_details():
    page = quiz([NUMERIC]).html()
    elements = _parse(page)
    (details,) = [e for e in elements if e[0] == "details"]
    (summary,) = [e for e in elements if e[0] == "summary"]
    assert summary[2] == "Show the answer" and "open" not in details[1]
    for inside in ("6.28 positions", "5%", "WHY-NUM", "WHY-MISTAKE", "1:"):
        assert inside in details[2], inside
    hidden = re.sub(r"<details.*?</details>", "", page, flags=re.DOTALL)
    assert "6.28" not in hidden and "WHY" not in hidden
    assert "in positions" in hidden  # the unit the answer is asked in


def test_text_is_escaped_and_backticks_become_code():
    page = quiz([CHOICE]).html()
    assert "<code>x + pe</code> &amp; &lt;x, pe&gt;" in page
    assert "<code>pe[t]</code> to x &lt; 1 + 1 &amp; so on" in page
    hostile = MultipleChoice(
        "c9",
        "<script>alert(1)</script> `<b>`",
        (Choice("a", "<img src=x>", "&lt;"), Choice("b", "b", "b")),
        answer="a",
        section="s",
    )
    shown = quiz(hostile).html()
    assert "<script" not in shown and "<img" not in shown and "<b>" not in shown
    assert "&lt;script&gt;" in shown and "<code>&lt;b&gt;</code>" in shown
    assert "&amp;lt;" in shown  # an escape in the text is shown as typed


def test_the_plain_text_lists_questions_and_options_but_no_answer():
    text = quiz([CHOICE, NUMERIC]).text()
    assert text == repr(quiz([CHOICE, NUMERIC]))
    assert text.startswith("Check your understanding: 2 questions.")
    assert text.rstrip().endswith(CLICK_NOTE)
    assert "JupyterLab" in CLICK_NOTE and "website" in CLICK_NOTE
    assert "1. (c1) Which encoding" in text and "2. (c2) At base 10000" in text
    for choice in CHOICE.choices:
        assert f"   ({choice.key}) {choice.text}" in text
    assert "Answer with a number (in positions)." in text
    for secret in ("WHY", "6.28", "Right", "✓", "✗", "0x"):
        assert secret not in text, secret
    bundle = quiz([CHOICE, NUMERIC])._repr_mimebundle_()
    assert sorted(bundle) == ["text/html", "text/plain"] and bundle["text/plain"] == text


def test_projector_mode_is_large_with_one_question_to_a_screen():
    small, big = quiz([CHOICE, NUMERIC]).html(), quiz([CHOICE, NUMERIC], projector=True).html()
    assert "font-size: 28px" in big and "font-size: 28px" not in small
    blocks = [e for e in _parse(big) if e[1].get("class") == "posenc-quiz-question"]
    assert len(blocks) == 2 and all("min-height: 85vh" in e[1]["style"] for e in blocks)
    assert "vh" not in small
    # The same questions and feedback either way.
    strip = lambda page: re.sub(r' style="[^"]*"', "", page).replace(" posenc-quiz-projector", "")  # noqa: E731
    assert strip(small) == strip(big)


# What JupyterLab's sanitizer keeps (packages/apputils/src/sanitizer.ts): a subset of its tags,
# the attributes it allows every tag (class, style) and details' open, and for each inline style
# property the course uses, a pattern of the values it accepts (its CssProp regular expressions,
# reduced to the forms used here). A declaration that fails is dropped in an untrusted notebook.
TAGS = {"div", "p", "span", "strong", "code", "details", "summary", "ul", "li"}
LENGTH = r"(0|[0-9.]+(px|em|rem|ex|in|cm|mm|pt|pc))"
COLOUR = r"(#[0-9a-f]+|rgba?\(\s*\d{1,3}\s*,\s*\d{1,3}\s*,\s*\d{1,3}\s*(,\s*(1|0\.\d+)\s*)?\))"
STYLES = {
    "font-size": rf"{LENGTH}",
    "line-height": r"[0-9.]+",
    "margin": rf"(({LENGTH}|auto)\s*){{1,4}}",
    "padding": rf"({LENGTH}\s*){{1,4}}",
    "page-break-inside": r"avoid|auto",
    "opacity": r"0?\.\d+|1",
    "cursor": r"pointer",
    "border": rf"(({LENGTH}|solid|{COLOUR})\s*){{1,3}}",
    "border-left": rf"(({LENGTH}|solid|{COLOUR})\s*){{1,3}}",
    "border-radius": rf"({LENGTH}\s*){{1,4}}",
    "background-color": COLOUR,
    "color": COLOUR,
}


@pytest.mark.parametrize("projector", [False, True])
def test_the_html_is_what_an_untrusted_jupyterlab_notebook_keeps(projector):
    page = quiz([CHOICE, NUMERIC], projector=projector).html()
    elements = _parse(page)
    assert {e[0] for e in elements} <= TAGS
    dropped = []
    for tag, attrs, _, _ in elements:
        assert set(attrs) <= {"class", "style"}, (tag, attrs)
        for declaration in filter(None, (d.strip() for d in attrs.get("style", "").split(";"))):
            name, value = (part.strip() for part in declaration.split(":", 1))
            assert name in STYLES or (projector and name == "min-height"), declaration
            if name not in STYLES or not re.fullmatch(STYLES[name], value, re.IGNORECASE):
                dropped.append(declaration)
    # Not a colour set on the text itself (it keeps the theme's, light or dark) but the marks'.
    assert not any(e[1].get("style", "").startswith("color") for e in elements if e[0] != "strong")
    assert "currentColor" not in page and "var(" not in page and "<style" not in page
    # Only the projector's screen-high blocks are lost to the sanitizer (Voila and the website
    # do not sanitize); everything else arrives as written.
    assert dropped == (["min-height: 85vh"] * 2 if projector else [])


def test_three_significant_digits():
    shown = [three_digits(v) for v in (62831.85, 6.2832, 0.012345, 0.5, 999.6, 1.2345e-7, 0.0)]
    assert shown == ["62,800", "6.28", "0.0123", "0.5", "1,000", "1.23e-07", "0"]


@pytest.mark.parametrize("wrong", [[], "c1", 3, [CHOICE, "c2"], None])
def test_a_wrong_argument_gets_a_sentence(wrong):
    with pytest.raises(TypeError, match=r"quiz\(\) shows concept questions: pass a chapter's"):
        quiz(wrong)


def test_one_question_alone_is_a_quiz_of_one():
    alone = quiz(CHOICE)
    assert isinstance(alone, Quiz) and alone.questions == (CHOICE,)
    assert alone.text().startswith("Check your understanding: 1 question.")


@pytest.mark.parametrize("key", ["start", "00", "99", "ch03", ""])
def test_a_chapter_with_no_concept_questions_has_an_empty_quiz_list(key):
    assert chapter_concepts(key) == ()


@pytest.mark.parametrize("key", [f"{n:02d}" for n in range(1, 9)])
def test_every_chapter_with_concept_questions_renders_every_why(key):
    questions = chapter_concepts(key)
    if not questions:
        pytest.skip(f"chapter {key} has no CONCEPTS yet")
    shown = quiz(questions)
    page, text = shown.html(), shown.text()
    for q in questions:
        if hasattr(q, "choices"):
            for choice in q.choices:
                assert _inline_check(choice.why) in page
                assert choice.why not in text
        else:
            assert three_digits(q.answer()) in page
    assert text == quiz(questions).text()  # the same on every run: nbval compares it


def _inline_check(text: str) -> str:
    from posenc_lib.checks.quiz import _inline

    return _inline(text)


def test_whole_numbers_show_whole_and_others_to_three_digits():
    # A named mistake such as the trained context, 8,192, must not read as "8,190".
    assert three_digits(8192) == "8,192"
    assert three_digits(float(2**24 + 1)) == "16,777,217"
    assert three_digits(2 * 3.141592653589793 * 10000) == "62,800"
    assert three_digits(6.283185307179586) == "6.28"


LECTURES = sorted(Path(__file__).resolve().parents[2].glob("notebooks/0[1-9]_*.ipynb"))


@pytest.mark.parametrize("lecture", LECTURES, ids=lambda p: p.stem)
def test_each_lecture_shows_the_quiz_its_library_questions_make_now(lecture):
    # nbval compares only text/plain, which holds no feedback: a `why` edited in the library after
    # the lecture ran would leave a stale page on the website. Re-run the lecture when this fails.
    notebook = json.loads(lecture.read_text(encoding="utf-8"))
    cells = [c for c in notebook["cells"] if "quiz(CONCEPTS)" in "".join(c.get("source", ""))]
    assert len(cells) == 1, f"{lecture.name} should end with one quiz(CONCEPTS) cell"
    shown = [o["data"] for o in cells[0]["outputs"] if "text/html" in o.get("data", {})]
    assert len(shown) == 1, f"{lecture.name}: its quiz cell has not been run"
    expected = quiz(chapter_concepts(lecture.name[:2])).html()
    assert "".join(shown[0]["text/html"]) == expected, (
        f"{lecture.name}'s quiz is stale: run python -m tools.authoring execute notebooks/"
        f"{lecture.name}"
    )
