"""Chapter 7 speaks Chinese (中文): a wrong answer's verdict, its named mistake and a figure's labels
come out in Chinese with the same numbers as in English."""

from __future__ import annotations

import matplotlib
import pytest
from zh_text import CJK, numbers

from posenc_lib.checks.ch07 import q1, q2, q3, q4
from posenc_lib.i18n import in_language
from posenc_lib.viz.ch07_extrapolation import forward_times

matplotlib.use("Agg")


def _both(question, answer):
    english = question.evaluate(answer)
    with in_language("zh"):
        chinese = question.evaluate(answer)
    return english, chinese


@pytest.mark.parametrize(
    "question, answer",
    [
        (q1, lambda base, factor, head_dim: base * factor),  # a named mistake: the base times s
        (q2, lambda d, base, length, factor, fast=32.0, slow=1.0: (None, 1.0)),  # cannot be read
        (q3, lambda head_dim, base, train_len: []),  # counted: pairs left out
        (q4, lambda curves, train_len, tol: [0]),  # counted: pairs too many or left out
    ],
    ids=["q1-named-mistake", "q2-unreadable", "q3-missing", "q4-extra"],
)
def test_wrong_answer_in_chinese(question, answer):
    english, chinese = _both(question, answer)
    assert english.status == chinese.status == "fail"
    assert not CJK.search(english.message)
    assert CJK.search(chinese.message), chinese.message
    assert numbers(chinese.message) == numbers(english.message), (
        english.message,
        chinese.message,
    )


def test_named_mistake_is_translated():
    english, chinese = _both(q1, lambda base, factor, head_dim: base * factor)
    assert english.message.startswith("Close, but you multiplied the base by s alone")
    assert "s ** ((D - 2) / D)" in chinese.message  # the formula is kept as it is


def test_hints_and_title_in_chinese():
    with in_language("zh"):
        hints, title = q2.shown_hints(), q2.shown_title()
    assert all(CJK.search(h) for h in hints) and CJK.search(title)
    assert [numbers(h) for h in hints] == [numbers(h) for h in q2.shown_hints()]


def test_figure_labels_in_chinese():
    rounds = {"none": [1.0, 1.1, 1.2, 1.0, 1.1, 1.2, 1.0], "rope": [1.2] * 7}
    middle = {name: sorted(times)[3] for name, times in rounds.items()}
    english = forward_times(rounds, middle).axes[0]
    with in_language("zh"):
        chinese = forward_times(rounds, middle).axes[0]
    for get in ("get_title", "get_xlabel"):
        en, zh = getattr(english, get)(), getattr(chinese, get)()
        assert not CJK.search(en) and CJK.search(zh), (en, zh)
        assert numbers(zh) == numbers(en)
