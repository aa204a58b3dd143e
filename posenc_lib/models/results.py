"""Chapter 7's committed results: where they live and how to read them, without the training code.

The experiment (``posenc_lib.models.experiment``) writes them; the chapter, its dashboard and the
tests read them from here.
"""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "extrapolation"


def load_results(folder: Path = DATA) -> dict:
    """The committed results.json: every perplexity, the settings and the timings of the run."""
    return json.loads((folder / "results.json").read_text(encoding="utf-8"))
