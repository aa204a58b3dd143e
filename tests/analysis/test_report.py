"""The yardstick: each property can pass and can fail, and bad input gets a sentence."""

import itertools
import math

import numpy as np
import pytest
import torch

from posenc_lib import (
    LearnedPositionalEmbedding,
    binary_encoding,
    integer_encoding,
    normalized_encoding,
    sinusoidal_encoding,
)
from posenc_lib.analysis.report import (
    Comparison,
    compare_reports,
    dots_at_offset,
    min_pair_distance,
    offsets_for,
    position_report,
)

PROPERTIES = [
    "uniqueness",
    "boundedness",
    "distance over t",
    "distance over length",
    "smoothness",
    "offset-only similarity",
    "extrapolation",
]


def _learned():
    torch.manual_seed(0)
    table = LearnedPositionalEmbedding(128, 64)
    return lambda n: table(n).detach()


# The verdicts the chapters teach, property by property (same order as PROPERTIES).
EXPECTED = {
    "integer": (lambda n: integer_encoding(n, 64), [1, 0, 1, 1, 1, 0, 1]),
    "normalized": (lambda n: normalized_encoding(n, 64), [1, 1, 1, 0, 1, 0, 0]),
    "binary": (lambda n: binary_encoding(n, 64), [1, 1, 0, 1, 0, 0, 1]),
    "learned": (_learned(), [1, 1, 0, 1, 0, 0, 0]),
    "sinusoidal": (lambda n: sinusoidal_encoding(n, 64), [1, 1, 1, 1, 1, 1, 1]),
}


@pytest.mark.parametrize("name", EXPECTED)
def test_the_naive_encodings_and_sinusoids_get_the_verdicts_the_chapters_teach(name):
    encoding, verdicts = EXPECTED[name]
    report = position_report(encoding, name)
    assert [row.name for row in report.rows] == PROPERTIES
    assert list(report.passed.values()) == [bool(v) for v in verdicts]
    assert report.score == (sum(verdicts), 7)


def test_a_periodic_encoding_fails_uniqueness_and_names_the_pair():
    report = position_report(lambda n: (torch.arange(n)[:, None] % 10).float().expand(n, 4))
    row = report["uniqueness"]
    assert row.value == 0 and row.passed is False
    assert "closest pair (0, 10)" in row.detail


def test_one_frequency_returns_near_its_start_only_past_the_seen_length():
    # One (sin, cos) pair with frequency 1: position 710 is 6e-5 rad from position 0 (226 pi).
    report = position_report(lambda n: sinusoidal_encoding(n, 2, base=1e4), seen=128, unseen=1024)
    row = report["uniqueness"]
    s, t = map(int, row.detail.rsplit("(", 1)[1].rstrip(")").split(", "))
    assert row.passed is False and t - s == 710  # every pair 710 apart is as close
    short = position_report(lambda n: sinusoidal_encoding(n, 2, base=1e4), seen=64, unseen=256)
    assert short["uniqueness"].passed is True


def test_a_learned_table_has_no_row_past_its_length_and_the_report_says_why():
    row = position_report(EXPECTED["learned"][0], "learned")["extrapolation"]
    assert row.passed is False and row.shown == "no table"
    assert "asked for 1024 positions" in row.detail and "past the end" in row.detail


def test_an_encoding_that_rescales_with_the_length_fails_extrapolation_by_its_change():
    row = position_report(lambda n: normalized_encoding(n, 8))["extrapolation"]
    assert row.passed is False and 0.8 < row.value < 0.9  # position 127: 1 -> 127/1023


def test_a_fixed_table_is_measured_on_itself_and_says_what_it_cannot_measure():
    report = position_report(sinusoidal_encoding(100, 16).numpy(), "fixed")
    assert report.passed["distance over length"] is None
    assert report.passed["extrapolation"] is None
    assert report.score == (5, 5)
    assert "pass a function" in report["extrapolation"].detail
    assert "–" in str(report) and "A fixed table of 100 positions" in str(report)


def test_boundedness_of_a_fixed_table_compares_its_first_rows_with_all():
    row = position_report(integer_encoding(64, 4))["boundedness"]
    assert row.passed is False and row.value == pytest.approx(63 / 7)


def test_printed_and_html_tables_show_every_property_and_verdict():
    report = position_report(EXPECTED["binary"][0], "binary")
    text, page = str(report), report._repr_html_()
    assert text.startswith("binary: 4 of 7 properties hold")
    for name in PROPERTIES:
        assert name in text and name in page
    assert text.count("✓") == 4 and text.count("✗") == 3
    assert page.count("✓") == 4 and page.count("✗") == 3


def test_the_comparison_puts_encodings_in_columns_and_totals_them():
    reports = [position_report(EXPECTED[n][0], n) for n in ("integer", "sinusoidal")]
    table = compare_reports(reports)
    assert isinstance(table, Comparison)
    lines = str(table).splitlines()
    assert lines[0].split() == ["property", "integer", "sinusoidal"]
    assert lines[-1].split() == ["holds", "5", "of", "7", "7", "of", "7"]
    assert "<th>sinusoidal</th>" in table._repr_html_()


def test_blockwise_smallest_distance_agrees_with_the_full_matrix():
    generator = torch.Generator().manual_seed(3)
    table = torch.randn(301, 5, generator=generator, dtype=torch.float64)
    table[250] = table[17] + 1e-9  # the closest pair straddles two blocks
    best, s, t = min_pair_distance(table, block=64)
    full = (table[:, None] - table[None]).norm(dim=-1).fill_diagonal_(math.inf)  # (T, T)
    assert best == pytest.approx(float(full.min()), rel=1e-6) and best < 3e-9
    assert (s, t) == (17, 250)


def test_offsets_double_up_to_half_the_length():
    assert offsets_for(16) == [1, 2, 4, 8]
    assert offsets_for(2) == [1]


def test_the_dot_products_of_sinusoids_do_not_depend_on_t():
    table = sinusoidal_encoding(200, 32, dtype=torch.float64)
    for k in (1, 7, 50):
        dots = dots_at_offset(table, k)
        omega = 10000 ** (-torch.arange(0, 32, 2, dtype=torch.float64) / 32)
        assert torch.allclose(dots, torch.cos(k * omega).sum().expand_as(dots))


@pytest.mark.parametrize(
    "encoding, message",
    [
        (42, "takes a function of the sequence length"),
        (lambda n: torch.zeros(n), r"real \(T, D\) table"),
        (lambda n: torch.zeros(n + 1, 4), "should have 128 rows"),
        (lambda n: torch.zeros(n, 4 if n < 200 else 8), "same width D"),
        (lambda n: torch.full((n, 4), math.nan), "NaN"),
        (lambda n: torch.zeros(n, 2, dtype=torch.complex64), "real"),
        (lambda n: np.array([["a"] * 2] * n), "real numbers"),
        (lambda n: [[0.0] * 4] * n, r"a \(T, D\) tensor or array"),
        (lambda n: 1 / 0, "raised ZeroDivisionError when asked for 128 positions"),
        (torch.zeros(4, 3), "at least 8 positions"),
    ],
)
def test_bad_encodings_get_a_sentence(encoding, message):
    with pytest.raises(ValueError, match=message):
        position_report(encoding)


@pytest.mark.parametrize(
    "seen, unseen, message",
    [(4, 100, "8 <= seen < unseen"), (128, 128, "8 <= seen < unseen"), (1.5, 9, "whole number")],
)
def test_lengths_are_checked(seen, unseen, message):
    with pytest.raises(ValueError, match=message):
        position_report(lambda n: sinusoidal_encoding(n, 4), seen=seen, unseen=unseen)


def test_compare_refuses_anything_but_reports():
    with pytest.raises(ValueError, match="list of reports"):
        compare_reports(["sinusoidal"])
    with pytest.raises(ValueError, match="list of reports"):
        compare_reports([])


@pytest.mark.parametrize("d_model, base", list(itertools.product([4, 16, 64], [100.0, 10000.0])))
def test_sinusoids_pass_the_offset_properties_at_any_size(d_model, base):
    report = position_report(lambda n: sinusoidal_encoding(n, d_model, base), seen=64, unseen=512)
    for name in ("distance over t", "offset-only similarity", "extrapolation", "boundedness"):
        assert report.passed[name], (name, report[name])


def test_reports_show_their_table_as_plain_text_too():
    report = position_report(EXPECTED["sinusoidal"][0], "sinusoidal")
    assert repr(report) == str(report)
    table = compare_reports([report])
    assert repr(table) == str(table)


# Near the thresholds: each encoding breaks one property a little, and must fail it.
def _wobble(n):  # distances at a fixed offset vary by about 2% with t
    table = sinusoidal_encoding(n, 16, dtype=torch.float64)
    return table * (1 + 0.02 * torch.sin(torch.arange(n, dtype=torch.float64) / 7))[:, None]


@pytest.mark.parametrize(
    "encoding, prop",
    [
        (_wobble, "distance over t"),
        (lambda n: sinusoidal_encoding(n, 16) * (1.05 if n < 20 else 1.0), "distance over length"),
        (lambda n: sinusoidal_encoding(n, 16) * (1 + 1e-3 * (n == 1024)), "extrapolation"),
    ],
)
def test_small_breaks_near_the_thresholds_fail(encoding, prop):
    report = position_report(encoding)
    assert report.passed[prop] is False, report[prop]


def test_a_float64_table_shows_the_law_not_rounding():
    report = position_report(lambda n: sinusoidal_encoding(n, 64, dtype=torch.float64))
    assert report["offset-only similarity"].value < 1e-10
    assert report["distance over t"].value < 1e-10


def test_one_nan_row_is_refused():
    table = sinusoidal_encoding(64, 8)
    table[40] = math.nan
    with pytest.raises(ValueError, match="NaN"):
        position_report(table)


def test_the_closest_pair_is_named_right_when_it_sits_in_a_later_block():
    generator = torch.Generator().manual_seed(4)
    table = torch.randn(300, 4, generator=generator, dtype=torch.float64) * 10
    table[250] = table[70] + 1e-6
    assert min_pair_distance(table, block=64)[1:] == (70, 250)


def test_the_report_refuses_tables_too_large_to_measure():
    with pytest.raises(ValueError, match="at most"):
        position_report(torch.zeros(1, 1).expand(2**14, 2**13))


def test_measured_values_are_pinned_for_binary():
    report = position_report(EXPECTED["binary"][0], "binary")
    assert report["distance over t"].value == pytest.approx(1.6074, abs=1e-3)
    # sqrt(10) (511 -> 512 flips 10 bits) over a median distance of sqrt(5) (5 bits differ)
    assert report["smoothness"].value == pytest.approx(math.sqrt(2), abs=1e-9)
