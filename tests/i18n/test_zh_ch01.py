"""Chapter 1 in Chinese (中文): a wrong answer's named mistake, a concept question and the figures'
titles come out in Chinese, with the same numbers as in English."""

from __future__ import annotations

import torch
from zh_text import CJK, numbers

from posenc_lib.analysis.ch01_order import reorder_experiment
from posenc_lib.checks import FAIL
from posenc_lib.checks.ch01 import c1, q1, q4
from posenc_lib.i18n import _, in_language
from posenc_lib.viz.ch01_order import OrderPlot, final_states


def _unscaled_attention(x, w_q, w_k, w_v):
    """The usual mistake of q1: no 1/sqrt(d_k)."""
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T, dim=-1) @ v


def _tiny_positions(x):
    """q4's "too small" mistake: a position signal far below the embeddings' size."""
    return x + 1e-9 * torch.arange(x.shape[0], dtype=x.dtype)[:, None]


def test_named_mistake_in_chinese_with_the_same_numbers():
    for question, answer, words in (
        (q1, _unscaled_attention, "未经缩放就进入了 softmax"),  # names the slip, not the fix
        (q4, _tiny_positions, ""),
    ):
        english = question.evaluate(answer)
        with in_language("zh"):
            chinese = question.evaluate(answer)
        assert english.status == chinese.status == FAIL
        assert not CJK.search(english.message)
        assert CJK.search(chinese.message), chinese.message
        assert words in chinese.message
        assert numbers(chinese.message) == numbers(english.message), (
            english.message,
            chinese.message,
        )


def test_hints_title_and_concept_question_in_chinese():
    with in_language("zh"):
        assert CJK.search(q1.shown_title())
        assert all(CJK.search(hint) for hint in q1.shown_hints())
        assert CJK.search(_(c1.prompt))
        assert all(CJK.search(_(choice.why)) for choice in c1.choices)
    assert q1.shown_title() == "Single-head self-attention by hand"


def test_figure_titles_in_chinese_with_the_same_numbers():
    result = reorder_experiment(["dog", "bites", "man"], order=[2, 1, 0], pe_scale=1.0)
    english = [ax.get_title() for ax in OrderPlot(result).fig.axes if ax.get_title()]
    with in_language("zh"):
        chinese = [ax.get_title() for ax in OrderPlot(result).fig.axes if ax.get_title()]
        states = final_states({"dog bites man": torch.zeros(8), "man bites dog": torch.ones(8)})
    assert english[0] == "attention weights"
    assert len(chinese) == len(english)
    for en, zh in zip(english, chinese, strict=True):
        assert CJK.search(zh), zh
        assert numbers(zh) == numbers(en)
    assert CJK.search(states.axes[0].get_title())
