"""The learned-table analysis: similarity by offset, PCA, and sin/cos-like pairs, checked on tables
whose answers are known exactly (sinusoids), on bad input, and pinned on MiniLM's real table."""

import math
import re

import pytest
import torch

from posenc_lib import sinusoidal_encoding
from posenc_lib.analysis.ch03_sinusoid import dot_by_offset
from posenc_lib.analysis.learned_table import (
    PCA,
    component_pairs,
    cosine_at_offset,
    cosine_by_offset,
    cosine_matrix,
    dominant_period,
    first_offset_below,
    pair_rotation,
    principal_components,
    smoothed_noise,
    without_components,
)


def _rotations(periods, amplitudes, n_pos=512, dim=64, noise=0.0, seed=0):
    """(T, D) float64: one (cos, sin) pair per period, in random orthogonal planes, plus noise."""
    generator = torch.Generator().manual_seed(seed)
    t = torch.arange(n_pos, dtype=torch.float64)[:, None]  # (T, 1)
    periods = torch.tensor(periods, dtype=torch.float64)  # (P,)
    amplitudes = torch.tensor(amplitudes, dtype=torch.float64)  # (P,)
    phases = 2 * math.pi * torch.rand(len(periods), generator=generator, dtype=torch.float64)
    angles = 2 * math.pi * t / periods + phases  # (T, P)
    waves = torch.cat([amplitudes * angles.cos(), amplitudes * angles.sin()], dim=1)  # (T, 2P)
    basis, _ = torch.linalg.qr(torch.randn(dim, dim, generator=generator, dtype=torch.float64))
    table = waves @ basis[: waves.shape[1]]  # (T, D)
    return table + noise * torch.randn(n_pos, dim, generator=generator, dtype=torch.float64)


# -- similarity by offset ---------------------------------------------------------------------------


def test_the_sinusoidal_tables_curve_is_its_closed_form():
    # Every row of the sinusoidal table has length sqrt(D/2), and <PE_t, PE_t+k> = sum_i cos(k w_i):
    # the mean cosine at offset k is that sum over D/2, at every k.
    table = sinusoidal_encoding(300, 32, dtype=torch.float64)
    curve = cosine_by_offset(table)  # (300,)
    closed = dot_by_offset(torch.arange(300), 32) / 16
    assert torch.allclose(curve, closed, atol=1e-12)
    assert cosine_at_offset(table, 7) == pytest.approx(float(closed[7]), abs=1e-12)


def test_the_cosine_matrix_is_symmetric_with_ones_on_the_diagonal_and_ignores_row_lengths():
    table = torch.randn(20, 5, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    cosines = cosine_matrix(table)
    assert cosines.shape == (20, 20) and cosines.dtype == torch.float64
    assert torch.allclose(cosines, cosines.T) and torch.allclose(
        cosines.diagonal(), torch.ones(20, dtype=torch.float64)
    )
    scaled = (
        table * torch.linspace(0.1, 9, 20, dtype=torch.float64)[:, None]
    )  # rows of other lengths
    assert torch.allclose(cosine_matrix(scaled), cosines, atol=1e-12)


def test_the_curve_at_offset_k_averages_the_t_minus_k_pairs():
    table = torch.randn(9, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    for k in range(9):
        pairs = [
            float(torch.cosine_similarity(table[t], table[t + k], dim=0)) for t in range(9 - k)
        ]
        assert cosine_at_offset(table, k) == pytest.approx(sum(pairs) / len(pairs), abs=1e-9)
        assert float(cosine_by_offset(table)[k]) == pytest.approx(sum(pairs) / len(pairs))


def test_the_first_offset_below_a_threshold_on_a_single_turning_pair():
    # One pair turning 2 pi / 40 per step: cos at offset k is cos(2 pi k / 40) exactly, so it drops
    # below cos(2 pi 5.5 / 40) first at k = 6, below 0 first at k = 11 (cos(2 pi 10 / 40) = 0).
    table = _rotations([40.0], [1.0], n_pos=100, dim=2)
    assert first_offset_below(table, math.cos(2 * math.pi * 5.5 / 40)) == 6
    assert first_offset_below(table, -0.01) == 11
    assert first_offset_below(table, -1.0) == 100  # never strictly below -1: returns T


def test_the_strict_comparison_on_a_curve_that_hits_the_threshold_exactly():
    # Sliding +-1 windows: cos(P_t, P_t+k) = 1 - 4k / 64 exactly, 0.5 at k = 8.
    j, t = torch.arange(64)[None, :], torch.arange(30)[:, None]
    table = torch.where((j - t) % 64 < 32, 1.0, -1.0)  # (30, 64)
    assert float(cosine_by_offset(table)[8]) == 0.5
    assert first_offset_below(table, 0.5) == 9


# -- principal components and pairs -----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(4))
def test_pairs_of_known_sinusoids_are_found_with_their_periods_within_2_percent(seed):
    periods = [7.3, 23.0, 81.0, 250.0]
    table = _rotations(periods, [2.0, 1.6, 1.2, 0.9], noise=0.05, seed=seed)
    pca = principal_components(table, 10)
    pairs = component_pairs(pca)
    assert [(p.first, p.second) for p in pairs] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    for pair, period in zip(pairs, periods, strict=True):
        assert pair.period == pytest.approx(period, rel=0.02)
        assert pair.quadrature > 0.99
    assert float(pca.explained[8:].sum()) < 0.01  # the noise holds almost nothing


@pytest.mark.parametrize("period", [3.1, 11.0, 100.0, 170.0, 250.0, 400.0])
def test_the_pair_period_beats_a_single_components_peak(period):
    # With two turns or more in the table, the pair gives the period within 0.2% at any phase; a
    # single wave's peak is pulled aside by its mirror peak (4% at two turns). Below two turns,
    # taking off the mean of a partial turn biases both: 1.3 turns (period 400), within 3%.
    t = torch.arange(512, dtype=torch.float64)
    pair_tolerance, single_tolerance = (0.002, 0.05) if period <= 256 else (0.03, 0.07)
    for phase in torch.linspace(0, 6, 7).tolist():
        angle = 2 * math.pi * t / period + phase
        found, quadrature = pair_rotation(angle.cos(), angle.sin())
        assert found == pytest.approx(period, rel=pair_tolerance)
        assert quadrature == pytest.approx(1.0, abs=1e-3 if period <= 256 else 0.02)
        assert dominant_period(angle.cos()) == pytest.approx(period, rel=single_tolerance)


def test_quadrature_is_one_for_sin_and_cos_and_zero_for_waves_in_step():
    angle = 2 * math.pi * torch.arange(256, dtype=torch.float64) / 16
    assert pair_rotation(angle.cos(), angle.sin())[1] == pytest.approx(1.0, abs=1e-9)
    assert pair_rotation(angle.cos(), 3 * angle.cos())[1] == pytest.approx(0.0, abs=1e-9)
    # 2AB |sin(p - q)| / (A^2 + B^2) for amplitudes 1 and 2, a quarter turn apart: 0.8.
    assert pair_rotation(angle.cos(), 2 * angle.sin())[1] == pytest.approx(0.8, abs=1e-6)


def test_pca_is_a_centred_svd_with_shares_that_add_up_and_a_fixed_sign():
    table = torch.randn(50, 8, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    pca = principal_components(table)
    assert isinstance(pca, PCA) and pca.scores.shape == (50, 8)
    assert float(pca.explained.sum()) == pytest.approx(1.0)
    assert bool((pca.explained[:-1] >= pca.explained[1:]).all())
    rebuilt = pca.scores @ pca.directions + pca.mean  # (50, 8)
    assert torch.allclose(rebuilt, table, atol=1e-12)
    flipped = principal_components(-table)  # the same components, the same signs
    largest = pca.scores.gather(0, pca.scores.abs().argmax(0, keepdim=True))
    assert bool((largest > 0).all())
    assert torch.allclose(flipped.explained, pca.explained)


def test_a_rank_deficient_table_gives_no_pairs_from_its_empty_components():
    table = _rotations([10.0], [1.0], n_pos=64, dim=6)  # rank 2
    pairs = component_pairs(principal_components(table))
    assert [(p.first, p.second) for p in pairs] == [(0, 1)]
    assert pairs[0].period == pytest.approx(10.0, rel=0.01)


# -- bad input ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: cosine_matrix([[1.0, 2.0]]), "torch.Tensor"),
        (lambda: cosine_matrix(torch.ones(5)), "2 dimensions"),
        (lambda: cosine_matrix(torch.ones(4, 3, dtype=torch.int64)), "floating-point"),
        (lambda: cosine_matrix(torch.ones(1, 3)), "at least 2 rows"),
        (
            lambda: cosine_matrix(torch.tensor([[1.0, 0.0], [0.0, 0.0]])),
            "row 1 of table is all zeros",
        ),
        (lambda: cosine_matrix(torch.tensor([[1.0, float("nan")], [1.0, 0.0]])), "NaN"),
        (lambda: cosine_matrix(torch.ones(9000, 2)), "at most 8192"),
        (lambda: cosine_at_offset(torch.ones(5, 2), 5), "0..4"),
        (lambda: cosine_at_offset(torch.ones(5, 2), 1.5), "whole number"),
        (lambda: first_offset_below(torch.ones(5, 2), 1.5), "[-1, 1]"),
        (lambda: first_offset_below(torch.ones(5, 2), "0.5"), "real number"),
        (lambda: principal_components(torch.ones(5, 2)), "no variance"),
        (lambda: principal_components(torch.randn(5, 3), 4), "at most min(T, D) = 3"),
        (lambda: principal_components(torch.randn(5, 3), 0), "at least 1"),
        (lambda: component_pairs(torch.randn(5, 3)), "result of principal_components"),
        (lambda: component_pairs(principal_components(torch.randn(9, 3)), 0), "(0, 1]"),
        (lambda: pair_rotation(torch.randn(8), torch.randn(9)), "same length"),
        (lambda: pair_rotation(torch.ones(8), torch.randn(8)), "constant"),
        (lambda: pair_rotation(torch.randn(3), torch.randn(3)), "at least 4"),
        (lambda: dominant_period(torch.zeros(8)), "constant"),
        (lambda: dominant_period(torch.randn(2, 8)), "1 dimensions"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()


# -- the real table -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm_table():
    from posenc_lib.models.minilm import position_weight

    return position_weight()  # (512, 384)


def test_minilm_similarity_fades_with_ripples(minilm_table):
    curve = cosine_by_offset(minilm_table)
    pinned = {1: 0.851, 2: 0.592, 3: 0.440, 5: 0.659, 10: 0.320, 100: 0.154, 300: -0.075}
    for k, value in pinned.items():
        assert float(curve[k]) == pytest.approx(value, abs=5e-4), k
    assert first_offset_below(minilm_table, 0.5) == 3
    assert first_offset_below(minilm_table, 0.1) == 67


def test_minilm_components_pair_into_four_rotations(minilm_table):
    pca = principal_components(minilm_table, 12)
    assert float(pca.explained.sum()) == pytest.approx(0.960, abs=2e-3)
    pairs = component_pairs(pca)
    found = [(p.first, p.second, round(p.period, 1)) for p in pairs]
    assert found == [(0, 1, 5.7), (3, 5, 162.2), (4, 6, 53.7), (7, 9, 17.0)]
    assert all(p.quadrature > 0.97 for p in pairs)
    assert sum(p.explained for p in pairs) == pytest.approx(0.717, abs=2e-3)


def test_without_components_takes_out_exactly_the_named_components():
    table = _rotations([8.0, 40.0], [1.0, 0.5], noise=0.01)  # (512, 64)
    pca = principal_components(table)
    left = without_components(table, pca, [1, 2])  # the fast pair's plane removed
    centred = left - left.mean(0)
    assert (centred @ pca.directions[:2].T).abs().max() < 1e-10  # nothing left along PC 1, 2
    assert torch.allclose(left @ pca.directions[2:].T, table @ pca.directions[2:].T, atol=1e-10)
    everything = without_components(table, pca, range(1, pca.scores.shape[1] + 1))
    assert torch.allclose(everything, table.mean(0).expand_as(table), atol=1e-10)  # the mean row


@pytest.mark.parametrize("components", [[0], [65], [1.5]])
def test_without_components_refuses_components_that_do_not_exist(components):
    table = _rotations([8.0], [1.0])
    with pytest.raises(ValueError, match="component"):
        without_components(table, principal_components(table), components)


def test_without_components_refuses_the_pca_of_another_table():
    table = _rotations([8.0], [1.0])
    with pytest.raises(ValueError, match="not of this"):
        without_components(table[:100], principal_components(table), [1])


def test_smoothed_noise_is_smooth_nearby_unrelated_far_and_repeatable():
    table = smoothed_noise(10.0, generator=torch.Generator().manual_seed(0))
    assert table.shape == (512, 384) and table.dtype == torch.float64
    assert abs(float(table.var()) - 1.0) < 0.1  # a unit-norm kernel keeps unit variance
    assert cosine_at_offset(table, 1) > 0.95 and abs(cosine_at_offset(table, 100)) < 0.05
    again = smoothed_noise(10.0, generator=torch.Generator().manual_seed(0))
    assert torch.equal(table, again)


@pytest.mark.parametrize("width", [0, -3.0, float("nan"), "wide"])
def test_smoothed_noise_refuses_a_width_that_is_not_positive(width):
    with pytest.raises(ValueError, match="width"):
        smoothed_noise(width)
