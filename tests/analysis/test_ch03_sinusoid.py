"""Chapter 3's math: wavelengths, offset-only dot products and distances, the confusion criterion,
the tensor2tensor layout (agreeing with Hugging Face's copies), bad input. The verification
helpers on any table: test_ch03_tables.py."""

import math
import re

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

from posenc_lib import sinusoidal_encoding
from posenc_lib.analysis.ch03_sinusoid import (
    best_linear_shift,
    confusion,
    direction_gap,
    dot_by_offset,
    longest_wavelength,
    mixing,
    nearest_non_neighbour,
    offset_distances,
    scan_bases,
    score_direction_gap,
    shift_error,
    similarity_by_decade,
    similarity_by_offset_range,
    sinusoid_view,
    smallest_unambiguous_base,
    tensor2tensor_encoding,
    to_concatenated,
    to_interleaved,
    translation_spread,
    wavelengths,
)

F64 = {"dtype": torch.float64}


def test_wavelengths_are_geometric_from_2pi_to_2pi_base_to_the_d_minus_2_over_d():
    for d, base in ((8, 10000.0), (64, 1000.0), (512, 10.0)):
        lam = wavelengths(d, base)
        assert lam.shape == (d // 2,)
        assert lam[0].item() == pytest.approx(2 * math.pi)
        assert longest_wavelength(d, base) == pytest.approx(2 * math.pi * base ** ((d - 2) / d))
        ratios = lam[1:] / lam[:-1]
        assert_close(ratios, torch.full_like(ratios, base ** (2 / d)))
    # The popular "2 pi * base" is an upper limit the ladder approaches but never reaches.
    assert longest_wavelength(64, 1000.0) < 2 * math.pi * 1000 < 6284


@given(
    d_half=st.integers(1, 24),
    base=st.floats(1.5, 1e5),
    t=st.integers(0, 3000),
    k=st.integers(-400, 400),
)
def test_dot_and_distance_depend_on_the_offset_only(d_half, base, t, k):
    d = 2 * d_half
    t = t + max(0, -k)
    pe = sinusoidal_encoding(t + max(k, 0) + 1, d, base, **F64)
    assert_close(dot_by_offset(k, d, base)[0], pe[t] @ pe[t + k], atol=1e-9, rtol=0)
    assert_close(offset_distances(k, d, base)[0], (pe[t] - pe[t + k]).norm(), atol=1e-9, rtol=1e-9)
    # ||a - b||^2 = D - 2 <a, b> for vectors of squared length D/2
    assert_close(
        offset_distances(k, d, base) ** 2, d - 2 * dot_by_offset(k, d, base), atol=1e-9, rtol=0
    )


def test_dot_by_offset_is_even_and_peaks_at_zero():
    k = torch.arange(-500, 501)
    dots = dot_by_offset(k, 32, 100.0)
    assert_close(dots, dots.flip(0), atol=1e-12, rtol=0)
    assert dots[500].item() == pytest.approx(16) and bool((dots <= 16 + 1e-12).all())


def test_offsets_accept_numbers_lists_and_tensors():
    for offsets in (3, [3], (3,), range(3, 4), torch.tensor([3]), torch.tensor(3.0)):
        assert dot_by_offset(offsets, 8).shape == (1,)
    assert dot_by_offset([1.5, -2], 8).shape == (2,)


def test_brute_force_nearest_non_neighbour_agrees_with_the_closed_form():
    for d, base in ((64, 1000.0), (8, 10000.0), (16, 10.0)):
        n = 600
        table = sinusoidal_encoding(n, d, base, **F64)
        distance, offset = nearest_non_neighbour(table, block=128)
        closed = offset_distances(torch.arange(2, n), d, base)  # (T-2,)
        # Row t sees offsets up to max(t, T-1-t); the middle row's nearest is the closed form's
        # minimum over k <= T/2.
        middle = n // 2
        assert distance[middle].item() == pytest.approx(float(closed[: n // 2 - 1].min()))
        assert abs(int(offset[middle])) == 2 + int(closed[: n // 2 - 1].argmin())
        # Every row's nearest is one of the closed-form distances.
        assert bool((distance >= float(closed.min()) - 1e-9).all())


def test_the_nearest_non_neighbour_skips_the_window():
    table = sinusoidal_encoding(50, 16, **F64)
    for window in (1, 3):
        _, offset = nearest_non_neighbour(table, window=window)
        assert bool((offset.abs() > window).all())


def test_confusion_finds_the_known_cases():
    # d = 8, base 10000: the fastest pair (wavelength 2 pi) dominates the step, and 6 steps is
    # almost a full turn of it, while the other pairs have barely moved.
    assert confusion(100, 8, 10000.0).first_offset == 6
    # d = 64, base 1000: nothing within 50000 positions comes as close as a neighbour.
    far = confusion(50000, 64, 1000.0)
    assert far.first_offset is None and far.margin > 1.5
    assert confusion(50000, 64, 1000.0, window=99).margin > 3
    # All frequencies within a factor 1.5: every pair turns about once in 6 to 7 steps.
    assert confusion(4096, 64, 1.5).first_offset in (6, 7)


@given(d_half=st.integers(1, 12), base=st.floats(1.1, 1e4), n=st.integers(3, 400))
def test_confusion_agrees_with_a_table(d_half, base, n):
    d = 2 * d_half
    table = sinusoidal_encoding(n, d, base, **F64)
    dist = (table - table[0]).norm(dim=-1)  # dist(k) for k = 0 .. T-1
    result = confusion(n, d, base)
    bad = (dist[2:] <= dist[1]).nonzero()
    assert result.first_offset == (int(bad[0, 0]) + 2 if bad.numel() else None)
    assert result.margin == pytest.approx(float(dist[2:].min() / dist[1]), rel=1e-9)
    assert (result.margin > 1) == (result.first_offset is None)
    assert result.step == pytest.approx(float(dist[1]), rel=1e-9)


def test_confusion_works_in_blocks_across_the_block_edge():
    a = confusion(20000, 8, 1000.0, window=5000)
    table_k = torch.arange(5001, 20000)
    dist = offset_distances(table_k, 8, 1000.0)
    assert a.margin == pytest.approx(float(dist.min() / offset_distances(1, 8, 1000.0)[0]))
    assert a.closest_offset == 5001 + int(dist.argmin())


def test_smallest_unambiguous_base_scans_every_candidate():
    grid = [round(1 + j / 100, 2) for j in range(1, 300)]
    assert smallest_unambiguous_base(4096, 64, grid) == pytest.approx(1.55)
    assert smallest_unambiguous_base(4096, 64, list(reversed(grid))) == pytest.approx(1.55)
    # Not monotone: 1.7 fails for d = 16 at T = 1000 where 1.6 and 1.8 pass.
    assert confusion(1000, 16, 1.7).first_offset == 860
    assert smallest_unambiguous_base(1000, 16, [1.7, 1.8]) == 1.8
    assert smallest_unambiguous_base(1000, 8, [10000.0]) is None


def test_scan_bases_agrees_with_confusion_base_by_base():
    bases = [16.0, 10.0, 3101.2, 1000.0]  # kept in this order; 16 and 3101.2 confuse at D = 16
    scan = scan_bases(12_000, 16, bases)
    assert scan.bases == tuple(bases)
    for base, first, far in zip(bases, scan.first_offsets, scan.far_margins, strict=True):
        assert first == confusion(12_000, 16, base).first_offset
        assert far == pytest.approx(confusion(12_000, 16, base, window=99).margin, rel=1e-9)
    assert scan.first_offsets[0] == 854 and scan.first_offsets[2] == 7690
    assert scan.first_offsets[1] is None and scan.far_margins[1] > 1
    assert scan_bases(1000, 8, torch.tensor([10000.0]), far=2).first_offsets == (6,)


def test_similarity_by_decade_falls_to_zero_near_the_base():
    for base in (10.0, 100.0, 1000.0):
        decades = similarity_by_decade(64, base, n_decades=5)
        j = round(math.log10(base))
        assert decades[0] > 0.15 and abs(float(decades[j])) < 0.035
        assert bool((decades[: j + 1].diff() < 0).all())  # falling until the base


def test_similarity_by_offset_range_averages_the_closed_form_over_log_spaced_ranges():
    centres, means = similarity_by_offset_range(64, 100.0, n_positions=5000, n_ranges=20)
    assert centres.shape == means.shape and bool((centres.diff() > 0).all())
    assert 2 <= float(centres[0]) and float(centres[-1]) < 5000
    edges = torch.logspace(math.log10(2), math.log10(5000), 21).long().unique()
    curve = dot_by_offset(torch.arange(5000), 64, 100.0) / 32
    a, b = int(edges[-2]), int(edges[-1])
    assert_close(means[-1], curve[a:b].mean())  # the same numbers, one range by hand
    assert means[0] > 0.5 and abs(float(means[-1])) < 0.05  # close offsets similar; far ones not


def test_tensor2tensor_layout_agrees_with_hugging_face_fsmt():
    """fairseq's table (copied into transformers' FSMT): [sin | cos], exponent i / (D/2 - 1)."""
    from transformers.models.fsmt.modeling_fsmt import SinusoidalPositionalEmbedding

    for n, d in ((64, 8), (300, 64)):
        theirs = SinusoidalPositionalEmbedding.get_embedding(n, d, None)  # (T, D) float32
        # their angles are rounded to float32 before sin/cos: error up to T * 2**-24 radians
        assert_close(tensor2tensor_encoding(n, d), theirs, atol=n * 2**-23, rtol=0)
    assert 2 * math.pi / wavelengths(64)[-1] > 1e-4  # Vaswani's slowest pair is faster ...
    slowest = tensor2tensor_encoding(2, 64, dtype=torch.float64)[1, 31]  # ... t2t's is 1/base
    assert slowest.item() == pytest.approx(math.sin(1e-4))


def test_interleaved_layout_agrees_with_hugging_face_distilbert():
    from transformers.models.distilbert.modeling_distilbert import _create_sinusoidal_embeddings

    for n, d in ((50, 8), (512, 64)):
        theirs = _create_sinusoidal_embeddings(n, d, torch.empty(n, d))
        assert_close(sinusoidal_encoding(n, d), theirs, atol=1e-6, rtol=0)


def test_mixing_measures_norms_angles_and_variance():
    pe = sinusoidal_encoding(128, 16)
    tokens = torch.randn(4, 128, 16, generator=torch.Generator().manual_seed(0))
    plain, scaled = mixing(tokens, pe), mixing(tokens * 4, pe)
    assert plain.norm_ratio == pytest.approx(4 * scaled.norm_ratio)
    assert scaled.angle_degrees < plain.angle_degrees < 90
    assert 0 < scaled.position_share < plain.position_share < 1
    assert mixing(torch.zeros(1, 128, 16) + 1e-9, pe).position_share == pytest.approx(1, abs=1e-6)


def test_sinusoid_view_holds_what_the_dashboard_draws():
    view = sinusoid_view(64, 16, 100.0, position=10, offset=-3, horizon=2000)
    assert view.table.shape == (64, 16) and view.offsets.shape == (127,)
    assert view.similarity[63].item() == pytest.approx(1.0)
    assert view.dot == pytest.approx(float(view.table[10] @ view.table[7]), abs=1e-5)
    assert view.wavelengths.shape == (8,) and view.confusion.first_offset is None


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: wavelengths(7), "must be even"),
        (lambda: dot_by_offset([1, "a"], 8), "real number"),
        (lambda: dot_by_offset(torch.ones(2, 2), 8), "dimensions"),
        (lambda: offset_distances(float("inf"), 8), "finite"),
        (lambda: confusion(2, 8), "at least window + 2 = 3"),
        (lambda: confusion(10, 8, window=9), "at least window"),
        (lambda: confusion(10**8, 8), "at most"),
        (lambda: confusion(100, 8, base=1.0), "greater than 1"),
        (lambda: smallest_unambiguous_base(100, 8, []), "at least one base"),
        (lambda: smallest_unambiguous_base(100, 8, "10"), "list of bases"),
        (lambda: smallest_unambiguous_base(100, 8, [0.5]), "greater than 1"),
        (lambda: scan_bases(200, 8, [0.5]), "greater than 1"),
        (lambda: scan_bases(200, 8, 10.0), "list of bases"),
        (lambda: scan_bases(100, 8, [10.0], far=100), "2 <= far < n_positions = 100"),
        (lambda: scan_bases(10**7, 8, [10.0]), "at most"),
        (lambda: nearest_non_neighbour(torch.ones(3, 2), window=1), "leaves none"),
        (lambda: nearest_non_neighbour(torch.ones(3, 2, 2)), "dimensions"),
        (lambda: best_linear_shift(torch.ones(5, 2), 5), "|offset| < T"),
        (lambda: shift_error(torch.ones(5, 2, dtype=torch.long), 1), "floating-point"),
        (lambda: translation_spread(torch.ones(5, 2), 5), "0..T-1"),
        (lambda: direction_gap(torch.ones(2, 2)), "T >= 3"),
        (lambda: score_direction_gap(torch.ones(4, 5)), "square"),
        (lambda: to_interleaved(torch.ones(3, 5)), "even number of columns"),
        (lambda: to_concatenated(torch.ones(3, 5)), "even number of columns"),
        (lambda: mixing(torch.ones(1, 4, 2), torch.ones(3, 2)), "shape (T, D)"),
        (lambda: sinusoid_view(10, 8, 100.0, position=10, offset=0), "0..9"),
        (lambda: similarity_by_decade(8, n_decades=9), "at most 7"),
        (lambda: similarity_by_offset_range(8, n_positions=2), "at least 3"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        call()
