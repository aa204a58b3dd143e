"""2-D (axial) RoPE: rope_2d_cos_sin against transformers' Qwen2-VL vision tower, and its input."""

import math

import pytest
import torch
from transformers.models.qwen2_vl.configuration_qwen2_vl import Qwen2VLVisionConfig
from transformers.models.qwen2_vl.modeling_qwen2_vl import (
    Qwen2VLVisionRotaryEmbedding,
    apply_rotary_pos_emb_vision,
)

from posenc_lib.rope import apply_rope, rope_2d_cos_sin, rope_cos_sin, rope_inv_freq

F64 = torch.float64


def _grid(n_rows, n_cols):
    return torch.arange(n_rows).repeat_interleave(n_cols), torch.arange(n_cols).repeat(n_rows)


@pytest.mark.parametrize("head_dim", [16, 32, 80])
def test_tables_equal_qwen2_vl_vision_rotary(head_dim):
    rows, cols = _grid(5, 7)
    config = Qwen2VLVisionConfig(embed_dim=2 * head_dim, num_heads=2)
    cos, sin = Qwen2VLVisionRotaryEmbedding(config)(torch.zeros(1), torch.stack((rows, cols), -1))
    ours = rope_2d_cos_sin(rows, cols, rope_inv_freq(head_dim // 2)[0])
    # One float32 product and one cos/sin per entry on both sides: equal up to a last-bit
    # difference between vectorised and scalar cos paths.
    torch.testing.assert_close(ours[0], cos, atol=1e-6, rtol=0)
    torch.testing.assert_close(ours[1], sin, atol=1e-6, rtol=0)
    x = torch.randn(35, 1, head_dim)  # (T, H, D) as Qwen2-VL's vision attention takes it
    theirs, _ = apply_rotary_pos_emb_vision(x, x, cos, sin)
    torch.testing.assert_close(
        apply_rope(x.transpose(0, 1), *ours)[0], theirs[:, 0], atol=1e-5, rtol=0
    )


def test_rows_turn_the_first_half_of_the_pairs_and_columns_the_second():
    inv_freq = rope_inv_freq(8, dtype=F64)[0]  # (4,): D = 16
    rows, cols = torch.tensor([3.0], dtype=F64), torch.tensor([5.0], dtype=F64)
    for style in ("half", "interleaved"):
        cos, sin = rope_2d_cos_sin(rows, cols, inv_freq, style)
        by_rows = rope_cos_sin(rows, torch.cat((inv_freq, 0 * inv_freq)), style=style)
        by_cols = rope_cos_sin(cols, torch.cat((0 * inv_freq, inv_freq)), style=style)
        # Each pair's angle is either its row's or its column's: the other side's angle is 0.
        angle = torch.atan2(sin, cos)
        expected = torch.atan2(by_rows[1], by_rows[0]) + torch.atan2(by_cols[1], by_cols[0])
        torch.testing.assert_close(angle, expected, atol=1e-12, rtol=0)


@pytest.mark.parametrize("style", ["half", "interleaved"])
def test_scores_depend_on_the_row_and_column_offsets_only(style):
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 16, generator=g, dtype=F64)
    inv_freq = rope_inv_freq(8, dtype=F64)[0]

    def turned(v, r, c):
        cos, sin = rope_2d_cos_sin(
            torch.tensor([r], dtype=F64), torch.tensor([c], dtype=F64), inv_freq, style
        )
        return apply_rope(v[None], cos, sin, style)[0]

    a = turned(q, 7, 2) @ turned(k, 4, 9)
    b = turned(q, 3, 11) @ turned(k, 0, 18)  # the same (3, -7)
    c = turned(q, 3, 2) @ turned(k, 0, 9)  # (3, -7) again
    d = turned(q, 7, 2) @ turned(k, 4, 10)  # (3, -8): a different offset
    assert abs(a - b) < 1e-12 and abs(a - c) < 1e-12  # float64 rounding of angles below 40 rad
    assert abs(a - d) > 1e-3


def test_rope_vit_axial_is_columns_first_interleaved():
    # naver-ai/rope-vit's compute_axial_cis: x (column) angles, then y (row), as complex pairs.
    rows, cols = _grid(3, 4)
    dim, theta = 16, 100.0
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 4)[: dim // 4].double() / dim))
    cis = torch.polar(
        torch.ones(12, dim // 2, dtype=F64),
        torch.cat((torch.outer(cols.double(), freqs), torch.outer(rows.double(), freqs)), -1),
    )
    cos, sin = rope_2d_cos_sin(
        cols, rows, rope_inv_freq(dim // 2, theta, dtype=F64)[0], "interleaved"
    )
    torch.testing.assert_close(cos[:, 0::2], cis.real, atol=1e-12, rtol=0)
    torch.testing.assert_close(sin[:, 0::2], cis.imag, atol=1e-12, rtol=0)
    assert math.isclose(float(freqs[1]), float(rope_inv_freq(dim // 2, theta, dtype=F64)[0][1]))


def test_bad_input_gets_a_sentence():
    inv_freq = rope_inv_freq(8)[0]
    with pytest.raises(ValueError, match="one row and one column per patch"):
        rope_2d_cos_sin(torch.arange(4), torch.arange(5), inv_freq)
    with pytest.raises(ValueError, match="real numbers"):
        rope_2d_cos_sin(torch.ones(3, dtype=torch.bool), torch.ones(3, dtype=torch.bool), inv_freq)
    with pytest.raises(ValueError, match="style"):
        rope_2d_cos_sin(torch.arange(3), torch.arange(3), inv_freq, "spiral")
