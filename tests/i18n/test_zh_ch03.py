"""Chapter 3 speaks Chinese when asked: the checks' verdicts and named mistakes, and the figures'
titles, with the same numbers as in English."""

from __future__ import annotations

import matplotlib
import matplotlib.pyplot as plt
import torch
from zh_text import CJK, numbers

from posenc_lib.absolute import sinusoidal_encoding, sinusoidal_shift_matrix
from posenc_lib.checks.ch03 import q1, q4
from posenc_lib.checks.verdicts import FAIL
from posenc_lib.i18n import in_language
from posenc_lib.viz.ch03_sinusoid import shift_and_turn

matplotlib.use("Agg")


def _base_10000_always(n_positions, d_model, base):
    """q1's usual mistake: base 10000 whatever the argument (written by hand: the library's
    sinusoidal_encoding is switched off while an answer is checked)."""
    t = torch.arange(n_positions, dtype=torch.float64)[:, None]  # (T, 1)
    angles = t / 10000.0 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    return torch.stack((angles.sin(), angles.cos()), -1).reshape(n_positions, d_model)


def test_q1_named_mistake_in_chinese_with_the_same_numbers():
    english = q1.evaluate(_base_10000_always)
    with in_language("zh"):
        chinese = q1.evaluate(_base_10000_always)
    assert english.status == chinese.status == FAIL
    assert "whatever the argument" in english.message  # the English is the source sentence
    assert not CJK.search(english.message)
    assert CJK.search(chinese.message)
    assert numbers(chinese.message) == numbers(english.message)


def test_q4_returned_none_is_decided_on_the_outcome_in_both_languages():
    def returns_none(n_positions, d_model, candidates):
        return None

    english = q4.evaluate(returns_none)
    with in_language("zh"):
        chinese = q4.evaluate(returns_none)
    assert english.status == chinese.status == FAIL
    assert "every list here holds one that works" in english.message
    assert CJK.search(chinese.message) and "k = 2" in chinese.message


def test_figure_title_in_chinese_with_the_same_numbers():
    pair = sinusoidal_encoding(41, 16)[:, 2:4]
    titles = {}
    for language in ("en", "zh"):
        with in_language(language):
            fig = shift_and_turn(sinusoidal_shift_matrix(3, 16), pair, 3, "pair 1")
            titles[language] = fig.axes[0].get_title()
        plt.close(fig)
    assert not CJK.search(titles["en"]) and CJK.search(titles["zh"])
    assert numbers(titles["zh"]) == numbers(titles["en"])
