"""Chapter 3's exercises: q5, the four terms of the score of (word + position) vectors."""

from __future__ import annotations

import torch

from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.analysis.ch03_add_concat import score_terms
from posenc_lib.checks import draws
from posenc_lib.checks.answers import TENSOR, as_tensor, close
from posenc_lib.checks.ch03.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q5: add or concatenate? the four terms of a score -----------------------------------------------


def _case(generator, n_q, n_k, d, where, *, sinusoidal=True, word_scale=1.0):
    """(word_q, pos_q, word_k, pos_k) and a description. Words N(0, word_scale^2); positions are
    rows of the sinusoidal table (base 10000) at a random start, or random vectors."""
    word_q = word_scale * torch.randn(n_q, d, generator=generator)  # (Tq, D)
    word_k = word_scale * torch.randn(n_k, d, generator=generator)  # (Tk, D)
    if sinusoidal:
        start_q = draws.randint(0, 40, generator)
        start_k = start_q + draws.randint(1, 9, generator)  # keys elsewhere than the queries
        table = sinusoidal_encoding(start_k + n_k, d)  # (T, D) float32
        pos_q, pos_k = table[start_q : start_q + n_q], table[start_k : start_k + n_k]
        what = tr(
            "PE rows {q0}..{q1} and {k0}..{k1}",
            q0=start_q,
            q1=start_q + n_q - 1,
            k0=start_k,
            k1=start_k + n_k - 1,
        )
    else:
        pos_q = torch.randn(n_q, d, generator=generator)  # (Tq, D)
        pos_k = torch.randn(n_k, d, generator=generator)  # (Tk, D)
        what = _("random position vectors")
    describe = tr(
        "{n_q} queries and {n_k} keys, D = {d}, {what}{where}",
        n_q=n_q,
        n_k=n_k,
        d=d,
        what=what,
        where=where,
    )
    return Case((word_q, pos_q.clone(), word_k, pos_k.clone()), describe)


def _terms(word_q, pos_q, word_k, pos_k):
    return score_terms(word_q, pos_q, word_k, pos_k)  # (4, Tq, Tk) float64


class ScoreTerms(Question):
    name, function, points, notebook = "q5", "score_terms", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "word_q @ pos_k.T",
        "pos_q @ word_k.T",
        "torch.stack([q @ k.T for q, k in pairs])",
    )
    returns, references = TENSOR, ("posenc_lib.analysis.ch03_add_concat.score_terms",)
    title = N_("Split the score of (word + position) vectors into its four terms")
    hints = (
        N_(
            "Expand (w + p) . (w' + p') like (a + b)(c + d): four dot products, two of which mix a "
            "word with a position (the cross terms)."
        ),
        N_(
            "Queries are rows and keys are columns: word . word is word_q @ word_k.T, shape (Tq, Tk). "
            "The other three follow the same pattern, query side on the left."
        ),
        N_(
            "Order: (word_q, word_k), (word_q, pos_k), (pos_q, word_k), (pos_q, pos_k). Stack them on a "
            "new first axis with torch.stack((...)), shape (4, Tq, Tk)."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 6)
        if seed == 0:
            n_square, n_q, n_k, d_rect, n_rand, d_rand = 6, 3, 5, 8, 5, 3
        else:
            # Wider than the public cases (8 or 10; 10 .. 16; 4 .. 12), so none is the same.
            n_square = 2 * draws.randint(4, 6, generator)  # even: a sinusoidal width
            n_q = draws.randint(3, 9, generator)
            n_k = n_q + draws.randint(1, 5, generator)  # more keys than queries
            d_rect = 2 * draws.randint(5, 9, generator)
            n_rand, d_rand = draws.randint(5, 9, generator), draws.randint(4, 13, generator)
        # First a square case with T = D, where every slip returns numbers (none raises): a
        # missing transpose, a row-wise product and a swap of query and key all give a value
        # of some shape that the diagnosis can name. Then more keys than queries, then random
        # positions with words twice as long.
        return [
            _case(generator, n_square, n_square, n_square, _(" (as many as D)")),
            _case(generator, n_q, n_k, d_rect, ""),
            _case(
                generator, n_rand, n_rand, d_rand, _(", words x2"), sinusoidal=False, word_scale=2.0
            ),
        ]

    def diagnose(self, case, value):
        word_q, pos_q, word_k, pos_k = (a.double() for a in case.args)
        n_q, n_k = word_q.shape[0], word_k.shape[0]
        want = _terms(word_q, pos_q, word_k, pos_k)  # (4, Tq, Tk)
        if (
            isinstance(value, (tuple, list))
            and value
            and all(isinstance(v, torch.Tensor) for v in value)
        ):
            return tr(
                "Return one tensor: stack your {count} terms on a new first axis with torch.stack((...)), shape (4, Tq, Tk) = {want}.",
                count=len(value),
                want=(4, n_q, n_k),
            )
        if isinstance(value, torch.Tensor) and value.dim() in (2, 3):
            got = value.detach().double()
            shape = tuple(got.shape)
            if shape == (n_q, n_k) and close(got, want.sum(0)):
                return tr(
                    "You returned the whole score (w + p) . (w' + p'), shape {shape}; the question asks for its four terms, stacked: shape (4, Tq, Tk) = {want}.",
                    shape=shape,
                    want=(4, n_q, n_k),
                )
            if shape == (n_q, n_k, 4) != (4, n_q, n_k):
                return tr(
                    "Your terms are stacked on the last axis, shape {shape}; stack them on a new first axis (torch.stack(..., dim=0)), shape (4, Tq, Tk).",
                    shape=shape,
                )
            if got.dim() == 3 and shape[0] == 3:
                return _(
                    "You returned 3 terms: (w + p) . (w' + p') expands into four, word . word, word . pos, pos . word and pos . pos. Did you forget a cross term?"
                )
            if n_q != n_k and shape == (4, n_k, n_q):
                return tr(
                    "Your terms have shape {shape}, one row per key: queries are the rows and keys the columns, shape (4, Tq, Tk) = {want}. Did you swap the query and the key?",
                    shape=shape,
                    want=(4, n_q, n_k),
                )
            if got.dim() == 2 and shape == (4, n_q) and n_q == n_k:
                return _(
                    "Each of your terms is one number per token: you paired query i only with key i (a row-wise product, (a * b).sum(-1)). Score every query against every key: a matrix product such as word_q @ word_k.T."
                )
        got, problem = as_tensor(value, N_("Your terms"), (4, n_q, n_k))
        if problem:
            return problem
        if close(got, want):
            return None
        ww, wp, pw, pp = want
        zero = torch.zeros_like(ww)
        mistakes = [
            (torch.stack((ww, zero, zero, pp)), N_("your cross terms are 0: that is the score of concatenated vectors [w; p] . [w'; p'] = w . w' + p . p'. With added vectors, word . pos and pos . word are there too.")),
            (torch.stack((ww, pw, wp, pp)), N_("your two cross terms are in each other's place: term 1 is the query's word with the key's position (word_q, pos_k), term 2 the query's position with the key's word (pos_q, word_k).")),
            (torch.stack((ww, wp, wp, pp)), N_("your two cross terms are the same one twice: one pairs the query's word with the key's position, the other the query's position with the key's word.")),
            (torch.stack((ww, pw, pw, pp)), N_("your two cross terms are the same one twice: one pairs the query's word with the key's position, the other the query's position with the key's word.")),
            (torch.stack((ww, wp, zero, pp)), N_("your pos . word term is 0: a cross term is missing. (w + p) . (w' + p') has both w . p' and p . w'.")),
            (torch.stack((ww, zero, pw, pp)), N_("your word . pos term is 0: a cross term is missing. (w + p) . (w' + p') has both w . p' and p . w'.")),
            (_terms(word_k, pos_k, word_q, pos_q).transpose(1, 2), N_("you swapped the query and the key: your term 1 pairs the key's word with the query's position; re-read which side each cross term takes from (rows are queries).")),
            (_terms(word_k, pos_k, word_q, pos_q), N_("you swapped the query and the key: rows are queries and columns keys, and term 1 is word_q with pos_k.")),
            (want.transpose(1, 2), N_("each of your terms is transposed: rows are queries and columns keys, as in word_q @ word_k.T.")),
            (want / word_q.shape[1] ** 0.5, N_("you divided by sqrt(D): the question asks for the plain dot products (attention scales the whole score later).")),
            (_own_side(word_q, pos_q, word_k, pos_k), N_("your cross terms pair a token's word with positions on its own side (word_q with pos_q, pos_k with word_k); a cross term pairs the query's side with the key's: word_q with pos_k, pos_q with word_k.")),
            (_no_transpose(word_q, pos_q, word_k, pos_k), N_("you multiplied by word_k (or pos_k) without transposing it: the dot products of queries with keys are word_q @ word_k.T. Your shapes matched only because Tk = D here.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong))
        if named:
            return named
        for index, name in enumerate(("word . word", "word . pos", "pos . word", "pos . pos")):
            if not close(got[index], want[index]):
                return tr(
                    "Your term {index} ({name}) is not right (the terms count from 0: word . word, word . pos, pos . word, pos . pos); check which two matrices you multiply there.",
                    index=index,
                    name=name,
                )
        return _(
            "Your terms are not right; check each product against the expansion of (w + p) . (w' + p')."
        )


def _own_side(word_q, pos_q, word_k, pos_k):
    """Cross terms that pair a token's word with positions on its own side: a value when Tq = Tk."""
    if word_q.shape[0] != word_k.shape[0]:
        return torch.full((4, word_q.shape[0], word_k.shape[0]), float("nan"), dtype=torch.float64)
    ww, pp = word_q @ word_k.T, pos_q @ pos_k.T  # (T, T) each
    return torch.stack((ww, word_q @ pos_q.T, pos_k @ word_k.T, pp))


def _no_transpose(word_q, pos_q, word_k, pos_k):
    """The four products without the transpose: a value only when Tk = D."""
    if word_k.shape[0] != word_k.shape[1]:
        return torch.full((4, word_q.shape[0], word_k.shape[0]), float("nan"), dtype=torch.float64)
    return torch.stack((word_q @ word_k, word_q @ pos_k, pos_q @ word_k, pos_q @ pos_k))
