"""Chapter 6, beyond the basics: why only q and k turn, the base as a radix, RoPE on other signals.

- ``shift_gaps``: shift every position by the same amount and measure what changes, with RoPE on
  the queries and keys (RoFormer, arXiv:2104.09864, eq. 16: nothing changes but rounding) and with
  the values turned too (the output then carries absolute position).
- ``slowest_wavelength``, ``smallest_base``: the wavelength 2 pi / theta_{D/2-1} of the slowest
  pair, 2 pi base ** ((D - 2) / D), and the smallest base for which it reaches a context length.
- ``position_digits``: each pair's angle n theta_i mod 2 pi, read as the digits of n written in
  the radix beta = base ** (2 / D) (Su Jianlin, "Transformer升级之路：10、RoPE是一种β进制编码",
  kexue.fm, 2023): theta_i = beta ** (-i), so pair i turns once every 2 pi beta ** i positions.
- ``helical_sequence``, ``lag_profile``: a sequence with a letter recurring every 10.5 positions
  (the DNA helix's turn) and the score its A's give each other at each lag, for given frequencies.
- ``grid_positions``, ``grid_scores``, ``grid_offset_spread``: 2-D RoPE on a grid of patches
  (``rope.rope_2d_cos_sin``; Qwen2-VL's vision tower, arXiv:2409.12191), whose scores depend on
  (row offset, column offset) only.

Shapes: T positions (or patches), D = head_dim, P lags or positions. Float64 inside.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch06_rotation import _positions, _vector, rotate
from posenc_lib.i18n import N_, tr
from posenc_lib.rope import STYLES, apply_rope, rope_2d_cos_sin, rope_cos_sin
from posenc_lib.rope_scaling import rope_inv_freq

F64 = torch.float64


# -- why turn q and k, and not v ------------------------------------------------------------------


class ShiftGaps(NamedTuple):
    """Largest change when every position moves by ``shift`` (all float64, absolute values)."""

    qk_scores: float  # q and k turned: the logits
    qk_outputs: float  # q and k turned: the attention outputs
    v_outputs: float  # q, k and v turned: the outputs change with the absolute positions
    v_turned_back: float  # v turned, then each output turned back by its query's angle
    output_rms: float  # RMS of the outputs (q and k turned), for scale


def _attend(q, k, v):
    """softmax(q k^T / sqrt(D)) v for one head: (T, D) x3 -> (T, D), and the logits (T, T)."""
    logits = q @ k.T / math.sqrt(q.shape[-1])  # (T, T)
    return torch.softmax(logits, dim=-1) @ v, logits


def shift_gaps(x, w_q, w_k, w_v, shift, base=10000.0) -> ShiftGaps:
    """Attention of ``x`` at positions 0..T-1 and at shift..shift+T-1: what changes.

    x: (T, D_in); w_q, w_k, w_v: (D_in, D). With q and k turned (RoFormer eq. 16), logits and
    outputs depend on offsets only, so a shift changes them by rounding. With v turned too, the
    output of query m is sum_n a_mn R_n v_n: it depends on the absolute n. Turning it back by
    R_m^T gives sum_n a_mn R_{n - m} v_n, relative again. Float64.
    """
    validate.float_tensor("x", x, min_rank=2, max_rank=2, shape_hint="(T, D_in)")
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        validate.float_tensor(name, w, min_rank=2, max_rank=2, shape_hint="(D_in, head_dim)")
        if w.shape != w_q.shape or w.shape[0] != x.shape[1]:
            raise ValueError(
                tr(
                    "w_q, w_k and w_v must all be (D_in, head_dim) with D_in = {d_in}, got "
                    "{q_shape}, {k_shape}, {v_shape}.",
                    d_in=x.shape[1],
                    q_shape=tuple(w_q.shape),
                    k_shape=tuple(w_k.shape),
                    v_shape=tuple(w_v.shape),
                )
            )
    s = validate.real_number("shift", shift)
    x = x.detach().to(F64)
    q, k, v = (x @ w.detach().to(F64) for w in (w_q, w_k, w_v))  # (T, D) each
    n = x.shape[0]
    results = {}
    for start in (0.0, s):
        pos = (torch.arange(n, dtype=F64) + start).tolist()
        rq, rk, rv = (rotate(t, pos, base) for t in (q, k, v))  # (T, D) each
        out_qk, logits = _attend(rq, rk, v)  # (T, D), (T, T)
        out_v, _ = _attend(rq, rk, rv)  # (T, D): values turned to their key's position
        back = rotate(out_v, [-p for p in pos], base)  # (T, D): R_m^T out_m = R_{-m} out_m
        results[start] = (logits, out_qk, out_v, back)
    a, b = results[0.0], results[s]
    gaps = [float((u - w).abs().max()) for u, w in zip(a, b, strict=True)]
    return ShiftGaps(*gaps, output_rms=float(a[1].pow(2).mean().sqrt()))


# -- the base: wavelengths and radix -----------------------------------------------------------------


def slowest_wavelength(head_dim, base=10000.0) -> float:
    """2 pi / theta_{D/2 - 1} = 2 pi base ** ((D - 2) / D): the positions one turn of the slowest
    pair takes (RoFormer eq. 15's last frequency). float64."""
    return float(2 * math.pi / rope_inv_freq(head_dim, base, dtype=F64)[0][-1])


def smallest_base(context_length, head_dim) -> float:
    """The smallest base whose slowest pair turns at most once over ``context_length`` positions:
    2 pi base ** ((D - 2) / D) = L, so base = (L / (2 pi)) ** (D / (D - 2)). float64.

    Below it the slowest pair comes back to its start within the context. This is the wavelength
    argument only: it is what the pairs can tell apart, not what a model learns to use.
    """
    length = validate.positive_float("context_length", context_length)
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    if d < 4:
        raise ValueError(
            tr("head_dim must be at least 4 for D / (D - 2) to be defined, got {d}.", d=d)
        )
    return (length / (2 * math.pi)) ** (d / (d - 2))


class PositionDigits(NamedTuple):
    """Positions written as RoPE's pairs see them: one angle per pair, like digits."""

    beta: float  # the radix: theta_i = beta ** (-i), beta = base ** (2 / D)
    angles: torch.Tensor  # (P, D/2): n theta_i mod 2 pi, each pair's "digit" on a wheel of 2 pi
    turns: torch.Tensor  # (P, D/2): n theta_i / (2 pi), whole turns included (the carries)


def position_digits(positions, head_dim, base=10000.0, scaling=None) -> PositionDigits:
    """Each pair's angle at each position (from the library's cos/sin tables), and the radix.

    positions: (P,) or an int P. Su Jianlin's reading (kexue.fm, 2023, "Transformer升级之路：10、
    RoPE是一种β进制编码"): the i-th digit of n in radix beta is floor(n / beta^i) mod beta; RoPE keeps
    n / beta^i mod 2 pi instead, a digit on a wheel of circumference 2 pi. ``scaling`` is passed to
    ``rope_inv_freq`` (e.g. {"rope_type": "ntk", "factor": s}); ``beta`` is then read from the
    frequencies, theta_1 / theta_0 = 1 / beta.
    """
    pos = _positions("positions", positions)  # (P,)
    inv_freq = rope_inv_freq(head_dim, base, scaling, dtype=F64)[0]  # (D/2,)
    cos, sin = rope_cos_sin(pos, inv_freq, style="interleaved")  # (P, D) each
    angles = torch.atan2(sin[:, 0::2], cos[:, 0::2]) % (2 * math.pi)  # (P, D/2)
    beta = float(inv_freq[0] / inv_freq[1]) if inv_freq.numel() > 1 else math.inf
    return PositionDigits(beta, angles, pos[:, None] * inv_freq / (2 * math.pi))


# -- a period in the signal ----------------------------------------------------------------------------


def helical_sequence(n_positions, period=10.5, seed=0) -> torch.Tensor:
    """Letters 0..3 (read A, C, G, T): A at every round(period * j), random letters elsewhere
    (A among them, a quarter of the time).

    A toy for DNA, whose helix turns once every ~10.5 base pairs, so that features on one face of
    the helix recur with that period. Returns (T,) int64.
    """
    n = validate.positive_int("n_positions", n_positions, maximum=100_000)
    p = validate.positive_float("period", period, minimum=1.0)
    generator = torch.Generator().manual_seed(validate.whole_int("seed", seed))
    letters = torch.randint(0, 4, (n,), generator=generator)  # (T,): A, C, G or T
    phased = torch.round(torch.arange(0, n / p, dtype=F64) * p).long()  # every period, rounded
    letters[phased[phased < n]] = 0  # A on one face of the helix
    return letters


class LagProfile(NamedTuple):
    """How a sequence's A's recur, and the score RoPE gives two A's, at each lag."""

    lags: torch.Tensor  # (P,) 1..max_lag
    recurrence: torch.Tensor  # (P,): share of positions t with A at t and at t - lag
    score: torch.Tensor  # (P,): mean over those pairs of <R_t a, R_{t - lag} a> / |a|^2


def lag_profile(tokens, inv_freq, max_lag=63) -> LagProfile:
    """tokens: (T,) letters (0 = A). Every A is the vector a = (1, 0, 1, 0, ...) (interleaved pairs),
    turned to its position with ``inv_freq`` (D/2,) by the library. Float64."""
    validate.tensor("tokens", tokens, min_rank=1, max_rank=1, shape_hint="(T,)")
    validate.float_tensor("inv_freq", inv_freq, min_rank=1, max_rank=1, shape_hint="(D/2,)")
    n = tokens.shape[0]
    top = validate.positive_int("max_lag", max_lag, maximum=max(n - 1, 1))
    d = 2 * inv_freq.shape[0]
    a = torch.zeros(n, d, dtype=F64)  # (T, D): a at every position; only A-A pairs are kept
    a[:, 0::2] = 1.0
    cos, sin = rope_cos_sin(n, inv_freq.detach().to(F64), style="interleaved")  # (T, D) each
    turned = apply_rope(a, cos, sin, "interleaved")  # (T, D)
    is_a = tokens == 0  # (T,)
    lags = torch.arange(1, top + 1)
    recurrence = torch.empty(top, dtype=F64)
    score = torch.full((top,), math.nan, dtype=F64)
    for j, lag in enumerate(lags.tolist()):
        both = is_a[lag:] & is_a[:-lag]  # (T - lag,): A at t and at t - lag
        recurrence[j] = both.double().mean()
        if bool(both.any()):
            pairs = (turned[lag:][both] * turned[:-lag][both]).sum(-1)  # (pairs,)
            score[j] = pairs.mean() / (d // 2)
    return LagProfile(lags, recurrence, score)


# -- 2-D RoPE on a grid of patches -----------------------------------------------------------------


def grid_positions(n_rows, n_cols) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, cols) of every patch of an n_rows x n_cols grid in raster order. (T,) int64 each."""
    r = validate.positive_int("n_rows", n_rows, maximum=1024)
    c = validate.positive_int("n_cols", n_cols, maximum=1024)
    return torch.arange(r).repeat_interleave(c), torch.arange(c).repeat(r)


def grid_scores(q, k, n_rows, n_cols, base=10000.0, style="half", raster=False) -> torch.Tensor:
    """S[m, n] = <R_m q, R_n k> for q and k at every patch of the grid. (T, T) float64, T = R * C.

    2-D RoPE (``rope_2d_cos_sin`` with frequencies ``rope_inv_freq(D // 2, base)``, as Qwen2-VL's
    vision tower); with ``raster`` True, 1-D RoPE on the raster index r * C + c instead.
    """
    q = _vector("q", q)
    k = _vector("k", k, q.shape[0])
    validate.choice("style", style, STYLES)
    rows, cols = grid_positions(n_rows, n_cols)  # (T,) each
    d = q.shape[0]
    if raster:
        cos, sin = rope_cos_sin(
            rows * cols.max().add(1) + cols, rope_inv_freq(d, base, dtype=F64)[0], style=style
        )
    else:
        validate.even_int(
            "head_dim / 2", d // 2, N_("2-D RoPE splits the pairs between rows and columns.")
        )
        cos, sin = rope_2d_cos_sin(rows, cols, rope_inv_freq(d // 2, base, dtype=F64)[0], style)
    n = rows.shape[0]
    rq = apply_rope(q.expand(n, -1), cos, sin, style)  # (T, D)
    rk = apply_rope(k.expand(n, -1), cos, sin, style)  # (T, D)
    return rq @ rk.T  # (T, T)


def grid_offset_spread(scores, n_rows, n_cols) -> tuple[float, int]:
    """The largest (max - min) of the scores among patch pairs that share (row offset, column
    offset), and how many such offsets there are. scores: (T, T) from ``grid_scores``."""
    rows, cols = grid_positions(n_rows, n_cols)  # (T,) each
    t = rows.shape[0]
    validate.float_tensor("scores", scores, min_rank=2, max_rank=2, shape_hint="(T, T)")
    if scores.shape != (t, t):
        raise ValueError(
            tr(
                "scores must be ({t}, {t}) for a {n_rows} x {n_cols} grid, got {shape}.",
                t=t,
                n_rows=n_rows,
                n_cols=n_cols,
                shape=tuple(scores.shape),
            )
        )
    dr = rows[:, None] - rows[None, :]  # (T, T)
    dc = cols[:, None] - cols[None, :]  # (T, T)
    key = (
        (dr + n_rows - 1) * (2 * n_cols - 1) + dc + n_cols - 1
    ).flatten()  # (T*T,): one id per offset
    values = scores.detach().to(F64).flatten()
    groups = 4 * n_rows * n_cols  # at most (2R - 1)(2C - 1) ids
    high = torch.full((groups,), -math.inf, dtype=F64).scatter_reduce(0, key, values, "amax")
    low = torch.full((groups,), math.inf, dtype=F64).scatter_reduce(0, key, values, "amin")
    used = torch.isfinite(high)
    return float((high - low)[used].max()), int(used.sum())
