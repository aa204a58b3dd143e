"""How far a score or bias matrix is from depending on the offset only: the diagonal spread.

A matrix is *Toeplitz* when entry (i, j) depends on the offset j - i only, i.e. it is constant along
every diagonal. Relative methods promise exactly that for their scores (chapter 4: T5, Shaw; chapter
5: ALiBi's -m (i - j); chapter 6: RoPE's <R_m q, R_n k> = g(m - n)). The measure the chapters use
is the spread: the largest (max - min) among the entries that share one diagonal, 0 for a Toeplitz
matrix. ``spread_by_offset`` is its one home; each chapter's ``diagonal_spread`` reads it.

Shapes: T_q queries (rows), T_k keys (columns), O = T_q + T_k - 1 diagonals.
"""

from __future__ import annotations

import math

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, tr


def offset_matrix(q_len, k_len=None, query_offset=0) -> torch.Tensor:
    """Entry (r, j) is j - i, key position minus query position, with query i = query_offset + r.

    Queries sit at positions query_offset .. query_offset + q_len - 1, keys at 0 .. k_len - 1.
    Returns a LongTensor (T_q, T_k).
    """
    q = validate.positive_int("q_len", q_len)
    k = q if k_len is None else validate.positive_int("k_len", k_len)
    validate.table_size(N_("a ({q}, {k}) offset matrix"), q, k, q=q, k=k)
    offset = validate.whole_int("query_offset", query_offset)
    return torch.arange(k)[None, :] - (torch.arange(q)[:, None] + offset)  # (T_q, T_k)


def spread_by_offset(matrix) -> torch.Tensor:
    """(max - min) of the finite entries on each diagonal j - i = -(T_q - 1) .. T_k - 1.

    matrix: (..., T_q, T_k), real (validated by the caller); leading dims (heads, a batch) are
    measured separately and the worst is kept. Entries that are not finite (a mask's -inf) are left
    out; a diagonal with no finite entry gets -inf. Returns (O,) float64 on the CPU, entry o for
    the offset j - i = o - (T_q - 1).
    """
    n_q, n_k = matrix.shape[-2:]
    values = matrix.detach().to("cpu", torch.float64).reshape(-1, n_q * n_k)  # (B, T_q T_k)
    finite = torch.isfinite(values)
    diagonal = (torch.arange(n_k)[None, :] - torch.arange(n_q)[:, None] + n_q - 1).flatten()
    index = diagonal.expand_as(values)  # (B, T_q T_k): which diagonal each entry lies on, 0 .. O-1
    empty = (values.shape[0], n_q + n_k - 1)  # one slot per diagonal
    high = torch.full(empty, -math.inf, dtype=torch.float64).scatter_reduce(
        1, index, values.masked_fill(~finite, -math.inf), "amax"
    )  # (B, O): the largest finite entry of each diagonal
    low = torch.full(empty, math.inf, dtype=torch.float64).scatter_reduce(
        1, index, values.masked_fill(~finite, math.inf), "amin"
    )  # (B, O): the smallest
    return (high - low).amax(0)  # (O,): -inf - inf = -inf where a diagonal has no finite entry


def diagonal_spread(matrix) -> float:
    """The largest (max - min) over the entries that share one offset j - i, over all offsets.

    matrix: (..., T_q, T_k), real; leading dims (heads, a batch) are measured separately and the
    worst is returned. 0 exactly when every matrix is Toeplitz (constant along each diagonal).
    Entries that are not finite (masked) are left out.
    """
    validate.float_tensor("matrix", matrix, min_rank=2, shape_hint="(..., T_q, T_k)")
    if matrix.numel() == 0:
        raise ValueError(
            tr("matrix needs at least one entry, got shape {shape}.", shape=tuple(matrix.shape))
        )
    return worst_spread(spread_by_offset(matrix))


def worst_spread(spreads: torch.Tensor) -> float:
    """The largest of ``spread_by_offset``'s spreads, 0.0 when no diagonal has a finite entry."""
    finite = spreads[torch.isfinite(spreads)]
    return float(finite.max()) if finite.numel() else 0.0
