"""Chapter 3's math: what the sinusoidal encoding's wavelengths, rotations and base really do.

The encoding (Vaswani et al. 2017, "Attention Is All You Need", arXiv:1706.03762, section 3.5) is
``absolute.sinusoidal_encoding``: PE[t, 2i] = sin(t w_i), PE[t, 2i+1] = cos(t w_i), with
w_i = base ** (-2i / D). This module measures it:

- wavelengths: lambda_i = 2 pi / w_i, from 2 pi up to 2 pi * base ** ((D - 2) / D);
- offsets: because sin^2 + cos^2 = 1 in every pair, <PE_t, PE_{t+k}> = sum_i cos(k w_i) and
  ||PE_{t+k} - PE_t||^2 = 4 sum_i sin^2(k w_i / 2): both depend on the offset k only, never on t
  (the angle-addition identities behind the shift matrix M_k of section 3.5);
- confusion: positions 0..T-1 are *unambiguous* when every position is closer to its neighbour than
  to any position two or more steps away, dist(k) > dist(1) for 2 <= k <= T - 1, where
  dist(k) = ||PE_{t+k} - PE_t||. ``confusion`` measures it; ``smallest_unambiguous_base``
  searches for the smallest base that passes; ``scan_bases`` runs the test for many bases;
- the tensor2tensor layout (``tensor2tensor_encoding``), and helpers that verify the chapter's
  claims on any table (in ``ch03_tables``, imported here): the best linear shift map (least
  squares), the spread of dot products over t, the direction gap, the two column layouts.

Shapes: T positions, D = d_model dims, K offsets. Tensors in, tensors (or plain numbers) out.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.absolute import sinusoidal_encoding, sinusoidal_frequencies
from posenc_lib.analysis.ch03_tables import (  # noqa: F401 - re-exported: chapter 3's names
    _table,
    best_linear_shift,
    direction_gap,
    score_direction_gap,
    shift_error,
    to_concatenated,
    to_interleaved,
    translation_spread,
)
from posenc_lib.i18n import N_

MAX_CONFUSION_POSITIONS = 10_000_000  # a search past this is minutes of work: refuse it
_CHUNK = 8192  # offsets per block in the offset-only computations


def _d_model(d_model) -> int:
    return validate.even_int("d_model", d_model, N_("the encoding is built from (sin, cos) pairs."))


def _offsets(offsets) -> torch.Tensor:
    """Offsets as a float64 tensor (K,): a number, a list of numbers or a 1-D tensor."""
    if isinstance(offsets, torch.Tensor):
        validate.tensor("offsets", offsets, min_rank=0, max_rank=1, shape_hint="(K,)")
        if offsets.is_complex() or offsets.dtype == torch.bool:
            raise ValueError(f"offsets must hold real numbers, got dtype {offsets.dtype}.")
        values = offsets.detach().to("cpu", torch.float64).reshape(-1)  # (K,)
    else:
        items = offsets if isinstance(offsets, (list, tuple, range)) else [offsets]
        values = torch.tensor(
            [validate.real_number("each offset", k) for k in items], dtype=torch.float64
        )  # (K,)
    if not bool(torch.isfinite(values).all()):
        raise ValueError("offsets must be finite numbers.")
    return values


def wavelengths(d_model, base=10000.0) -> torch.Tensor:
    """lambda_i = 2 pi / w_i = 2 pi * base ** (2i / D), one per pair i = 0 .. D/2 - 1. (D/2,).

    Vaswani et al. 2017, section 3.5: "the wavelengths form a geometric progression from 2 pi to
    10000 * 2 pi" -- with i running to D/2 - 1 the last one is 2 pi * base ** ((D - 2) / D).
    """
    return 2 * math.pi / sinusoidal_frequencies(_d_model(d_model), base)  # (D/2,)


def longest_wavelength(d_model, base=10000.0) -> float:
    """2 pi * base ** ((D - 2) / D): the wavelength of the slowest pair (not 2 pi * base)."""
    return float(wavelengths(d_model, base)[-1])


def dot_by_offset(offsets, d_model, base=10000.0) -> torch.Tensor:
    """<PE_t, PE_{t+k}> = sum_i cos(k w_i) for each offset k, whatever t is. (K,) float64.

    From cos(a) cos(b) + sin(a) sin(b) = cos(a - b) in each pair (Vaswani et al. 2017, sec. 3.5).
    At k = 0 it is D/2, the squared length of every PE vector.
    """
    k = _offsets(offsets)  # (K,)
    omega = sinusoidal_frequencies(_d_model(d_model), base)  # (D/2,)
    return torch.cat([torch.outer(part, omega).cos_().sum(-1) for part in k.split(_CHUNK)])  # (K,)


def offset_distances(offsets, d_model, base=10000.0) -> torch.Tensor:
    """dist(k) = ||PE_{t+k} - PE_t|| = sqrt(4 sum_i sin^2(k w_i / 2)) for each offset k. (K,)

    The same for every t: ||a - b||^2 = |a|^2 + |b|^2 - 2 <a, b> = D - 2 sum_i cos(k w_i), written
    with sin^2 so that small distances keep their digits.
    """
    k = _offsets(offsets)  # (K,)
    omega = sinusoidal_frequencies(_d_model(d_model), base)  # (D/2,)
    half = omega / 2  # (D/2,)
    squared = [torch.outer(part, half).sin_().square_().sum(-1) for part in k.split(_CHUNK)]
    return (4 * torch.cat(squared)).sqrt()  # (K,)


def nearest_non_neighbour(table, window: int = 1, block: int = 512):
    """For every row t of any (T, D) table: the closest row s with |s - t| > window, by brute force.

    Returns (distance (T,) float64, offset (T,) int64 = s - t). Computed in blocks of rows, so a
    table never needs a (T, T) matrix in memory. Used to check ``offset_distances`` on a real table.
    """
    validate.float_tensor("table", table, 2, 2, "(T, D)")
    window = validate.whole_int("window", window)
    block = validate.positive_int("block", block, maximum=1 << 16)
    n = table.shape[0]
    if window < 0 or n <= 2 * window + 1:
        raise ValueError(
            f"window must be >= 0 and leave some row farther than it from every row; a table of "
            f"{n} rows and window={window} leaves none for the middle row."
        )
    rows = table.detach().to("cpu", torch.float64)  # (T, D)
    all_positions = torch.arange(n)  # (T,)
    best, where = [], []
    for start in range(0, n, block):
        part = rows[start : start + block]  # (b, D)
        dist = torch.cdist(part, rows, compute_mode="donot_use_mm_for_euclid_dist")  # (b, T)
        t = all_positions[start : start + part.shape[0], None]  # (b, 1)
        dist = dist.masked_fill((all_positions[None, :] - t).abs() <= window, math.inf)
        value, s = dist.min(-1)  # (b,), (b,)
        best.append(value)
        where.append(s - t[:, 0])
    return torch.cat(best), torch.cat(where)  # (T,), (T,)


class Confusion(NamedTuple):
    """How well positions 0..T-1 of one sinusoidal table are told apart (see ``confusion``)."""

    first_offset: int | None  # smallest k > window with dist(k) <= dist(1); None: no confusion
    margin: float  # min over window < k <= T-1 of dist(k) / dist(1); > 1 means unambiguous
    closest_offset: int  # the k > window where that minimum is reached
    step: float  # dist(1), the distance between neighbours


def confusion(n_positions, d_model, base=10000.0, window: int = 1) -> Confusion:
    """Are positions 0..T-1 unambiguous? Compare dist(k) with dist(1) for window < k <= T - 1.

    The criterion (window = 1): a position is *confused* with another two or more steps away when
    that one is at least as close as its own neighbour, dist(k) <= dist(1). Because dist depends on
    k only, one pass over the offsets decides it for every pair (s, t) at once. A larger window
    asks about far positions only: ``margin`` is then how close the closest of them comes, in
    neighbour steps.
    Offsets are processed in blocks, so T may be large (up to MAX_CONFUSION_POSITIONS).
    """
    return _scan(n_positions, d_model, base, window, stop_at_first=False)


def _scan(n_positions, d_model, base, window, stop_at_first) -> Confusion:
    n = validate.positive_int("n_positions", n_positions, maximum=MAX_CONFUSION_POSITIONS)
    window = validate.positive_int("window", window)
    if n < window + 2:
        raise ValueError(
            f"n_positions must be at least window + 2 = {window + 2}, got {n}: no two positions "
            f"would be more than window = {window} steps apart, so nothing could be confused."
        )
    d = _d_model(d_model)
    omega = sinusoidal_frequencies(d, base)  # (D/2,)
    step_sq = float(4 * (omega / 2).sin().pow(2).sum())  # dist(1)^2
    first, margin_sq, closest = None, math.inf, window + 1
    start, size = window + 1, 256  # blocks grow to _CHUNK: an early confusion is found quickly
    while start < n:
        k = torch.arange(start, min(start + size, n), dtype=torch.float64)  # (K,)
        # dist(k)^2 = D - 2 sum_i cos(k w_i): one cos per entry, computed in place (the search's
        # cost); rounding error ~1e-13, far below any margin it decides.
        dist_sq = d - 2 * torch.outer(k, omega).cos_().sum(-1)  # (K,)
        low, where = dist_sq.min(0)
        if float(low) < margin_sq:
            margin_sq, closest = float(low), start + int(where)
        if first is None:
            bad = (dist_sq <= step_sq).nonzero()
            if bad.numel():
                first = start + int(bad[0, 0])
                if stop_at_first:  # the margin is then over the offsets seen so far
                    break
        start, size = start + size, min(2 * size, _CHUNK)
    return Confusion(first, math.sqrt(max(margin_sq, 0.0) / step_sq), closest, math.sqrt(step_sq))


def smallest_unambiguous_base(n_positions, d_model, candidates) -> float | None:
    """The smallest base among ``candidates`` that keeps positions 0..T-1 unambiguous, or None.

    Every candidate is tried (smallest first): a larger base is not always safer, so the search
    cannot stop early or bisect. candidates: a list or 1-D tensor of bases > 1.
    """
    for base in sorted(_base_list("candidates", candidates)):
        if _scan(n_positions, d_model, base, 1, stop_at_first=True).first_offset is None:
            return base
    return None


def _base_list(name, values) -> list[float]:
    """A list or 1-D tensor of bases > 1, as a list of floats in the given order."""
    if isinstance(values, torch.Tensor):
        values = values.reshape(-1).tolist()
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ValueError(f"{name} must be a list of bases, got {validate.show(values)}.")
    bases = [validate.positive_float(f"each base in {name}", b, minimum=1.0) for b in values]
    if not bases:
        raise ValueError(f"{name} must hold at least one base.")
    return bases


MAX_SCAN_POSITIONS = 1_000_000  # dist(k) for every k is kept in memory: 8 MB per base at most


class BaseScan(NamedTuple):
    """The confusion test for many bases at one width (see ``scan_bases``)."""

    bases: tuple[float, ...]
    first_offsets: tuple[int | None, ...]  # per base: smallest k >= 2 with dist(k) <= dist(1)
    far_margins: tuple[float, ...]  # per base: min over far <= k <= T-1 of dist(k) / dist(1)


def scan_bases(n_positions, d_model, bases, far: int = 100) -> BaseScan:
    """For each base: is some position confused, and how close does the closest far one come?

    One pass over the offsets k = 0..T-1 per base, with dist(k)^2 = D - 2 sum_i cos(k w_i)
    (Vaswani et al. 2017, sec. 3.5, as in ``confusion``). first_offsets[j] is
    ``confusion(T, D, bases[j]).first_offset``; far_margins[j] is
    ``confusion(T, D, bases[j], window=far - 1).margin``: both from a single pass.
    bases: a list or 1-D tensor of bases > 1, kept in the given order.
    """
    n = validate.positive_int("n_positions", n_positions, maximum=MAX_SCAN_POSITIONS)
    d = _d_model(d_model)
    far = validate.positive_int("far", far)
    if not 2 <= far < n:
        raise ValueError(
            f"far must satisfy 2 <= far < n_positions = {n}, got {far}: the far positions are "
            f"those at least `far` steps away, and at least one offset must qualify."
        )
    values = _base_list("bases", bases)
    offsets = torch.arange(n, dtype=torch.float64)  # (T,): k = 0 .. T-1
    firsts, margins = [], []
    for base in values:
        omega = sinusoidal_frequencies(d, base)  # (D/2,)
        dist_sq = torch.cat(
            [d - 2 * torch.outer(part, omega).cos_().sum(-1) for part in offsets.split(_CHUNK)]
        )  # (T,): dist(k)^2
        step_sq = float(dist_sq[1])
        confused = (dist_sq[2:] <= step_sq).nonzero()  # offsets k >= 2 as close as a neighbour
        firsts.append(2 + int(confused[0, 0]) if confused.numel() else None)
        margins.append(math.sqrt(max(float(dist_sq[far:].min()), 0.0) / step_sq))
    return BaseScan(tuple(values), tuple(firsts), tuple(margins))


def similarity_by_decade(d_model, base=10000.0, n_decades: int = 5) -> torch.Tensor:
    """The mean of <PE_t, PE_{t+k}> / (D/2) over k in [10^j, 10^(j+1)), for j = 0 .. n-1. (n,).

    1 means "as similar as a position to itself", 0 "as unrelated as random phases". With
    geometric wavelengths it falls roughly linearly in log k and reaches 0 near k ~ base.
    """
    n_decades = validate.positive_int("n_decades", n_decades, maximum=7)
    d = _d_model(d_model)
    means = []
    for j in range(n_decades):
        k = torch.arange(10**j, 10 ** (j + 1), dtype=torch.float64)  # (K,)
        means.append(dot_by_offset(k, d, base).mean() / (d / 2))
    return torch.stack(means)  # (n,)


def similarity_by_offset_range(
    d_model, base=10000.0, n_positions: int = 50_000, n_ranges: int = 48
):
    """The mean of <PE_t, PE_{t+k}> / (D/2) over log-spaced ranges of offsets k in [2, T).

    The ranges' edges are ``n_ranges + 1`` log-spaced numbers from 2 to T rounded down to whole
    offsets (duplicates dropped, so the small ranges below k ~ 10 are uneven). Returns
    (centres (R,), means (R,)): each range's geometric centre and its mean similarity, the curve of
    chapter 3's ruler figure (``viz.ch03_sinusoid.similarity_by_range``).
    """
    d = _d_model(d_model)
    n = validate.positive_int("n_positions", n_positions, maximum=MAX_CONFUSION_POSITIONS)
    n_ranges = validate.positive_int("n_ranges", n_ranges, maximum=1000)
    if n < 3:
        raise ValueError(
            f"n_positions must be at least 3, got {n}: the ranges hold offsets 2 <= k < n_positions."
        )
    edges = torch.logspace(math.log10(2), math.log10(n), n_ranges + 1).long().unique()  # (R + 1,)
    curve = dot_by_offset(torch.arange(n), d, base) / (d / 2)  # (T,): one entry per offset k
    centres = (edges[:-1] * edges[1:]).double().sqrt()  # (R,)
    means = torch.stack([curve[a:b].mean() for a, b in zip(edges[:-1], edges[1:], strict=True)])
    return centres, means


# -- the other published layout --------------------------------------------------------------------


def tensor2tensor_encoding(n_positions, d_model, base=10000.0, *, dtype=torch.float32):
    """The variant of tensor2tensor's ``get_timing_signal_1d`` (and fairseq, Hugging Face FSMT).

    Columns are concatenated, [sin(t w_0) .. sin(t w_{D/2-1}) | cos(t w_0) .. cos(t w_{D/2-1})], and
    w_i = base ** (-i / (D/2 - 1)), so the slowest wavelength is exactly 2 pi * base.
    Returns (T, D).
    """
    n = validate.positive_int("n_positions", n_positions)
    d = _d_model(d_model)
    b = validate.positive_float("base", base, minimum=1.0)
    validate.table_dtype(dtype, None)
    validate.table_size(N_("a ({n}, {d}) position table"), n, d, n=n, d=d)
    i = torch.arange(d // 2, dtype=torch.float64)  # (D/2,)
    omega = b ** (-i / max(d // 2 - 1, 1))  # (D/2,)
    angles = torch.arange(n, dtype=torch.float64)[:, None] * omega  # (T, D/2)
    return torch.cat((angles.sin(), angles.cos()), dim=-1).to(dtype)  # (T, D)


# -- adding positions to token embeddings ----------------------------------------------------------


class Mixing(NamedTuple):
    """What adding position vectors does to token embeddings (see ``mixing``)."""

    norm_ratio: float  # mean ||PE_t|| / mean ||x||
    angle_degrees: float  # mean angle between x and x + PE
    position_share: float  # share of the input's variance (summed over dims) that PE carries


def mixing(tokens, positions) -> Mixing:
    """tokens (B, T, D) token embeddings, positions (T, D) position vectors, added as x + PE.

    position_share = sum_dims var_t(PE) / sum_dims var_{b,t}(x + PE): how much of what varies in the
    input is position rather than token.
    """
    x = validate.float_tensor("tokens", tokens, 3, 3, "(B, T, D)").detach().double()
    pe = _table(positions, "positions")
    if pe.shape != x.shape[1:]:
        raise ValueError(
            f"positions must have shape (T, D) = {tuple(x.shape[1:])} to add to tokens of shape "
            f"{tuple(x.shape)}, got {tuple(pe.shape)}."
        )
    total = x + pe  # (B, T, D)
    cosine = torch.nn.functional.cosine_similarity(x, total, dim=-1).clamp(-1, 1)  # (B, T)
    variance_pe = pe.var(0, unbiased=False).sum()
    variance_all = total.reshape(-1, x.shape[-1]).var(0, unbiased=False).sum()
    return Mixing(
        norm_ratio=float(pe.norm(dim=-1).mean() / x.norm(dim=-1).mean()),
        angle_degrees=float(torch.rad2deg(cosine.acos()).mean()),
        position_share=float(variance_pe / variance_all),
    )


# -- one dashboard frame ---------------------------------------------------------------------------


class SinusoidView(NamedTuple):
    """Everything the chapter 3 dashboard shows for one setting of its sliders."""

    table: torch.Tensor  # (T, D) the encoding
    base: float
    position: int  # t
    offset: int  # k
    offsets: torch.Tensor  # (K,) offsets -(T-1) .. T-1
    similarity: torch.Tensor  # (K,) <PE_t, PE_{t+k}> / (D/2) at each offset
    wavelengths: torch.Tensor  # (D/2,)
    dot: float  # <PE_t, PE_{t+k}> at the chosen k
    confusion: Confusion  # over ``horizon`` positions
    horizon: int


def sinusoid_view(n_positions, d_model, base, position, offset, horizon: int = 4096):
    """The dashboard's numbers: the table, the similarity at every offset, wavelengths, confusion.

    The parts that depend on (T, D, base) only are cached, so moving t or k costs one dot product.
    The tensors of a view are shared between views: read them, do not change them in place.
    """
    n = validate.positive_int("n_positions", n_positions, maximum=4096)
    t = validate.whole_int("position", position)
    k = validate.whole_int("offset", offset)
    if not 0 <= t < n:
        raise ValueError(f"position must be in 0..{n - 1}, got {t}.")
    d = _d_model(d_model)
    b = validate.positive_float("base", base, minimum=1.0)
    horizon = validate.positive_int("horizon", horizon, maximum=MAX_CONFUSION_POSITIONS)
    table, offsets, similarity, lengths, confused = _view_parts(n, d, b, horizon)
    return SinusoidView(
        table=table,
        base=b,
        position=t,
        offset=k,
        offsets=offsets,
        similarity=similarity,
        wavelengths=lengths,
        dot=float(dot_by_offset(k, d, b)[0]),
        confusion=confused,
        horizon=horizon,
    )


@functools.lru_cache(maxsize=32)
def _view_parts(n: int, d: int, base: float, horizon: int):
    table = sinusoidal_encoding(n, d, base)  # (T, D)
    offsets = torch.arange(-(n - 1), n, dtype=torch.float64)  # (K,)
    similarity = dot_by_offset(offsets, d, base) / (d / 2)  # (K,)
    return table, offsets, similarity, wavelengths(d, base), confusion(horizon, d, base)
