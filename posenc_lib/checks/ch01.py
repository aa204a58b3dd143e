"""Chapter 1's exercises: attention by hand, permutations, the equivariance gap, breaking it.

    from posenc_lib.checks.ch01 import q1, q2, q3, q4, q5
    q1.check(attention); q1.hint(); q1.solution()

The references are the library's own functions (``self_attention``, ``permutation_matrix``); the
sentences name the usual mistakes by recomputing them and comparing.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch01_order import permutation_matrix, slot_vectors
from posenc_lib.attention import self_attention
from posenc_lib.checks import (
    FLOAT,
    INDEX_LIST,
    TENSOR,
    Case,
    Question,
    as_index_list,
    as_number,
    as_tensor,
    close,
)

NOTEBOOK = "01_order_blindness.ipynb"


def _generator(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 7919 + salt)


def _random_order(n: int, generator: torch.Generator) -> list[int]:
    """A random single cycle through 0..n-1 (Sattolo's algorithm).

    For n >= 3 it moves every row, and it differs from its inverse in every row, so the common
    mistakes (no permutation, the inverse, the transpose) each give a different answer.
    """
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(torch.randint(0, i, (1,), generator=generator))
        order[i], order[j] = order[j], order[i]
    return order


def _layer(dim: int, seed: int, positions: bool = False, causal: bool = False, d_out=None):
    """A fixed single-head attention layer x (T, dim) -> (T, d_out or dim), optionally with
    positions or a causal mask.

    Computed in float64 and returned in x's dtype, so a learner may mix its output with x freely.
    """
    generator = _generator(seed, 99)
    w = list(torch.randn(3, dim, dim, generator=generator, dtype=torch.float64) / math.sqrt(dim))
    if d_out is not None:  # values of another width: D' != D
        w[2] = torch.randn(dim, d_out, generator=generator, dtype=torch.float64) / math.sqrt(dim)

    def layer(x):
        dtype = x.dtype if isinstance(x, torch.Tensor) else torch.float64
        x = torch.as_tensor(x, dtype=torch.float64)
        if positions:
            x = x + slot_vectors(x.shape[0], dim, dtype=torch.float64)
        return self_attention(x, w[0], w[1], w[2], causal=causal)[0].to(dtype)

    layer.__name__ = "attention_with_positions" if positions else "attention_layer"
    return layer


# -- q1: attention by hand ----------------------------------------------------------------------------


class Attention(Question):
    name, function, points, notebook = "q1", "attention", 3, NOTEBOOK
    returns, references = TENSOR, ("posenc_lib.attention.self_attention",)
    title = "Single-head self-attention by hand"
    hints = (
        "Three matrix products give Q = x @ w_q, K = x @ w_k and V = x @ w_v.",
        "The scores are Q @ K.T, shape (T, T): entry (i, j) is query i against key j.",
        "Divide the scores by sqrt(d_k), where d_k = w_k.shape[1], then softmax over the last axis "
        "(dim=-1) so each row sums to 1; multiply the weights by V.",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 1)
        # (T, D, d_k, d_v), all four different, so a shape names the mistake that made it.
        sizes = [(4, 6, 3, 5), (3, 5, 2, 4)] if seed == 0 else []
        # Whatever the seed: T, D, d_k and d_v all different in every case, and each case its
        # own d_k, so neither a wrong size nor a hard-coded scale passes.
        while len(sizes) < 3:
            n_pos = int(torch.randint(5, 10, (1,), generator=generator))
            size = (n_pos, *torch.randint(2, 8, (3,), generator=generator).tolist())
            if len(set(size)) == 4 and size[2] not in {s[2] for s in sizes}:
                sizes.append(size)
        cases = []
        for n_pos, d_in, d_k, d_v in sizes:
            x = torch.randn(n_pos, d_in, generator=generator)
            scale = 1 / math.sqrt(d_in)
            w_q, w_k = (torch.randn(d_in, d_k, generator=generator) * scale for _ in range(2))
            w_v = torch.randn(d_in, d_v, generator=generator) * scale
            cases.append(
                Case(
                    (x, w_q, w_k, w_v),
                    f"x {tuple(x.shape)}, w_q and w_k ({d_in}, {d_k}), w_v ({d_in}, {d_v})",
                )
            )
        return cases

    def diagnose(self, case, value):
        x, w_q, w_k, w_v = (a.double() for a in case.args)
        n_pos, d_k, d_v = x.shape[0], w_k.shape[1], w_v.shape[1]
        got, problem = as_tensor(value, "The output", None)
        if problem:
            return problem
        if tuple(got.shape) != (n_pos, d_v):
            shape = f"The output should have shape (T, d_v) = ({n_pos}, {d_v}), but yours has shape {tuple(got.shape)}"
            weights = self_attention(x, w_q, w_k, w_v)[1]  # (T, T)
            if close(got, weights):
                return f"{shape}: that is the weight matrix; multiply it by V."
            if close(got, weights @ x):
                return f"{shape}: you multiplied the weights by x; multiply them by V = x @ w_v."
            return f"{shape}. Multiply the (T, T) weights by V = x @ w_v, shape (T, d_v)."
        q, k, v = x @ w_q, x @ w_k, x @ w_v
        scores = q @ k.T
        if close(got, self_attention(x, w_q, w_k, w_v)[0]):
            return None
        mistakes = [
            (torch.softmax(scores, -1) @ v, "the scores are not scaled: divide Q K^T by sqrt(d_k) before the softmax."),
            (torch.softmax(scores / d_k, -1) @ v, "you divide the scores by d_k; the scale is 1/sqrt(d_k)."),
            (torch.softmax(scores / math.sqrt(x.shape[1]), -1) @ v, "the scale uses D, the size of x's rows; it should use d_k, the size of a query (w_k.shape[1])."),
            (torch.softmax(scores / math.sqrt(d_v), -1) @ v, "the scale uses d_v, the size of a value (w_v.shape[1]); it should use d_k, the size of a query and a key (w_k.shape[1])."),
            (torch.softmax(scores / math.sqrt(n_pos), -1) @ v, "the scale uses T, the number of positions (x.shape[0]); it should use d_k, the size of a query (w_k.shape[1])."),
            (torch.softmax((scores / math.sqrt(d_k)).masked_fill(torch.ones(n_pos, n_pos, dtype=torch.bool).triu(1), float("-inf")), -1) @ v, "you applied a causal mask; this question's attention lets every query see every key (no mask)."),
            (torch.softmax((scores / math.sqrt(d_k)).flatten(), -1).view(n_pos, n_pos) @ v, "your softmax normalises the whole score matrix at once; each row (one query's weights over the keys) should sum to 1: softmax over the last axis."),
            (torch.softmax(scores / math.sqrt(d_k), 0) @ v, "your softmax normalises each column (over the queries); each query's weights over the keys, a row, should sum to 1: softmax over the last axis."),
            (torch.softmax(scores.T / math.sqrt(d_k), -1) @ v, "your score matrix is transposed: entry (i, j) should be query i against key j, Q K^T rather than K Q^T."),
            (scores / math.sqrt(d_k) @ v, "the weights are not normalised: apply a softmax to the scaled scores, so each row sums to 1."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if close(got, wrong):
                return "Close, but " + sentence
        return "The output has the right shape but not the right values; compare each step with the formula softmax(Q K^T / sqrt(d_k)) V."


# -- q2: a permutation matrix -------------------------------------------------------------------------


class Permutation(Question):
    name, function, points, notebook = "q2", "permutation_matrix", 2, NOTEBOOK
    returns, references = TENSOR, ("posenc_lib.analysis.ch01_order.permutation_matrix",)
    title = "Build the permutation matrix P"
    hints = (
        "P is a T x T matrix of zeros and ones with exactly one 1 in every row and every column.",
        "(P @ X)[i] is the sum of P[i, j] * X[j] over j: to make it X[order[i]], row i of P needs "
        "its single 1 in column order[i].",
    )

    def cases(self, seed=0):
        if seed == 0:
            orders = [[2, 0, 1], [1, 3, 0, 2], [4, 2, 0, 3, 1], [0]]
        else:
            generator = _generator(seed, 2)
            lengths = torch.randint(6, 10, (3,), generator=generator).tolist()
            orders = [_random_order(n, generator) for n in lengths] + [[0]]  # T = 1, every time
        return [Case((order,), f"order = {order}") for order in orders]

    def diagnose(self, case, value):
        (order,) = case.args
        n = len(order)
        got, problem = as_tensor(value, "P", (n, n))
        if problem:
            return problem
        want = permutation_matrix(order).double()
        if close(got, want):
            return None
        if not bool(((got == 0) | (got == 1)).all()):
            return (
                "Every entry of P should be 0 or 1, with exactly one 1 in each row and each column."
            )
        if close(got, want.T):
            return "Your P puts row i of X at position order[i]: it undoes the reordering (it is the transpose, the inverse permutation). Row i of P @ X should be row order[i] of X."
        if close(got, torch.eye(n, dtype=got.dtype)):
            return "Your P is the identity whatever the order: it should depend on `order`."
        if not (bool((got.sum(0) == 1).all()) and bool((got.sum(1) == 1).all())):
            return "P should have exactly one 1 in each row and each column."
        return "P @ X does not reorder the rows of X as `order` says: row i of P @ X should be row order[i] of X."


# -- q3: the equivariance gap -------------------------------------------------------------------------


def _gap(f, x, order, out_order=None, reduce="max"):
    """max |f(X[order]) - f(X)[out_order]| and the usual wrong variants of it."""
    diff = f(x[order]) - f(x)[order if out_order is None else out_order]
    if reduce == "signed":
        return float(diff.max())
    if reduce == "signed reversed":  # P f(X) - f(PX), without the absolute value
        return float((-diff).max())
    if reduce == "norm":
        return float(diff.norm())
    if reduce == "row norm":
        return float(diff.norm(dim=-1).max())
    return float(diff.abs().mean() if reduce == "mean" else diff.abs().max())


class EquivarianceGap(Question):
    name, function, points, notebook = "q3", "equivariance_gap", 2, NOTEBOOK
    returns, references = FLOAT, ()  # the library has no gap of an arbitrary layer
    title = "Measure the equivariance gap of any layer"
    hints = (
        "Compute f on the reordered input, x[order], and reorder f's output on the original input "
        "the same way.",
        "The gap is the largest absolute difference between the two tensors: "
        "(a - b).abs().max(), returned as a float.",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 3)
        cases = []
        for positions, causal in ((False, False), (True, False), (False, True)):
            n_pos, dim, d_out = (
                (5, 6, 3)
                if seed == 0
                else (
                    int(torch.randint(6, 10, (1,), generator=generator)),
                    int(torch.randint(3, 9, (1,), generator=generator)),
                    int(torch.randint(2, 10, (1,), generator=generator)),
                )
            )
            while d_out in (dim, n_pos):  # the causal layer's D' differs from D and from T
                d_out = int(torch.randint(2, 10, (1,), generator=generator))
            f = _layer(dim, seed, positions, causal, d_out if causal else None)
            # The two layers that see order get inputs on which a signed max differs from the
            # absolute one either way: with positions, the largest difference is positive and
            # the most negative one larger still in size (so max(d) fails); with the causal mask,
            # the reverse (so max(-d), the signed max of P f(X) - f(PX), fails).
            sign = {(True, False): 1.0, (False, True): -1.0}.get((positions, causal))
            while True:
                x = torch.randn(n_pos, dim, generator=generator)  # float32, like other inputs
                order = _random_order(n_pos, generator)
                diff = sign * (f(x[order]) - f(x)[order]) if sign else None  # (T, D')
                if sign is None or -float(diff.min()) > 1.1 * float(diff.max()) > 0:
                    break
            kind = "with positions" if positions else ("with a causal mask" if causal else "plain")
            width = f", f: (T, {dim}) -> (T, {d_out})" if causal else ""
            cases.append(Case((f, x, order), f"f = an attention layer ({kind}){width}, x {tuple(x.shape)}, order = {order}"))  # fmt: skip
        return cases

    def diagnose(self, case, value):
        f, x, order = case.args
        got, problem = as_number(value, "The gap")
        if problem:
            return problem
        want = _gap(f, x, order)
        if abs(got - want) <= 1e-4 * want + 1e-6:
            return None
        inverse = sorted(range(len(order)), key=order.__getitem__)
        mistakes = [
            (_gap(f, x, order, out_order=list(range(len(order)))), "you compared f(PX) with f(X) as it stands; the claim compares f(PX) with P f(X): reorder f(X)'s rows with the same order."),
            (_gap(f, x, order, out_order=inverse), "you reordered f(X) with the inverse permutation; use the same `order` on both sides."),
            (_gap(f, x, order, reduce="mean"), "the gap is the largest absolute difference, not the mean."),
            (_gap(f, x, order, reduce="signed"), "take the absolute value before the max: a difference of -0.3 counts as much as +0.3."),
            (_gap(f, x, order, reduce="signed reversed"), "take the absolute value before the max: a difference of -0.3 counts as much as +0.3 (whichever side you subtract from the other)."),
            (_gap(f, x, inverse), "you reordered both sides with the inverse permutation: PX is x[order], whose row i is row order[i] of x."),
            (_gap(f, x, order, reduce="norm"), "the gap is the largest absolute entry, not the norm of the whole difference."),
            (_gap(f, x, order, reduce="row norm"), "the gap is the largest absolute entry, not the largest row norm."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if abs(got - wrong) <= 1e-4 * abs(wrong) + 1e-6:
                return "Close, but " + sentence
        if got < 0:
            return "A gap is a size: it cannot be negative."
        return "Your gap differs from the largest |f(PX) - P f(X)|; check both sides of the difference."


# -- q4: break the symmetry ---------------------------------------------------------------------------


class AddPositions(Question):
    name, function, points, notebook = "q4", "add_positions", 3, NOTEBOOK
    returns = TENSOR
    references = (
        "posenc_lib.analysis.ch01_order.slot_vectors",
        "posenc_lib.absolute.sinusoidal_encoding",
    )
    title = "Break the symmetry with a position signal"
    hints = (
        "Return x plus a (T, D) tensor whose row t depends only on t (and D), never on x's values.",
        "The same vector added to every row changes nothing about the order: each row must differ.",
        "Anything that grows or waves with t works here, e.g. 0.1 * t in every column, or "
        "chapter 3's sin and cos; keep the values around the size of the embeddings (0.1 to 1).",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 4)
        # One table longer than the others (12, then 13-24 rows), so a signal read from a table
        # of fixed length fails where the learner can see it.
        sizes = [(5, 8), (3, 6), (12, 4)] if seed == 0 else []
        for low, high in ((6, 11), (13, 25)) if seed else ():
            n_pos = int(torch.randint(low, high, (1,), generator=generator))
            half = int(torch.randint(2, 9, (1,), generator=generator))
            sizes.append((n_pos, 2 * half))
        cases = []
        for n_pos, dim in sizes:
            for _ in range(2):  # two inputs of the same shape: the signal must not change
                x = torch.randn(n_pos, dim, generator=generator)
                cases.append(Case((x,), f"x of shape {tuple(x.shape)}"))
        return cases

    def diagnose(self, case, value):
        (x,) = case.args
        got, problem = as_tensor(value, "The result", tuple(x.shape))
        if problem:
            return problem
        signal = got - x.double()  # (T, D): what was added
        size = float(signal.abs().max())
        if size < 1e-12:
            return "Your function returns x unchanged: add a vector that depends on the position."
        if size < 1e-4:
            return f"Your position vectors are too small to change attention (largest value {size:.0e}); make them about the size of the embeddings (0.1 to 1)."
        ratio = got / x.double()  # (T, D): constant along each row if x was only scaled
        if bool((ratio - ratio[:, :1]).abs().max() < 1e-4):
            return (
                "Your function scales x instead of adding to it: add a position vector, x + signal."
            )
        if float((signal - signal[0]).abs().max()) < 1e-5 * (1 + size):  # float32 rounding of x + c
            return "You add the same vector at every position, so every word gets the same nudge and attention is still order-blind. Make the vector depend on the position."
        gap = _gap(_shifted_layer(signal, x.shape[1]), x.double(), _random_order(x.shape[0], _generator(0, 5)))  # fmt: skip
        if gap < 1e-4:
            return f"Your position vectors are too small to change attention (largest change {gap:.1e}); make them about the size of the embeddings (0.1 to 1)."
        return None

    def diagnose_all(self, cases, values):
        for first, second in zip(range(0, len(cases), 2), range(1, len(cases), 2), strict=True):
            added = [
                torch.as_tensor(values[i]).double() - cases[i].args[0].double()
                for i in (first, second)
            ]
            if not close(added[0], added[1]):
                return "What your function adds differs between two inputs of the same shape: a position signal must depend only on the position (no randomness, no dependence on the words)."
        return None


def _shifted_layer(signal, dim):
    layer = _layer(dim, 0)
    return lambda x: layer(x + signal)


# -- q5: what the causal mask keeps ------------------------------------------------------------------


class UnchangedRows(Question):
    name, function, points, notebook = "q5", "unchanged_rows", 2, NOTEBOOK
    returns, references = INDEX_LIST, ()  # reasoning, not a computation the library does
    title = "Which outputs does a causal mask keep when two words swap?"
    hints = (
        "With a causal mask, row t of the output depends on the word at t and the *set* of words "
        "at positions 0..t.",
        "Ask, for each row t, whether the swap changes the word at t or the set of words at 0..t.",
    )

    def cases(self, seed=0):
        # Every draw holds each shape of the question: rows before, between and after the pair,
        # i < j and i > j; i == j; a pair at the start (i or j = 0) and at the end (T - 1).
        if seed == 0:
            return [
                Case(t, f"T = {t[0]}, i = {t[1]}, j = {t[2]}")
                for t in [(5, 1, 3), (4, 0, 1), (6, 4, 1), (3, 2, 2), (25, 21, 9), (7, 5, 6)]
            ]
        generator = _generator(seed, 6)

        def draw(low, high):  # a whole number in low..high - 1
            return int(torch.randint(low, high, (1,), generator=generator))

        triples = []
        for flip in (False, True):  # at least one row before, three between, one after
            n = draw(8, 14)
            low = draw(1, n - 4)
            high = draw(low + 3, n - 1)
            triples.append((n, high, low) if flip else (n, low, high))
        n = draw(7, 13)
        triples.append((n, *[draw(1, n - 1)] * 2))  # i == j
        n = draw(21, 41)
        triples.append((n, 0, draw(2, n - 1)))  # from the first word, in a sentence past 20 words
        n = draw(7, 13)
        triples.append((n, n - 1, n - 2))  # the last two words, i > j
        return [Case(t, f"T = {t[0]}, i = {t[1]}, j = {t[2]}") for t in triples]

    def diagnose(self, case, value):
        n, i, j = case.args
        got, problem = as_index_list(value, "Your answer")
        if problem:
            return problem
        if any(r < 0 or r >= n for r in got):
            outside = sorted(r for r in got if not 0 <= r < n)
            shown = ", ".join(map(str, outside[:5])) + (", ..." if len(outside) > 5 else "")
            return f"Row numbers run from 0 to T - 1 = {n - 1}; yours include {shown}."
        got = {int(r) for r in got}
        note = " (Here i > j.)" if i > j else ""
        want = {t for t in range(n) if t < min(i, j) or t > max(i, j) or i == j}
        if got == want:
            return None
        if i == j and got != set(range(n)):
            return "When i == j nothing is swapped: no row can change."
        between = {t for t in range(n) if min(i, j) < t < max(i, j)}
        if between and between <= got:
            return (
                "Rows between the two swapped words see a different set of earlier words after the swap, so their outputs change."
                + note
            )
        if {t for t in want if t > max(i, j)} - got:
            return (
                "A row after both swapped words attends to the same set of words, only in another order, and attention cannot tell order: those rows do not change."
                + note
            )
        if {min(i, j), max(i, j)} & got:
            return (
                "The rows of the two swapped words change: each now holds the other word, so it asks with a different query, even where it sees the same set of words."
                + note
            )
        extra, missing = len(got - want), len(want - got)
        if extra:
            return f"{extra} of your rows {'does' if extra == 1 else 'do'} change when the words swap.{note}"
        return f"You left out {missing} {'row that does' if missing == 1 else 'rows that do'} not change.{note}"


q1, q2, q3, q4, q5 = Attention(), Permutation(), EquivarianceGap(), AddPositions(), UnchangedRows()
QUESTIONS = (q1, q2, q3, q4, q5)
