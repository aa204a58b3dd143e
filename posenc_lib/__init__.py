"""posenc_lib: the positional encodings of the course, in one small library.

This module is the public API: what the lectures and exercises import. The math core sits beside
it (``absolute``, ``attention``, ``relative``, ``alibi``, ``rope``, ``rope_scaling``, ``bounds``,
and ``_validate`` for input validation); it takes and returns torch tensors and imports nothing
else of the package. This module stands above the layers: it re-exports the core and the
yardstick (``analysis.report``) and, on first use, what an exercise needs from higher layers. Above it, in layers that import
only downwards (CONTRIBUTING.md has the map): ``analysis/`` (each chapter's measurements, the
yardstick), ``models/`` (MiniLM, chapter 7's tiny LM and its experiment), ``viz/`` (figures and
dashboards), ``checks/`` (the exercises' checks) and ``grading/`` (the class grader).

What an exercise needs from a chapter's measurements or models is exported here on purpose and
loaded on first use (MiniLM and the trained checkpoints are not read by ``import posenc_lib``).
Shapes use B batch, H heads, T positions, D model or head dims.
"""

import importlib

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
from posenc_lib.bounds import FLOAT32, FLOAT64, bound
from posenc_lib.i18n import get_language, set_language
from posenc_lib.relative import RelativePositionBias, t5_relative_position_bucket
from posenc_lib.rope import ROPE_SCALING, apply_rope, rope_2d_cos_sin, rope_cos_sin, rope_inv_freq

# name -> the module that holds it, imported on first use (PEP 562). A module's own name maps to it.
_ON_DEMAND = {
    # chapter 2: MiniLM's learned position table (the real model, read offline)
    "position_weight": "posenc_lib.models.minilm",
    # chapter 6: RoPE's rotation and the measurements the exercises build on
    "rotate": "posenc_lib.analysis.ch06_rope",
    "attention_logits": "posenc_lib.analysis.ch06_rope",
    "error_by_offset": "posenc_lib.analysis.ch06_rope",
    "random_query_key": "posenc_lib.analysis.ch06_rope",
    # chapter 7: the generated corpus, the trained tiny models, their per-position scores
    "corpus": "posenc_lib.models.corpus",
    "load_model": "posenc_lib.models.experiment",
    "position_score_curves": "posenc_lib.analysis.ch07_extrapolation",
    # chapter 8: the real LLM (SmolLM2-135M, converted once into a cache and loaded offline)
    "load_smollm": "posenc_lib.models.smollm",
    # every chapter: which exercise questions pass now, from the learner's own notebooks
    "progress": "posenc_lib.grading.progress",
}


def __getattr__(name: str):
    if name not in _ON_DEMAND:
        raise AttributeError(f"module 'posenc_lib' has no attribute {name!r}")
    module = importlib.import_module(_ON_DEMAND[name])
    value = getattr(module, name, module)  # a function of that name, else the module itself
    globals()[name] = value  # once: later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ON_DEMAND))


__all__ = [
    "FLOAT32",
    "FLOAT64",
    "LearnedPositionalEmbedding",
    "ROPE_SCALING",
    "RelativePositionBias",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "attention_logits",
    "binary_encoding",
    "bound",
    "corpus",
    "error_by_offset",
    "causal_mask",
    "get_language",
    "compare_reports",
    "integer_encoding",
    "load_model",
    "load_smollm",
    "normalized_encoding",
    "position_report",
    "position_score_curves",
    "position_weight",
    "progress",
    "random_query_key",
    "rope_2d_cos_sin",
    "rope_cos_sin",
    "rope_inv_freq",
    "rotate",
    "self_attention",
    "set_language",
    "sinusoidal_encoding",
    "sinusoidal_frequencies",
    "sinusoidal_shift_matrix",
    "t5_relative_position_bucket",
]
