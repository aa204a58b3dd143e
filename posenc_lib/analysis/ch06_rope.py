"""Chapter 6's measurements of RoPE: offset-only scores, the two layouts, decay, phase mismatch.

The rotation itself is ``rope.apply_rope`` (RoFormer, Su et al. 2021, arXiv:2104.09864, eq. 34);
this module asks questions of it:

- ``rotate``, ``as_complex`` and ``complex_scores`` (in ``ch06_rotation``, imported here): R_m x
  for every row from positions, and the closed form <R_m q, R_n k> = Re sum_i q_i conj(k_i)
  exp(1j (m - n) theta_i) (RoFormer eq. 35), which depends on m - n only;
  ``offset_spread`` measures how far real scores are from that, over every (m, n) of a length.
- ``layout_permutation`` and ``convert_projection``: "half" (Llama, NeoX) and "interleaved"
  (RoFormer, GPT-J) pair different dims; a fixed permutation of each head's dims maps one to the
  other. Meta's Llama checkpoints (interleaved, as complex numbers) are turned into Hugging Face's
  "half" layout this way by ``permute()`` in the transformers repository's conversion script
  ``src/transformers/models/llama/convert_llama_weights_to_hf.py``; transformers 5 has the same
  reordering as a load-time operation, ``PermuteForRope`` (``core_model_loading.py``).
- ``error_by_offset``: how wrong attention logits are, per distance, when weights made for one
  layout are rotated with the other.
- ``decay_bound`` (RoFormer section 3.4.3) and ``mean_score``: the upper bound on |score| against
  the relative distance, and the measured mean score of a query with its own key.
- ``mismatch_score``: the score of q with itself at the same position when q and k are rotated
  with different frequencies or position scales: a phase error that grows with the position.
- ``partial_rotate``: GPT-NeoX rotates only the first ``rotary_dim`` dims of each head.
- ``rotation_view``: everything the chapter's dashboard draws for one (m, n, base, pair).

Shapes: T positions, D = head_dim, P pairs of positions or offsets, N samples. Float64 inside.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch06_rotation import (  # noqa: F401 - re-exported: chapter 6's names
    _positions,
    _vector,
    as_complex,
    complex_scores,
    rotate,
)
from posenc_lib.analysis.toeplitz import spread_by_offset, worst_spread
from posenc_lib.i18n import N_, tr
from posenc_lib.rope import STYLES, apply_rope, rope_cos_sin
from posenc_lib.rope_scaling import rope_inv_freq

F64 = torch.float64


# -- offset-only scores ---------------------------------------------------------------------------


def score_matrix(q, k, n_positions, base=10000.0, style="half") -> torch.Tensor:
    """S[m, n] = <R_m q, R_n k> for the same q and k at every position m, n < T. (T, T) float64."""
    q = _vector("q", q)
    k = _vector("k", k, q.shape[0])
    n = validate.positive_int("n_positions", n_positions, maximum=8192)
    rq = rotate(q.expand(n, -1), n, base, style)  # (T, D)
    rk = rotate(k.expand(n, -1), n, base, style)  # (T, D)
    return rq @ rk.T  # (T, T)


class OffsetSpread(NamedTuple):
    """How far <R_m q, R_n k> is from depending on m - n only, over all m, n < T."""

    worst: float  # largest (max - min) of the scores along one diagonal m - n = delta
    closed_form_gap: float  # largest |S[m, n] - complex_scores(q, k, m - n)|
    scale: float  # RMS of the scores, for comparison
    n_pairs: int  # how many (m, n) were compared: T * T
    n_offsets: int  # how many distinct offsets: 2T - 1


def diagonal_spread(scores) -> tuple[float, int]:
    """The largest (max - min) along one diagonal m - n = delta of a (T, T) score matrix, and that
    delta. 0 means the scores depend on m - n only (a Toeplitz matrix). Returns (float, int).
    The measure is ``toeplitz.spread_by_offset``; here offsets are m - n (query minus key)."""
    validate.float_tensor("scores", scores, min_rank=2, max_rank=2, shape_hint="(T, T)")
    if scores.shape[0] != scores.shape[1] or scores.shape[0] == 0:
        raise ValueError(
            tr(
                "scores must be a square (T, T) matrix, got shape {shape}.",
                shape=tuple(scores.shape),
            )
        )
    spread = spread_by_offset(scores).flip(0)  # (2T-1,): m - n = -(T-1) .. T-1
    return worst_spread(spread), int(spread.argmax()) - (scores.shape[0] - 1)


def offset_spread(q, k, n_positions, base=10000.0, style="half") -> OffsetSpread:
    """Measure the claim <R_m q, R_n k> = g(m - n) on every (m, n) in [0, T)^2 (float64)."""
    scores = score_matrix(q, k, n_positions, base, style)  # (T, T)
    n = scores.shape[0]
    offsets = torch.arange(n)[:, None] - torch.arange(n)[None, :]  # (T, T): m - n
    closed = complex_scores(q, k, torch.arange(-(n - 1), n), base, style)  # (2T-1,)
    return OffsetSpread(
        worst=diagonal_spread(scores)[0],
        closed_form_gap=float((scores - closed[offsets + n - 1]).abs().max()),
        scale=float(scores.pow(2).mean().sqrt()),
        n_pairs=n * n,
        n_offsets=2 * n - 1,
    )


# -- the two layouts ------------------------------------------------------------------------------


def layout_permutation(head_dim, source="interleaved", target="half") -> torch.Tensor:
    """The order of dims that turns a ``source``-layout vector into a ``target``-layout one.

    With p = layout_permutation(D, source, target): apply_rope(x[..., p], target style) equals
    apply_rope(x, source style)[..., p]. interleaved -> half is (0, 2, 4, ..., 1, 3, 5, ...): the
    first members of all pairs, then the second members; half -> interleaved is its inverse,
    (0, D/2, 1, D/2 + 1, ...). Returns (D,) int64.
    """
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    validate.choice("source", source, STYLES)
    validate.choice("target", target, STYLES)
    if source == target:
        return torch.arange(d)
    to_half = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))  # (D,)
    return to_half if target == "half" else torch.argsort(to_half)


def convert_projection(w, n_heads, source="interleaved", target="half") -> torch.Tensor:
    """A query or key projection made for ``source``, rearranged to work with ``target``.

    w: (D_in, H * head_dim), used as x @ w (nn.Linear's weight is w.T: permute its rows instead).
    Each head's columns are permuted by ``layout_permutation``; the heads stay where they are.
    For interleaved -> half this is the reordering of ``permute()`` in transformers'
    ``convert_llama_weights_to_hf.py`` (Meta's complex layout -> rotate_half), applied there to
    the rows of nn.Linear weights, and of transformers' ``PermuteForRope``. Returns a new tensor
    of w's shape and dtype.
    """
    validate.float_tensor("w", w, min_rank=2, max_rank=2, shape_hint="(D_in, H * head_dim)")
    h = validate.positive_int("n_heads", n_heads)
    if w.shape[1] % h:
        raise ValueError(
            tr(
                "w has {columns} columns, which do not split into n_heads = {h} equal heads.",
                columns=w.shape[1],
                h=h,
            )
        )
    perm = layout_permutation(w.shape[1] // h, source, target)  # (head_dim,)
    columns = (torch.arange(h)[:, None] * (w.shape[1] // h) + perm).flatten()  # (H * head_dim,)
    return w[:, columns].clone()


def attention_logits(x, w_q, w_k, style="half", base=10000.0) -> torch.Tensor:
    """(R_m q_m) . (R_n k_n) / sqrt(D) for one head: x (T, D_in), w_q, w_k (D_in, D). (T, T) f64."""
    validate.float_tensor("x", x, min_rank=2, max_rank=2, shape_hint="(T, D_in)")
    for name, w in (("w_q", w_q), ("w_k", w_k)):
        validate.float_tensor(name, w, min_rank=2, max_rank=2, shape_hint="(D_in, head_dim)")
        if w.shape != w_q.shape or w.shape[0] != x.shape[1]:
            raise ValueError(
                tr(
                    "w_q {q_shape} and w_k {k_shape} must both be (D_in, head_dim) "
                    "with D_in = {d_in}, the width of x.",
                    q_shape=tuple(w_q.shape),
                    k_shape=tuple(w_k.shape),
                    d_in=x.shape[1],
                )
            )
    x = x.detach().to(F64)
    n = x.shape[0]
    q = rotate(x @ w_q.detach().to(F64), n, base, style)  # (T, D)
    k = rotate(x @ w_k.detach().to(F64), n, base, style)  # (T, D)
    return q @ k.T / math.sqrt(q.shape[-1])  # (T, T)


def error_by_offset(reference, other, edges=None) -> torch.Tensor:
    """RMS(other - reference) / RMS(reference) over the logits of each distance m - n >= 0.

    reference, other: (T, T) logits (query m, key n; the causal part n <= m is used). Without
    ``edges``, one number per distance delta = 0 .. T-1: (T,). With ``edges`` (increasing ints
    e_0 < e_1 < ... <= T), one number per band e_j <= delta < e_{j+1}: (len(edges) - 1,). float64.
    """
    validate.float_tensor("reference", reference, min_rank=2, max_rank=2, shape_hint="(T, T)")
    validate.float_tensor("other", other, min_rank=2, max_rank=2, shape_hint="(T, T)")
    if reference.shape != other.shape or reference.shape[0] != reference.shape[1]:
        raise ValueError(
            tr(
                "reference and other must be square and of one shape, got {reference} and {other}.",
                reference=tuple(reference.shape),
                other=tuple(other.shape),
            )
        )
    n = reference.shape[0]
    if edges is None:
        edges = list(range(n + 1))
    edges = [validate.whole_int("each edge", e) for e in edges]
    if (
        len(edges) < 2
        or edges[0] < 0
        or edges[-1] > n
        or any(a >= b for a, b in zip(edges[:-1], edges[1:], strict=True))
    ):
        raise ValueError(
            tr(
                "edges must be at least two increasing whole numbers from 0 to T = {n}, got {edges}.",
                n=n,
                edges=edges,
            )
        )
    ref = reference.detach().to(F64)
    diff = other.detach().to(F64) - ref
    ref_power = torch.stack([ref.diagonal(-d).pow(2).sum() for d in range(n)])  # (T,)
    diff_power = torch.stack([diff.diagonal(-d).pow(2).sum() for d in range(n)])  # (T,)
    out = torch.empty(len(edges) - 1, dtype=F64)
    for j, (low, high) in enumerate(zip(edges[:-1], edges[1:], strict=True)):
        out[j] = (diff_power[low:high].sum() / ref_power[low:high].sum().clamp_min(1e-300)).sqrt()
    return out


# -- decay with distance ----------------------------------------------------------------------------


def _distances(distances) -> torch.Tensor:
    return _positions("distances", distances)


def decay_bound(distances, head_dim, base=10000.0) -> torch.Tensor:
    """RoFormer's relative upper bound (1 / (D/2)) sum_{j=1}^{D/2} |S_j| at each distance m - n.

    Su et al. 2021, section 3.4.3, eqs. 35-37 (Figure 2 plots this quantity). With
    S_j = sum_{i=0}^{j-1} exp(1j (m - n) theta_i), S_0 = 0, h_i = q_i conj(k_i) for the pairs
    i = 0 .. D/2 - 1 and h_{D/2} = 0, Abel summation gives eq. 37:
    |<R_m q, R_n k>| <= max_{i < D/2} |h_{i+1} - h_i| * sum_{j=1}^{D/2} |S_j|. (Without
    h_{D/2} = 0 it fails: equal h_i would make the right side 0.) At distance 0 it is
    (D/2 + 1) / 2. distances: (P,) or an int P. Returns (P,) float64.
    """
    delta = _distances(distances)  # (P,)
    theta = rope_inv_freq(head_dim, base, dtype=F64)[0]  # (D/2,)
    out = torch.empty_like(delta)
    for start in range(0, delta.shape[0], 4096):  # blocks: (4096, D/2) at a time
        angles = delta[start : start + 4096, None] * theta  # (b, D/2)
        real, imag = angles.cos().cumsum(-1), angles.sin().cumsum(-1)  # (b, D/2): S_1 .. S_{D/2}
        out[start : start + 4096] = torch.hypot(real, imag).mean(-1)
    return out


def mean_score(distances, head_dim, base=10000.0, n_samples=2000, seed=0, style="half"):
    """mean <R_m q, R_n q> / mean ||q||^2 over random q ~ N(0, I), measured at m - n = distance.

    A query meeting its own key, ``distance`` tokens apart: 1 at distance 0. Its expected value is
    the mean over pairs of cos(distance * theta_i). distances: (P,) or an int P. Returns (P,) f64.
    """
    delta = _distances(distances)  # (P,)
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    n = validate.positive_int("n_samples", n_samples, maximum=100_000)
    generator = torch.Generator().manual_seed(validate.whole_int("seed", seed))
    q = torch.randn(n, 1, d, generator=generator, dtype=F64)  # (N, 1, D)
    cos, sin = rope_cos_sin(delta, rope_inv_freq(d, base, dtype=F64)[0], style=style)  # (P, D) each
    total = torch.zeros_like(delta)  # (P,)
    for start in range(0, n, 256):  # 256 queries at a time: (256, P, D) in memory
        chunk = q[start : start + 256]  # (b, 1, D): each query's key is itself, at position 0
        rotated = apply_rope(chunk.expand(-1, delta.shape[0], -1), cos, sin, style)  # (b, P, D)
        total += (rotated * chunk).sum(-1).sum(0)  # (P,)
    return total / q.pow(2).sum()


def mismatch_score(positions, inv_freq_q, inv_freq_k=None, scale_k=1.0, style="half"):
    """<R_p q, R'_p q> / ||q||^2 for q = all ones: a query meeting its own key at the same position.

    The query is rotated to position p with the frequencies ``inv_freq_q``; the key to position
    ``scale_k * p`` with ``inv_freq_k`` (default: the same). Matched, it is exactly 1 at every p: the
    offset is 0. Mismatched, it is the mean over pairs of cos(p theta_i - scale_k p theta'_i), a phase
    error that grows with p until the pairs cancel. positions: (P,) or an int P; inv_freq_*: (D/2,)
    from ``rope_inv_freq``. Returns (P,) float64.
    """
    pos = _positions("positions", positions)  # (P,)
    inv_freq_k = inv_freq_q if inv_freq_k is None else inv_freq_k
    for name, table in (("inv_freq_q", inv_freq_q), ("inv_freq_k", inv_freq_k)):
        validate.float_tensor(name, table, min_rank=1, max_rank=1, shape_hint="(head_dim // 2,)")
    if inv_freq_q.shape != inv_freq_k.shape or inv_freq_q.numel() == 0:
        raise ValueError(
            tr(
                "inv_freq_q {q_shape} and inv_freq_k {k_shape} must hold one frequency per pair "
                "of the same head_dim.",
                q_shape=tuple(inv_freq_q.shape),
                k_shape=tuple(inv_freq_k.shape),
            )
        )
    scale = validate.positive_float("scale_k", scale_k)
    theta_q, theta_k = inv_freq_q.detach().to(F64), inv_freq_k.detach().to(F64)
    u = torch.ones(pos.shape[0], 2 * theta_q.shape[0], dtype=F64)  # (P, D): equal pair lengths
    rq = apply_rope(u, *rope_cos_sin(pos, theta_q, style=style), style)  # (P, D)
    rk = apply_rope(u, *rope_cos_sin(pos * scale, theta_k, style=style), style)  # (P, D)
    return (rq * rk).sum(-1) / u.shape[1]  # (P,)


# -- partial rotary, and the yardstick's view ------------------------------------------------------


def partial_rotate(x, positions, rotary_dim, base=10000.0) -> torch.Tensor:
    """GPT-NeoX's partial rotary: the first ``rotary_dim`` dims rotated ("half" layout, frequencies
    base ** (-2i / rotary_dim)), the rest passed through (Black et al. 2022, arXiv:2204.06745).

    x: (..., T, D); rotary_dim even, 2 <= rotary_dim <= D. Returns (..., T, D) float64.
    """
    validate.float_tensor("x", x, min_rank=2, shape_hint="(..., T, head_dim)")
    r = validate.even_int("rotary_dim", rotary_dim, N_("RoPE rotates the dims in pairs."))
    if r > x.shape[-1]:
        raise ValueError(
            tr("rotary_dim = {r} is more than x's {dims} dims.", r=r, dims=x.shape[-1])
        )
    x = x.detach().to(F64)
    return torch.cat((rotate(x[..., :r], positions, base, "half"), x[..., r:]), dim=-1)


def rotated_copies(u, n_positions, base=10000.0, style="interleaved") -> torch.Tensor:
    """Row t is R_t u: one fixed vector rotated to every position t < T. (T, D) float64.

    Read as a table of "position vectors", it is what ``report.position_report`` can score; for
    u = (0, 1, 0, 1, ...) in the interleaved layout it is chapter 3's sinusoidal table with every
    sine column negated.
    """
    u = _vector("u", u)
    n = validate.positive_int("n_positions", n_positions, maximum=1_000_000)
    return rotate(u.expand(n, -1), n, base, style)


# -- the dashboard's computation --------------------------------------------------------------------


def random_query_key(head_dim, seed=0) -> tuple[torch.Tensor, torch.Tensor]:
    """A query and a key drawn from N(0, I) with a fixed seed. Two (D,) float64 tensors."""
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    generator = torch.Generator().manual_seed(validate.whole_int("seed", seed))
    q, k = torch.randn(2, d, generator=generator, dtype=F64)
    return q, k


def score_bound(q, k, style="half") -> float:
    """sum_i |q_i| |k_i| over pairs (as complex numbers): no offset's score can exceed it."""
    q = _vector("q", q)
    k = _vector("k", k, q.shape[0])
    return float((as_complex(q, style).abs() * as_complex(k, style).abs()).sum())


class RotationView(NamedTuple):
    """One (m, n, base, pair) of the RoPE dashboard."""

    m: int
    n: int
    pair: int
    theta: float  # the pair's frequency, radians per position
    q_pair: torch.Tensor  # (2,): the pair of R_m q, scaled to length 1
    k_pair: torch.Tensor  # (2,): the pair of R_n k, scaled to length 1
    score: float  # <R_m q, R_n k>, computed by rotating
    offsets: torch.Tensor  # (P,): m - n from -max_offset to max_offset
    curve: torch.Tensor  # (P,): the score at each offset
    pair_curve: torch.Tensor  # (P,): the chosen pair's share of it


def rotation_view(q, k, m, n, base=10000.0, pair=0, max_offset=255, style="half") -> RotationView:
    """Rotate q to position m and k to n; the score, and the score against m - n for the figure."""
    q = _vector("q", q)
    k = _vector("k", k, q.shape[0])
    m = validate.whole_int("m", m)
    n = validate.whole_int("n", n)
    if m < 0 or n < 0:
        raise ValueError(tr("positions m and n must be 0 or more, got m = {m}, n = {n}.", m=m, n=n))
    half = q.shape[0] // 2
    pair = validate.whole_int("pair", pair)
    if not 0 <= pair < half:
        raise ValueError(
            tr(
                "pair must be in 0..{last} (head_dim / 2 pairs), got {pair}.",
                last=half - 1,
                pair=pair,
            )
        )
    span = validate.positive_int("max_offset", max_offset, maximum=100_000)
    theta = rope_inv_freq(q.shape[0], base, dtype=F64)[0]  # (D/2,)
    cos, sin = rope_cos_sin(torch.tensor([float(m), float(n)], dtype=F64), theta, style=style)
    rq = apply_rope(q[None], cos[:1], sin[:1], style)[0]  # (D,)
    rk = apply_rope(k[None], cos[1:], sin[1:], style)[0]  # (D,)
    zq, zk = as_complex(rq, style)[pair], as_complex(rk, style)[pair]
    offsets = torch.arange(-span, span + 1, dtype=F64)  # (P,)
    phase = torch.polar(torch.ones(offsets.shape[0], half, dtype=F64), offsets[:, None] * theta)
    terms = (as_complex(q, style) * as_complex(k, style).conj() * phase).real  # (P, D/2)
    return RotationView(
        m=m,
        n=n,
        pair=pair,
        theta=float(theta[pair]),
        q_pair=torch.stack((zq.real, zq.imag)) / max(float(zq.abs()), 1e-300),
        k_pair=torch.stack((zk.real, zk.imag)) / max(float(zk.abs()), 1e-300),
        score=float(rq @ rk),
        offsets=offsets,
        curve=terms.sum(-1),
        pair_curve=terms[:, pair],
    )
