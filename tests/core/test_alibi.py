"""ALiBi: slopes equal BLOOM's in transformers, the bias shape and sign, softmax equivalence."""

import math

import pytest
import torch
from torch.testing import assert_close
from transformers.models.bloom.modeling_bloom import build_alibi_tensor

from posenc_lib import alibi_bias, alibi_slopes


def bloom_slopes(num_heads):
    mask = torch.ones(1, 3)
    alibi = build_alibi_tensor(mask, num_heads, torch.float32)  # (H, 1, 3): slope_h * j
    return alibi[:, 0, 1]


@pytest.mark.parametrize("num_heads", [1, 2, 3, 5, 6, 8, 12, 16, 20, 24, 32, 40, 64, 71, 112])
def test_slopes_equal_bloom(num_heads):
    assert_close(alibi_slopes(num_heads), bloom_slopes(num_heads))


def test_slopes_for_eight_heads_are_the_papers():
    assert alibi_slopes(8).tolist() == [2.0**-k for k in range(1, 9)]
    assert alibi_slopes(16)[0].item() == pytest.approx(2**-0.5)


def test_bias_is_minus_slope_times_distance():
    bias = alibi_bias(4, 6)
    slopes = alibi_slopes(4)
    assert bias.shape == (4, 6, 6)
    for h in range(4):
        for i in range(6):
            for j in range(6):
                expected = -slopes[h] * (i - j) if j <= i else float("-inf")
                assert bias[h, i, j].item() == pytest.approx(float(expected))
    sym = alibi_bias(4, 6, causal=False)
    assert torch.equal(sym, sym.transpose(-1, -2)) and torch.all(sym <= 0)
    assert_close(sym.tril(), bias.nan_to_num(neginf=0.0).tril())


def test_queries_are_the_last_positions_when_keys_are_longer():
    full = alibi_bias(3, 10)
    assert_close(alibi_bias(3, 2, 10), full[:, 8:, :])


def test_bloom_sign_convention_gives_the_same_attention():
    """BLOOM adds +m*j; the paper adds -m*(i-j). Per row they differ by m*i, which softmax ignores."""
    heads, n = 6, 9
    logits = torch.randn(heads, n, n)
    mask = torch.ones(n, n, dtype=torch.bool).triu(1)
    bloom = build_alibi_tensor(torch.ones(1, n), heads, torch.float32)  # (H, 1, T)
    theirs = torch.softmax((logits + bloom).masked_fill(mask, -math.inf), -1)
    ours = torch.softmax(logits + alibi_bias(heads, n), -1)
    assert_close(ours, theirs)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: alibi_slopes(0),
            "num_heads must be at least 1, got 0. ALiBi needs at least one head",
        ),
        (lambda: alibi_bias(4, 5, 3), "k_len=3 is shorter than q_len=5"),
        (lambda: alibi_bias(4, 5, causal=1), "causal must be True or False"),
        (lambda: alibi_bias(4, 0), "q_len must be at least 1"),
        (lambda: alibi_slopes(10**9), "num_heads must be at most 65536"),
        (lambda: alibi_bias(2, 3, dtype=torch.int64), "floating-point torch.dtype"),
        (lambda: alibi_bias(64, 10**5), "would hold"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()
