"""Chapter 3's claims on any table (``analysis.ch03_tables``): the shift map, offset-only dot
products, the direction gap, and the two column layouts."""

import pytest
import torch
from torch.testing import assert_close

from posenc_lib import sinusoidal_encoding, sinusoidal_shift_matrix
from posenc_lib.analysis import ch03_sinusoid
from posenc_lib.analysis.ch03_tables import (
    best_linear_shift,
    direction_gap,
    score_direction_gap,
    shift_error,
    to_concatenated,
    to_interleaved,
    translation_spread,
)

F64 = {"dtype": torch.float64}


def test_chapter_3_still_exports_the_helpers():
    for name in ("shift_error", "best_linear_shift", "translation_spread", "to_interleaved"):
        assert getattr(ch03_sinusoid, name).__module__ == "posenc_lib.analysis.ch03_tables"


def test_shift_helpers_confirm_the_rotation_and_refute_sin_alone():
    table = sinusoidal_encoding(512, 32, **F64)
    for k in (1, 5, -40, 300):
        assert shift_error(table, k) < 1e-12
        assert best_linear_shift(table, k)[1] < 1e-10
    # With every pair turning many times in the table, the least-squares map is M_k itself (with
    # base 10000 the slowest pairs barely move in 512 steps, and many maps fit equally well).
    fast = sinusoidal_encoding(512, 8, 10.0, **F64)
    for k in (1, -7):
        m, _ = best_linear_shift(fast, k)
        assert_close(m, sinusoidal_shift_matrix(k, 8, 10.0, **F64), atol=1e-8, rtol=0)
    t = torch.arange(512, dtype=torch.float64)[:, None]
    sin_only = (t * 10000 ** (-torch.arange(32, dtype=torch.float64) / 32)).sin()  # (T, 32)
    assert best_linear_shift(sin_only, 5)[1] > 0.1


def test_translation_spread_and_direction_gap_tell_sinusoids_from_random_tables():
    pe = sinusoidal_encoding(300, 16, **F64)
    noise = torch.randn(300, 16, generator=torch.Generator().manual_seed(0), **F64)
    assert translation_spread(pe, 299) < 1e-10 and translation_spread(noise, 20) > 1
    assert direction_gap(pe) < 1e-10 and direction_gap(noise) > 1


def test_a_query_projection_gives_the_scores_a_direction():
    pe = sinusoidal_encoding(200, 32, **F64)
    w = sinusoidal_shift_matrix(5, 32, **F64)  # the query of t is PE_{t+5}
    scores = (pe @ w.T) @ pe.T  # (T, T)
    assert scores[100, 105].item() == pytest.approx(16) and scores[100, 95] < 16
    assert score_direction_gap(scores) > 1 and score_direction_gap(pe @ pe.T) < 1e-10


def test_direction_gap_matches_its_definition():
    table = torch.randn(9, 4, generator=torch.Generator().manual_seed(1), **F64)
    expected = max(
        abs(float(table[t] @ table[t + k] - table[t] @ table[t - k]))
        for k in range(1, 5)
        for t in range(k, 9 - k)
    )
    assert direction_gap(table) == pytest.approx(expected)


def test_layouts_are_one_permutation_with_identical_dot_products():
    pe = sinusoidal_encoding(200, 32, **F64)
    concatenated = to_concatenated(pe)
    assert torch.equal(to_interleaved(concatenated), pe)
    assert_close(concatenated @ concatenated.T, pe @ pe.T, atol=1e-12, rtol=0)
