"""Chapter 2's long-range decay: the similarity curve read at offsets, its climb back, and the
position part of a score read by offset (chapter 3's closed form and shift matrix as the truth)."""

import pytest
import torch

from posenc_lib import (
    binary_encoding,
    integer_encoding,
    sinusoidal_encoding,
    sinusoidal_shift_matrix,
)
from posenc_lib.analysis.ch02_decay import decay_profile, rebound, score_by_offset
from posenc_lib.analysis.ch03_sinusoid import dot_by_offset

F64 = torch.float64


def test_rebound_is_the_largest_climb_above_the_running_minimum():
    # lowest so far: 1, 0.5, 0.5, 0.2, 0.2; heights above it: 0, 0, 0.3, 0, 0.1
    height, where = rebound(torch.tensor([1.0, 0.5, 0.8, 0.2, 0.3], dtype=F64))
    assert height == pytest.approx(0.3) and where == 2
    assert rebound(torch.linspace(1, -1, 50, dtype=F64)) == (0.0, 0)  # never rises: exactly 0
    assert rebound(torch.tensor([0.3], dtype=F64)) == (0.0, 0)


@pytest.mark.parametrize(
    "curve, fragment",
    [
        (torch.zeros(0), "empty"),
        (torch.tensor([1.0, float("nan")]), "NaN"),
        (torch.zeros(2, 2), "dimensions"),
        (torch.arange(3), "floating-point"),
    ],
)
def test_rebound_refuses_bad_curves_with_a_sentence(curve, fragment):
    with pytest.raises(ValueError, match=fragment):
        rebound(curve)


def test_the_sinusoidal_curve_is_chapter_3s_closed_form():
    # Every row has length sqrt(D/2), so the mean cosine at offset k is sum_i cos(k w_i) / (D/2).
    table = sinusoidal_encoding(512, 64, dtype=F64)
    offsets = (1, 10, 100, 200)
    profile = decay_profile(table, offsets)
    expected = dot_by_offset(torch.tensor(offsets), 64) / 32
    assert torch.allclose(torch.tensor(profile.values, dtype=F64), expected, atol=1e-12)
    curve = dot_by_offset(torch.arange(257), 64) / 32  # offsets 0 .. T / 2
    assert profile.lowest == pytest.approx(float(curve[1:].min()), abs=1e-12)
    assert profile.lowest_at == int(curve[1:].argmin()) + 1
    height, where = rebound(curve)
    assert profile.rebound == pytest.approx(height, abs=1e-12) and profile.rebound_at == where
    assert profile.rebound > 0.1  # it falls on average, and climbs back


def test_parallel_rows_never_decay_and_binary_climbs_back_at_a_power_of_two():
    integer = decay_profile(integer_encoding(256, 8, dtype=F64)[1:])  # rows all along (1, ..., 1)
    assert all(v == pytest.approx(1.0, abs=1e-12) for v in integer.values)
    assert integer.rebound < 1e-12
    binary = decay_profile(binary_encoding(1024, 64, dtype=F64)[1:])
    assert binary.rebound_at == 256 and binary.rebound > 0.4


def test_decay_profile_refuses_a_zero_row_and_offsets_past_the_end():
    with pytest.raises(ValueError, match="all zeros"):
        decay_profile(integer_encoding(16, 4))  # row 0 is the zero vector
    with pytest.raises(ValueError, match="offsets must be"):
        decay_profile(sinusoidal_encoding(16, 4), offsets=(1, 16))
    with pytest.raises(ValueError, match="offsets must be"):
        decay_profile(sinusoidal_encoding(16, 4), offsets=())


def test_a_shift_matrix_moves_the_peak_of_the_score_to_its_offset():
    pe = sinusoidal_encoding(256, 32, dtype=F64)
    plain = score_by_offset(pe @ pe.T)
    assert int(plain.argmax()) == 0 and float(plain[0]) == pytest.approx(16.0)
    shift = sinusoidal_shift_matrix(40, 32, dtype=F64)  # PE_t @ shift.T = PE_{t+40}
    moved = score_by_offset(pe @ shift.T @ pe.T)
    assert int(moved.argmax()) == 40 and float(moved[40]) == pytest.approx(16.0)
    assert float(moved[0]) == pytest.approx(float(plain[40]))


def test_score_by_offset_averages_each_diagonal_and_refuses_non_square():
    scores = torch.arange(9, dtype=F64).reshape(
        3, 3
    )  # diagonals k = 0, 1, 2: (0, 4, 8), (1, 5), (2,)
    assert score_by_offset(scores).tolist() == [4.0, 3.0, 2.0]
    with pytest.raises(ValueError, match="square"):
        score_by_offset(torch.zeros(2, 3))
