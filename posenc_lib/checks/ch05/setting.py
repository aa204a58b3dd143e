"""Chapter 5's exercises: the notebook they belong to, and what their questions share."""

from __future__ import annotations

import torch

NOTEBOOK = "05_alibi.ipynb"


def _loose_slopes(heads: int, generator: torch.Generator) -> torch.Tensor:
    """(heads,) slopes drawn in 0.05 .. 0.95: no ladder, in no order (the function must use the
    slopes it is given, whatever they are)."""
    return torch.rand(heads, generator=generator) * 0.9 + 0.05


def _shown(slopes: torch.Tensor) -> str:
    """The slopes as a case's description shows them, to 4 decimals."""
    return f"slopes = {[round(v, 4) for v in slopes.tolist()]}"
