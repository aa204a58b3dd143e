"""Chapter 2's measurement of long-range decay (远程衰减): does a table's similarity fade with distance?

Tutorials and blog posts often list decay among the properties a position encoding should have.
For a table of position vectors the closest reading is chapter 6's reading of RoPE
(``ch06_rope.mean_score``: the mean score of a vector with itself k positions away, divided by its
value at k = 0). For a table that is the mean over t of cos(PE_t, PE_{t+k}),
``learned_table.cosine_by_offset``, 1 at k = 0. For the sinusoidal table every row has length
sqrt(D/2), and the curve is (1 / (D/2)) sum_i cos(k w_i) (Vaswani et al. 2017, arXiv:1706.03762,
section 3.5), the expected value of chapter 6's mean score.
Two readings of a curve c_0, c_1, ...:

- ``rebound``: how far it climbs back above the lowest value it reached at a smaller offset,
  max_k (c_k - min_{j <= k} c_j). 0 for a curve that never rises: a decay in the strict sense.
- ``decay_profile``: the curve at a few offsets, its lowest point, and its rebound.

What a model's attention does with distance is a different question: the score of two positions
is PE_t W PE_s^T with W = W_q W_k^T, which training chooses. ``score_by_offset`` reads such a score
matrix by offset.

Shapes: T positions, D dims, K offsets.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.learned_table import cosine_by_offset


def rebound(curve) -> tuple[float, int]:
    """The largest rise of ``curve`` above its running minimum, and the index where it occurs.

    max_k (c_k - min_{j <= k} c_j) over k = 0 .. K-1: 0 (at k = 0) for a curve that never rises,
    however slowly it falls. curve: (K,) real. Returns (float, int).
    """
    validate.float_tensor("curve", curve, min_rank=1, max_rank=1, shape_hint="(K,)")
    if curve.numel() == 0:
        raise ValueError("curve is empty: give at least one value, one per offset.")
    values = curve.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(values).all()):
        raise ValueError("curve contains NaN or infinite values.")
    rise = values - values.cummin(0).values  # (K,): height above the lowest value so far
    return float(rise.max()), int(rise.argmax())


class DecayProfile(NamedTuple):
    """How a table's similarity curve c_k = mean_t cos(PE_t, PE_{t+k}) behaves with the offset k."""

    offsets: tuple[int, ...]  # the offsets read
    values: tuple[float, ...]  # c_k at those offsets (c_0 = 1)
    lowest: float  # the smallest c_k over k = 1 .. T // 2
    lowest_at: int  # where it is
    rebound: float  # the largest climb above the running minimum over k <= T // 2 (0: none)
    rebound_at: int  # where that climb peaks


def decay_profile(table, offsets=(1, 10, 100)) -> DecayProfile:
    """Read the similarity curve of a (T, D) table of position vectors at ``offsets``.

    The curve is ``learned_table.cosine_by_offset`` (every row must be non-zero: leave out the zero
    row of the integer, normalized and binary tables, position 0). Offsets past the table's end
    are refused. The lowest point and the rebound are read over k = 0 .. T // 2, where each value
    of the curve is a mean over at least T / 2 pairs (the last offsets have a handful of pairs
    each, and their means are noise). Returns a DecayProfile.
    """
    curve = cosine_by_offset(table)  # (T,), validates the table
    n = curve.shape[0]
    offsets = tuple(validate.whole_int("each offset", k) for k in offsets)
    if not offsets or any(not 0 <= k < n for k in offsets):
        raise ValueError(
            f"offsets must be one or more whole numbers in 0..{n - 1} for a table of {n} rows "
            f"(a pair t, t + k must fit in it), got {offsets}."
        )
    half = curve[: n // 2 + 1]  # (T // 2 + 1,): offsets 0 .. T // 2; T >= 2, so 2 values or more
    height, where = rebound(half)
    return DecayProfile(
        offsets=offsets,
        values=tuple(float(curve[k]) for k in offsets),
        lowest=float(half[1:].min()),
        lowest_at=int(half[1:].argmin()) + 1,
        rebound=height,
        rebound_at=where,
    )


def score_by_offset(scores) -> torch.Tensor:
    """The mean score of each query with the key k positions after it, k = 0 .. T-1.

    scores: (T, T), entry (t, s) the score of query t with key s (for example PE @ W @ PE.T).
    Entry k of the result is the mean of the diagonal s - t = k. Returns (T,) float64.
    """
    validate.float_tensor("scores", scores, min_rank=2, max_rank=2, shape_hint="(T, T)")
    if scores.shape[0] != scores.shape[1] or scores.shape[0] == 0:
        raise ValueError(f"scores must be a square (T, T) matrix, got shape {tuple(scores.shape)}.")
    values = scores.detach().to("cpu", torch.float64)
    return torch.stack([values.diagonal(k).mean() for k in range(values.shape[0])])  # (T,)
