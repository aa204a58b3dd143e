"""Absolute encodings: values, the laws chapter 3 teaches, bad input, and agreement with GPT-J."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close

from posenc_lib import (
    LearnedPositionalEmbedding,
    binary_encoding,
    integer_encoding,
    normalized_encoding,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
)

F64 = {"dtype": torch.float64}


def test_integer_encoding_holds_the_index_in_every_column():
    table = integer_encoding(5, 3)
    assert table.shape == (5, 3) and table.dtype == torch.float32
    assert table[:, 0].tolist() == [0, 1, 2, 3, 4]
    assert torch.equal(table[:, 0:1].expand(5, 3), table)


def test_normalized_encoding_spans_zero_to_one_whatever_the_length():
    for n in (2, 5, 500):
        table = normalized_encoding(n, 4)
        assert table[0, 0] == 0 and table[-1, 0] == 1
    assert normalized_encoding(5, 1)[1, 0] == pytest.approx(0.25)
    assert normalized_encoding(1, 2).tolist() == [[0.0, 0.0]]


def test_binary_encoding_is_bits_lsb_first():
    table = binary_encoding(8, 4)
    assert table[6].tolist() == [0, 1, 1, 0]  # 6 = 0b110
    assert table[:, 3].sum() == 0
    codes = {tuple(row) for row in binary_encoding(16, 4).tolist()}
    assert len(codes) == 16
    with pytest.raises(ValueError, match="distinct codes"):
        binary_encoding(17, 4)


def test_sinusoidal_matches_the_vaswani_formula():
    n, d, base = 50, 16, 10000.0
    table = sinusoidal_encoding(n, d, base, **F64)
    for t in (0, 7, 49):
        for i in range(d // 2):
            angle = t / base ** (2 * i / d)
            assert table[t, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-12)
            assert table[t, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-12)
    assert table[0, 0::2].abs().max() == 0 and torch.all(table[0, 1::2] == 1)


def test_sinusoidal_wavelengths_run_from_2pi_to_2pi_base_to_the_d_minus_2_over_d():
    omega = sinusoidal_frequencies(8, base=10000.0)
    wavelengths = 2 * math.pi / omega
    assert wavelengths[0].item() == pytest.approx(2 * math.pi)
    assert wavelengths[-1].item() == pytest.approx(2 * math.pi * 10000 ** (6 / 8))


@given(
    d_half=st.integers(1, 32),
    base=st.floats(2.0, 1e5),
    t=st.integers(0, 5000),
    s=st.integers(0, 5000),
    k=st.integers(-300, 300),
)
def test_sinusoidal_dot_product_depends_only_on_the_offset(d_half, base, t, s, k):
    """<PE_t, PE_{t+k}> = sum_i cos(k w_i), whatever t is."""
    d = 2 * d_half
    n = max(t, s) + abs(k) + 1
    pe = sinusoidal_encoding(n, d, base, **F64)
    t_, s_ = t + max(0, -k), s + max(0, -k)
    assert_close(pe[t_] @ pe[t_ + k], pe[s_] @ pe[s_ + k], atol=1e-9, rtol=0)
    expected = (k * sinusoidal_frequencies(d, base)).cos().sum()
    assert_close(pe[t_] @ pe[t_ + k], expected, atol=1e-9, rtol=0)


@given(d_half=st.integers(1, 32), base=st.floats(2.0, 1e5), k=st.floats(-500, 500))
def test_shift_matrix_maps_every_position_to_its_offset(d_half, base, k):
    d = 2 * d_half
    positions = torch.arange(0, 400, dtype=torch.float64)
    m_k = sinusoidal_shift_matrix(k, d, base, **F64)
    omega = sinusoidal_frequencies(d, base)

    def table(pos):  # the encoding at (possibly fractional) positions
        angles = pos[:, None] * omega
        return torch.stack((angles.sin(), angles.cos()), -1).reshape(len(pos), d)

    assert_close(table(positions) @ m_k.T, table(positions + k), atol=1e-9, rtol=0)
    assert_close(m_k @ m_k.T, torch.eye(d, dtype=torch.float64), atol=1e-12, rtol=0)


@given(d_half=st.integers(1, 32), base=st.floats(2.0, 1e5), k=st.integers(-300, 300))
def test_shift_matrix_moves_the_library_table_by_k_rows(d_half, base, k):
    """M_k maps row t of sinusoidal_encoding to row t + k, for every t at once."""
    d, n = 2 * d_half, 400
    pe = sinusoidal_encoding(n + abs(k), d, base, **F64)  # (T, D)
    start, end = max(0, -k), n + abs(k) - max(0, k)
    m_k = sinusoidal_shift_matrix(k, d, base, **F64)
    assert_close(pe[start:end] @ m_k.T, pe[start + k : end + k], atol=1e-9, rtol=0)


def test_sinusoidal_agrees_with_gptj_table():
    """GPT-J builds the same table in the [sin..., cos...] order, in float32 arithmetic."""
    from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions

    for n, d in ((64, 8), (512, 64), (300, 128)):
        ours = sinusoidal_encoding(n, d)
        theirs = create_sinusoidal_positions(n, d)  # (T, D): sin block then cos block
        reordered = torch.stack((theirs[:, : d // 2], theirs[:, d // 2 :]), -1).reshape(n, d)
        # their angles are rounded to float32 before sin/cos: error up to T * 2**-24 radians
        assert_close(ours, reordered, atol=n * 2**-23, rtol=0)


def test_learned_table_looks_up_rows_and_refuses_past_its_end():
    emb = LearnedPositionalEmbedding(16, 4)
    assert emb(5).shape == (5, 4)
    assert torch.equal(emb(torch.tensor([[3, 1]])), emb.weight[[3, 1]][None])
    assert 0.01 < emb.weight.std().item() < 0.03
    assert sum(p.numel() for p in emb.parameters()) == 16 * 4
    with pytest.raises(
        ValueError, match=r"17 tokens needs positions 0..16, and position 16 is past the end"
    ):
        emb(17)
    with pytest.raises(
        ValueError, match=r"^position 16 is past the end.*max_len=16.*cannot extrapolate"
    ):
        emb(torch.tensor([16]))
    with pytest.raises(ValueError, match="past the end"):
        emb(torch.tensor([0, 20]))
    with pytest.raises(ValueError, match=">= 0"):
        emb(torch.tensor([-1]))
    with pytest.raises(ValueError, match="whole numbers"):
        emb(torch.tensor([0.5]))


def test_shift_matrix_accepts_numpy_numbers_and_uint8_positions_are_not_a_mask():
    assert_close(sinusoidal_shift_matrix(np.int64(3), 8), sinusoidal_shift_matrix(3, 8))
    emb = LearnedPositionalEmbedding(8, 4)
    positions = torch.tensor([0, 1, 0, 1, 0, 0, 0, 1], dtype=torch.uint8)
    assert torch.equal(emb(positions), emb.weight[positions.long()])


def test_tables_honour_dtype_and_are_float32_by_default():
    for fn in (integer_encoding, normalized_encoding, binary_encoding, sinusoidal_encoding):
        assert fn(4, 4).dtype == torch.float32
        assert fn(4, 4, dtype=torch.float64).dtype == torch.float64


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sinusoidal_encoding(10, 7), "d_model must be even, got 7.*pairs"),
        (lambda: sinusoidal_encoding(0, 8), "n_positions must be at least 1, got 0"),
        (
            lambda: sinusoidal_encoding(10, 8, base=0.5),
            "base must be a finite number greater than 1",
        ),
        (lambda: integer_encoding(2.5, 4), "n_positions must be a positive whole number, got 2.5"),
        (lambda: normalized_encoding(4, -1), "d_model must be at least 1, got -1"),
        (lambda: binary_encoding(True, 4), "boolean"),
        (lambda: LearnedPositionalEmbedding(0, 4), "max_len must be at least 1"),
        (
            lambda: sinusoidal_shift_matrix("3", 8),
            r"offset \(a number of positions\) must be a real number",
        ),
        (lambda: sinusoidal_shift_matrix(float("nan"), 8), "must be a finite number"),
        (lambda: sinusoidal_shift_matrix(10**400, 8), "too large to be a float"),
        (lambda: integer_encoding(10**400, 4), r"n_positions must be at most .*\(401 characters\)"),
        (lambda: integer_encoding(10**6, 10**6), r"would hold 1e\+12 values"),
        (
            lambda: integer_encoding(3, 2, dtype="float32"),
            "dtype must be a floating-point torch.dtype",
        ),
        (lambda: integer_encoding(3, 2, dtype=torch.int64), "dtype must be a floating-point"),
        (lambda: integer_encoding(3000, 2, dtype=torch.float16), "cannot hold every position"),
        (lambda: sinusoidal_encoding(3, 4, device="gpu"), "device must name a torch device"),
        (lambda: sinusoidal_frequencies(4, base=10**400), "base is too large"),
        (
            lambda: sinusoidal_frequencies(4, base=torch.tensor([1e4, 2.0])),
            "base must be a real number",
        ),
        (lambda: binary_encoding(3, 10**10), "d_model must be at most"),
        (lambda: binary_encoding(3, 10**9), "would hold"),
        (lambda: LearnedPositionalEmbedding(4, 2)(torch.tensor([1 + 0j])), "integer tensor"),
        (lambda: LearnedPositionalEmbedding(4, 2)([0, 1]), "or a tensor of positions"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- stretching a table by linear interpolation ---------------------------------------------------


def test_an_interpolated_table_keeps_both_ends_and_blends_between():
    from posenc_lib.absolute import interpolate_table

    table = torch.randn(64, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    for rows in (128, 256, 512, 65):
        stretched = interpolate_table(table, rows)
        assert stretched.shape == (rows, 8) and stretched.dtype == table.dtype
        assert torch.equal(stretched[0], table[0]) and torch.equal(stretched[-1], table[-1])
    doubled = interpolate_table(table[:3], 5)  # rows at old positions 0, 0.5, 1, 1.5, 2
    expected = torch.stack(
        [table[0], (table[0] + table[1]) / 2, table[1], (table[1] + table[2]) / 2, table[2]]
    )
    assert torch.allclose(doubled, expected, atol=1e-15)
    assert torch.equal(interpolate_table(table, 64), table)  # the same length: the same table


def test_a_linear_ramp_stays_a_ramp_when_stretched():
    from posenc_lib.absolute import interpolate_table

    ramp = torch.arange(64, dtype=torch.float64)[:, None].repeat(1, 2)  # row t = (t, t)
    stretched = interpolate_table(ramp, 253)
    expected = torch.linspace(0, 63, 253, dtype=torch.float64)[:, None].repeat(1, 2)
    assert torch.allclose(stretched, expected, atol=1e-12)


def test_interpolation_refuses_tables_it_cannot_stretch():
    from posenc_lib.absolute import interpolate_table

    with pytest.raises(ValueError, match="at least 2 rows"):
        interpolate_table(torch.zeros(1, 4), 8)
    with pytest.raises(ValueError, match="at least 2 rows"):
        interpolate_table(torch.zeros(4, 4), 1)
    with pytest.raises(ValueError, match="table"):
        interpolate_table(torch.zeros(4), 8)
