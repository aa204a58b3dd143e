"""The diagonal spread's one home (``analysis.toeplitz``) and the chapters that read it."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib.analysis import ch03_sinusoid, ch04_relative, ch05_alibi, ch06_rope, toeplitz


def by_hand(matrix):
    """(max - min) of the finite entries on each diagonal j - i, by Python loops. {offset: spread}"""
    n_q, n_k = matrix.shape
    out = {}
    for d in range(-(n_q - 1), n_k):
        values = [float(matrix[i, i + d]) for i in range(n_q) if 0 <= i + d < n_k]
        values = [v for v in values if math.isfinite(v)]
        out[d] = max(values) - min(values) if values else -math.inf
    return out


@given(n_q=st.integers(1, 7), n_k=st.integers(1, 7), seed=st.integers(0, 2**16))
def test_spread_by_offset_is_max_minus_min_on_each_diagonal(n_q, n_k, seed):
    matrix = torch.randn(n_q, n_k, generator=torch.Generator().manual_seed(seed))
    matrix[
        torch.rand(n_q, n_k, generator=torch.Generator().manual_seed(seed + 1)) < 0.2
    ] = -math.inf
    spreads = toeplitz.spread_by_offset(matrix)  # (O,)
    assert spreads.tolist() == pytest.approx(list(by_hand(matrix).values()))
    assert toeplitz.offset_matrix(n_q, n_k).tolist() == [
        [j - i for j in range(n_k)] for i in range(n_q)
    ]


def test_a_toeplitz_matrix_has_spread_0_and_one_bump_is_found_at_its_offset():
    n = 9
    base = torch.randn(2 * n - 1, dtype=torch.float64)
    matrix = base[toeplitz.offset_matrix(n) + n - 1]  # (T, T): a function of j - i
    assert toeplitz.diagonal_spread(matrix) == 0.0
    matrix[5, 2] += 3.0  # j - i = -3, m - n = +3
    assert toeplitz.diagonal_spread(matrix) == pytest.approx(3.0)
    assert ch06_rope.diagonal_spread(matrix) == pytest.approx((3.0, 3))  # offsets m - n
    assert ch05_alibi.diagonal_spread(matrix) == pytest.approx(3.0)


@given(n=st.integers(1, 9), heads=st.integers(1, 3), seed=st.integers(0, 2**16))
def test_every_chapters_diagonal_spread_reads_the_one_home(n, heads, seed):
    matrix = torch.randn(
        heads, n, n, dtype=torch.float64, generator=torch.Generator().manual_seed(seed)
    )
    worst = toeplitz.diagonal_spread(matrix)
    assert ch04_relative.diagonal_spread is toeplitz.diagonal_spread
    assert ch04_relative.offset_matrix is toeplitz.offset_matrix
    assert ch05_alibi.diagonal_spread(matrix) == worst
    assert max(ch06_rope.diagonal_spread(m)[0] for m in matrix) == worst


def test_masked_entries_are_left_out_and_an_all_masked_matrix_has_spread_0():
    causal = torch.zeros(4, 4).masked_fill(torch.ones(4, 4).triu(1).bool(), -math.inf)
    assert toeplitz.diagonal_spread(causal) == 0.0
    assert ch05_alibi.diagonal_spread(torch.full((3, 3), -math.inf)) == 0.0


def test_translation_spread_is_the_gram_matrixs_spread_on_offsets_0_to_k():
    table = torch.randn(12, 6, dtype=torch.float64)
    gram = table @ table.T
    expected = max(float(gram.diagonal(k).max() - gram.diagonal(k).min()) for k in range(5))
    assert ch03_sinusoid.translation_spread(table, 4) == expected


def test_bad_input_gets_a_sentence():
    with pytest.raises(ValueError, match="at least one entry"):
        toeplitz.diagonal_spread(torch.zeros(0, 3))
    with pytest.raises(ValueError, match="square"):
        ch06_rope.diagonal_spread(torch.zeros(2, 3))
