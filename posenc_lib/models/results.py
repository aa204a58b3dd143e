"""Chapter 7's committed results: where they live and how to read them, without the training code.

The experiment (``posenc_lib.models.experiment``) writes each seed's numbers into results.json,
under ``runs``; nothing derived is stored. ``load_results`` adds what the chapter, its dashboard
and the tests read: ``rows`` (per row, the mean, min and max over seeds at each length) and, in
one seed's layout (``methods``, ``scaled``, ``finetuned``, ``window``, ``interpolated``,
``interpolated_finetuned``), the means.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "extrapolation"
SECTIONS = ("methods", "scaled", "finetuned", "window", "interpolated", "interpolated_finetuned")


def load_results(folder: Path = DATA) -> dict:
    """The committed results.json (every seed's perplexities, the settings, the timings), with the
    summaries over seeds added (``summarized``)."""
    return summarized(json.loads((folder / "results.json").read_text(encoding="utf-8")))


def _slots(run: dict):
    """(row name, the dict that holds its curve, the curve's key) for every curve of one seed.

    Row names: the variant ("rope"), a scaling at inference ("rope, ntk s=4", "rope, dynamic"),
    a fine-tune ("rope, linear fine-tuned at 4L"), a window ("rope, window L") and a stretched
    learned table ("learned-scaled, interpolated", "learned-scaled, interpolated + fine-tuned").
    """
    for name, entry in run["methods"].items():
        yield name, entry, "ppl"
    for rope_type, family in run.get("scaled", {}).items():
        for factor in family:
            label = "rope, dynamic" if rope_type == "dynamic" else f"rope, {rope_type} s={factor}"
            yield label, family, factor
    for name, entry in run.get("finetuned", {}).items():
        yield f"rope, {name} fine-tuned at 4L", entry, "ppl"
    for name in run.get("window", {}):
        yield f"{name}, window L", run["window"], name
    for name in run.get("interpolated", {}):
        yield f"{name}, interpolated", run["interpolated"], name
    for name, entry in run.get("interpolated_finetuned", {}).items():
        yield f"{name}, interpolated + fine-tuned", entry, "ppl"


def row_curves(run: dict) -> dict:
    """Every perplexity curve of one seed's results, by row name: {row: {T: ppl or None}}."""
    return {label: holder[key] for label, holder, key in _slots(run)}


def summarize(runs: dict) -> dict:
    """Per row: the mean, min and max over seeds at each length, and every seed's value.

    {row: {"ppl": {T: mean}, "min": {T: ...}, "max": {T: ...}, "seeds": {T: [one per seed]}}};
    None where a model cannot run at T (then in every seed: a learned table past its rows).
    """
    per_seed = [row_curves(run) for run in runs.values()]
    rows = {}
    for name, first in per_seed[0].items():
        entry = {"ppl": {}, "min": {}, "max": {}, "seeds": {}}
        for length in first:
            values = [curves[name][length] for curves in per_seed]
            entry["seeds"][length] = values
            known = [v for v in values if v is not None]
            if len(known) not in (0, len(values)):
                raise ValueError(f"row {name!r} at T={length} failed in some seeds only: {values}")
            entry["ppl"][length] = round(sum(known) / len(known), 4) if known else None
            entry["min"][length] = min(known) if known else None
            entry["max"][length] = max(known) if known else None
        rows[name] = entry
    return rows


def summarized(raw: dict) -> dict:
    """``raw`` (as results.json stores it) with ``rows`` and the mean sections added."""
    runs = raw["runs"]
    rows = summarize(runs)
    first = runs[min(runs, key=int)]
    means = copy.deepcopy({k: first[k] for k in SECTIONS if k in first})
    for label, holder, key in _slots(means):
        holder[key] = rows[label]["ppl"]
    for name, entry in means["methods"].items():
        entry["train_loss"] = round(
            sum(r["methods"][name]["train_loss"] for r in runs.values()) / len(runs), 4
        )
        entry.pop("train_seconds", None)
    return {**raw, **means, "rows": rows}
