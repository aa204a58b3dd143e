"""Chapter 6's exercises: the notebook they belong to, and what their questions share."""

from __future__ import annotations

import torch

NOTEBOOK = "06_rope.ipynb"
F64 = torch.float64
STYLES = ("half", "interleaved")


def _other(style: str) -> str:
    return STYLES[1 - STYLES.index(style)]
