"""Chapter 3's math for adding positions to words: the four terms of a score, concatenation, dropout.

Vaswani et al. 2017 ("Attention Is All You Need", arXiv:1706.03762) add the encoding to the token
embedding: "The positional encodings have the same dimension d_model as the embeddings, so that
the two can be summed" (section 3.5), and they "apply dropout to the sums of the embeddings and the
positional encodings ... P_drop = 0.1" (section 5.4). This module measures what that sum does:

- ``score_terms``: the dot product of two sums splits into four terms,
  (w + p) . (w' + p') = w . w' + w . p' + p . w' + p . p' (two of them cross terms);
- ``concatenated_score``: the dot product of two concatenations [w; p] . [w'; p'] = w . w' + p . p',
  no cross terms, at the price of D_pos more dimensions;
- ``mean_abs_cosine`` and ``random_abs_cosine``: how nearly orthogonal two sets of vectors are,
  against random directions in D dimensions (about sqrt(2 / (pi D)));
- ``cross_terms_by_width``: random words plus sinusoidal positions, for several widths D: the
  words' cosine with the positions and the gap between the cosine of the sums and of the
  concatenations, both shrinking like 1 / sqrt(D);
- ``dropout_positions``: what inverted dropout (keep each coordinate with probability 1 - p and
  divide by 1 - p, as ``torch.nn.Dropout`` does in training) leaves of the position signal.

Shapes: Tq queries, Tk keys, D dims, B sequences, T positions. Float64 inside.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.i18n import N_

_CHUNK = 4096  # rows per block in mean_abs_cosine: a (4096, N) block of cosines at a time


def _rows(name: str, value) -> torch.Tensor:
    validate.float_tensor(name, value, 2, 2, "(T, D)")
    return value.detach().to("cpu", torch.float64)  # (T, D)


def _pair(word_name: str, word, pos_name: str, pos) -> tuple[torch.Tensor, torch.Tensor]:
    """A token's word and position vectors, (T, D) each, validated to match."""
    w, p = _rows(word_name, word), _rows(pos_name, pos)
    if w.shape != p.shape:
        raise ValueError(
            f"{word_name} and {pos_name} must have the same shape (T, D): one word vector and one "
            f"position vector per token, got {tuple(w.shape)} and {tuple(p.shape)}."
        )
    return w, p


def score_terms(word_q, pos_q, word_k, pos_k) -> torch.Tensor:
    """The four terms of <w_i + p_i, w'_j + p'_j> for every query i and key j. (4, Tq, Tk).

    word_q, pos_q: (Tq, D), the queries' word and position vectors; word_k, pos_k: (Tk, D), the
    keys'. Returns, stacked in this order: word.word (w_i . w'_j), word.pos (w_i . p'_j),
    pos.word (p_i . w'_j) and pos.pos (p_i . p'_j); their sum is (word_q + pos_q) @ (word_k +
    pos_k).T. Vaswani et al. 2017 (arXiv:1706.03762), section 3.5: the encodings are summed with
    the embeddings, so a raw dot product of two inputs holds all four.
    """
    wq, pq = _pair("word_q", word_q, "pos_q", pos_q)
    wk, pk = _pair("word_k", word_k, "pos_k", pos_k)
    if wq.shape[1] != wk.shape[1]:
        raise ValueError(
            f"queries and keys must have the same width D to be multiplied, got D = "
            f"{wq.shape[1]} for the queries and D = {wk.shape[1]} for the keys."
        )
    return torch.stack((wq @ wk.T, wq @ pk.T, pq @ wk.T, pq @ pk.T))  # (4, Tq, Tk)


def concatenated_score(word_q, pos_q, word_k, pos_k) -> torch.Tensor:
    """<[w_i; p_i], [w'_j; p'_j]> for every query i and key j: words and positions side by side.

    word_q (Tq, D), pos_q (Tq, D_pos), word_k (Tk, D), pos_k (Tk, D_pos); the word and position
    widths may differ. Equals w_i . w'_j + p_i . p'_j: no cross terms. Returns (Tq, Tk).
    """
    wq, pq, wk, pk = (_rows(n, v) for n, v in zip(
        ("word_q", "pos_q", "word_k", "pos_k"), (word_q, pos_q, word_k, pos_k), strict=True
    ))  # fmt: skip
    for word, pos, side in ((wq, pq, "query"), (wk, pk, "key")):
        if word.shape[0] != pos.shape[0]:
            raise ValueError(
                f"each {side} needs one word vector and one position vector, got "
                f"{word.shape[0]} word rows and {pos.shape[0]} position rows."
            )
    if wq.shape[1] != wk.shape[1] or pq.shape[1] != pk.shape[1]:
        raise ValueError("queries and keys must have the same word width and position width.")
    return torch.cat((wq, pq), -1) @ torch.cat((wk, pk), -1).T  # (Tq, D + D_pos) @ (., Tk)


def mean_abs_cosine(a, b) -> float:
    """The mean of |cos(a_i, b_j)| over every row i of a (N, D) and every row j of b (M, D)."""
    x, y = _rows("a", a), _rows("b", b)
    if x.shape[1] != y.shape[1]:
        raise ValueError(f"a and b must have the same width D, got {x.shape[1]} and {y.shape[1]}.")
    x = torch.nn.functional.normalize(x, dim=-1)  # (N, D)
    y = torch.nn.functional.normalize(y, dim=-1)  # (M, D)
    total = sum(float((x[s : s + _CHUNK] @ y.T).abs().sum()) for s in range(0, len(x), _CHUNK))
    return total / (x.shape[0] * y.shape[0])


def random_abs_cosine(d_model) -> float:
    """E|cos(u, v)| for independent random directions in D dimensions: Gamma(D/2) / (sqrt(pi)
    Gamma((D + 1) / 2)), about sqrt(2 / (pi D)) for large D."""
    d = validate.positive_int("d_model", d_model)
    if d == 1:
        return 1.0
    return math.exp(math.lgamma(d / 2) - math.lgamma((d + 1) / 2)) / math.sqrt(math.pi)


class CrossTerms(NamedTuple):
    """Random words plus sinusoidal positions at several widths (see ``cross_terms_by_width``)."""

    widths: list[int]  # D
    word_position_cosine: list[float]  # mean |cos(w, p)| of a word and a position vector
    cosine_gap: list[float]  # mean |cos(w + p, w' + p') - cos([w; p], [w'; p'])|


def cross_terms_by_width(d_models, n_pairs: int = 2048, n_positions: int = 512, seed: int = 0):
    """For each width D: words w ~ N(0, I_D) (length about sqrt D, the paper's own scale), positions
    p = PE_t of the sinusoidal table (base 10000) at t drawn from 0 .. n_positions - 1.

    Over ``n_pairs`` random pairs (w + p, w' + p'): the mean |cos(w, p)|, and the mean gap between
    the cosine of the two sums (all four terms) and of the two concatenations (no cross terms).
    Both shrink like 1 / sqrt(D): in many dimensions a word and a position are nearly orthogonal,
    so adding keeps them nearly as apart as concatenating. Returns a ``CrossTerms``.
    """
    widths = [validate.even_int("each d_model", d, N_("sinusoidal pairs")) for d in d_models]
    n = validate.positive_int("n_pairs", n_pairs, maximum=1_000_000)
    n_pos = validate.positive_int("n_positions", n_positions, maximum=100_000)
    generator = torch.Generator().manual_seed(validate.whole_int("seed", seed))
    cosines, gaps = [], []
    for d in widths:
        table = sinusoidal_encoding(n_pos, d, dtype=torch.float64)  # (T, D)
        words = torch.randn(2, n, d, generator=generator, dtype=torch.float64)  # (2, N, D)
        positions = table[torch.randint(0, n_pos, (2, n), generator=generator)]  # (2, N, D)
        cosine = torch.nn.functional.cosine_similarity  # along the last axis
        cosines.append(float(cosine(words, positions, dim=-1).abs().mean()))
        added = cosine(words[0] + positions[0], words[1] + positions[1], dim=-1)  # (N,)
        joined = torch.cat((words, positions), -1)  # (2, N, 2D)
        gaps.append(float((added - cosine(joined[0], joined[1], dim=-1)).abs().mean()))
    return CrossTerms(widths, cosines, gaps)


class DroppedPositions(NamedTuple):
    """What dropout leaves of the position signal (see ``dropout_positions``)."""

    cosine: float  # mean cos(dropped position part, clean PE_t)
    recovered_alone: float  # share of dropped PE_t whose nearest table row is t
    recovered_sum_clean: float  # share of w + PE_t (no dropout) whose nearest row is t
    recovered_sum: float  # share of dropout(w + PE_t) whose nearest row is t
    dot_clean: float  # <PE_t, PE_t+k> at the offset asked for (the same for every t)
    dot_mean: float  # its mean over t and sequences after dropout
    dot_spread: float  # its standard deviation over t and sequences after dropout


def dropout_positions(table, words, keep, p: float, offset: int = 1) -> DroppedPositions:
    """table (T, D) position vectors; words (B, T, D) word vectors; keep (B, T, D) booleans, the
    coordinates dropout keeps (drawn with probability 1 - p); p the dropout rate.

    Inverted dropout, as ``torch.nn.Dropout`` in training: drop(x) = keep * x / (1 - p), applied to
    the sum w + PE_t (Vaswani et al. 2017, section 5.4, P_drop = 0.1). Being linear in x, it splits
    into a word part and a position part, keep * PE_t / (1 - p). "Nearest row" reads a position
    back as the row s of the table with the largest dot product (every sinusoidal row has the same
    length, so that is the nearest row). Returns a ``DroppedPositions``.
    """
    pe = _rows("table", table)  # (T, D)
    x = validate.float_tensor("words", words, 3, 3, "(B, T, D)").detach().double()  # (B, T, D)
    validate.tensor("keep", keep, 3, 3, "(B, T, D)")
    if keep.dtype != torch.bool:
        raise ValueError(f"keep must be a boolean mask (True: kept), got dtype {keep.dtype}.")
    if x.shape[1:] != pe.shape or keep.shape != x.shape:
        raise ValueError(
            f"words and keep must have shape (B, T, D) with (T, D) = {tuple(pe.shape)}, the "
            f"table's, got {tuple(x.shape)} and {tuple(keep.shape)}."
        )
    rate = validate.positive_float("p", p)
    if rate >= 1:
        raise ValueError(f"p must be below 1 (p = 1 drops everything), got {rate}.")
    n = pe.shape[0]
    k = validate.whole_int("offset", offset)
    if not 0 < k < n:
        raise ValueError(f"offset must be in 1 .. T - 1 = {n - 1}, got {k}.")
    scale = keep.double() / (1 - rate)  # (B, T, D): 0 or 1 / (1 - p)
    dropped_pe = scale * pe  # (B, T, D): the position part of the dropped sum
    t = torch.arange(n)  # (T,)

    def recovered(vectors):  # (B, T, D) -> share of rows whose nearest table row is their own t
        return float(((vectors @ pe.T).argmax(-1) == t).double().mean())

    dots = (dropped_pe[:, :-k] * dropped_pe[:, k:]).sum(-1)  # (B, T - k)
    return DroppedPositions(
        cosine=float(torch.nn.functional.cosine_similarity(dropped_pe, pe, dim=-1).mean()),
        recovered_alone=recovered(dropped_pe),
        recovered_sum_clean=recovered(x + pe),
        recovered_sum=recovered(scale * (x + pe)),
        dot_clean=float(pe[0] @ pe[k]),
        dot_mean=float(dots.mean()),
        dot_spread=float(dots.std()),
    )
