"""Chapter 4's exercises: the notebook they belong to, and what their questions share."""

from __future__ import annotations

import torch

NOTEBOOK = "04_relative_bias.ipynb"
F64 = torch.float64
