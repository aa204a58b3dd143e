"""Chapter 6's measurements (analysis/ch06_rope.py) and its dashboard: the claims the lecture prints, checked
on more inputs, against closed forms and against transformers where it implements the same thing."""

import math

import matplotlib.pyplot as plt
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close
from transformers import LlamaConfig
from transformers.core_model_loading import PermuteForRope
from transformers.models.gpt_neox.modeling_gpt_neox import apply_rotary_pos_emb as neox_rotary

from posenc_lib import rope_cos_sin, rope_inv_freq, sinusoidal_encoding
from posenc_lib.analysis import ch06_rope
from posenc_lib.viz.ch06_rope import rope_dashboard
from posenc_lib.viz.registry import DASHBOARDS

F64 = torch.float64
STYLES = ("half", "interleaved")


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


# -- the rotation and the offset-only score --------------------------------------------------------


@given(
    half=st.integers(1, 24),
    n=st.integers(2, 40),
    seed=st.integers(0, 999),
    base=st.floats(2.0, 1e6),
)
def test_scores_depend_on_the_offset_only_and_equal_the_complex_closed_form(half, n, seed, base):
    q, k = _randn(2, 2 * half, seed=seed)
    for style in STYLES:
        spread = ch06_rope.offset_spread(q, k, n, base, style)
        assert spread.worst <= 1e-10 * (1 + spread.scale)
        assert spread.closed_form_gap <= 1e-10 * (1 + spread.scale)
        assert spread.n_pairs == n * n and spread.n_offsets == 2 * n - 1


def test_added_position_vectors_are_not_offset_only():
    q, k = ch06_rope.random_query_key(64)
    pe = sinusoidal_encoding(128, 64, dtype=F64)
    worst, at = ch06_rope.diagonal_spread((q + pe) @ (k + pe).T)
    assert worst > 10 and -127 <= at <= 127


def test_diagonal_spread_finds_the_offending_diagonal():
    scores = torch.zeros(5, 5, dtype=F64)
    scores[3, 1] = 2.0  # on the diagonal m - n = 2
    assert ch06_rope.diagonal_spread(scores) == (2.0, 2)
    assert ch06_rope.diagonal_spread(torch.ones(4, 4, dtype=F64)) == (0.0, -3)


# -- layouts ----------------------------------------------------------------------------------------


@given(half=st.integers(1, 32), n=st.integers(1, 20), seed=st.integers(0, 999))
def test_layout_permutation_maps_one_rotation_onto_the_other(half, n, seed):
    d = 2 * half
    x = _randn(n, d, seed=seed)
    for source, target in (("interleaved", "half"), ("half", "interleaved")):
        p = ch06_rope.layout_permutation(d, source, target)
        assert_close(
            ch06_rope.rotate(x[:, p], n, style=target), ch06_rope.rotate(x, n, style=source)[:, p]
        )
        back = ch06_rope.layout_permutation(d, target, source)
        assert torch.equal(p[back], torch.arange(d))  # the two directions are inverses
    assert torch.equal(ch06_rope.layout_permutation(d, "half", "half"), torch.arange(d))


def test_layout_permutation_for_eight_dims():
    assert ch06_rope.layout_permutation(8).tolist() == [0, 2, 4, 6, 1, 3, 5, 7]
    assert ch06_rope.layout_permutation(8, "half", "interleaved").tolist() == [
        0,
        4,
        1,
        5,
        2,
        6,
        3,
        7,
    ]


@pytest.mark.parametrize("heads, head_dim", [(1, 8), (4, 32), (3, 12)])
def test_convert_projection_equals_transformers_permute_for_rope(heads, head_dim):
    config = LlamaConfig(hidden_size=heads * head_dim, num_attention_heads=heads, head_dim=head_dim)
    w = torch.randn(heads * head_dim, 24)  # nn.Linear weight: (out, in)
    theirs = PermuteForRope().convert({"w": [w]}, ["w"], ["w"], config)["w"]
    assert torch.equal(ch06_rope.convert_projection(w.T, heads).T, theirs)
    back = ch06_rope.convert_projection(
        ch06_rope.convert_projection(w.T, heads), heads, "half", "interleaved"
    )
    assert torch.equal(back, w.T)


def llama_script_permute(w, n_heads):
    """``permute()`` of transformers' src/transformers/models/llama/convert_llama_weights_to_hf.py.

    The script is in the transformers repository, not in the installed package, so its one line is
    restated here: each head's rows (out features), read as (D/2 pairs, 2), become (2, D/2).
    """
    dim1, dim2 = w.shape
    return w.view(n_heads, dim1 // n_heads // 2, 2, dim2).transpose(1, 2).reshape(dim1, dim2)


@pytest.mark.parametrize("heads, head_dim", [(1, 8), (4, 32), (3, 12)])
def test_convert_projection_equals_the_llama_conversion_scripts_permute(heads, head_dim):
    w = torch.randn(heads * head_dim, 24)  # nn.Linear weight of Meta's checkpoint: (out, in)
    # Only entries move, so equality is exact.
    assert torch.equal(ch06_rope.convert_projection(w.T, heads).T, llama_script_permute(w, heads))


@pytest.mark.parametrize("source", STYLES)
def test_converted_weights_give_the_logits_they_were_made_for(source):
    target = "half" if source == "interleaved" else "interleaved"
    x, w_q, w_k = _randn(40, 12), _randn(12, 16, seed=1), _randn(12, 16, seed=2)
    made = ch06_rope.attention_logits(x, w_q, w_k, source)
    mixed = ch06_rope.attention_logits(x, w_q, w_k, target)
    fixed = ch06_rope.attention_logits(
        x, ch06_rope.convert_projection(w_q, 1, source, target), ch06_rope.convert_projection(w_k, 1, source, target), target
    )  # fmt: skip
    assert_close(fixed, made)
    errors = ch06_rope.error_by_offset(made, mixed, [0, 1, 2, 10, 40])  # four bands of m - n
    assert float(errors[0]) < 1e-12  # nothing turns on the diagonal
    assert 0.1 < float(errors[1]) < float(errors[3]) and float(errors[3]) > 0.8  # then worse


def test_error_by_offset_bands_pool_the_distances():
    reference, other = _randn(30, 30, seed=4), _randn(30, 30, seed=5)
    per_distance = ch06_rope.error_by_offset(reference, other)
    bands = ch06_rope.error_by_offset(reference, other, [0, 1, 5, 30])
    assert per_distance.shape == (30,) and bands.shape == (3,)
    assert_close(bands[0], per_distance[0])
    diff = other - reference
    rows = range(1, 5)  # the band 1 <= m - n < 5
    num = sum(float(diff.diagonal(-d).pow(2).sum()) for d in rows)
    den = sum(float(reference.diagonal(-d).pow(2).sum()) for d in rows)
    assert bands[1].item() == pytest.approx(math.sqrt(num / den))


# -- decay and mismatch -----------------------------------------------------------------------------


@pytest.mark.parametrize("d, base", [(8, 10000.0), (64, 100.0), (128, 500000.0)])
def test_decay_bound_equals_its_definition(d, base):
    distances = torch.tensor([0, 1, 7, 250, 9000], dtype=F64)
    theta = base ** (-torch.arange(0, d, 2, dtype=F64) / d)
    phases = torch.polar(torch.ones(5, d // 2, dtype=F64), distances[:, None] * theta)
    expected = phases.cumsum(-1).abs().mean(-1)  # (1 / (D/2)) sum_{j=1}^{D/2} |S_j|
    assert_close(ch06_rope.decay_bound(distances, d, base), expected)
    assert ch06_rope.decay_bound([0], d, base).item() == (d // 2 + 1) / 2


def test_decay_bound_in_blocks_equals_one_go():
    far = torch.arange(0, 9000)
    together = ch06_rope.decay_bound(far, 32)
    assert_close(together[4096:4100], ch06_rope.decay_bound(far[4096:4100], 32))


def test_the_bound_rises_again_at_long_range():
    """The lecture's point: the relative bound is not monotone; for D = 32 it comes back above its
    value at distance 10, past a thousand tokens."""
    rel = ch06_rope.decay_bound(torch.arange(0, 20000), 32)
    rel = rel / rel[0]
    assert float(rel[1001:].max()) > float(rel[10]) > float(rel[1:1001].min())


def test_mean_score_is_one_at_zero_and_near_the_mean_cosine():
    distances = [0, 1, 10, 100, 1000]
    measured = ch06_rope.mean_score(distances, 32, n_samples=4000)
    theta = rope_inv_freq(32, dtype=F64)[0]
    expected = torch.cos(torch.tensor(distances, dtype=F64)[:, None] * theta).mean(-1)
    assert measured[0].item() == pytest.approx(1.0)
    assert float((measured - expected).abs().max()) < 0.03
    assert torch.equal(ch06_rope.mean_score(distances, 32, n_samples=300, seed=2), ch06_rope.mean_score(distances, 32, n_samples=300, seed=2))  # fmt: skip


def test_mismatch_score_is_one_when_matched_and_the_mean_cosine_of_the_phase_error_otherwise():
    positions = torch.tensor([0.0, 5.0, 300.0, 7000.0], dtype=F64)
    theta, other = rope_inv_freq(16, dtype=F64)[0], rope_inv_freq(16, 12000.0, dtype=F64)[0]
    assert_close(ch06_rope.mismatch_score(positions, theta), torch.ones(4, dtype=F64))
    expected = torch.cos(positions[:, None] * (theta - 0.9 * other)).mean(-1)
    assert_close(ch06_rope.mismatch_score(positions, theta, other, 0.9), expected)


# -- partial rotary, yardstick view -----------------------------------------------------------------


def test_partial_rotate_equals_gpt_neox():
    x = _randn(2, 3, 10, 32)  # (B, H, T, D)
    cos, sin = rope_cos_sin(10, rope_inv_freq(8, dtype=F64)[0])  # (T, 8): the rotary dims only
    theirs, _ = neox_rotary(x, x, cos[None], sin[None])
    ours = ch06_rope.partial_rotate(x, 10, 8)
    assert_close(ours, theirs)
    assert torch.equal(ours[..., 8:], x[..., 8:])  # the rest passes through
    assert_close(ch06_rope.partial_rotate(x, 10, 32), ch06_rope.rotate(x, 10))


def test_rotating_zero_one_pairs_gives_the_sinusoidal_table_with_sines_negated():
    copies = ch06_rope.rotated_copies(torch.tensor([0.0, 1.0] * 8, dtype=F64), 300)
    copies[:, 0::2] *= -1
    assert_close(copies, sinusoidal_encoding(300, 16, dtype=F64))


# -- the dashboard's computation and the dashboard ---------------------------------------------------


def test_rotation_view_agrees_with_itself_and_the_rotation():
    q, k = ch06_rope.random_query_key(16, seed=1)
    view = ch06_rope.rotation_view(q, k, 40, 12, 1000.0, pair=3, max_offset=60)
    assert view.offsets.shape == view.curve.shape == view.pair_curve.shape == (121,)
    assert view.score == pytest.approx(float(view.curve[28 + 60]), abs=1e-10)
    assert_close(view.curve, ch06_rope.complex_scores(q, k, view.offsets, 1000.0))
    assert view.q_pair.norm().item() == pytest.approx(1.0)
    z = ch06_rope.as_complex(q, "half")[3]
    angle = math.atan2(float(view.q_pair[1]), float(view.q_pair[0]))
    turned = math.atan2(z.imag, z.real) + 40 * view.theta
    assert math.isclose(math.remainder(angle - turned, 2 * math.pi), 0.0, abs_tol=1e-9)
    assert ch06_rope.score_bound(q, k) >= float(view.curve.abs().max())


def test_the_dashboard_is_registered_and_its_readout_shows_offset_only_scores():
    assert DASHBOARDS["ch06: rotate q and k"] is rope_dashboard
    dashboard = rope_dashboard()
    dashboard.set(m=40, n=12)
    first = dashboard.result.score
    assert "the curve at m &minus; n = 28" in dashboard.readout.value
    assert (
        f"<b>{first:.4f}</b>; the curve at m &minus; n = 28: <b>{first:.4f}</b>"
        in dashboard.readout.value
    )
    dashboard.set(m=90, n=62)  # the same m - n: the same score, the dot stays put
    assert dashboard.result.score == pytest.approx(first, abs=1e-10)
    assert dashboard.plot.dot.get_xdata()[0] == 28
    assert dashboard.plot.dot.get_ydata()[0] == pytest.approx(first)
    dashboard.set(n=95)  # m - n = -5: the dot moves to the curve's value there
    assert dashboard.plot.marker.get_xdata()[0] == -5
    assert dashboard.result.score == pytest.approx(
        float(dashboard.result.curve[-5 + 127]), abs=1e-10
    )
    plt.close(dashboard.figure)


def test_the_dashboard_draws_the_pair_turned_by_its_position():
    dashboard = rope_dashboard()
    dashboard.set(m=7, n=0, pair=0, base=10.0)
    view = dashboard.result
    q_line = dashboard.plot.q_arrow.get_xydata()[1]
    assert q_line.tolist() == pytest.approx(view.q_pair.tolist())
    assert view.theta == 1.0  # pair 0 turns one radian per position, whatever the base
    changes = dashboard.changes
    dashboard.set(base=1e6)
    assert dashboard.result.theta == 1.0 and dashboard.changes == changes + 1
    plt.close(dashboard.figure)


def test_the_dashboard_refuses_bad_settings_with_a_sentence():
    with pytest.raises(ValueError, match="head_dim must be even"):
        rope_dashboard(head_dim=7)
    with pytest.raises(ValueError, match="max_position must be at most 4096"):
        rope_dashboard(max_position=10_000)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda: ch06_rope.rotate(torch.ones(3, 4), [0, 1]),
            "positions has 2 entries but x has T = 3",
        ),
        (lambda: ch06_rope.rotate(torch.ones(3, 5), 3), "must be even"),
        (lambda: ch06_rope.rotate(torch.ones(3, 4), 3, style="neox"), "style must be one of"),
        (lambda: ch06_rope.rotate(torch.ones(2, 4), [0, float("nan")]), "must be a finite number"),
        (lambda: ch06_rope.complex_scores(torch.ones(4), torch.ones(6), 3), "same head_dim"),
        (lambda: ch06_rope.score_matrix(torch.ones(4), torch.ones(4), 10_000), "at most 8192"),
        (lambda: ch06_rope.diagonal_spread(torch.ones(3, 4)), "square"),
        (lambda: ch06_rope.layout_permutation(7), "must be even"),
        (
            lambda: ch06_rope.convert_projection(torch.ones(4, 10), 3),
            "do not split into n_heads = 3",
        ),
        (
            lambda: ch06_rope.attention_logits(
                torch.ones(5, 3), torch.ones(4, 8), torch.ones(4, 8)
            ),
            "D_in = 3",
        ),
        (
            lambda: ch06_rope.error_by_offset(torch.ones(4, 4), torch.ones(4, 4), [0, 5]),
            "edges must be",
        ),
        (lambda: ch06_rope.error_by_offset(torch.ones(4, 4), torch.ones(3, 3)), "one shape"),
        (lambda: ch06_rope.decay_bound([], 8), "distances is empty"),
        (lambda: ch06_rope.mean_score([1], 8, n_samples=0), "n_samples must be at least 1"),
        (
            lambda: ch06_rope.mismatch_score([1], torch.ones(4), torch.ones(3)),
            "one frequency per pair",
        ),
        (lambda: ch06_rope.mismatch_score([1], torch.ones(4), scale_k=0), "scale_k must be"),
        (lambda: ch06_rope.partial_rotate(torch.ones(2, 8), 2, 10), "more than x's 8 dims"),
        (lambda: ch06_rope.rotation_view(torch.ones(4), torch.ones(4), -1, 0), "0 or more"),
        (
            lambda: ch06_rope.rotation_view(torch.ones(4), torch.ones(4), 1, 0, pair=2),
            "pair must be in 0..1",
        ),
        (lambda: ch06_rope.rotated_copies(torch.ones(2, 4), 5), "u must have 1 dimensions"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()
