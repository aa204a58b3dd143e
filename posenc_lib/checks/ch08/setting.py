"""Chapter 8's exercises: the notebook they belong to, and what their questions share."""

from __future__ import annotations

import torch

NOTEBOOK = "08_real_model.ipynb"
F64 = torch.float64

# Relative tolerance for returned frequencies: transformers computes them in float32 (off by up to
# a few 1e-7 of the value); every named mistake is off by far more than 1e-5.
RTOL = 1e-5
