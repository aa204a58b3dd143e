"""Chapter 8 in Chinese: a check's named mistake and a figure's labels come out in Chinese, with
the same numbers as in English (no model is loaded: q1 and q2 are checked on their own inputs)."""

from __future__ import annotations

import torch
from zh_text import CJK, numbers

from posenc_lib.checks import FAIL
from posenc_lib.checks.ch08 import q1, q2
from posenc_lib.i18n import in_language
from posenc_lib.viz import ch08_layout as fig8
from posenc_lib.viz import ch08_long as long_viz


def _both(question, fn):
    english = question.evaluate(fn)
    with in_language("zh"):
        chinese = question.evaluate(fn)
    return english, chinese


def test_q2_rows_left_unchanged_is_named_in_chinese_with_the_same_numbers():
    english, chinese = _both(q2, lambda w, n_heads: w.clone())  # GGUF's order kept: a named mistake
    assert english.status == chinese.status == FAIL
    assert not CJK.search(english.message) and CJK.search(chinese.message), chinese.message
    assert "transformers" in chinese.message and "2i + 1" in chinese.message
    assert numbers(english.message) == numbers(chinese.message), (
        english.message,
        chinese.message,
    )


def test_q1_exponent_mistake_is_named_in_chinese_with_the_same_numbers():
    def half_exponent(config, seq_len):  # -i / D instead of -2i / D
        rope = config.get("rope_parameters") or {}
        base = float(rope.get("rope_theta", config.get("rope_theta", 10000.0)))
        d = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
        return base ** (-torch.arange(d // 2, dtype=torch.float64) / d), 1.0

    english, chinese = _both(q1, half_exponent)
    assert english.status == chinese.status == FAIL
    assert CJK.search(chinese.message) and not CJK.search(english.message)
    assert "-2i / D" in english.message and "-2i / D" in chinese.message
    assert numbers(english.message) == numbers(chinese.message), (
        english.message,
        chinese.message,
    )


def test_figure_labels_in_chinese():
    positions = torch.arange(1, 300)
    errors = {"float32": torch.full((299,), 1e-6), "bf16 positions": torch.full((299,), 0.1)}
    english = fig8.angle_errors(positions, errors)
    with in_language("zh"):
        chinese = fig8.angle_errors(positions, errors)
        copy = long_viz.copy_losses()
    en_ax, zh_ax = english.axes[0], chinese.axes[0]
    assert not CJK.search(en_ax.get_title()) and CJK.search(zh_ax.get_title())
    assert numbers(en_ax.get_title()) == numbers(zh_ax.get_title())
    assert CJK.search(zh_ax.get_xlabel()) and CJK.search(zh_ax.get_ylabel())
    legend = [t.get_text() for t in zh_ax.get_legend().get_texts()]
    assert "float32" in legend and any(CJK.search(t) for t in legend)
    assert CJK.search(copy.axes[0].get_xlabel()) and CJK.search(copy.axes[0].get_ylabel())


def test_dashboard_readout_in_chinese_with_the_same_numbers():
    results = long_viz.load_results()
    view = long_viz.long_view("YaRN", 16384, results)
    english = long_viz.long_context_dashboard(results)
    with in_language("zh"):
        chinese = long_viz.long_context_dashboard(results)
    en_text, zh_text = english.readout.value, chinese.readout.value
    assert CJK.search(zh_text) and not CJK.search(en_text)
    assert f"{view.last_quarter:.1f}" in zh_text
    assert numbers(en_text) == numbers(zh_text), (en_text, zh_text)
