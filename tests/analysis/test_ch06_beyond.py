"""Chapter 6 beyond the basics: shifting the text, the base's wavelength and radix, a period in the
signal, and 2-D RoPE on a grid."""

import math

import pytest
import torch

from posenc_lib.analysis import ch06_beyond as cb
from posenc_lib.rope_scaling import ntk_base

F64 = torch.float64


def test_shifting_the_text_changes_nothing_unless_the_values_turn():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(12, 8, generator=g, dtype=F64)
    w = torch.randn(3, 8, 8, generator=g, dtype=F64) / 3
    gaps = cb.shift_gaps(x, *w, 37)
    # float64 rounding of angles below 50 radians: far below 1e-10
    assert gaps.qk_scores < 1e-10 and gaps.qk_outputs < 1e-10 and gaps.v_turned_back < 1e-10
    assert gaps.v_outputs > 0.1 * gaps.output_rms
    assert cb.shift_gaps(x, *w, 0).v_outputs == 0.0  # no shift: the same computation twice


def test_shift_gaps_rejects_mismatched_weights():
    x = torch.randn(4, 8)
    with pytest.raises(ValueError, match="D_in"):
        cb.shift_gaps(x, torch.randn(8, 4), torch.randn(8, 4), torch.randn(6, 4), 1)


@pytest.mark.parametrize("head_dim", [8, 64, 128])
def test_smallest_base_gives_the_context_as_the_slowest_wavelength(head_dim):
    for length in (100, 4096, 131072):
        base = cb.smallest_base(length, head_dim)
        assert cb.slowest_wavelength(head_dim, base) == pytest.approx(length, rel=1e-12)
    assert cb.slowest_wavelength(128, 10000.0) == pytest.approx(2 * math.pi * 10000 ** (126 / 128))


def test_smallest_base_rejects_a_head_dim_below_4():
    with pytest.raises(ValueError, match="at least 4"):
        cb.smallest_base(100, 2)


def test_digits_radix_and_ntk():
    digits = cb.position_digits([2024, 7], 8, 10000.0)
    assert digits.beta == pytest.approx(10.0)
    expected = torch.tensor([2024.0, 202.4, 20.24, 2.024], dtype=F64) % (2 * math.pi)
    torch.testing.assert_close(digits.angles[0], expected, atol=1e-9, rtol=0)
    torch.testing.assert_close(
        digits.turns[1] * 2 * math.pi, 7 * 10.0 ** -torch.arange(4.0, dtype=F64)
    )
    wide = cb.position_digits([1], 8, 10000.0, {"rope_type": "ntk", "factor": 8.0})
    assert wide.beta == pytest.approx(
        ntk_base(10000.0, 8.0, 8) ** (2 / 8)
    ) and wide.beta == pytest.approx(20.0)


def test_helical_sequence_puts_an_a_every_period():
    letters = cb.helical_sequence(200, period=10.5, seed=3)
    phased = [round(10.5 * j) for j in range(19)]  # Python rounds halves to even, as torch does
    assert bool((letters[phased] == 0).all()) and letters.min() >= 0 and letters.max() <= 3
    assert torch.equal(letters, cb.helical_sequence(200, period=10.5, seed=3))


def test_lag_profile_of_a_tuned_pair_is_a_cosine_of_the_lag():
    letters = cb.helical_sequence(600, seed=0)
    profile = cb.lag_profile(letters, torch.tensor([2 * math.pi / 10.5], dtype=F64), max_lag=30)
    torch.testing.assert_close(profile.score, torch.cos(2 * math.pi * profile.lags.double() / 10.5))
    is_a = (letters == 0).double()
    assert float(profile.recurrence[20]) == pytest.approx(float((is_a[21:] * is_a[:-21]).mean()))
    assert int(profile.recurrence.argmax()) + 1 in (10, 21)


def test_grid_scores_depend_on_offsets_and_raster_confuses_rows():
    g = torch.Generator().manual_seed(2)
    q, k = torch.randn(2, 16, generator=g, dtype=F64)
    scores = cb.grid_scores(q, k, 4, 5)
    spread, count = cb.grid_offset_spread(scores, 4, 5)
    assert spread < 1e-10 and count == 7 * 9
    raster = cb.grid_scores(q, k, 4, 5, raster=True)
    # query (1, 0) = index 5 vs key (0, 4) = index 4, and query (0, 1) vs key (0, 0): index 1 apart
    assert abs(raster[5, 4] - raster[1, 0]) < 1e-12
    assert abs(scores[5, 4] - scores[1, 0]) > 1e-3
    shuffled = scores.clone()
    shuffled[0, 1] += 1.0
    assert cb.grid_offset_spread(shuffled, 4, 5)[0] == pytest.approx(1.0)


def test_grid_scores_reject_a_head_dim_not_a_multiple_of_4():
    with pytest.raises(ValueError, match="rows and columns"):
        cb.grid_scores(torch.randn(6), torch.randn(6), 2, 2)
