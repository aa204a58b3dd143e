"""ALiBi: Attention with Linear Biases (Press, Smith and Lewis 2022, arXiv:2108.12409).

No position vectors at all: each head h adds -m_h * (i - j) to the logit of query i and key j, a
penalty growing linearly with distance. The slopes m_h are a geometric sequence (section 3):
for H a power of two, m_h = 2 ** (-8 h / H), h = 1 .. H.

Shapes: H heads, T_q queries, T_k keys.
"""

from __future__ import annotations

import math

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, tr


def _validated_heads(num_heads) -> int:
    return validate.positive_int(
        "num_heads", num_heads, N_("ALiBi needs at least one head."), maximum=2**16
    )


def _geometric_slopes(n: int) -> list[float]:
    """2 ** (-8 h / n) for h = 1 .. n (n a power of two)."""
    return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]


def alibi_slopes(num_heads, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """The slope of each head: m_h = 2 ** (-8 h / H) when H is a power of two.

    For other H, the rule of the authors' code (ofirpress/attention_with_linear_biases,
    ``get_slopes`` in fairseq/models/transformer.py: the paper only trains models with 2^a heads,
    the code calls this a workaround; BLOOM's ``build_alibi_tensor`` does the same): take the H'
    slopes of the largest power of two H' <= H, then fill the remaining H - H' heads with every
    other slope of 2H' heads (the odd ones: 2 ** (-8 (2k - 1) / 2H'), k = 1 .. H - H'). Extra
    head k sits half a ladder step above head k: 2 ** (-8 (2k - 1) / 2H') = m_k * 2 ** (4 / H').
    Returns (H,).
    """
    n = _validated_heads(num_heads)
    validate.table_dtype(dtype, device)
    low = 2 ** int(math.floor(math.log2(n)))  # largest power of two <= H
    slopes = _geometric_slopes(low) + _geometric_slopes(2 * low)[0::2][: n - low]
    return torch.tensor(slopes, dtype=torch.float64, device=device).to(dtype)  # (H,)


def alibi_bias(num_heads, q_len, k_len=None, causal=True, *, dtype=torch.float32, device=None):
    """The bias -m_h * (i - j) added to the logits of query i and key j in head h.

    Queries are the last ``q_len`` of the ``k_len`` positions (q_len == k_len without a cache),
    so query row r sits at position i = r + k_len - q_len.
    causal=True: -m_h * (i - j) for keys j <= i, and -inf for keys after the query.
    causal=False: -m_h * |i - j|, a symmetric form for encoders (not in the paper, which is causal).
    Press et al. 2022, section 3: softmax(q_i K^T + m * [-(i-1), ..., -2, -1, 0]), with positions
    counted from 1; here they count from 0, so query i sees [-i, ..., -1, 0].
    Returns (H, T_q, T_k).
    """
    q = validate.positive_int("q_len", q_len)
    k = q if k_len is None else validate.positive_int("k_len", k_len)
    if k < q:
        raise ValueError(
            tr(
                "k_len={k} is shorter than q_len={q}; the queries are the last q_len of the k_len "
                "positions, so k_len must be at least q_len.",
                k=k,
                q=q,
            )
        )
    validate.boolean("causal", causal)
    heads = _validated_heads(num_heads)
    validate.table_size(
        N_("an ALiBi bias of shape ({heads}, {q}, {k})"), heads, q, k, heads=heads, q=q, k=k
    )
    slopes = alibi_slopes(num_heads, dtype=dtype, device=device)  # (H,)
    query_pos = torch.arange(k - q, k, device=device)[:, None]  # (T_q, 1)
    key_pos = torch.arange(k, device=device)[None, :]  # (1, T_k)
    distance = query_pos - key_pos  # (T_q, T_k): i - j, > 0 for keys in the past
    penalty = (distance if causal else distance.abs()).to(dtype)  # (T_q, T_k), whole numbers
    bias = -slopes[:, None, None] * penalty  # (H, T_q, T_k)
    if causal:
        bias = bias.masked_fill(distance < 0, float("-inf"))
    return bias + 0.0  # + 0.0 turns the diagonal's -0.0 into 0.0
