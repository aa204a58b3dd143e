"""Chapter 3's add-or-concatenate math: the four terms of a score, concatenation, near-orthogonality
of random directions, and what dropout (as torch.nn.Dropout does it) leaves of the positions."""

import math

import pytest
import torch
from torch.testing import assert_close

from posenc_lib import sinusoidal_encoding
from posenc_lib.analysis import ch03_add_concat
from posenc_lib.analysis.ch03_add_concat import (
    concatenated_score,
    cross_terms_by_width,
    dropout_positions,
    mean_abs_cosine,
    random_abs_cosine,
    score_terms,
)

F64 = {"dtype": torch.float64}


def _tokens(n, d, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=generator, **F64), torch.randn(
        n, d, generator=generator, **F64
    )


def test_the_four_terms_add_up_to_the_score_of_the_sums_and_each_is_its_product():
    wq, pq = _tokens(3, 6, 0)
    wk, pk = _tokens(5, 6, 1)
    terms = score_terms(wq, pq, wk, pk)
    assert terms.shape == (4, 3, 5) and terms.dtype == torch.float64
    assert_close(terms.sum(0), (wq + pq) @ (wk + pk).T, atol=1e-12, rtol=0)
    for term, (a, b) in zip(terms, ((wq, wk), (wq, pk), (pq, wk), (pq, pk)), strict=True):
        assert_close(term, a @ b.T, atol=1e-12, rtol=0)  # the same product (BLAS may reorder)
    # Queries are rows: swapping the two sides transposes word.word and swaps the cross terms.
    swapped = score_terms(wk, pk, wq, pq)
    assert_close(swapped[1], terms[2].T, atol=1e-12, rtol=0)


def test_concatenation_keeps_word_word_plus_pos_pos_and_allows_another_width():
    wq, pq = _tokens(4, 8, 2)
    wk, pk = _tokens(4, 8, 3)
    terms = score_terms(wq, pq, wk, pk)
    assert_close(concatenated_score(wq, pq, wk, pk), terms[0] + terms[3], atol=1e-12, rtol=0)
    # The sum minus the concatenation is exactly the two cross terms.
    added = (wq + pq) @ (wk + pk).T
    assert_close(
        added - concatenated_score(wq, pq, wk, pk), terms[1] + terms[2], atol=1e-12, rtol=0
    )
    narrow_q, narrow_k = pq[:, :3], pk[:, :3]  # a 3-wide position code beside 8-wide words
    assert concatenated_score(wq, narrow_q, wk, narrow_k).shape == (4, 4)


def test_mean_abs_cosine_is_0_for_orthogonal_sets_1_for_parallel_ones_and_blocks_agree(monkeypatch):
    eye = torch.eye(6, **F64)
    assert mean_abs_cosine(eye[:3], eye[3:]) == 0.0
    assert mean_abs_cosine(eye[:2], -3 * eye[:2]) == pytest.approx(0.5)  # |cos| 1 on the diagonal
    a, b = _tokens(50, 7, 4)
    whole = mean_abs_cosine(a, b)
    monkeypatch.setattr(ch03_add_concat, "_CHUNK", 8)  # 50 rows in blocks of 8
    assert mean_abs_cosine(a, b) == pytest.approx(whole, rel=1e-12)


def test_random_abs_cosine_matches_the_known_values_and_a_simulation():
    assert random_abs_cosine(1) == 1.0
    assert random_abs_cosine(2) == pytest.approx(2 / math.pi)  # E|cos theta|, theta uniform
    assert random_abs_cosine(3) == pytest.approx(0.5)  # E|z| for z uniform on [-1, 1]
    assert random_abs_cosine(10_000) == pytest.approx(math.sqrt(2 / (math.pi * 10_000)), rel=1e-3)
    a, b = _tokens(400, 64, 5)
    # 160,000 pairs, but only 800 independent vectors: 3% is several standard errors wide.
    assert mean_abs_cosine(a, b) == pytest.approx(random_abs_cosine(64), rel=0.03)


def test_cross_terms_fade_like_one_over_sqrt_d_and_follow_the_seed():
    widths = (16, 64, 256, 1024)
    result = cross_terms_by_width(widths, n_pairs=2048)
    assert result.widths == list(widths)
    for d, cosine in zip(widths, result.word_position_cosine, strict=True):
        assert cosine * math.sqrt(d) == pytest.approx(math.sqrt(2 / math.pi), rel=0.05)
    gaps = result.cosine_gap
    assert all(later < earlier for earlier, later in zip(gaps, gaps[1:], strict=False))
    assert gaps[0] / gaps[-1] == pytest.approx(8.0, rel=0.15)  # 1024 / 16 = 64 = 8^2
    assert cross_terms_by_width(widths, n_pairs=2048) == result
    assert cross_terms_by_width(widths, n_pairs=2048, seed=1) != result


def test_dropout_positions_agrees_with_torch_dropout():
    # keep * x / (1 - p), with keep read off nn.functional.dropout's own output, is that output.
    table = sinusoidal_encoding(64, 16, **F64)
    words = torch.randn(3, 64, 16, generator=torch.Generator().manual_seed(6), **F64)
    torch.manual_seed(0)
    out = torch.nn.functional.dropout(words + table, p=0.25, training=True)
    keep = out != 0
    # rtol 1e-6: torch's 1 / (1 - p) carries a float32 rounding (3e-8 relative), even in float64.
    assert_close(keep / 0.75 * (words + table), out, atol=0, rtol=1e-6)
    result = dropout_positions(table, words, keep, 0.25)
    assert result.recovered_sum == float(
        ((out @ table.T).argmax(-1) == torch.arange(64)).double().mean()
    )


def test_without_dropout_nothing_changes_and_with_it_the_cosine_is_sqrt_1_minus_p():
    table = sinusoidal_encoding(128, 32, **F64)
    words = torch.randn(4, 128, 32, generator=torch.Generator().manual_seed(7), **F64)
    everything = torch.ones(4, 128, 32, dtype=torch.bool)
    clean = dropout_positions(table, words, everything, 1e-12, offset=3)
    assert clean.cosine == pytest.approx(1.0) and clean.recovered_alone == 1.0
    assert clean.recovered_sum == clean.recovered_sum_clean
    assert clean.dot_clean == pytest.approx(float(table[0] @ table[3]))
    assert clean.dot_mean == pytest.approx(clean.dot_clean, abs=1e-9)  # offset-only: every t
    assert clean.dot_spread < 1e-9
    generator = torch.Generator().manual_seed(8)
    for p in (0.1, 0.5):
        keep = torch.rand(4, 128, 32, generator=generator) >= p
        dropped = dropout_positions(table, words, keep, p, offset=3)
        assert dropped.cosine == pytest.approx(math.sqrt(1 - p), abs=0.01)
        assert dropped.dot_mean == pytest.approx(dropped.dot_clean, rel=0.05)  # unbiased
        assert dropped.dot_spread > 0.05 * dropped.dot_clean
        assert dropped.recovered_alone < 1.0 or p == 0.1


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda: score_terms(torch.ones(3, 4), torch.ones(2, 4), torch.ones(3, 4), torch.ones(3, 4)), "same shape"),
        (lambda: score_terms(torch.ones(3, 4), torch.ones(3, 4), torch.ones(3, 5), torch.ones(3, 5)), "same width D"),
        (lambda: score_terms(torch.ones(3, 4, dtype=torch.long), torch.ones(3, 4), torch.ones(3, 4), torch.ones(3, 4)), "floating-point"),
        (lambda: concatenated_score(torch.ones(3, 4), torch.ones(2, 2), torch.ones(3, 4), torch.ones(3, 2)), "one position vector"),
        (lambda: mean_abs_cosine(torch.ones(3, 4), torch.ones(3, 5)), "same width D"),
        (lambda: random_abs_cosine(0), "at least 1"),
        (lambda: cross_terms_by_width([15]), "must be even"),
        (lambda: dropout_positions(torch.ones(4, 2), torch.ones(1, 4, 2), torch.ones(1, 4, 2), 0.1), "boolean mask"),
        (lambda: dropout_positions(torch.ones(4, 2), torch.ones(1, 4, 2), torch.ones(1, 4, 3, dtype=torch.bool), 0.1), "must have shape"),
        (lambda: dropout_positions(torch.ones(4, 2), torch.ones(1, 4, 2), torch.ones(1, 4, 2, dtype=torch.bool), 1.0), "below 1"),
        (lambda: dropout_positions(torch.ones(4, 2), torch.ones(1, 4, 2), torch.ones(1, 4, 2, dtype=torch.bool), 0.1, offset=4), "offset"),
    ],
)  # fmt: skip
def test_bad_input_gets_a_sentence(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()
