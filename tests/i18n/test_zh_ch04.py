"""Chapter 4 speaks Chinese when asked: the checks' verdicts and named mistakes, and the figures'
titles, with the same numbers as in English."""

from __future__ import annotations

import matplotlib
import torch
from zh_text import CJK, numbers

from posenc_lib.checks.ch04 import q1
from posenc_lib.checks.verdicts import FAIL
from posenc_lib.i18n import in_language
from posenc_lib.relative import t5_relative_position_bucket
from posenc_lib.viz.ch04_relative import bucket_staircases

matplotlib.use("Agg")


def _whole_matrix_range(matrix):
    """q1's usual mistake: max - min over the whole matrix, not along each diagonal."""
    return float(matrix.max() - matrix.min())


def _square_offsets(matrix):
    """q1 with the offsets of a square matrix of T_k columns: an empty diagonal raises."""
    n_k = matrix.shape[1]
    return max(
        float(matrix.diagonal(d).max() - matrix.diagonal(d).min()) for d in range(-(n_k - 1), n_k)
    )


def test_q1_named_mistake_in_chinese_with_the_same_numbers():
    english = q1.evaluate(_whole_matrix_range)
    with in_language("zh"):
        chinese = q1.evaluate(_whole_matrix_range)
    assert english.status == chinese.status == FAIL
    assert "over the whole matrix" in english.message  # the English is the source sentence
    assert not CJK.search(english.message)
    assert CJK.search(chinese.message)
    assert numbers(chinese.message) == numbers(english.message)


def test_q1_empty_diagonal_is_decided_on_the_error_in_both_languages():
    english = q1.evaluate(_square_offsets)
    with in_language("zh"):
        chinese = q1.evaluate(_square_offsets)
    assert english.status == chinese.status == FAIL
    assert "An empty diagonal" in english.message
    assert "对角线" in chinese.message and "-(T_q - 1)" in chinese.message


def test_figure_title_in_chinese_with_the_same_numbers():
    offsets = torch.arange(-200, 201)
    buckets = {"encoder": t5_relative_position_bucket(offsets, True, 32, 128)}
    titles = {}
    for language in ("en", "zh"):
        with in_language(language):
            fig = bucket_staircases(offsets, buckets, 128)
            titles[language] = fig.axes[0].get_title() + " " + fig.axes[0].get_xlabel()
        matplotlib.pyplot.close(fig)
    assert not CJK.search(titles["en"]) and CJK.search(titles["zh"])
    assert numbers(titles["zh"]) == numbers(titles["en"])
