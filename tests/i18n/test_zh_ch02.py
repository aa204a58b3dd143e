"""Chapter 2 in Chinese: the checks' verdicts and the figures speak Chinese, with the same numbers."""

from __future__ import annotations

import matplotlib
import torch
from zh_text import CJK, numbers

from posenc_lib import binary_encoding
from posenc_lib.analysis.ch02_naive import neighbour_distances
from posenc_lib.checks import FAIL
from posenc_lib.checks.ch02 import c3, q2, q3
from posenc_lib.i18n import in_language
from posenc_lib.viz.ch02_naive import binary_distances, norm_growth, table_dashboard

matplotlib.use("Agg")


def _divided_by_t(i, j, lengths):
    """A known-wrong q3 answer: divides by T instead of T - 1."""
    return abs(i - j) / torch.tensor(lengths, dtype=torch.float64)


def _hamming_ratio(table):
    """A known-wrong q2 answer: counts the bits that change instead of the Euclidean length."""
    steps = (table[1:] != table[:-1]).sum(-1).double()
    return float(steps.max() / steps.min())


def test_a_named_mistake_reads_in_chinese_with_the_same_numbers():
    for question, wrong in ((q3, _divided_by_t), (q2, _hamming_ratio)):
        english = question.evaluate(wrong)
        with in_language("zh"):
            chinese = question.evaluate(wrong)
        assert english.status == chinese.status == FAIL
        assert not CJK.search(english.message)
        assert CJK.search(chinese.message), chinese.message
        assert numbers(english.message) == numbers(chinese.message), (english, chinese)


def test_a_concept_mistake_reads_in_chinese():
    english = c3.evaluate(10.0)
    with in_language("zh"):
        chinese = c3.evaluate(10.0)
    assert english.status == chinese.status == FAIL
    assert CJK.search(chinese.message) and not CJK.search(english.message)


def test_figures_and_the_dashboard_are_labelled_in_chinese_with_the_same_numbers():
    bits = binary_encoding(256, 8)
    hamming = neighbour_distances(bits, "hamming")
    euclid = neighbour_distances(bits)
    lengths = torch.ones(50)
    titles = {}
    for language in ("en", "zh"):
        with in_language(language):
            figure = binary_distances(bits, hamming, euclid)
            growth = norm_growth(lengths, lengths, lengths, lengths)
            board = table_dashboard()
            titles[language] = (
                [ax.get_title() for ax in figure.axes] + [growth.axes[0].get_title()],
                board.title,
                board.readout.value,
            )
            matplotlib.pyplot.close("all")
    (en_titles, en_board, en_readout), (zh_titles, zh_board, zh_readout) = (
        titles["en"],
        titles["zh"],
    )
    assert en_titles[-1] == "how long is each position vector?"
    assert all(CJK.search(title) for title in zh_titles), zh_titles
    assert [numbers(t) for t in en_titles] == [numbers(t) for t in zh_titles]
    assert not CJK.search(en_board) and CJK.search(zh_board) and CJK.search(zh_readout)
    assert numbers(en_readout) == numbers(zh_readout)
