"""The yardstick: one report that scores any position encoding on the properties we want of it.

    from posenc_lib.analysis.report import position_report, compare_reports
    position_report(lambda n: sinusoidal_encoding(n, 64), name="sinusoidal")   # a table in a notebook
    compare_reports([report_a, report_b, ...])                                  # one table for many

An encoding is given as a function of the sequence length, ``f(n) -> (n, D)`` (the report can then
ask for a short and a long sequence, and so measure length dependence and extrapolation), or as one
fixed (T, D) table. This module measures; ``report_display`` holds the rows and tables it returns
and how they print. Each property is one number with a stated threshold and a verdict:

- uniqueness: the smallest distance between two positions' vectors, relative to a vector's length;
- boundedness: how the largest |value| grows with the sequence length;
- distance over t: does ||PE_t - PE_{t+k}|| depend on where t is, for a fixed offset k?
- distance over length: does it depend on how long the sequence is?
- smoothness: the largest step between neighbours, relative to the typical distance between positions;
- offset-only similarity: does <PE_t, PE_{t+k}> depend on t, or on the offset k only?
- extrapolation: does the encoding give positions past the ``seen`` length, leaving the seen rows as
  they were (so what a model learned on them still holds)?

The list is the desiderata of the seed documents (unique, bounded, consistent distances whatever the
length, generalising to longer sequences, deterministic and smooth), plus the offset-only dot product.
That last one is a consequence, not the reason Vaswani et al. 2017 (arXiv:1706.03762, section 3.5)
give: they chose sinusoids because, for any fixed offset k, PE_{pos+k} is a linear function of
PE_pos (a rotation of each (sin, cos) pair), which they hoped would let the model attend by relative
position; the paper says nothing about dot products. A rotation keeps dot products, so
<PE_t, PE_{t+k}> depends on k alone, and that is what the report measures.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.report_display import (  # noqa: F401 - re-exported: the report's names
    Comparison,
    PositionReport,
    Property,
    compare_reports,
)
from posenc_lib.bounds import bound
from posenc_lib.i18n import N_, _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

# The thresholds, stated once; the report prints each beside its measurement.
UNIQUE_MIN = 1e-3  # smallest distance between two positions / RMS vector length
GROWTH_MAX = 1.5  # largest |value| at the longest length / at the shortest
SPREAD_MAX = 0.01  # relative spread over t of a distance or a dot product at a fixed offset
LENGTH_CHANGE_MAX = 0.01  # relative change of ||PE_0 - PE_k|| between two sequence lengths
STEP_MAX = 0.5  # largest neighbour step / median distance between two positions
EXTRAPOLATION_CHANGE_MAX = 1e-6  # largest change of the seen rows when the sequence grows
MAX_TABLE_VALUES = 2**26  # 512 MiB of float64: the report refuses larger tables


# -- measurements: a (T, D) float64 table in, numbers out ---------------------------------------------


def neighbour_distances(table: torch.Tensor) -> torch.Tensor:
    """||PE_{t+1} - PE_t|| for t = 0 .. T-2. (T, D) -> (T-1,)."""
    return (table[1:] - table[:-1]).norm(dim=-1)


def min_pair_distance(table: torch.Tensor, block: int = 1024) -> tuple[float, int, int]:
    """The smallest ||PE_s - PE_t|| over s < t, and the pair (s, t) where it occurs. (T, D) input.

    Computed in blocks of rows, so a long table never needs a (T, T) matrix in memory.
    """
    n = table.shape[0]
    best, where = math.inf, (0, 0)
    for start in range(0, n, block):
        rows = table[start : start + block]  # (b, D)
        dist = torch.cdist(
            rows, table, compute_mode="donot_use_mm_for_euclid_dist"
        )  # (b, T), exact
        s = torch.arange(start, start + rows.shape[0])[:, None]  # (b, 1)
        dist = dist.masked_fill(torch.arange(n)[None, :] <= s, math.inf)  # keep s < t only
        value, flat = dist.flatten().min(0)
        if float(value) < best:
            best = float(value)
            where = (start + int(flat) // n, int(flat) % n)
    return best, *where


def pair_distances_median(table: torch.Tensor, samples: int = 20000) -> float:
    """The median of ||PE_s - PE_t|| over pairs s != t (sampled with a fixed seed when T is large)."""
    n = table.shape[0]
    generator = torch.Generator().manual_seed(0)
    s = torch.randint(0, n, (samples,), generator=generator)
    t = (s + torch.randint(1, n, (samples,), generator=generator)) % n  # t != s
    return float((table[s] - table[t]).norm(dim=-1).median())


def offsets_for(n_positions: int) -> list[int]:
    """The offsets k the report tries: 1, 2, 4, ... up to half the sequence length."""
    return [2**j for j in range(max(1, n_positions // 2).bit_length()) if 2**j < n_positions]


def spread_over_t(values: torch.Tensor) -> float:
    """max - min of a measurement taken at every t for one offset. (T-k,) -> a float."""
    return float(values.max() - values.min()) if values.numel() else 0.0


def distances_at_offset(table: torch.Tensor, k: int) -> torch.Tensor:
    """||PE_{t+k} - PE_t|| for every t. (T, D) -> (T-k,)."""
    return (table[k:] - table[:-k]).norm(dim=-1)


def dots_at_offset(table: torch.Tensor, k: int) -> torch.Tensor:
    """<PE_t, PE_{t+k}> for every t. (T, D) -> (T-k,)."""
    return (table[k:] * table[:-k]).sum(-1)


# -- building a report --------------------------------------------------------------------------------


def position_report(encoding, name: str | None = None, seen: int = 128, unseen: int = 1024):
    """Score ``encoding`` on the seven properties; returns a PositionReport (shown as a table).

    encoding: a function ``f(n_positions) -> (n, D)`` tensor or array, or a fixed (T, D) table.
    seen: the sequence length a model is trained on; unseen: a longer one, to test extrapolation.
    The table measured for uniqueness, smoothness and the offset properties is the longest the
    encoding can make (``f(unseen)``, else ``f(seen)``); for a fixed table, the table itself.
    """
    seen = validate.positive_int(_("seen (the training length)"), seen)
    unseen = validate.positive_int(_("unseen (a longer length)"), unseen)
    if seen < 8 or unseen <= seen:
        raise ValueError(
            f"position_report needs 8 <= seen < unseen, got seen={seen}, unseen={unseen}: the "
            "report compares a training length with a longer one."
        )
    if isinstance(encoding, (torch.Tensor, np.ndarray)):
        return _report_table(_as_table(encoding, _("the table")), name or _("your table"))
    if not callable(encoding):
        raise ValueError(
            "position_report takes a function of the sequence length, f(n) -> (n, D), or a (T, D) "
            f"tensor; got {validate.show(encoding)} of type {type(encoding).__name__}."
        )
    if name is None:
        name = getattr(encoding, "__name__", "<lambda>")
        name = _("your encoding") if name == "<lambda>" else name
    short = _call(encoding, seen, name)
    long, failure = _try_call(encoding, unseen, name, short.shape[1])
    table = long if long is not None else short
    eighth = _call(encoding, max(2, seen // 8), name, short.shape[1])
    rows = [
        _uniqueness(table),
        _boundedness(
            {eighth.shape[0]: eighth, seen: short, **({unseen: long} if long is not None else {})}
        ),
        _distance_over_t(table),
        _distance_over_length(eighth, short),
        _smoothness(table),
        _offset_similarity(table),
        _extrapolation(short, long, failure, seen, unseen),
    ]
    return PositionReport(name, rows)


def _report_table(table: torch.Tensor, name: str) -> PositionReport:
    n = table.shape[0]
    if n < 8:
        raise ValueError(f"the report needs a table of at least 8 positions, got {n}.")
    not_measured = _("not measured: one fixed table has one length; pass a function f(n) instead")
    rows = [
        _uniqueness(table),
        _boundedness({n // 8: table[: n // 8], n: table}, prefix=True),
        _distance_over_t(table),
        Property(DISTANCE_OVER_LENGTH, None, "–", _at_most(LENGTH_CHANGE_MAX), None, not_measured),
        _smoothness(table),
        _offset_similarity(table),
        Property(EXTRAPOLATION, None, "–", _(SEEN_ROWS_KEPT), None, not_measured),
    ]
    return PositionReport(name, rows, note=tr("A fixed table of {n} positions.", n=n))


# The properties' names: the keys of a report (``report["uniqueness"]``), in English; marked N_,
# shown in the language in use (``report_display``).
UNIQUENESS = N_("uniqueness")
BOUNDEDNESS = N_("boundedness")
DISTANCE_OVER_T = N_("distance over t")
DISTANCE_OVER_LENGTH = N_("distance over length")
SMOOTHNESS = N_("smoothness")
OFFSET_SIMILARITY = N_("offset-only similarity")
EXTRAPOLATION = N_("extrapolation")
SEEN_ROWS_KEPT = N_("defined, seen rows kept")


def _at_most(limit: float) -> str:
    return f"≤ {limit:g}"


def _as_table(value, what: str, n_positions: int | None = None, d_model: int | None = None):
    """``value`` as a finite float64 (T, D) tensor, or a ValueError saying what is wrong."""
    if isinstance(value, np.ndarray):
        if value.dtype.kind not in "biuf":
            raise ValueError(f"{what} must hold real numbers, got a NumPy array of {value.dtype}.")
        value = torch.from_numpy(np.ascontiguousarray(value, dtype=np.float64))
    if not isinstance(value, torch.Tensor):
        raise ValueError(
            f"{what} must be a (T, D) tensor or array, got {validate.show(value)} of type "
            f"{type(value).__name__}."
        )
    if value.is_complex() or value.dim() != 2 or 0 in value.shape:
        raise ValueError(
            f"{what} must be a real (T, D) table with one row per position, got shape "
            f"{tuple(value.shape)} and dtype {value.dtype}."
        )
    if n_positions is not None and value.shape[0] != n_positions:
        raise ValueError(
            f"{what} has {value.shape[0]} rows; asked for {n_positions} positions it should have "
            f"{n_positions} rows, one per position."
        )
    if d_model is not None and value.shape[1] != d_model:
        raise ValueError(
            f"{what} has {value.shape[1]} columns, but {d_model} at another length: an encoding "
            "must keep the same width D for every sequence length."
        )
    validate.table_size(what, value.shape[0], value.shape[1])
    if value.numel() > MAX_TABLE_VALUES:
        raise ValueError(
            f"{what} has {value.numel()} values; the report takes at most {MAX_TABLE_VALUES}."
        )
    value = value.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(value).all()):
        raise ValueError(f"{what} contains NaN or infinite values.")
    return value


def _call(encoding, n: int, name: str, d_model: int | None = None) -> torch.Tensor:
    try:
        value = encoding(n)
    except Exception as error:  # noqa: BLE001 - say whose code failed, and how
        raise ValueError(
            f"{name} raised {type(error).__name__} when asked for {n} positions: {error}"
        ) from error
    return _as_table(value, f"{name}({n})", n, d_model)


def _try_call(encoding, n, name, d_model):
    """(table, None), or (None, the reason the encoding has no table of n positions)."""
    try:
        value = encoding(n)
    except Exception as error:  # noqa: BLE001 - a failure past the seen length is a finding
        return None, f"{type(error).__name__}: {str(error).split('. ')[0]}"
    return _as_table(value, f"{name}({n})", n, d_model), None


def _rms(table):
    return float(table.pow(2).sum(-1).mean().sqrt())


def _uniqueness(table) -> Property:
    best, s, t = min_pair_distance(table)
    ratio = best / max(_rms(table), 1e-300)
    return Property(
        UNIQUENESS,
        ratio,
        f"{ratio:.2g}",
        f"≥ {UNIQUE_MIN:g}",
        ratio >= UNIQUE_MIN,
        tr(
            "smallest ||PE_s - PE_t|| / RMS ||PE_t|| over T = {n}; closest pair ({s}, {t})",
            n=table.shape[0],
            s=s,
            t=t,
        ),
    )


def _boundedness(tables: dict, prefix: bool = False) -> Property:
    peaks = {n: float(tbl.abs().max()) for n, tbl in tables.items()}
    lengths = sorted(peaks)
    growth = peaks[lengths[-1]] / max(peaks[lengths[0]], 1e-300)
    shown = " → ".join(f"{peaks[n]:.3g}" for n in lengths)
    if prefix:
        detail = N_("largest |value| for first rows of the table T = {lengths}: grew {growth:.3g}x")
    else:
        detail = N_("largest |value| for sequence lengths T = {lengths}: grew {growth:.3g}x")
    return Property(
        BOUNDEDNESS,
        growth,
        tr("max |PE| {shown}", shown=shown),
        tr("grows ≤ {limit:g}x", limit=GROWTH_MAX),
        growth <= GROWTH_MAX,
        translate(detail).format(lengths=", ".join(map(str, lengths)), growth=growth),
    )


def _worst_relative_spread(table, measure) -> tuple[float, int]:
    """The largest (max - min over t) / typical size, over the report's offsets k; and that k."""
    scale = max(_rms(table) ** 2, 1e-300) if measure is dots_at_offset else None
    worst, worst_k = 0.0, 1
    for k in offsets_for(table.shape[0]):
        values = measure(table, k)  # (T-k,)
        size = scale if scale is not None else max(float(values.mean()), 1e-300)
        spread = spread_over_t(values) / size
        if spread > worst:
            worst, worst_k = spread, k
    return worst, worst_k


# Below this a measured spread is rounding, not a property of the encoding: the report's thresholds
# are 1e-2, and a float32 table's relative rounding reaches 6e-5 (normalized positions t / (T - 1)
# at T = 1024, where neighbours differ by 1e-3). The extrapolation row has its own, stricter limit.
SHOWN_FLOOR = 1e-4


def _shown(value: float, floor: float = SHOWN_FLOOR) -> str:
    """A measured spread as the report prints it: "< 1e-4" at rounding level (its digits would
    differ between CPUs, or read as a real spread; see ``bounds``), else two significant digits."""
    return bound(value, floor, prefix="< ") if value < floor else f"{value:.2g}"


def _distance_over_t(table) -> Property:
    spread, k = _worst_relative_spread(table, distances_at_offset)
    return Property(
        DISTANCE_OVER_T,
        spread,
        _shown(spread),
        _at_most(SPREAD_MAX),
        spread <= SPREAD_MAX,
        tr(
            "(max - min) / mean over t of ||PE_t - PE_t+k||, worst over k = 1, 2, 4, ... (k = {k})",
            k=k,
        ),
    )


def _distance_over_length(short, long) -> Property:
    n = short.shape[0]
    d_short = (short[1:] - short[0]).norm(dim=-1)  # (n-1,): ||PE_k - PE_0|| in the short sequence
    d_long = (long[1:n] - long[0]).norm(dim=-1)  # the same offsets in the long sequence
    change = float(((d_short - d_long).abs() / d_long.clamp_min(1e-300)).max())
    return Property(
        DISTANCE_OVER_LENGTH,
        change,
        _shown(change),
        _at_most(LENGTH_CHANGE_MAX),
        change <= LENGTH_CHANGE_MAX,
        tr(
            "relative change of ||PE_k - PE_0||, k < {n}, between sequences of {n} and "
            "{long} tokens",
            n=n,
            long=long.shape[0],
        ),
    )


def _smoothness(table) -> Property:
    ratio = float(neighbour_distances(table).max()) / max(pair_distances_median(table), 1e-300)
    return Property(
        SMOOTHNESS,
        ratio,
        f"{ratio:.2g}",
        _at_most(STEP_MAX),
        ratio <= STEP_MAX,
        tr(
            "largest ||PE_t+1 - PE_t|| / median ||PE_s - PE_t|| over T = {n}",
            n=table.shape[0],
        ),
    )


def _offset_similarity(table) -> Property:
    spread, k = _worst_relative_spread(table, dots_at_offset)
    return Property(
        OFFSET_SIMILARITY,
        spread,
        _shown(spread),
        _at_most(SPREAD_MAX),
        spread <= SPREAD_MAX,
        tr(
            "(max - min) over t of <PE_t, PE_t+k> / mean ||PE_t||^2, worst over k (k = {k})",
            k=k,
        ),
    )


def _extrapolation(short, long, failure, seen, unseen) -> Property:
    threshold = translate(SEEN_ROWS_KEPT)
    if long is None:
        return Property(
            EXTRAPOLATION,
            math.inf,
            _("no table"),
            threshold,
            False,
            tr("asked for {n} positions: {failure}", n=unseen, failure=failure),
        )
    change = float((long[:seen] - short).abs().max()) / max(float(short.abs().max()), 1e-300)
    return Property(
        EXTRAPOLATION,
        change,
        tr("rows changed {change}", change=_shown(change, EXTRAPOLATION_CHANGE_MAX)),
        threshold,
        change <= EXTRAPOLATION_CHANGE_MAX,
        tr(
            "largest change of positions 0..{last} when the sequence grows to {n} tokens, "
            "relative to the largest |value|",
            last=seen - 1,
            n=unseen,
        ),
    )
