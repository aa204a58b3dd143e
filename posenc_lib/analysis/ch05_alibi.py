"""Chapter 5's measurements of ALiBi: how far each head looks, what the sign conventions change (and
what they do not), how much attention reaches past a distance, and one head's picture for the
dashboard.

The slopes and the bias themselves live in ``alibi`` (``alibi_slopes``, ``alibi_bias``; Press,
Smith and Lewis 2022, arXiv:2108.12409); this module only measures them. The questions:

- How far back does a head look? With equal content the weight of the key at distance d is
  proportional to exp(-m d), so it falls by a factor f every ln(f) / m tokens: ``effective_window``.
- Which sign is right? The paper's equation adds -m (i - j); the paper's own code, and BLOOM after
  it, adds +m j; MPT adds m (j - (T - 1)). Per query row they differ by a constant, which softmax
  ignores: ``CONVENTIONS``, ``biased_softmax``, ``diagonal_spread``. Without a causal mask they
  are *not* the same.
- What reaches far? ``far_mass`` (the weight beyond a distance) and ``needle_weight`` (one key whose
  content wins by a margin, placed further and further away): the price of the recency prior.

Shapes: H heads, T positions (T_q queries, T_k keys). Tensors in, tensors out; no plotting here.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.alibi import alibi_bias, alibi_slopes
from posenc_lib.analysis.toeplitz import spread_by_offset, worst_spread
from posenc_lib.i18n import N_

WINDOW_FACTOR = 10.0  # "effective window": the distance at which a key's weight is 10 times smaller
MAX_VIEW_POSITIONS = 1024  # the dashboard's longest sequence
VIEW_HEAD_DIM = 64  # size of the random queries and keys the dashboard scores
VIEW_PIXELS = 128  # the dashboard's bias picture: at most this many queries and keys


def _slopes(slopes) -> torch.Tensor:
    """Slopes as a float64 (H,) tensor of positive finite numbers (a tensor, list or one number)."""
    if isinstance(slopes, torch.Tensor):
        validate.float_tensor("slopes", slopes, min_rank=0, max_rank=1, shape_hint="(H,)")
        values = slopes.detach().to("cpu", torch.float64).reshape(-1)  # (H,)
    else:
        items = slopes if isinstance(slopes, (list, tuple)) else [slopes]
        values = torch.tensor(
            [validate.real_number("a slope", s) for s in items], dtype=torch.float64
        )  # (H,)
    if values.numel() == 0 or not bool(torch.isfinite(values).all()) or bool((values <= 0).any()):
        raise ValueError(
            f"slopes must be one or more finite numbers above 0 (an ALiBi slope m > 0 makes the "
            f"penalty -m * distance), got {validate.show(slopes)}."
        )
    return values


def ladder_size(num_heads) -> int:
    """How many heads get the geometric ladder 2 ** (-8 h / H'): H', the largest power of two <= H.

    The other H - H' heads take the odd places of the ladder of 2 H' heads: extra head k sits half
    a ladder step above head k (``alibi_slopes``).
    """
    n = validate.positive_int("num_heads", num_heads, maximum=2**16)
    return 2 ** int(math.floor(math.log2(n)))


def effective_window(slopes, factor=WINDOW_FACTOR) -> torch.Tensor:
    """The distance at which a head's bias costs a factor ``factor`` in attention weight: ln(f) / m.

    Press et al. 2022, section 3: the bias of key j for query i is -m (i - j). With equal content
    scores the softmax weights are proportional to exp(-m d), d = i - j, so the weight at distance d
    is exp(-m d) times the weight at distance 0, and it has fallen by ``factor`` at d = ln(f) / m.
    slopes: (H,) tensor, a list or one number; factor > 1. Returns (H,) float64.
    """
    m = _slopes(slopes)  # (H,)
    f = validate.positive_float("factor", factor, minimum=1.0)
    return math.log(f) / m  # (H,)


def head_bias(num_heads, head, n_positions, causal=True, step=1) -> torch.Tensor:
    """One head's (T, T) bias, as ``alibi_bias(num_heads, T)[head]`` but without building all H.

    Every ALiBi head is the same pattern -(i - j) (or -|i - j| if not causal), scaled by its own
    slope: the pattern is a one-head bias divided by its slope (1/256, a power of two, so the
    pattern holds exact whole numbers), and the product equals ``alibi_bias``'s bit for bit.
    head: 0 .. H-1. step: keep every step-th query and key (positions 0, s, 2s, ...), for a
    picture of a long sequence. Returns (T, T) float32 (ceil(T / s) each way with a step), -inf
    above the diagonal when causal.
    """
    slopes = alibi_slopes(num_heads)  # (H,)
    head = validate.whole_int("head", head)
    if not 0 <= head < slopes.numel():
        raise ValueError(
            f"head must be in 0..{slopes.numel() - 1} (counting from 0) for {slopes.numel()} "
            f"heads, got {head}."
        )
    n = validate.positive_int("n_positions", n_positions)
    validate.boolean("causal", causal)
    step = validate.positive_int("step", step)
    validate.table_size(N_("a ({n}, {n}) bias"), n, n, n=n)
    if n <= MAX_VIEW_POSITIONS:  # the dashboard's sizes: one cached pattern serves them all
        pattern = _view_pattern(causal)[:n:step, :n:step]  # (T/s, T/s), a view
    else:
        pattern = _pattern(n, causal)[::step, ::step]  # (T/s, T/s)
    return pattern * slopes[head]  # (T/s, T/s): a new tensor


def _pattern(n_positions: int, causal: bool) -> torch.Tensor:
    """-(i - j) (or -|i - j|), -inf above the diagonal if causal: a one-head bias / its slope."""
    one_head = alibi_bias(1, n_positions, causal=causal)[0]  # (T, T): -(i - j) / 256
    return one_head / alibi_slopes(1)[0]  # (T, T): whole numbers, 0.0 on the diagonal


@functools.lru_cache(maxsize=2)
def _view_pattern(causal: bool) -> torch.Tensor:
    """The pattern for MAX_VIEW_POSITIONS, cached. Its top-left (t, t) corner is the pattern for t
    positions (it depends on i - j only), so a dashboard never rebuilds it; it is only ever sliced
    and multiplied into a new tensor, never handed out."""
    return _pattern(MAX_VIEW_POSITIONS, causal)  # (T_max, T_max)


def key_bias(num_heads, n_positions) -> torch.Tensor:
    """The form of ALiBi in the authors' code and BLOOM: one number per key position and head,
    m_h * j. Returns (T, H).

    The authors' reference code (ofirpress/attention_with_linear_biases) builds +m_h j, one
    identical row per query, and transformers' ``build_alibi_tensor`` (BLOOM) returns the same
    numbers as (H, 1, T). It equals the paper's equation, -m_h (i - j), plus m_h i, a constant
    per query row, which softmax ignores (under a causal mask). Read as position vectors, these
    rows are chapter 2's integer encoding t, scaled by each head's slope.
    """
    slopes = alibi_slopes(num_heads)  # (H,), float32 as in transformers
    n = validate.positive_int("n_positions", n_positions)
    validate.table_size(
        N_("a ({n}, {heads}) key bias"), n, slopes.numel(), n=n, heads=slopes.numel()
    )
    positions = torch.arange(n, dtype=torch.float32)  # (T,)
    return positions[:, None] * slopes[None, :]  # (T, H)


# The sign conventions in the wild, before any mask: slopes (H, 1, 1), query positions i (T, 1),
# key positions j (1, T), float32, and T -> (H, T, T) or a shape that broadcasts to it. A family is
# a registry: a new convention is one line, and the tests loop over all of them.
CONVENTIONS = {
    "paper": lambda m, i, j, n: -m * (i - j),  # the equation of Press et al. 2022, section 3
    # +m j: the paper's own code (ofirpress/attention_with_linear_biases), one identical row per
    # query; BLOOM copied it (transformers' build_alibi_tensor).
    "bloom": lambda m, i, j, n: m * j,
    "mpt": lambda m, i, j, n: m * (j - (n - 1)),  # transformers' build_mpt_alibi_tensor
    "symmetric": lambda m, i, j, n: -m * (i - j).abs(),  # alibi_bias(causal=False), for encoders
}


def convention_bias(name, num_heads, n_positions) -> torch.Tensor:
    """The bias of convention ``name`` of CONVENTIONS for H heads and T positions, unmasked.

    Masking (for a causal model) is the caller's job: ``biased_softmax(..., causal=True)``. Above
    the diagonal the paper's formula gives +m (j - i), a *reward* for future keys: it is only
    correct with the mask. Computed in float32 as ``alibi_bias`` and transformers do: "paper" and
    "symmetric" equal ``alibi_bias`` exactly, "bloom" and "mpt" equal transformers' functions to
    float32 rounding. Returns (H, T, T) float32.
    """
    validate.choice("name", name, tuple(CONVENTIONS))
    slopes = alibi_slopes(num_heads)  # (H,), float32 as in alibi_bias and transformers
    n = validate.positive_int("n_positions", n_positions)
    heads = slopes.numel()
    validate.table_size(
        N_("an ALiBi bias of shape ({heads}, {q}, {k})"), heads, n, n, heads=heads, q=n, k=n
    )
    positions = torch.arange(n, dtype=torch.float32)  # (T,): whole numbers, exact
    bias = CONVENTIONS[name](slopes[:, None, None], positions[:, None], positions[None, :], n)
    return bias.expand(slopes.numel(), n, n) + 0.0  # (H, T, T), a row per query


def biased_softmax(logits, bias=None, causal=True) -> torch.Tensor:
    """Attention weights softmax(logits + bias), with keys after the query masked if ``causal``.

    logits: (..., T_q, T_k) content scores (q k / sqrt(d)); bias: None or broadcastable to them,
    e.g. (H, T_q, T_k). Queries are the last T_q of the T_k positions, as in ``alibi_bias``.
    Returns (..., T_q, T_k); each row sums to 1.
    """
    validate.float_tensor("logits", logits, min_rank=2, shape_hint="(..., T_q, T_k)")
    validate.boolean("causal", causal)
    if bias is not None:
        validate.float_tensor("bias", bias, min_rank=2, shape_hint="(..., T_q, T_k)")
        try:
            torch.broadcast_shapes(logits.shape, bias.shape)
        except RuntimeError:
            raise ValueError(
                f"bias of shape {tuple(bias.shape)} cannot be added to logits of shape "
                f"{tuple(logits.shape)}: their last two dims must be (T_q, T_k) or 1."
            ) from None
        logits = logits + bias.to(logits.dtype)  # (..., T_q, T_k)
    q_len, k_len = logits.shape[-2:]
    if causal:
        if k_len < q_len:
            raise ValueError(f"causal attention needs T_k >= T_q, got T_q={q_len}, T_k={k_len}.")
        query_pos = torch.arange(k_len - q_len, k_len, device=logits.device)[:, None]  # (T_q, 1)
        future = torch.arange(k_len, device=logits.device)[None, :] > query_pos  # (T_q, T_k)
        logits = logits.masked_fill(future, float("-inf"))
    return torch.softmax(logits, dim=-1)  # (..., T_q, T_k)


def diagonal_spread(bias) -> float:
    """How far a bias is from depending on i - j only: the largest (max - min) along a diagonal.

    0 for a Toeplitz matrix (the paper's -m (i - j), T5's bucketed bias); m (T - 1 - k) on
    diagonal k for BLOOM's +m j. Entries that are -inf (masked) are ignored. bias: (..., T, T),
    the worst over the leading dims. Returns a float. The measure is ``toeplitz.spread_by_offset``.
    """
    validate.float_tensor("bias", bias, min_rank=2, shape_hint="(..., T, T)")
    return worst_spread(spread_by_offset(bias))


def _distance_weights(slopes: torch.Tensor, n_keys: int) -> torch.Tensor:
    """The last query's weight on the key at each distance d = 0 .. n-1, equal content. (H, n)."""
    logits = torch.zeros(slopes.numel(), 1, n_keys, dtype=torch.float64)  # (H, 1, T): equal content
    bias = -slopes[:, None, None] * torch.arange(n_keys - 1, -1, -1, dtype=torch.float64)
    return biased_softmax(logits, bias, causal=True)[:, 0].flip(-1)  # (H, T): by distance


def far_mass(slopes, n_keys, distance) -> torch.Tensor:
    """The share of the last query's attention on keys further than ``distance``, equal content.

    The query sits at position n-1 and sees keys at distances d = 0 .. n-1; with equal content
    scores its weights are exp(-m d) / sum_d' exp(-m d'). Returns sum over d > distance, (H,)
    float64. 0 means the head never looks that far; (n-1-distance)/n would be no bias at all.
    """
    m = _slopes(slopes)  # (H,)
    n = validate.positive_int("n_keys", n_keys, maximum=2**24)
    far = validate.whole_int("distance", distance)
    if far < 0:
        raise ValueError(f"distance must be >= 0 (a number of tokens back), got {far}.")
    return _distance_weights(m, n)[:, far + 1 :].sum(-1)  # (H,)


def needle_weight(slopes, n_keys, distances, advantage) -> torch.Tensor:
    """The weight the last query gives one "needle" key whose content score beats the rest.

    Every key scores 0 on content except one, placed at each of ``distances`` back in turn, which
    scores ``advantage`` (e^advantage times the weight of any other key before the bias). Its
    weight is e^(a - m d) / (Z - e^(-m d) + e^(a - m d)), Z = sum_d' e^(-m d'): with ALiBi it
    fades once m d passes a. slopes (H,); distances: ints in 0..n-1, (K,). Returns (H, K) float64.
    """
    m = _slopes(slopes)  # (H,)
    n = validate.positive_int("n_keys", n_keys, maximum=2**24)
    a = validate.real_number("advantage", advantage)
    d = torch.as_tensor(distances)
    validate.integer_tensor("distances", d, N_("whole numbers of tokens"))
    if d.numel() == 0 or int(d.min()) < 0 or int(d.max()) >= n:
        raise ValueError(f"distances must lie in 0..{n - 1} for {n} keys, got {validate.show(d)}.")
    d = d.reshape(-1).to(torch.float64)  # (K,)
    decay = -m[:, None] * d[None, :]  # (H, K): the bias at the needle
    log_z = torch.logsumexp(-m[:, None] * torch.arange(n, dtype=torch.float64), dim=-1)  # (H,)
    z = log_z[:, None].exp()  # (H, 1): the softmax's denominator without the needle
    return (decay + a).exp() / (z - decay.exp() + (decay + a).exp())  # (H, K)


# -- the dashboard's view -------------------------------------------------------------------------


class AlibiView(NamedTuple):
    """One head of an H-head ALiBi model, and what it does to a row of attention (the dashboard)."""

    num_heads: int
    head: int  # 0 .. H-1 (the one shown)
    clamped: bool  # the head asked for was past the last one and was moved to H-1
    slopes: torch.Tensor  # (H,)
    ladder: int  # heads 0 .. ladder-1: 2 ** (-8 h / ladder); the rest: half a step above 0, 1, ..
    bias: torch.Tensor  # (T/s, T/s) this head's causal bias at every s-th query and key, -inf
    bias_step: int  # s, the step between the positions in ``bias`` (1 up to VIEW_PIXELS tokens)
    weights_content: torch.Tensor  # (T,) the last query's weights by distance d = 0 .. T-1
    weights_alibi: torch.Tensor  # (T,) the same with this head's bias added
    window: float  # ln(10) / m: the distance at which the bias costs a factor of 10
    near_content: float  # share of the weight on keys at d <= window, without the bias
    near_alibi: float  # the same with the bias


@functools.lru_cache(maxsize=4)
def _content_scores(seed: int) -> torch.Tensor:
    """Scores q . k_d / sqrt(64) of one random query against keys at distance d = 0 .. T_max-1.

    Keys are drawn per distance for the longest sequence, so the key at distance d is the same
    whatever T: lengthening the sequence adds keys further back and changes none of the near ones.
    (T_max,), cached; callers slice it and never change it.
    """
    generator = torch.Generator().manual_seed(seed)
    q = torch.randn(VIEW_HEAD_DIM, generator=generator)  # (d,)
    k = torch.randn(MAX_VIEW_POSITIONS, VIEW_HEAD_DIM, generator=generator)  # (T_max, d)
    return (k @ q) / math.sqrt(VIEW_HEAD_DIM)  # (T_max,)


def alibi_view(num_heads, head, n_positions, seed=0) -> AlibiView:
    """Head ``head`` (counting from 0) of an H-head ALiBi model on a sequence of T positions.

    The attention row is the last query's, on random content (one query and T keys of size 64,
    drawn from ``seed``), by distance, without and with the head's bias. A head past the last is
    shown as the last one (``clamped``): a head slider may sit above a head-count slider. The
    bias is kept at every s-th position, at most VIEW_PIXELS each way: a picture needs no more,
    and a slider move then costs the same at any T.
    """
    slopes = alibi_slopes(num_heads)  # (H,)
    head = validate.whole_int("head", head)
    if head < 0:
        raise ValueError(f"head must be >= 0 (counting from 0), got {head}.")
    n = validate.positive_int("n_positions", n_positions, maximum=MAX_VIEW_POSITIONS)
    if n < 2:
        raise ValueError(f"n_positions must be at least 2 to have a distance, got {n}.")
    shown = min(head, slopes.numel() - 1)
    content = _content_scores(validate.whole_int("seed", seed))[:n]  # (T,) by distance
    step = math.ceil(n / VIEW_PIXELS)
    last_row = alibi_bias(num_heads, 1, n)[shown, 0]  # (T,): the last query, -m (T - 1 - j)
    by_distance = last_row.flip(0)  # (T,): its bias at distance d = 0 .. T-1
    # One row at a time: a softmax over two rows at once would hand them to two threads, and
    # waking a thread costs more than the whole computation (the dashboard calls this per slider
    # move).
    weights = torch.cat(
        [biased_softmax(row[None], causal=False) for row in (content, content + by_distance)]
    )  # (2, T): no key is in the future
    window = float(effective_window(slopes[shown].item())[0])
    near = weights[:, : math.floor(window) + 1].sum(-1).tolist()  # keys at d <= window
    return AlibiView(
        num_heads=slopes.numel(),
        head=shown,
        clamped=head != shown,
        slopes=slopes,
        ladder=ladder_size(num_heads),
        bias=head_bias(num_heads, shown, n, step=step),
        bias_step=step,
        weights_content=weights[0],
        weights_alibi=weights[1],
        window=window,
        near_content=near[0],
        near_alibi=near[1],
    )
