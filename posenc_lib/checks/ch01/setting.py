"""Chapter 1's exercises: the notebook they belong to, and what their questions share (a random
reordering, a fixed attention layer)."""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch01_order import slot_vectors
from posenc_lib.attention import self_attention
from posenc_lib.checks import draws

NOTEBOOK = "01_order_blindness.ipynb"


def _random_order(n: int, generator: torch.Generator) -> list[int]:
    """A random single cycle through 0..n-1 (Sattolo's algorithm).

    For n >= 3 it moves every row, and it differs from its inverse in every row, so the common
    mistakes (no permutation, the inverse, the transpose) each give a different answer.
    """
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = draws.randint(0, i, generator)
        order[i], order[j] = order[j], order[i]
    return order


def _layer(dim: int, seed: int, positions: bool = False, causal: bool = False, d_out=None):
    """A fixed single-head attention layer x (T, dim) -> (T, d_out or dim), optionally with
    positions or a causal mask.

    Computed in float64 and returned in x's dtype, so a learner may mix its output with x freely.
    """
    generator = draws.seeded(seed, 99)
    w = list(torch.randn(3, dim, dim, generator=generator, dtype=torch.float64) / math.sqrt(dim))
    if d_out is not None:  # values of another width: D' != D
        w[2] = torch.randn(dim, d_out, generator=generator, dtype=torch.float64) / math.sqrt(dim)

    def layer(x):
        dtype = x.dtype if isinstance(x, torch.Tensor) else torch.float64
        x = torch.as_tensor(x, dtype=torch.float64)
        if positions:
            x = x + slot_vectors(x.shape[0], dim, dtype=torch.float64)
        return self_attention(x, w[0], w[1], w[2], causal=causal)[0].to(dtype)

    layer.__name__ = "attention_with_positions" if positions else "attention_layer"
    return layer
