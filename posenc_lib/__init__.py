"""posenc_lib: the positional encodings of the course, in one small library.

Math lives in ``absolute``, ``attention``, ``relative``, ``alibi`` and ``rope``, and the yardstick
every chapter scores encodings with in ``report``; they take and return
torch tensors and never import a plotting library. Shapes use B batch, H heads, T positions,
D model or head dims.
"""

from posenc_lib.absolute import (
    LearnedPositionalEmbedding,
    binary_encoding,
    integer_encoding,
    normalized_encoding,
    sinusoidal_encoding,
    sinusoidal_frequencies,
    sinusoidal_shift_matrix,
)
from posenc_lib.alibi import alibi_bias, alibi_slopes
from posenc_lib.analysis.report import compare_reports, position_report
from posenc_lib.attention import causal_mask, self_attention
from posenc_lib.relative import RelativePositionBias, t5_relative_position_bucket
from posenc_lib.rope import ROPE_SCALING, apply_rope, rope_cos_sin, rope_inv_freq

__all__ = [
    "LearnedPositionalEmbedding",
    "ROPE_SCALING",
    "RelativePositionBias",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "binary_encoding",
    "causal_mask",
    "compare_reports",
    "integer_encoding",
    "normalized_encoding",
    "position_report",
    "rope_cos_sin",
    "rope_inv_freq",
    "self_attention",
    "sinusoidal_encoding",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "t5_relative_position_bucket",
]
