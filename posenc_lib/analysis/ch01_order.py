"""Toy sentences for chapter 1: word vectors, permutations, and what reordering does to attention.

The question of chapter 1: if the words of a sentence are reordered, what happens to the output of
self-attention? With a permutation matrix P (P @ X reorders the rows of X),

    Attn(P X) = P Attn(X)                                    (permutation equivariance)

because softmax(P Q K^T P^T) = P softmax(Q K^T) P^T: the map's rows and columns move with the words
and nothing else changes. This is why Vaswani et al. 2017 (arXiv:1706.03762, section 3.5) add
position information to the input: without recurrence or convolution, nothing else carries order.
Adding a position vector to each slot, X -> P X + PE, breaks the equality; so does a causal mask,
partly. ``reorder_experiment`` measures all three; ``pair_experiment`` runs it on two sentences
given as text (a Chinese sentence is read character by character), and ``minilm_lookup`` shows
which characters a real model's vocabulary can read at all.

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
from posenc_lib.i18n import tr
from posenc_lib.models.minilm import load_minilm, reordering

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
            tr(
                "order must be a list of positions such as [2, 1, 0], got {order}.",
                order=validate.show(order),
            )
        )
    order = tuple(validate.whole_int("each entry of order", i) for i in order)
    expected = n_items if n_items is not None else len(order)
    if len(order) == 0 or sorted(order) != list(range(expected)):
        raise ValueError(
            tr(
                "order must list each of the positions 0..{last} exactly once "
                "(a permutation), got {order}.",
                last=expected - 1,
                order=list(order),
            )
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
        raise ValueError(
            tr("words must be a list of strings, got {words}.", words=validate.show(words))
        )
    words = tuple(words)
    if not words or not all(isinstance(w, str) and w for w in words):
        raise ValueError(
            tr("words must be a non-empty list of non-empty strings, got {words!r}.", words=words)
        )
    if len(words) > 64:
        raise ValueError(tr("a toy sentence has at most 64 words, got {n}.", n=len(words)))
    return words


def sentence_units(text) -> tuple[str, ...]:
    """The units of a sentence: its words if it has spaces ("dog bites man"), else its characters.

    Chinese is written without spaces, so "我爱你" is read character by character: ("我", "爱", "你").
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            tr("text must be a non-empty string, got {text}.", text=validate.show(text))
        )
    text = text.strip()
    return _validated_words(text.split() if any(c.isspace() for c in text) else list(text))


class PairResult(NamedTuple):
    """One sentence and its reordering, on the toy attention (``pair_experiment``)."""

    first: tuple[str, ...]  # the first sentence's units (words or characters)
    second: tuple[str, ...]  # the second sentence's units: the same ones, reordered
    order: tuple[int, ...]  # second[i] == first[order[i]]
    result: ReorderResult  # reorder_experiment(first, order): Attn(P X) against P Attn(X)
    slot_gap: float  # max |Attn(P X)[t] - Attn(X)[t]|: slot t compared with slot t, not moved


def pair_experiment(first, second, pe_scale=0.0, causal=False, dim=TOY_DIM, seed=0) -> PairResult:
    """``reorder_experiment`` for two sentences given as text, e.g. "我爱你" and "你爱我".

    Each is split by ``sentence_units``; the second must hold the same units as the first, in
    another order. Besides the result (each unit's output against its own output in the first
    sentence: ``result.drift``, ``result.max_deviation``), ``slot_gap`` compares the outputs slot
    by slot, which is what "the same result" would mean if order-blindness made the outputs
    identical: it is not, they are the same rows in another order (Vaswani et al. 2017,
    arXiv:1706.03762, section 3.5; chapter 1's Attn(PX) = P Attn(X)).
    """
    units_a, units_b = sentence_units(first), sentence_units(second)
    if sorted(units_a) != sorted(units_b):
        raise ValueError(
            tr(
                "second must reorder the units of first (the same words or characters, each as "
                "often); got {first} and {second}.",
                first=list(units_a),
                second=list(units_b),
            )
        )
    order = tuple(reordering(list(units_a), list(units_b)))
    result = reorder_experiment(
        units_a, order, pe_scale=pe_scale, causal=causal, dim=dim, seed=seed
    )
    w_q, w_k, w_v = toy_projections(dim, dim, seed)
    x = word_vectors(units_a, dim, seed) + pe_scale * slot_vectors(len(units_a), dim)  # (T, D)
    original, _ = self_attention(x, w_q, w_k, w_v, causal=causal)  # (T, D): Attn(X), unmoved
    return PairResult(
        first=units_a,
        second=units_b,
        order=order,
        result=result,
        slot_gap=float((result.outputs - original).abs().max()),
    )


class TokenLookup(NamedTuple):
    """What MiniLM's tokenizer makes of a text (``minilm_lookup``)."""

    tokens: tuple[str, ...]  # word pieces, [CLS] first and [SEP] last
    ids: tuple[int, ...]  # their ids in the vocabulary
    unknown: tuple[str, ...]  # the text's characters that the vocabulary lacks: each becomes [UNK]
    unk_id: int  # the id of [UNK] (100 in BERT's vocabulary)
    vocabulary_size: int  # 30,522 word pieces
    cjk_characters: int  # single Chinese characters (U+4E00..U+9FFF) among them


def minilm_lookup(text) -> TokenLookup:
    """MiniLM's tokens and ids for ``text``, and which of its characters its vocabulary lacks.

    all-MiniLM-L6-v2 reads BERT's uncased WordPiece vocabulary (Devlin et al. 2019,
    arXiv:1810.04805, section 3, "Input/Output Representations"; WordPiece: Wu et al. 2016,
    arXiv:1609.08144). BERT's tokenizer gives every Chinese character a token of its own; one that
    is not in the vocabulary becomes [UNK], the same id for every unknown character. A character is
    counted unknown when, tokenized on its own, it gives [UNK].
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(
            tr("text must be a non-empty string, got {text}.", text=validate.show(text))
        )
    tokenizer = load_minilm().tokenizer
    ids = tuple(tokenizer(text)["input_ids"])
    unk = tokenizer.unk_token_id
    seen = dict.fromkeys(c for c in text if not c.isspace())  # each character once, in order
    unknown = tuple(c for c in seen if tokenizer(c, add_special_tokens=False)["input_ids"] == [unk])
    vocabulary = tokenizer.get_vocab()
    return TokenLookup(
        tokens=tuple(tokenizer.convert_ids_to_tokens(list(ids))),
        ids=ids,
        unknown=unknown,
        unk_id=unk,
        vocabulary_size=len(vocabulary),
        cjk_characters=sum(len(t) == 1 and "\u4e00" <= t <= "\u9fff" for t in vocabulary),
    )
