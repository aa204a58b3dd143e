"""Chapter 8, precision: RoPE's angles m * theta_i computed in bfloat16 lose whole radians far out.

bfloat16 keeps 8 significant bits (7 stored + 1 implicit), so it holds every integer only up to
2**8 = 256: position 257 is stored as 256, and past 4,096 the spacing is 32, so 8,191 becomes
8,192. The angle m * theta_i of the fastest pair (theta_0 = 1) is then wrong by as much as the
position, and even an exact position times a bf16 frequency, rounded to bf16, is off by up to half
a spacing: 16 radians near 8,000 — several full turns, i.e. a random angle.

The fix is to form the angles in float32 (or better) and only cast cos and sin to the model's
dtype: transformers' ``LlamaRotaryEmbedding.forward`` (transformers 5,
``models/llama/modeling_llama.py``) computes ``position_ids[..., None].float() *
self.inv_freq.float()``, takes cos and sin of that float32 product, and only then casts them
``.to(dtype=x.dtype)``; ``rope.rope_cos_sin`` likewise computes angles in at least float32.

``RECIPES`` are the ways of forming the angles measured here, against float64:
"float32" (transformers' way), "bf16 positions" (position ids stored in bf16, the rest float32),
"bfloat16" (positions, frequencies and their product all in bf16: the table built in the model's
dtype).

Shapes: T positions, Dh = head_dim, Dh/2 pairs, H heads.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch08_layout import causal_softmax, rotated_logits
from posenc_lib.i18n import N_

BF16 = torch.bfloat16

# recipe -> (positions (T,) float64, inv_freq (Dh/2,) float64) -> angles (T, Dh/2) float64
RECIPES: dict[str, Callable[[torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "float32": lambda m, f: (m.float()[:, None] * f.float()).double(),
    N_("bf16 positions"): lambda m, f: (m.to(BF16).float()[:, None] * f.float()).double(),
    "bfloat16": lambda m, f: (m.to(BF16)[:, None] * f.to(BF16)).double(),
}


def bf16_position_rounding(positions) -> torch.Tensor:
    """What bfloat16 makes of integer positions: stored value minus the true one, (T,) float64."""
    m = torch.as_tensor(positions, dtype=torch.float64)  # (T,)
    return m.to(BF16).double() - m


def first_inexact_bf16_position(limit: int = 1 << 16) -> int:
    """The smallest positive integer bfloat16 cannot store exactly (257 = 2**8 + 1)."""
    n = validate.positive_int("limit", limit)
    rounding = bf16_position_rounding(torch.arange(n + 1))  # (n + 1,)
    wrong = torch.nonzero(rounding != 0)
    return int(wrong[0]) if len(wrong) else -1


def wrapped(angle: torch.Tensor) -> torch.Tensor:
    """Angles folded into [-pi, pi): an error of a whole turn is no error."""
    return torch.remainder(angle + math.pi, 2 * math.pi) - math.pi


def exact_angles(positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    """m * theta_i in float64 (RoFormer eq. 15's angles): (T,), (Dh/2,) -> (T, Dh/2)."""
    return positions.double()[:, None] * inv_freq.double()  # (T, Dh/2)


def angle_error(positions, inv_freq: torch.Tensor, recipe: str) -> torch.Tensor:
    """|angle_recipe - angle_float64| wrapped to [0, pi], per position and pair: (T, Dh/2) float64.

    positions: an int T (0 .. T-1) or a (T,) tensor of integers; inv_freq: (Dh/2,), ideally
    float64 (``rope_inv_freq(..., dtype=torch.float64)``), which each recipe rounds its own way.
    """
    validate.choice("recipe", recipe, tuple(RECIPES))
    if not isinstance(positions, torch.Tensor):
        positions = torch.arange(validate.positive_int("positions", positions))
    m = positions.to(torch.float64)  # (T,)
    return wrapped(RECIPES[recipe](m, inv_freq) - exact_angles(m, inv_freq)).abs()  # (T, Dh/2)


def worst_angle_error(positions, inv_freq: torch.Tensor, recipe: str) -> torch.Tensor:
    """The largest angle error over all pairs and all positions up to each one: (T,) float64,
    non-decreasing (a running maximum of ``angle_error``'s largest error per position)."""
    return angle_error(positions, inv_freq, recipe).amax(dim=-1).cummax(dim=0).values  # (T,)


def _tables(angles: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin (T, Dh) in the half layout of given angles (T, Dh/2): ``rope_cos_sin``'s layout,
    for angles some recipe has already rounded (``rope_cos_sin`` forms its own, in float32+)."""
    both = torch.cat((angles, angles), dim=-1)  # (T, Dh): pair i at dims i and i + Dh/2
    return both.cos(), both.sin()


def attention_error(q, k, inv_freq, starts, recipe: str = "bfloat16") -> dict[str, torch.Tensor]:
    """How much a recipe's angles change causal attention when the same tokens sit far out.

    q (H, T, Dh), k (KV, T, Dh): unrotated queries and keys (e.g. ``ch08_layout.layer0_queries_keys``),
    placed at positions start .. start + T - 1 for each start in ``starts``; inv_freq (Dh/2,).
    The logits and probabilities with the recipe's angles against those with float64 angles (all
    else in float64). Returns {"starts": (S,), "max_logit_error": (S,), "max_prob_error": (S,)}.
    """
    validate.choice("recipe", recipe, tuple(RECIPES))
    q, k, inv_freq = q.double(), k.double(), inv_freq.double()
    starts = torch.as_tensor(starts, dtype=torch.int64)  # (S,)
    logit_err, prob_err = [], []
    for start in starts.tolist():
        m = torch.arange(start, start + q.shape[-2], dtype=torch.float64)  # (T,)
        exact = rotated_logits(q, k, *_tables(exact_angles(m, inv_freq)))  # (H, T, T)
        rounded = rotated_logits(q, k, *_tables(RECIPES[recipe](m, inv_freq)))  # (H, T, T)
        logit_err.append(float((rounded - exact).tril().abs().max()))  # seen keys only
        gap = causal_softmax(rounded) - causal_softmax(exact)  # (H, T, T)
        prob_err.append(float(gap.abs().max()))
    return {
        "starts": starts,
        "max_logit_error": torch.tensor(logit_err, dtype=torch.float64),
        "max_prob_error": torch.tensor(prob_err, dtype=torch.float64),
    }
