"""Single-head scaled dot-product self-attention, with an optional additive position bias.

Vaswani et al. 2017 (arXiv:1706.03762), eq. (1):  Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V.
Relative methods (T5, ALiBi) add a bias B to the logits before the softmax:
softmax(Q K^T / sqrt(d_k) + B) V.

Shapes: B batch (optional, any number of leading dims), T positions, D input dims, d_k / d_v the
projection sizes, H heads of a bias.
"""

from __future__ import annotations

import math

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, _, tr


def causal_mask(n_positions, *, device=None) -> torch.Tensor:
    """True where key j lies after query i (j > i): the entries a causal model must not see. (T, T)."""
    n = validate.positive_int("n_positions", n_positions)
    validate.table_size(N_("the causal mask"), n, n)
    return torch.ones(n, n, dtype=torch.bool, device=device).triu(diagonal=1)


def sliding_window_mask(n_positions, window, *, device=None) -> torch.Tensor:
    """True where a causal query i must not see key j under local attention: j > i (the future)
    or j <= i - window (more than ``window - 1`` tokens back). (T, T).

    Each query sees the last ``window`` tokens, itself included (Longformer's sliding window,
    Beltagy et al. 2020, arXiv:2004.05150, section 3.1 and Figure 2b; here one-sided, as a causal
    model needs).
    With window >= T it is ``causal_mask(T)``.
    """
    n = validate.positive_int("n_positions", n_positions)
    w = validate.positive_int(
        "window", window, N_("a query sees the last `window` tokens, itself included")
    )
    validate.table_size(N_("the sliding-window mask"), n, n)
    ones = torch.ones(n, n, dtype=torch.bool, device=device)
    return ones.triu(diagonal=1) | ones.tril(diagonal=-w)


def _validate_inputs(x, projections, bias, causal) -> None:
    """Shapes and dtypes of self_attention's inputs, each mistake named in a sentence."""
    validate.float_tensor("x", x, min_rank=2, shape_hint="(..., T, D)")
    n_pos, d_in = x.shape[-2], x.shape[-1]
    if n_pos == 0 or d_in == 0:
        raise ValueError(
            tr(
                "x needs at least one position and one feature, got shape {shape}.",
                shape=tuple(x.shape),
            )
        )
    for name, w in projections:
        validate.float_tensor(name, w, min_rank=2, max_rank=2, shape_hint=f"({d_in}, d)")
        if w.shape[0] != d_in or w.shape[1] == 0:
            raise ValueError(
                tr(
                    "{name} has shape {shape}, but x has D={d_in} features per position; "
                    "{name} must have {d_in} rows and at least one column.",
                    name=name,
                    shape=tuple(w.shape),
                    d_in=d_in,
                )
            )
        if w.dtype != x.dtype:
            raise ValueError(_same_dtype(name, w, x))
    (_, w_q), (_, w_k), _ = projections
    if w_q.shape[1] != w_k.shape[1]:
        raise ValueError(
            tr(
                "w_q gives queries of size {q} but w_k gives keys of size {k}; "
                "a query and a key must have the same size to take their dot product.",
                q=w_q.shape[1],
                k=w_k.shape[1],
            )
        )
    if bias is not None:
        hint = tr("({n}, {n}) or (H, T, T)", n=n_pos)
        validate.float_tensor("bias", bias, 2, 3, shape_hint=hint)
        if tuple(bias.shape[-2:]) != (n_pos, n_pos):
            raise ValueError(
                tr(
                    "bias has shape {shape}, but x has T={n} positions; the bias must "
                    "end in ({n}, {n}): one entry per (query, key) pair.",
                    shape=tuple(bias.shape),
                    n=n_pos,
                )
            )
        if bias.dtype != x.dtype:
            raise ValueError(_same_dtype("bias", bias, x))
    validate.boolean("causal", causal)


def _same_dtype(name, tensor, x) -> str:
    return tr(
        "{name} is {dtype} but x is {x_dtype}; give them the same dtype.",
        name=name,
        dtype=tensor.dtype,
        x_dtype=x.dtype,
    )


def self_attention(x, w_q, w_k, w_v, bias=None, causal=False):
    """Self-attention of ``x`` with projections ``w_q``, ``w_k``, ``w_v`` and an optional bias.

    x: (..., T, D). w_q, w_k: (D, d_k). w_v: (D, d_v).
    bias: None, (T, T), or (H, T, T), added to the logits. An (H, T, T) bias gives one attention
    map per head over the same projections, and adds a head dimension to the outputs.
    causal: if True, query i only sees keys j <= i.

    Returns (out, weights): out (..., T, d_v) and weights (..., T, T); with an (H, T, T) bias,
    (..., H, T, d_v) and (..., H, T, T). Rows of ``weights`` sum to 1.
    """
    _validate_inputs(x, (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)), bias, causal)
    n_pos = x.shape[-2]

    q, k, v = x @ w_q, x @ w_k, x @ w_v  # (..., T, d_k), (..., T, d_k), (..., T, d_v)
    logits = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (..., T, T)
    if bias is not None and bias.dim() == 3:
        logits, v = logits.unsqueeze(-3), v.unsqueeze(-3)  # (..., 1, T, T), (..., 1, T, d_v)
    if bias is not None:
        logits = logits + bias  # (..., T, T) or (..., H, T, T)
    if causal:
        logits = logits.masked_fill(causal_mask(n_pos, device=x.device), float("-inf"))
    if bool(torch.isneginf(logits).all(dim=-1).any()):
        raise ValueError(
            _(
                "some query has every key masked out (-inf in all its bias entries): softmax over "
                "no keys is undefined. Leave at least one key visible to each query."
            )
        )
    weights = torch.softmax(logits, dim=-1)  # (..., [H,] T, T)
    return weights @ v, weights  # (..., [H,] T, d_v), (..., [H,] T, T)
