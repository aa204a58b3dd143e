"""Chapter 6's rotation from positions and its complex closed form (``analysis.ch06_rotation``)."""

import math

import pytest
import torch
from torch.testing import assert_close

from posenc_lib import apply_rope, rope_cos_sin, rope_inv_freq
from posenc_lib.analysis import ch06_rope
from posenc_lib.analysis import ch06_rotation as rotation

F64 = torch.float64
STYLES = ("half", "interleaved")


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=F64)


@pytest.mark.parametrize("style", STYLES)
def test_rotate_is_the_library_rotation_at_the_given_positions(style):
    x = _randn(3, 5, 8)  # (B, T, D)
    positions = [4, 0, 17, 2.5, 900]
    cos, sin = rope_cos_sin(torch.tensor(positions, dtype=F64), rope_inv_freq(8, 500.0, dtype=F64)[0], style=style)  # fmt: skip
    assert_close(rotation.rotate(x, positions, 500.0, style), apply_rope(x, cos, sin, style))
    assert rotation.rotate(x.float(), 5).dtype == F64


def test_complex_scores_equal_the_score_matrix_along_each_diagonal():
    q, k = ch06_rope.random_query_key(16, seed=3)
    scores = ch06_rope.score_matrix(q, k, 20, style="interleaved")  # (T, T)
    closed = rotation.complex_scores(q, k, torch.arange(-19, 20), style="interleaved")
    for delta in range(-19, 20):
        assert_close(scores.diagonal(-delta), closed[delta + 19].expand(20 - abs(delta)))


def test_sign_convention_is_counterclockwise():
    x = torch.zeros(1, 4, dtype=F64)
    x[0, 0] = 1.0  # (1, 0) in the first pair of either layout
    half = rotation.rotate(x, [1], style="half")[0]
    inter = rotation.rotate(x, [1], style="interleaved")[0]
    assert_close(half[[0, 2]], torch.tensor([math.cos(1), math.sin(1)], dtype=F64))
    assert_close(inter[[0, 1]], torch.tensor([math.cos(1), math.sin(1)], dtype=F64))
    z = rotation.as_complex(inter[None], "interleaved")[0, 0]
    assert math.isclose(math.atan2(z.imag, z.real), 1.0)
