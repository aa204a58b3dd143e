"""Toy sentences for chapter 1: word vectors, permutations, and what reordering does to attention.

The question of chapter 1: if the words of a sentence are reordered, what happens to the output of
self-attention? With a permutation matrix P (P @ X reorders the rows of X),

    Attn(P X) = P Attn(X)                                    (permutation equivariance)

because softmax(P Q K^T P^T) = P softmax(Q K^T) P^T: the map's rows and columns move with the words
and nothing else changes. This is why Vaswani et al. 2017 (arXiv:1706.03762, section 3.5) add
position information to the input: without recurrence or convolution, nothing else carries order.
Adding a position vector to each slot, X -> P X + PE, breaks the equality; so does a causal mask,
partly. ``reorder_experiment`` measures all three.

Shapes: T positions (words), D embedding dims, d_v output dims.
"""

from __future__ import annotations

import math
import zlib
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.attention import self_attention

TOY_DIM = 8  # embedding size of the toy sentences: small enough to print, big enough to differ


def word_vectors(words, dim=TOY_DIM, seed=0) -> torch.Tensor:
    """One fixed random vector per word, the same whatever sentence the word is in. (T, dim).

    A word's vector is drawn from a generator seeded by (seed, crc32 of the word), so "dog" has the
    same embedding in "dog bites man" and in "man bites dog", on every machine.
    """
    words = _validated_words(words)
    dim = validate.positive_int("dim", dim, maximum=4096)
    seed = validate.whole_int("seed", seed, maximum=2**31 - 1)
    rows = []
    for word in words:
        generator = torch.Generator().manual_seed(seed * 1_000_003 + zlib.crc32(word.encode()))
        rows.append(torch.randn(dim, generator=generator))
    return torch.stack(rows)  # (T, dim)


def toy_projections(dim=TOY_DIM, d_k=TOY_DIM, seed=0):
    """Random query, key and value projections (w_q, w_k, w_v), each (dim, d_k), scaled 1/sqrt(dim)."""
    dim = validate.positive_int("dim", dim, maximum=4096)
    d_k = validate.positive_int("d_k", d_k, maximum=4096)
    generator = torch.Generator().manual_seed(validate.whole_int("seed", seed) + 7)
    w = torch.randn(3, dim, d_k, generator=generator) / math.sqrt(dim)  # (3, dim, d_k)
    return w[0], w[1], w[2]


def permutation_matrix(order) -> torch.Tensor:
    """The (T, T) matrix P with (P @ X)[i] = X[order[i]]: row i holds a single 1, in column order[i]."""
    order = checked_order(order)
    return torch.eye(len(order))[list(order)]  # rows of the identity, reordered: (T, T)


def checked_order(order, n_items=None) -> tuple[int, ...]:
    """Return ``order`` as a tuple of ints if it is a permutation of 0..T-1, else raise ValueError."""
    if isinstance(order, torch.Tensor):
        order = order.tolist()
    if isinstance(order, (str, bytes)) or not hasattr(order, "__iter__"):
        raise ValueError(
            f"order must be a list of positions such as [2, 1, 0], got {validate.show(order)}."
        )
    order = tuple(validate.whole_int("each entry of order", i) for i in order)
    expected = n_items if n_items is not None else len(order)
    if len(order) == 0 or sorted(order) != list(range(expected)):
        raise ValueError(
            f"order must list each of the positions 0..{expected - 1} exactly once "
            f"(a permutation), got {list(order)}."
        )
    return order


def slot_vectors(n_positions, dim, *, dtype=torch.float32) -> torch.Tensor:
    """Sinusoidal position vectors of any width, odd too: one column more is built, then dropped.

    Chapter 1 adds these to the *slots* of a sentence; chapter 3 derives them. Returns (T, dim).
    """
    dim = validate.positive_int("dim", dim, maximum=4096)
    return sinusoidal_encoding(n_positions, dim + dim % 2, dtype=dtype)[:, :dim]  # (T, dim)


class ReorderResult(NamedTuple):
    """What reordering a sentence did to one attention layer. T words, d_v output dims."""

    tokens: tuple[str, ...]  # the reordered sentence
    weights: torch.Tensor  # (T, T) attention weights of the reordered sentence
    outputs: torch.Tensor  # (T, d_v) Attn(P X [+ PE]): the reordered sentence's outputs
    moved: torch.Tensor  # (T, d_v) P Attn(X [+ PE]): the original outputs, moved with their words
    drift: torch.Tensor  # (T,) ||outputs[i] - moved[i]||: how far each word's output changed
    max_deviation: float  # max |outputs - moved|: ~1e-7 when attention is order-blind
    pooled_gap: float  # max |mean(outputs) - mean(original outputs)|: the sentence vector's change


def reorder_experiment(words, order, pe_scale=0.0, causal=False, dim=TOY_DIM, seed=0):
    """Run one attention layer on ``words`` and on the words reordered by ``order``; compare.

    words: T strings. order: a permutation of 0..T-1; the reordered sentence is
    [words[order[0]], words[order[1]], ...]. pe_scale: the size of the sinusoidal position vector
    added to each *slot* (0 = no positions). causal: mask keys after each query.
    Returns a ReorderResult.
    """
    words = _validated_words(words)
    order = checked_order(order, n_items=len(words))
    pe_scale = validate.positive_float("pe_scale", pe_scale, inclusive=True)
    validate.boolean("causal", causal)
    x = word_vectors(words, dim, seed)  # (T, D)
    w_q, w_k, w_v = toy_projections(dim, dim, seed)
    positions = pe_scale * slot_vectors(len(words), dim)  # (T, D)
    p = permutation_matrix(order)  # (T, T)

    original, _ = self_attention(x + positions, w_q, w_k, w_v, causal=causal)  # (T, D)
    outputs, weights = self_attention(p @ x + positions, w_q, w_k, w_v, causal=causal)  # (T, D)
    moved = p @ original  # (T, D)
    return ReorderResult(
        tokens=tuple(words[i] for i in order),
        weights=weights,
        outputs=outputs,
        moved=moved,
        drift=(outputs - moved).norm(dim=-1),
        max_deviation=float((outputs - moved).abs().max()),
        pooled_gap=float((outputs.mean(0) - original.mean(0)).abs().max()),
    )


def _validated_words(words) -> tuple[str, ...]:
    if isinstance(words, str):
        words = words.split()
    if not hasattr(words, "__iter__"):
        raise ValueError(f"words must be a list of strings, got {validate.show(words)}.")
    words = tuple(words)
    if not words or not all(isinstance(w, str) and w for w in words):
        raise ValueError(f"words must be a non-empty list of non-empty strings, got {words!r}.")
    if len(words) > 64:
        raise ValueError(f"a toy sentence has at most 64 words, got {len(words)}.")
    return words
