"""Chapter 6 in Chinese: the checks' verdicts, the concept questions and the figures speak Chinese
under ``in_language("zh")``, with the same numbers, points and statuses as in English."""

from __future__ import annotations

import matplotlib.pyplot as plt
import torch
from zh_text import CJK, numbers

from posenc_lib.checks.ch06 import c2, q1, q3, q4, q5
from posenc_lib.i18n import in_language
from posenc_lib.viz import ch06_beyond, ch06_rope


def _both(make):
    """``make()`` in English and in Chinese."""
    with in_language("en"):
        english = make()
    with in_language("zh"):
        chinese = make()
    return english, chinese


def _base_is_context(context_length, head_dim):
    return float(context_length)  # the seeds' rule "base > context": a named mistake


def _unchanged(x, positions, style, base=10000.0):
    return x.clone()  # no rotation at all: a named mistake


def _bound_sum(distance, head_dim, base=10000.0):
    theta = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    phases = torch.polar(torch.ones_like(theta), distance * theta)
    return float(phases.cumsum(0).abs().sum())  # the sum of |S_j|, not divided by D/2


def _not_converted(w_q, w_k, n_heads, target):
    return w_q, w_k


def test_named_mistakes_are_chinese_with_the_same_numbers():
    for question, answer in ((q5, _base_is_context), (q1, _unchanged), (q3, _bound_sum)):
        english, chinese = _both(lambda q=question, a=answer: q.evaluate(a))
        assert english.status == chinese.status and not english.passed
        assert english.points == chinese.points == 0
        assert not CJK.search(english.message)
        assert CJK.search(chinese.message), chinese.message
        assert numbers(english.message) == numbers(chinese.message)


def test_convention_detective_in_chinese():
    english, chinese = _both(lambda: q4.evaluate(_not_converted))
    assert english.status == chinese.status and not chinese.passed
    assert CJK.search(chinese.message) and not CJK.search(english.message)
    assert numbers(english.message) == numbers(chinese.message)


def test_titles_hints_and_concepts_in_chinese():
    for question in (q1, q3, q4, q5):
        with in_language("zh"):
            assert CJK.search(question.shown_title())
            assert all(CJK.search(hint) for hint in question.shown_hints())
    english, chinese = _both(lambda: c2.evaluate("a"))
    assert english.status == chinese.status and CJK.search(chinese.message)
    assert numbers(english.message) == numbers(chinese.message)


def test_figure_titles_in_chinese_with_the_same_numbers():
    logits = {"right": torch.randn(50, 50), "mixed": torch.randn(50, 50)}

    def titles():
        figures = [
            ch06_rope.logits_by_distance(logits, 49, 20),
            ch06_beyond.shift_changes([1, 10], {"q, k turned": [1e-12, 1e-12]}),
        ]
        texts = [
            [ax.get_title() for ax in fig.axes] + [ax.get_xlabel() for ax in fig.axes]
            for fig in figures
        ]
        for fig in figures:
            plt.close(fig)
        return texts

    english, chinese = _both(titles)
    for en, zh in zip(english, chinese, strict=True):
        assert not any(CJK.search(t) for t in en)
        assert any(CJK.search(t) for t in zh), zh
        assert numbers(" ".join(en)) == numbers(" ".join(zh))


def test_dashboard_readout_in_chinese():
    english, chinese = _both(lambda: ch06_rope.rope_dashboard())
    en, zh = english.readout.value, chinese.readout.value
    assert CJK.search(zh) and not CJK.search(en)
    assert numbers(en) == numbers(zh)
    for board in (english, chinese):
        plt.close(board.figure)
