"""The math core's input checks speak Chinese (中文) when asked, with the same numbers, and English
exactly as before.

A learner's bad input (``sinusoidal_encoding(10, 7)``) gets a sentence, not a traceback: in Chinese
when the language is Chinese, including the reason a caller passes in (``why``, ``kind``, ``what``:
English phrases marked N_ where they are written and translated when the sentence is built).
Argument names are code and stay as they are.
"""

from __future__ import annotations

import re

import pytest
import torch

from posenc_lib import _validate as validate
from posenc_lib.absolute import LearnedPositionalEmbedding, binary_encoding, sinusoidal_encoding
from posenc_lib.alibi import alibi_bias, alibi_slopes
from posenc_lib.attention import causal_mask, self_attention
from posenc_lib.bounds import FLOAT64, bound
from posenc_lib.i18n import in_language
from posenc_lib.relative import t5_relative_position_bucket
from posenc_lib.rope import apply_rope, rope_cos_sin, rope_inv_freq

CJK = re.compile(r"[\u3400-\u9fff]")
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]\d+)?")


def _numbers(text: str) -> list[str]:
    return sorted(NUMBER.findall(text))


def _messages(call) -> dict[str, str]:
    """The ValueError's message in English and in Chinese."""
    messages = {}
    for language in ("en", "zh"):
        with in_language(language), pytest.raises(ValueError) as caught:
            call()
        messages[language] = str(caught.value)
    return messages


# (a bad call, its English message exactly as before the translation, the code names the Chinese
# keeps)
CASES = [
    (
        lambda: sinusoidal_encoding(10, 7),
        "d_model must be even, got 7: the encoding is built from (sin, cos) pairs.",
        ["d_model", "sin", "cos"],
    ),
    (
        lambda: alibi_slopes(0),
        "num_heads must be at least 1, got 0. ALiBi needs at least one head.",
        ["num_heads", "ALiBi"],
    ),
    (
        lambda: sinusoidal_encoding(2.5, 8),
        "n_positions must be a positive whole number, got 2.5 of type float.",
        ["n_positions", "float"],
    ),
    (
        lambda: sinusoidal_encoding(10, 8, base=0.5),
        "base must be a finite number greater than 1, got 0.5.",
        ["base"],
    ),
    (
        lambda: binary_encoding(100, 3),
        "binary_encoding with d_model=3 has only 2**3 = 8 distinct codes, but n_positions=100 "
        "positions were asked for; positions would share codes. Use d_model >= 7.",
        ["binary_encoding", "d_model", "n_positions", "d_model"],
    ),
    (
        lambda: LearnedPositionalEmbedding(4, 8)(10),
        "a sequence of 10 tokens needs positions 0..9, and position 4 is past the end of this "
        "learned table, which has max_len=4 rows (positions 0..3). A learned table only has rows "
        "for the positions it was built and trained for, so it cannot extrapolate to longer "
        "sequences: there is no row to look up. Build a longer table (and train it), or use an "
        "encoding defined at every position (sinusoidal, ALiBi, RoPE).",
        ["token", "max_len", "ALiBi", "RoPE"],
    ),
    (
        lambda: causal_mask(2**17),
        "the causal mask would hold 1.72e+10 values (64 GiB in float32); the limit is 2.15e+09. "
        "Ask for fewer positions or dims.",
        ["GiB"],
    ),
    (
        lambda: alibi_bias(4096, 4096, 4096),
        "an ALiBi bias of shape (4096, 4096, 4096) would hold 6.87e+10 values (256 GiB in "
        "float32); the limit is 2.15e+09. Ask for fewer positions or dims.",
        ["ALiBi", "GiB"],
    ),
    (
        lambda: self_attention(torch.randn(4, 8), torch.randn(8, 4), torch.randn(8, 4), None),
        "w_v must be a torch.Tensor (expected shape (8, d)), got NoneType.",
        ["w_v", "torch.Tensor", "NoneType"],
    ),
    (
        lambda: t5_relative_position_bucket(torch.tensor([1.5])),
        "relative_position must hold whole-number offsets (an integer tensor), got dtype "
        "torch.float32.",
        ["relative_position", "dtype", "torch.float32"],
    ),
    (
        lambda: apply_rope(torch.randn(4, 7), *rope_cos_sin(4, rope_inv_freq(8)[0])),
        "x.shape[-1] (head_dim) must be even, got 7: RoPE rotates the dims in pairs.",
        ["x.shape[-1] (head_dim)", "RoPE"],
    ),
    (
        lambda: rope_inv_freq(8, scaling={"rope_type": "linear"}),
        "rope_type 'linear' needs the keys ['factor']; got [].",
        ["rope_type", "'linear'", "['factor']"],
    ),
]


@pytest.mark.parametrize("call, english, names", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_bad_input_in_chinese_with_the_same_numbers(call, english, names):
    messages = _messages(call)
    assert messages["en"] == english  # English is the source, byte for byte
    chinese = messages["zh"]
    assert CJK.search(chinese), chinese
    assert _numbers(chinese) == _numbers(english), chinese
    for name in names:  # code names stay code
        assert name in chinese, (name, chinese)


@pytest.mark.parametrize(
    "call, phrase",
    [
        (lambda: alibi_slopes(0), "ALiBi needs at least one head."),  # positive_int's why
        (lambda: sinusoidal_encoding(10, 7), "built from"),  # even_int's why
        (lambda: sinusoidal_encoding(True, 8), "whole number"),  # whole_int's kind
        (lambda: t5_relative_position_bucket(torch.tensor([1.5])), "offsets"),  # integer_tensor's
        (lambda: causal_mask(2**17), "causal mask"),  # table_size's what
    ],
    ids=["why", "even-why", "kind", "what", "table"],
)
def test_a_callers_fragment_is_translated_in_the_sentence(call, phrase):
    messages = _messages(call)
    assert phrase in messages["en"]
    assert phrase not in messages["zh"] and CJK.search(messages["zh"]), messages["zh"]


def test_a_table_too_large_names_it_in_chinese_with_its_shape():
    with in_language("zh"), pytest.raises(ValueError) as caught:
        sinusoidal_encoding(2**20, 2**20)
    message = str(caught.value)
    assert "(1048576, 1048576)" in message and "位置表" in message
    assert "position table" not in message


def test_validators_in_chinese():
    cases = [
        lambda: validate.positive_int("n", 0),
        lambda: validate.whole_int("n", "a"),
        lambda: validate.real_number("x", "a"),
        lambda: validate.positive_float("x", 0.5, 1.0, inclusive=True),
        lambda: validate.boolean("flag", 1),
        lambda: validate.tensor("t", torch.ones(2), 2, 2),
        lambda: validate.tensor("t", torch.ones(2), 3, 4, "(B, T, D)"),
        lambda: validate.float_tensor("t", torch.ones(2, dtype=torch.int64)),
        lambda: validate.integer_tensor("ids", torch.ones(2)),
        lambda: validate.table_dtype(torch.int32, None),
        lambda: validate.choice("style", "x", ("half", "interleaved")),
        lambda: validate.whole_int("n", 10**400),
    ]
    for call in cases:
        messages = _messages(call)
        assert not CJK.search(messages["en"]), messages["en"]
        assert CJK.search(messages["zh"]), messages["zh"]
        assert _numbers(messages["zh"]) == _numbers(messages["en"]), messages


def test_bound_speaks_chinese():
    assert bound(1e-7) == "below 1e-5"
    with in_language("zh"):
        assert bound(1e-7) == "低于 1e-5"
        assert bound(1e-12, FLOAT64) == "低于 1e-10"
        assert bound(0.5) == "5.0e-01"  # a real difference keeps its digits
