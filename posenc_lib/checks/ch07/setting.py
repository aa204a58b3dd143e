"""Chapter 7's exercises: the notebook they belong to, and what their questions share."""

from __future__ import annotations

import torch

from posenc_lib.i18n import N_

NOTEBOOK = "07_extrapolation.ipynb"
HAND_MADE = N_("a hand-made (2, 16, 14) curves, train_len = 6, tol = 0.25")
F64 = torch.float64


# Relative tolerance for a returned number: float32 arithmetic (a torch.tensor or np.float32 base)
# is off by up to ~6e-8 of the value; every named mistake is off by far more than 1e-6.
RTOL = 1e-6
