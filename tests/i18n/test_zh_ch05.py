"""Chapter 5 speaks Chinese when asked: the checks' verdicts and named mistakes, the figures'
titles and the dashboard's readout, with the same numbers as in English."""

from __future__ import annotations

import math

import matplotlib
import torch
from zh_text import CJK, numbers

from posenc_lib.analysis.ch05_alibi import alibi_view
from posenc_lib.checks.ch05 import q3
from posenc_lib.checks.verdicts import FAIL
from posenc_lib.i18n import in_language
from posenc_lib.viz.ch05_alibi import alibi_dashboard, needle_curves

matplotlib.use("Agg")


def _log10_window(slopes, factor):
    """q3's usual mistake: log base 10 instead of the natural log."""
    return math.log10(factor) / slopes


def test_q3_named_mistake_in_chinese_with_the_same_numbers():
    english = q3.evaluate(_log10_window)
    with in_language("zh"):
        chinese = q3.evaluate(_log10_window)
    assert english.status == chinese.status == FAIL
    assert "log base 10" in english.message  # the English is the source sentence
    assert not CJK.search(english.message)
    assert CJK.search(chinese.message)
    assert numbers(chinese.message) == numbers(english.message)


def test_figure_title_in_chinese_with_the_same_numbers():
    distances = torch.arange(1, 100)
    curves = torch.rand(2, 99) + 1e-3
    titles = {}
    for language in ("en", "zh"):
        with in_language(language):
            fig = needle_curves(distances, curves, 0.068, 5.0)
            ax = fig.axes[0]
            titles[language] = " ".join([ax.get_title(), ax.get_xlabel(), ax.get_ylabel()])
        matplotlib.pyplot.close(fig)
    assert not CJK.search(titles["en"]) and CJK.search(titles["zh"])
    assert numbers(titles["zh"]) == numbers(titles["en"])


def test_dashboard_readout_in_chinese_with_the_same_numbers():
    view = alibi_view(12, 8, 256)
    readouts = {}
    for language in ("en", "zh"):
        with in_language(language):
            readouts[language] = alibi_dashboard()._readout(view)
    assert not CJK.search(readouts["en"]) and CJK.search(readouts["zh"])
    assert numbers(readouts["zh"]) == numbers(readouts["en"])
