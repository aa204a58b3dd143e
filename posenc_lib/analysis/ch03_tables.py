"""Chapter 3's claims, checked on any (T, D) table, and its two column layouts.

Vaswani et al. 2017 (arXiv:1706.03762, section 3.5) chose sinusoids because for any fixed offset k,
PE_{t+k} is a linear function of PE_t. These helpers measure that claim and its consequences on
any table, sinusoidal or not:

- ``shift_error``: how far the library's shift matrix M_k (``absolute.sinusoidal_shift_matrix``)
  is from mapping every row t to row t + k;
- ``best_linear_shift``: the best single linear map from row t to row t + k (least squares), and
  how much it leaves;
- ``translation_spread``: whether <PE_t, PE_{t+k}> depends on the offset k only (the diagonal
  spread of the Gram matrix, ``toeplitz.spread_by_offset``, on offsets 0 .. max_offset);
- ``direction_gap`` and ``score_direction_gap``: whether k steps ahead and k steps behind score
  the same;
- ``to_concatenated`` and ``to_interleaved``: Vaswani's interleaved (sin, cos) columns and
  tensor2tensor's [all sin | all cos], one permutation apart.

Shapes: T positions, D = d_model dims. Float64 inside.
"""

from __future__ import annotations

import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.toeplitz import spread_by_offset

# -- the shift claim on any table -------------------------------------------------------------------


def _table(table, name="table") -> torch.Tensor:
    validate.float_tensor(name, table, 2, 2, "(T, D)")
    return table.detach().to("cpu", torch.float64)  # (T, D)


def _offset_in(table: torch.Tensor, offset) -> int:
    k = validate.whole_int("offset", offset)
    if not 0 < abs(k) < table.shape[0]:
        raise ValueError(
            f"offset must be a non-zero whole number with |offset| < T = {table.shape[0]} (the "
            f"table's length), got {k}."
        )
    return k


def shift_error(table, offset, base=10000.0) -> float:
    """max over t, dims of |PE_{t+k} - M_k PE_t| for a sinusoidal ``table`` (T, D) and M_k of
    ``absolute.sinusoidal_shift_matrix``: 0 up to rounding when one matrix shifts every t."""
    from posenc_lib.absolute import sinusoidal_shift_matrix

    pe = _table(table)
    k = _offset_in(pe, offset)
    m_k = sinusoidal_shift_matrix(k, pe.shape[1], base, dtype=torch.float64)  # (D, D)
    src, dst = (pe[:-k], pe[k:]) if k > 0 else (pe[-k:], pe[:k])  # rows t and t + k: (T-|k|, D)
    return float((src @ m_k.T - dst).abs().max())


def best_linear_shift(features, offset):
    """The matrix M minimising sum_t ||F_{t+k} - M F_t||^2 over every t, by least squares.

    features: (T, D). Returns (M (D, D), relative residual = ||F_{t+k} - M F_t|| / ||F_{t+k}||,
    norms over all t). A residual at rounding level means one linear map shifts every position by k;
    a large one means no single linear map does (Vaswani et al. 2017, section 3.5, the reason for
    sin *and* cos).
    """
    f = _table(features, "features")
    k = _offset_in(f, offset)
    src, dst = (f[:-k], f[k:]) if k > 0 else (f[-k:], f[:k])  # (T-|k|, D) each
    solution = torch.linalg.lstsq(src, dst, driver="gelsd").solution  # (D, D): dst ~ src @ X
    residual = float((src @ solution - dst).norm() / dst.norm().clamp_min(1e-300))
    return solution.T, residual  # M = X^T, so that F_{t+k} ~ M F_t


def translation_spread(table, max_offset: int) -> float:
    """max over 0 <= k <= max_offset of (max_t - min_t) <PE_t, PE_{t+k}>: 0 when dot products
    depend on the offset only. table (T, D)."""
    pe = _table(table)
    top = validate.whole_int("max_offset", max_offset)
    if not 0 <= top < pe.shape[0]:
        raise ValueError(f"max_offset must be in 0..T-1 = {pe.shape[0] - 1}, got {top}.")
    n = pe.shape[0]
    spread = spread_by_offset(pe @ pe.T)  # (2T-1,): offsets j - i = -(T-1) .. T-1
    return float(spread[n - 1 : n + top].max())  # offsets 0 .. max_offset


def direction_gap(table) -> float:
    """max |<PE_t, PE_{t+k}> - <PE_t, PE_{t-k}>| over t and k >= 1 with 0 <= t-k and t+k <= T-1.

    0 when a position's dot product with the one k steps ahead equals that with the one k steps
    behind: the similarity has no direction. table (T, D), T >= 3.
    """
    pe = _table(table)
    return score_direction_gap(pe @ pe.T)  # (T, T) Gram matrix


def score_direction_gap(scores) -> float:
    """max |S[t, t+k] - S[t, t-k]| over t and k >= 1 with both t - k and t + k in 0..T-1.

    scores (T, T): any matrix of scores between positions, e.g. a Gram matrix PE PE^T or attention
    logits (W PE) PE^T. 0 when looking k steps ahead and k steps behind scores the same.
    """
    validate.float_tensor("scores", scores, 2, 2, "(T, T)")
    n = scores.shape[0]
    if scores.shape[1] != n or n < 3:
        raise ValueError(
            f"scores must be a square (T, T) matrix with T >= 3, got shape {tuple(scores.shape)}."
        )
    gram = scores.detach().to("cpu", torch.float64)
    gaps = []
    for k in range(1, (n - 1) // 2 + 1):
        ahead = gram.diagonal(k)[k : n - k]  # S[t, t+k] for t = k .. T-1-k
        behind = gram.diagonal(-k)[: n - 2 * k]  # S[t, t-k] for the same t
        gaps.append(float((ahead - behind).abs().max()))
    return max(gaps)


# -- the two column layouts ------------------------------------------------------------------------


def _even_columns(table) -> int:
    validate.tensor("table", table, 2, 2, "(T, D)")
    if table.shape[1] % 2:
        raise ValueError(
            f"table must have an even number of columns, (sin, cos) pairs; got shape "
            f"{tuple(table.shape)}."
        )
    return table.shape[1]


def to_concatenated(table) -> torch.Tensor:
    """Interleaved columns (sin, cos, sin, cos, ...) -> [all sin | all cos]: a permutation."""
    _even_columns(table)
    return torch.cat((table[:, 0::2], table[:, 1::2]), dim=-1)  # (T, D)


def to_interleaved(table) -> torch.Tensor:
    """[all sin | all cos] -> interleaved (sin, cos, sin, cos, ...): undoes to_concatenated."""
    half = _even_columns(table) // 2
    pairs = torch.stack((table[:, :half], table[:, half:]), dim=-1)  # (T, D/2, 2)
    return pairs.reshape(table.shape[0], -1)  # (T, D)
