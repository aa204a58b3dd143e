"""Chapter 2's exercises: the notebook they belong to, and what their questions share."""

from __future__ import annotations

NOTEBOOK = "02_naive_encodings.ipynb"
