"""Chapter 4's measurements: attention scores that depend on the offset j - i, not on i and j.

The library's ``relative`` module holds T5's buckets and bias; this module holds what chapter 4
computes around them:

- ``offset_matrix`` and ``diagonal_spread`` (from ``toeplitz``, their one home, shared with chapters
  5 and 6): a score matrix is *Toeplitz* when entry (i, j) depends on j - i only; the spread is the
  largest (max - min) along any diagonal, 0 for a Toeplitz matrix.
- ``absolute_terms``: with positions added to the input, the score of (x_i + p_i) and (x_j + p_j)
  splits into four terms (content-content, content-position, position-content, position-position);
  Dai et al. 2019 (arXiv:1901.02860), section 3.3, start from this expansion.
- The relative methods, each written from its paper:
  ``shaw_logits`` (Shaw, Uszkoreit and Vaswani 2018, arXiv:1803.02155, eq. (4)-(5) with the
  clipping of section 3.2), ``transformer_xl_terms`` (Dai et al. 2019, section 3.3, the four
  terms (a)-(d) of A^rel), ``deberta_terms`` (He et al. 2021, arXiv:2006.03654, section 3.1,
  eq. (4)); T5's bias is ``relative.RelativePositionBias`` (Raffel et al. 2020, section 2.1).
- ``SCORERS`` and ``shift_experiment``: place a sentence at every offset inside a longer context
  and measure how much the scores between its own tokens change.
- ``bucket_view`` and ``bucket_ranges`` (in ``ch04_buckets``, imported here): T5's bucket map and
  bias matrix, for the dashboard and the printed tables.

Conventions: T5 and Shaw index by key - query (j - i), Transformer-XL and DeBERTa by query - key
(i - j); each function says which. Shapes: T positions, D input dims, d head dims, H heads.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.absolute import sinusoidal_encoding, sinusoidal_frequencies
from posenc_lib.analysis.ch04_buckets import (  # noqa: F401 - re-exported: chapter 4's names
    BucketView,
    bucket_ranges,
    bucket_view,
)
from posenc_lib.analysis.toeplitz import diagonal_spread, offset_matrix  # noqa: F401 - re-exported
from posenc_lib.i18n import N_
from posenc_lib.relative import RelativePositionBias

# -- the four terms of an absolute score ----------------------------------------------------------------


def absolute_terms(x, pe, w_q, w_k) -> dict[str, torch.Tensor]:
    """The four parts of (x + pe) W_q ((x + pe) W_k)^T, unscaled: they sum to the whole score.

    x, pe: (T, D) words and positions; w_q, w_k: (D, d). Returns name -> (T, T):
    "content-content" x_i W_q (x_j W_k)^T, "content-position" x_i W_q (p_j W_k)^T,
    "position-content" p_i W_q (x_j W_k)^T, "position-position" p_i W_q (p_j W_k)^T.
    The expansion Dai et al. 2019 (arXiv:1901.02860, section 3.3) start from.
    """
    _same_shape(("x", x), ("pe", pe))
    _projection("w_q", w_q, x)
    _projection("w_k", w_k, x)
    qx, qp = x @ w_q, pe @ w_q  # (T, d) each
    kx, kp = x @ w_k, pe @ w_k  # (T, d) each
    return {
        N_("content-content"): qx @ kx.T,
        N_("content-position"): qx @ kp.T,
        N_("position-content"): qp @ kx.T,
        N_("position-position"): qp @ kp.T,
    }  # (T, T) each


# -- Shaw et al. 2018 -------------------------------------------------------------------------------


def shaw_index(offsets, clip) -> torch.Tensor:
    """Row of Shaw's table for each offset j - i: clip(j - i, -C, C) + C, in 0 .. 2C.

    C = ``clip``, the clipping distance (Shaw et al. call it k; here k is a key).
    Shaw et al. 2018 (arXiv:1803.02155), section 3.2: offsets beyond +-C share the last vector.
    offsets: an integer tensor of any shape. Returns a LongTensor of the same shape.
    """
    validate.integer_tensor("offsets", offsets, N_("whole-number offsets j - i"))
    clip = validate.whole_int("clip", clip, maximum=2**20)
    if clip < 0:
        raise ValueError(f"clip must be >= 0 (the largest offset told apart), got {clip}.")
    return offsets.long().clamp(-clip, clip) + clip


def shaw_logits(q, k, rel_keys, clip) -> torch.Tensor:
    """e_ij = q_i (k_j + a_ij)^T / sqrt(d), with a_ij = rel_keys[clip(j - i, -C, C) + C].

    Shaw et al. 2018 (arXiv:1803.02155), eq. (4) and (5) with the clipping of section 3.2: one
    learned vector per clipped offset, added to the key. C = ``clip`` is the clipping distance
    (the paper's k; here k is the keys). q, k: (..., T, d); rel_keys: (2C + 1, d), row m for
    offset j - i = m - C. Computed as q rel_keys^T, (..., T, 2C + 1), then gathered, so
    no (T, T, d) tensor is built (their section 3.3 does the same with a reshape).
    Returns (..., T, T).
    """
    _same_shape(("q", q), ("k", k))
    validate.float_tensor("rel_keys", rel_keys, 2, 2, shape_hint="(2 clip + 1, d)")
    n, d = q.shape[-2:]
    clip = validate.whole_int("clip", clip, maximum=2**20)
    if clip < 0 or tuple(rel_keys.shape) != (2 * clip + 1, d):
        raise ValueError(
            f"rel_keys must have shape (2 clip + 1, d) = ({2 * clip + 1}, {d}) for clip={clip} and "
            f"d={d}: one vector per offset -clip..clip; got {tuple(rel_keys.shape)}."
        )
    if rel_keys.dtype != q.dtype:
        raise ValueError(f"rel_keys is {rel_keys.dtype} but q is {q.dtype}; use one dtype.")
    index = shaw_index(offset_matrix(n), clip)  # (T, T) rows of rel_keys
    by_offset = q @ rel_keys.T  # (..., T, 2C + 1): q_i against every relative key
    position = by_offset.gather(-1, index.expand(*by_offset.shape[:-1], n))  # (..., T, T)
    return (q @ k.transpose(-2, -1) + position) / math.sqrt(d)  # (..., T, T)


# -- Transformer-XL ----------------------------------------------------------------------------------


def relative_sinusoids(offsets, d_model, base=10000.0) -> torch.Tensor:
    """The sinusoidal vector of each offset, laid out as ``sinusoidal_encoding`` (sin, cos pairs).

    Transformer-XL's R_{i-j} (Dai et al. 2019, section 3.3): the table of Vaswani et al. indexed by
    a distance instead of a position, so ``relative_sinusoids(arange(T), D)`` equals
    ``sinusoidal_encoding(T, D)`` in float64. offsets: an integer tensor (...,). Returns
    (..., D) float64.
    """
    validate.integer_tensor("offsets", offsets, N_("whole-number offsets"))
    omega = sinusoidal_frequencies(d_model, base)  # (D/2,) float64
    angles = offsets.double()[..., None] * omega  # (..., D/2)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).flatten(-2)  # (..., D)


def transformer_xl_terms(q, k, r, u, v) -> dict[str, torch.Tensor]:
    """Transformer-XL's score of query i and key j in four terms, unscaled (their sum is A^rel).

    Dai et al. 2019 (arXiv:1901.02860), section 3.3, in row-vector form (q = x W_q, k = x W_k,E):
        (a) content-content       q_i . k_j
        (b) content-position      q_i . r_{i-j}       r = R W_k,R: a sinusoid of the distance
        (c) global content bias   u . k_j             u replaces p_i W_q in term (c) of absolute
        (d) global position bias  v . r_{i-j}
    q, k: (T, d); r: (2T - 1, d), row m for the distance i - j = m - (T - 1) (query minus key);
    u, v: (d,). Returns name -> (T, T). Terms (b) and (d) are computed against all 2T - 1 rows of
    r and gathered (the paper's "relative shift" does the same with a pad and a reshape).
    """
    _same_shape(("q", q), ("k", k), max_rank=2)
    n, d = q.shape
    validate.float_tensor("r", r, 2, 2, shape_hint=f"({2 * n - 1}, {d})")
    if tuple(r.shape) != (2 * n - 1, d):
        raise ValueError(
            f"r must have shape (2T - 1, d) = ({2 * n - 1}, {d}): one row per distance i - j from "
            f"{-(n - 1)} to {n - 1}; got {tuple(r.shape)}."
        )
    for name, bias in (("u", u), ("v", v)):
        validate.float_tensor(name, bias, 1, 1, shape_hint=f"({d},)")
        if bias.shape[0] != d:
            raise ValueError(
                f"{name} must have shape ({d},) like a query, got {tuple(bias.shape)}."
            )
    index = (-offset_matrix(n) + n - 1).expand(n, n)  # (T, T): row of r for i - j
    return {
        N_("content-content"): q @ k.T,  # (a)
        N_("content-position"): (q @ r.T).gather(-1, index),  # (b): (T, 2T-1) -> (T, T)
        N_("global content bias"): (k @ u)[None, :].expand(n, n),  # (c): the same for every query
        N_("global position bias"): (r @ v)[index],  # (d): a function of i - j only
    }


# -- DeBERTa -------------------------------------------------------------------------------------------


def deberta_index(offsets, span) -> torch.Tensor:
    """delta = clamp(offset + C, 0, 2C - 1): DeBERTa's row for a distance (He et al., eq. (3)).

    C = ``span``, the clipping distance (the paper's k). offsets: an integer tensor of distances
    (query - key, i - j, as DeBERTa writes them). Returns a LongTensor of the same shape, in
    0 .. 2C - 1.
    """
    validate.integer_tensor("offsets", offsets, N_("whole-number offsets i - j"))
    span = validate.positive_int("span", span, maximum=2**20)
    return (offsets.long() + span).clamp(0, 2 * span - 1)


def deberta_terms(q, k, q_r, k_r, span, convention="code") -> dict[str, torch.Tensor]:
    """DeBERTa's disentangled score in three terms, unscaled (their sum / sqrt(3d) is the logit).

    He et al. 2021 (arXiv:2006.03654), section 3.1, eq. (4):
        content-to-content   q_i . k_j
        content-to-position  q_i . k_r[delta(i, j)]
        position-to-content  k_j . q_r[delta(j, i)]     (convention="paper")
    with delta(i, j) = clamp(i - j + C, 0, 2C - 1), C = ``span``. No position-to-position term. transformers'
    ``DisentangledSelfAttention`` (which runs the released checkpoints) indexes the third term by
    delta(i, j) instead: convention="code", the default (tests/analysis/test_ch04_relative.py checks both).
    q, k: (T, d) content queries and keys; q_r, k_r: (2C, d) projected relative embeddings.
    Returns name -> (T, T).
    """
    _same_shape(("q", q), ("k", k), max_rank=2)
    n, d = q.shape
    span = validate.positive_int("span", span, maximum=2**20)
    for name, table in (("q_r", q_r), ("k_r", k_r)):
        validate.float_tensor(name, table, 2, 2, shape_hint=f"({2 * span}, {d})")
        if tuple(table.shape) != (2 * span, d):
            raise ValueError(
                f"{name} must have shape (2 span, d) = ({2 * span}, {d}), got {tuple(table.shape)}."
            )
    validate.choice("convention", convention, ("code", "paper"))
    forward = deberta_index(-offset_matrix(n), span)  # (T, T): delta(i, j)
    backward = forward if convention == "code" else deberta_index(offset_matrix(n), span)
    return {
        N_("content-to-content"): q @ k.T,
        N_("content-to-position"): (q @ k_r.T).gather(-1, forward),  # (T, 2C) -> (T, T)
        N_("position-to-content"): (k @ q_r.T).gather(-1, backward.T).T,  # row j, column delta
    }


# -- shifting a sentence inside a context ---------------------------------------------------------------


class ShiftResult(NamedTuple):
    """The scores among a sentence's own tokens, with the sentence placed at each shift."""

    shifts: list[int]
    scores: torch.Tensor  # (S, n, n): logits of the sentence's tokens at each shift
    max_deviation: float  # largest |scores[s] - scores[0]| over every shift and pair


def shift_experiment(score_fn: Callable, sentence, context, shifts=None) -> ShiftResult:
    """Put ``sentence`` at rows s .. s + n - 1 of ``context`` for each shift s; keep its scores.

    score_fn: x (T, D) -> logits (T, T). sentence: (n, D); context: (T, D), T >= n, the tokens
    around the sentence (the same at every shift, apart from the rows the sentence covers).
    shifts: the start positions (default: every one, 0 .. T - n).
    """
    validate.float_tensor("sentence", sentence, 2, 2, shape_hint="(n, D)")
    validate.float_tensor("context", context, 2, 2, shape_hint="(T, D)")
    n, t = sentence.shape[0], context.shape[0]
    if sentence.shape[1] != context.shape[1] or n > t or n == 0:
        raise ValueError(
            f"sentence {tuple(sentence.shape)} must fit inside context {tuple(context.shape)}: "
            "the same width D and at most T rows."
        )
    shifts = list(range(t - n + 1)) if shifts is None else [int(s) for s in shifts]
    if not shifts or min(shifts) < 0 or max(shifts) > t - n:
        raise ValueError(f"shifts must lie in 0..{t - n} (T - n), got {shifts}.")
    scores = []
    for s in shifts:
        x = context.clone()
        x[s : s + n] = sentence  # (T, D)
        scores.append(score_fn(x)[s : s + n, s : s + n])  # (n, n)
    scores = torch.stack(scores)  # (S, n, n)
    return ShiftResult(shifts, scores, float((scores - scores[0]).abs().max()))


def _random(generator, *shape, scale=1.0):
    return torch.randn(*shape, generator=generator, dtype=torch.float64) * scale


def _absolute(d_model, seed, table_fn):
    g = torch.Generator().manual_seed(seed)
    w_q, w_k = _random(g, 2, d_model, d_model, scale=d_model**-0.5)

    def scores(x):
        xp = x + table_fn(x.shape[0])  # (T, D): positions added to the input
        return (xp @ w_q) @ (xp @ w_k).T / math.sqrt(d_model)

    return scores


def _sinusoidal_added(d_model, seed):
    return _absolute(d_model, seed, lambda n: sinusoidal_encoding(n, d_model, dtype=torch.float64))


def _learned_added(d_model, seed, max_len=512):
    table = _random(torch.Generator().manual_seed(seed + 1), max_len, d_model)  # word-sized rows
    return _absolute(d_model, seed, lambda n: table[:n])


def _shaw(d_model, seed, clip=8):
    g = torch.Generator().manual_seed(seed)
    w_q, w_k = _random(g, 2, d_model, d_model, scale=d_model**-0.5)
    rel_keys = _random(g, 2 * clip + 1, d_model)
    return lambda x: shaw_logits(x @ w_q, x @ w_k, rel_keys, clip)


def _transformer_xl(d_model, seed):
    g = torch.Generator().manual_seed(seed)
    w_q, w_k, w_r = _random(g, 3, d_model, d_model, scale=d_model**-0.5)
    u, v = _random(g, 2, d_model)

    def scores(x):
        n = x.shape[0]
        r = relative_sinusoids(torch.arange(-(n - 1), n), d_model) @ w_r  # (2T-1, d)
        terms = transformer_xl_terms(x @ w_q, x @ w_k, r, u, v)
        return sum(terms.values()) / math.sqrt(d_model)

    return scores


def _t5(d_model, seed, num_buckets=32, max_distance=128):
    g = torch.Generator().manual_seed(seed)
    w_q, w_k = _random(g, 2, d_model, d_model, scale=d_model**-0.5)
    bias = RelativePositionBias(1, num_buckets, max_distance).double()
    bias.bias.weight.data = _random(g, num_buckets, 1)
    return lambda x: (x @ w_q) @ (x @ w_k).T + bias(x.shape[0])[0].detach()  # T5: no 1/sqrt(d)


def _deberta(d_model, seed, span=8):
    g = torch.Generator().manual_seed(seed)
    w_q, w_k, w_qr, w_kr = _random(g, 4, d_model, d_model, scale=d_model**-0.5)
    rel = _random(g, 2 * span, d_model)  # P: one embedding per clipped distance

    def scores(x):
        terms = deberta_terms(x @ w_q, x @ w_k, rel @ w_qr, rel @ w_kr, span)
        return sum(terms.values()) / math.sqrt(3 * d_model)

    return scores


# Every way of scoring chapter 4 compares, by name: builder(d_model, seed) -> score_fn, where
# score_fn(x (T, D) float64) -> logits (T, T). Random weights (seeded), as an untrained layer has.
SCORERS: dict[str, Callable[[int, int], Callable]] = {
    N_("sinusoidal added to x"): _sinusoidal_added,
    N_("learned table added to x"): _learned_added,
    N_("Shaw (clip 8)"): _shaw,
    N_("Transformer-XL"): _transformer_xl,
    N_("T5 bias"): _t5,
    N_("DeBERTa (span 8)"): _deberta,
}
RELATIVE = (N_("Shaw (clip 8)"), N_("Transformer-XL"), N_("T5 bias"), N_("DeBERTa (span 8)"))


def scorer(name: str, d_model: int, seed: int = 0) -> Callable:
    """The score function ``SCORERS[name]`` for width ``d_model`` (even), weights from ``seed``."""
    validate.choice("name", name, tuple(SCORERS))
    d = validate.even_int("d_model", d_model, N_("the sinusoidal methods are built from pairs."))
    return SCORERS[name](d, validate.whole_int("seed", seed, maximum=2**31 - 1))


# -- input validation ------------------------------------------------------------------------------


def _same_shape(*named, max_rank=None):
    (first_name, first), *rest = named
    validate.float_tensor(first_name, first, 2, max_rank, shape_hint="(..., T, d)")
    for name, value in rest:
        validate.float_tensor(name, value, 2, max_rank, shape_hint=f"{tuple(first.shape)}")
        if value.shape != first.shape or value.dtype != first.dtype:
            raise ValueError(
                f"{name} must match {first_name}: shape {tuple(first.shape)} and dtype "
                f"{first.dtype}; got {tuple(value.shape)} and {value.dtype}."
            )
    if 0 in first.shape:
        raise ValueError(
            f"{first_name} needs at least one position and one dim, got {tuple(first.shape)}."
        )


def _projection(name, w, x):
    validate.float_tensor(name, w, 2, 2, shape_hint=f"({x.shape[-1]}, d)")
    if w.shape[0] != x.shape[-1] or w.dtype != x.dtype:
        raise ValueError(
            f"{name} must have {x.shape[-1]} rows (x has D = {x.shape[-1]}) and x's dtype "
            f"{x.dtype}; got shape {tuple(w.shape)} and {w.dtype}."
        )
