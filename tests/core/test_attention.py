"""Self-attention: the formula, permutation equivariance (chapter 1), biases and masks."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

from posenc_lib import causal_mask, self_attention, sinusoidal_encoding


def _weights(d, d_k, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(d, d_k, generator=g, dtype=torch.float64) for _ in range(3)]


def test_matches_the_textbook_formula():
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    w_q, w_k, w_v = _weights(8, 4)
    out, weights = self_attention(x, w_q, w_k, w_v)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    expected = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(4), -1)
    assert_close(weights, expected)
    assert_close(out, expected @ v)
    assert_close(weights.sum(-1), torch.ones(2, 5, dtype=torch.float64))


@given(n=st.integers(2, 12), seed=st.integers(0, 10_000))
def test_permuting_the_tokens_permutes_the_outputs(n, seed):
    """Attn(P X) = P Attn(X): without positions, attention cannot tell order."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 6, generator=g, dtype=torch.float64)
    w = _weights(6, 6, seed)
    perm = torch.randperm(n, generator=g)
    out, weights = self_attention(x, *w)
    out_p, weights_p = self_attention(x[perm], *w)
    assert_close(out_p, out[perm])
    assert_close(weights_p, weights[perm][:, perm])


def test_positions_break_the_symmetry():
    x = torch.randn(6, 8, dtype=torch.float64)
    w = _weights(8, 8)
    perm = torch.tensor([2, 0, 1, 5, 4, 3])
    pe = sinusoidal_encoding(6, 8, dtype=torch.float64)
    out, _ = self_attention(x + pe, *w)
    out_p, _ = self_attention(x[perm] + pe, *w)
    assert (out_p - out[perm]).abs().max() > 1e-2


@pytest.mark.parametrize("causal", [False, True])
def test_agrees_with_torch_scaled_dot_product_attention(causal):
    x = torch.randn(3, 7, 8, dtype=torch.float64)
    w_q, w_k, w_v = _weights(8, 4, seed=3)
    bias = torch.randn(7, 7, dtype=torch.float64)
    out, _ = self_attention(x, w_q, w_k, w_v, bias=bias, causal=causal)
    mask = bias.masked_fill(causal_mask(7), float("-inf")) if causal else bias
    theirs = torch.nn.functional.scaled_dot_product_attention(
        x @ w_q, x @ w_k, x @ w_v, attn_mask=mask
    )
    assert_close(out, theirs)


def test_a_query_that_sees_no_key_is_refused():
    bias = torch.zeros(3, 3)
    bias[1] = float("-inf")
    with pytest.raises(ValueError, match="every key masked"):
        self_attention(torch.randn(3, 4), *[w.float() for w in _weights(4, 4)], bias=bias)


def test_causal_mask_hides_the_future():
    x = torch.randn(5, 4)
    _, weights = self_attention(x, *[w.float() for w in _weights(4, 4)], causal=True)
    assert torch.all(weights[causal_mask(5)] == 0)
    assert weights[0, 0] == 1
    assert causal_mask(3).tolist() == [
        [False, True, True],
        [False, False, True],
        [False, False, False],
    ]


def test_bias_is_added_to_the_logits_and_a_head_bias_adds_a_head_dim():
    x = torch.randn(3, 4, 8)
    w = [t.float() for t in _weights(8, 4)]
    bias = torch.randn(2, 4, 4)
    out, weights = self_attention(x, *w, bias=bias)
    assert out.shape == (3, 2, 4, 4) and weights.shape == (3, 2, 4, 4)
    for h in range(2):
        out_h, weights_h = self_attention(x, *w, bias=bias[h])
        assert_close(out[:, h], out_h)
        assert_close(weights[:, h], weights_h)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((torch.randn(8),), "x must have 2 or more dimensions"),
        ((torch.randn(4, 8), torch.randn(7, 4)), "w_q has shape \\(7, 4\\).*8 rows"),
        ((torch.randn(4, 8), torch.randn(8, 4), torch.randn(8, 3)), "same size"),
        (
            (
                torch.randn(4, 8),
                torch.randn(8, 4),
                torch.randn(8, 4),
                torch.randn(8, 4),
                torch.randn(5, 5),
            ),
            "must end in \\(4, 4\\)",
        ),
        (([[1.0]],), "x must be a torch.Tensor"),
        ((torch.ones(4, 8, dtype=torch.long),), "x must hold real floating-point numbers"),
        ((torch.randn(4, 8, dtype=torch.float64),), "w_q is torch.float32 but x is torch.float64"),
        ((torch.randn(4, 8), torch.randn(8, 0), torch.randn(8, 0)), "at least one column"),
        ((torch.randn(0, 8),), "at least one position"),
        (
            (
                torch.randn(4, 8),
                torch.randn(8, 4),
                torch.randn(8, 4),
                torch.randn(8, 4),
                None,
                "no",
            ),
            "causal must be True or False",
        ),
        (
            (
                torch.randn(4, 8),
                torch.randn(8, 4),
                torch.randn(8, 4),
                torch.randn(8, 4),
                torch.zeros(4, 4, dtype=torch.float64),
            ),
            "bias is torch.float64 but x is torch.float32",
        ),
    ],
)
def test_bad_input_gets_a_sentence(args, message):
    defaults = [
        torch.randn(4, 8),
        torch.randn(8, 4),
        torch.randn(8, 4),
        torch.randn(8, 4),
        None,
        False,
    ]
    call = list(args) + defaults[len(args) :]
    with pytest.raises(ValueError, match=message):
        self_attention(*call)


# -- the sliding-window mask --------------------------------------------------------------------


def test_a_window_as_long_as_the_text_is_the_causal_mask():
    from posenc_lib.attention import sliding_window_mask

    assert torch.equal(sliding_window_mask(7, 7), causal_mask(7))
    assert torch.equal(sliding_window_mask(7, 100), causal_mask(7))


@pytest.mark.parametrize("window", [1, 2, 3, 5])
def test_each_query_sees_exactly_the_last_window_tokens_itself_included(window):
    from posenc_lib.attention import sliding_window_mask

    mask = sliding_window_mask(9, window)  # (9, 9), True = hidden
    for i in range(9):
        visible = [j for j in range(9) if not mask[i, j]]
        assert visible == list(range(max(0, i - window + 1), i + 1)), (i, visible)


def test_a_bad_window_gets_a_sentence():
    from posenc_lib.attention import sliding_window_mask

    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(5, 0)
    with pytest.raises(ValueError, match="window"):
        sliding_window_mask(5, 2.5)
