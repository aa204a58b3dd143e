"""Chapter 5's measurements: windows, sign conventions (against transformers' BLOOM and MPT code),
the reach of attention, one head for the dashboard, and bad input refused with a sentence."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close
from transformers.models.bloom.modeling_bloom import build_alibi_tensor
from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

from posenc_lib import alibi_bias, alibi_slopes
from posenc_lib.analysis.ch05_alibi import (
    CONVENTIONS,
    MAX_VIEW_POSITIONS,
    alibi_view,
    biased_softmax,
    convention_bias,
    diagonal_spread,
    effective_window,
    far_mass,
    head_bias,
    key_bias,
    ladder_size,
    needle_weight,
)

HEAD_COUNTS = [1, 2, 3, 5, 8, 12, 16, 20, 32, 40, 64, 71]


def test_the_window_is_where_the_weight_has_fallen_tenfold():
    slopes = alibi_slopes(8, dtype=torch.float64)
    window = effective_window(slopes)
    assert_close(window, math.log(10) / slopes)
    assert window[0].item() == pytest.approx(4.60517, abs=1e-5)  # m = 1/2
    assert window[-1].item() == pytest.approx(589.4618, abs=1e-4)  # m = 1/256
    # Measured with the library's bias: the first key whose weight is under a tenth of the
    # nearest key's is at distance ceil(window), for every head.
    weights = biased_softmax(torch.zeros(8, 1, 1000), alibi_bias(8, 1, 1000))[:, 0].flip(-1)
    for h in range(8):
        below = (weights[h] < weights[h, 0] / 10).nonzero()[0].item()
        assert below == math.ceil(window[h].item())
    assert_close(
        effective_window(0.25, 100.0), torch.tensor([math.log(100) * 4], dtype=torch.float64)
    )


@given(st.sampled_from(HEAD_COUNTS), st.integers(1, 40), st.booleans(), st.data())
def test_one_head_equals_that_head_of_the_full_bias_bit_for_bit(num_heads, n, causal, data):
    head = data.draw(st.integers(0, num_heads - 1))
    assert torch.equal(
        head_bias(num_heads, head, n, causal), alibi_bias(num_heads, n, causal=causal)[head]
    )


def test_one_head_past_the_cached_size_is_still_the_librarys():
    n = MAX_VIEW_POSITIONS + 37
    assert torch.equal(head_bias(5, 4, n), alibi_bias(5, n)[4])
    assert torch.equal(head_bias(5, 4, n, step=9), alibi_bias(5, n)[4, ::9, ::9])
    assert torch.equal(head_bias(12, 9, 500, step=4), alibi_bias(12, 500)[9, ::4, ::4])
    assert torch.equal(head_bias(5, 0, n, causal=False)[-3:], alibi_bias(5, 3, n, causal=False)[0])


@pytest.mark.parametrize("num_heads", HEAD_COUNTS)
def test_bloom_and_mpt_forms_are_transformers_own(num_heads):
    n = 19
    bloom = build_alibi_tensor(torch.ones(1, n), num_heads, torch.float32)[:, 0, :]  # (H, T)
    assert_close(key_bias(num_heads, n).T, bloom)
    assert_close(convention_bias("bloom", num_heads, n), bloom[:, None, :].expand(-1, n, -1))
    mpt = build_mpt_alibi_tensor(num_heads, n)  # (H, 1, T)
    assert_close(convention_bias("mpt", num_heads, n), mpt.expand(-1, n, -1))


@pytest.mark.parametrize("num_heads", HEAD_COUNTS)
def test_paper_and_symmetric_forms_are_the_librarys_bias(num_heads):
    n = 13
    paper, symmetric = (
        convention_bias("paper", num_heads, n),
        convention_bias("symmetric", num_heads, n),
    )
    library = alibi_bias(num_heads, n)
    assert torch.equal(paper.tril(), library.nan_to_num(neginf=0.0).tril())
    assert bool((paper.triu(1) >= 0).all())  # unmasked, the paper's formula rewards future keys
    assert torch.equal(symmetric, alibi_bias(num_heads, n, causal=False))


def test_every_convention_gives_the_same_causal_attention_but_not_without_the_mask():
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(12, 30, 30, generator=generator)  # (H, T, T)
    weights = {name: biased_softmax(logits, convention_bias(name, 12, 30)) for name in CONVENTIONS}
    for name in CONVENTIONS:
        assert_close(weights[name], weights["paper"])
    loose = {
        name: biased_softmax(logits, convention_bias(name, 12, 30), causal=False)
        for name in CONVENTIONS
    }
    assert (loose["bloom"] - loose["symmetric"]).abs().max() > 0.5
    assert_close(loose["bloom"], loose["mpt"])  # these two differ by one constant per row


def test_diagonal_spread_finds_what_depends_on_more_than_the_offset():
    assert diagonal_spread(convention_bias("paper", 8, 32)) == 0.0
    assert diagonal_spread(alibi_bias(8, 32)) == 0.0  # -inf entries ignored
    assert diagonal_spread(convention_bias("bloom", 8, 32)) == pytest.approx(0.5 * 31)
    bloom = convention_bias("bloom", 8, 32)
    centred = bloom - bloom.diagonal(dim1=-2, dim2=-1)[..., :, None]  # minus each row's m i
    assert diagonal_spread(centred) == 0.0
    assert diagonal_spread(torch.arange(12.0).reshape(3, 4)) == 10.0  # 0, 5, 10


def test_far_mass_is_a_finite_geometric_series():
    m, n, far = 0.25, 40, 7
    ratio = math.exp(-m)
    expected = (ratio ** (far + 1) - ratio**n) / (1 - ratio**n)
    assert far_mass(m, n, far).item() == pytest.approx(expected, rel=1e-12)
    assert far_mass([0.5, 1e-9], 10, 9).tolist() == [0.0, 0.0]  # nothing lies beyond the first key
    assert far_mass(1e-12, 10, 3).item() == pytest.approx(6 / 10)  # a flat head: uniform weights
    steep, flat = far_mass(alibi_slopes(8), 1024, 128)[[0, -1]].tolist()
    assert steep < 1e-25 and 0.5 < flat < 0.7


def test_needle_weight_is_a_softmax_with_one_raised_key():
    slopes, n, advantage = alibi_slopes(4, dtype=torch.float64), 50, 2.5
    distances = [0, 3, 20, 49]
    got = needle_weight(slopes, n, distances, advantage)  # (H, K)
    for k, d in enumerate(distances):
        content = torch.zeros(4, 1, n, dtype=torch.float64)
        content[..., n - 1 - d] = advantage
        brute = biased_softmax(content, alibi_bias(4, 1, n, dtype=torch.float64))[:, 0, n - 1 - d]
        assert_close(got[:, k], brute)
    # With no advantage the needle is just another key.
    assert_close(
        needle_weight(slopes, n, distances, 0.0),
        biased_softmax(
            torch.zeros(4, 1, n, dtype=torch.float64), alibi_bias(4, 1, n, dtype=torch.float64)
        )[:, 0].flip(-1)[:, distances],
    )


def test_ladder_size_is_the_largest_power_of_two_not_above_h():
    assert [ladder_size(h) for h in (1, 2, 3, 7, 8, 12, 16, 71)] == [1, 2, 2, 4, 8, 8, 16, 64]


def test_the_view_clamps_the_head_and_keeps_near_keys_when_the_sequence_grows():
    view = alibi_view(8, 0, 64)
    assert view.window == pytest.approx(math.log(10) * 2)
    assert view.weights_alibi.sum().item() == pytest.approx(1.0)
    assert view.weights_content.sum().item() == pytest.approx(1.0)
    assert view.near_alibi > 0.8 > 0.1 > view.near_content
    assert not view.clamped and view.ladder == 8 and view.bias.shape == (64, 64)
    assert torch.equal(view.bias, alibi_bias(8, 64)[0]) and view.bias_step == 1
    long = alibi_view(12, 9, 1000)  # a picture of at most 128 x 128: every 8th position
    assert long.bias_step == 8 and torch.equal(long.bias, alibi_bias(12, 1000)[9, ::8, ::8])
    clamped = alibi_view(12, 40, 100)
    assert clamped.clamped and clamped.head == 11 and clamped.num_heads == 12
    assert clamped.slopes[11].item() == pytest.approx(2**-3.5)
    # The key at distance d is the same whatever T: the content ratios of near keys agree.
    short, long = alibi_view(8, 7, 32), alibi_view(8, 7, 512)
    ratio_short = short.weights_content[:32] / short.weights_content[0]
    ratio_long = long.weights_content[:32] / long.weights_content[0]
    assert_close(ratio_short, ratio_long)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: effective_window([0.5, -1.0]), "finite numbers above 0"),
        (
            lambda: effective_window(0.5, factor=1.0),
            "factor must be a finite number greater than 1",
        ),
        (lambda: effective_window(torch.ones(2, 2)), "slopes must have 0 to 1 dimensions"),
        (lambda: effective_window("steep"), "a slope must be a real number"),
        (lambda: head_bias(8, 8, 10), "head must be in 0..7"),
        (lambda: head_bias(8, 0, 10, step=0), "step must be at least 1"),
        (lambda: convention_bias("gpt", 8, 10), "name must be one of 'paper'"),
        (lambda: far_mass(0.5, 10, -1), "distance must be >= 0"),
        (lambda: far_mass(0.5, 0, 1), "n_keys must be at least 1"),
        (lambda: needle_weight(0.5, 10, [10], 1.0), "distances must lie in 0..9"),
        (lambda: needle_weight(0.5, 10, [1.5], 1.0), "distances must hold whole numbers"),
        (lambda: biased_softmax(torch.zeros(3, 4), torch.zeros(2, 5)), "cannot be added"),
        (lambda: biased_softmax(torch.zeros(5, 4)), "T_k >= T_q"),
        (lambda: alibi_view(8, -1, 10), "head must be >= 0"),
        (lambda: alibi_view(8, 0, MAX_VIEW_POSITIONS + 1), "n_positions must be at most 1024"),
        (lambda: alibi_view(8, 0, 1), "at least 2"),
        (lambda: diagonal_spread(torch.zeros(3)), "bias must have 2 or more dimensions"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()
