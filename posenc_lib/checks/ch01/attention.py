"""Chapter 1's exercises: q1, attention by hand; q2, a permutation matrix."""

from __future__ import annotations

import math
from contextlib import contextmanager

import torch
import torch.nn.functional

from posenc_lib.analysis.ch01_order import permutation_matrix
from posenc_lib.attention import self_attention
from posenc_lib.checks import draws
from posenc_lib.checks.answers import TENSOR, as_tensor, close
from posenc_lib.checks.ch01.setting import NOTEBOOK, _random_order
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.checks.run import SHORTCUT, Outcome
from posenc_lib.i18n import N_, _, tr

# -- q1: attention by hand ----------------------------------------------------------------------------

FUSED = "torch.nn.functional.scaled_dot_product_attention"  # torch's own attention, one call


@contextmanager
def _fused_attention_off(fn):
    """torch's fused attention switched off while ``fn`` runs; yields the list of its calls.

    It is a built-in (C) function, so the references' mechanism, which swaps a Python function's
    code, cannot reach it: the names that hold it are rebound instead (torch.nn.functional's, which
    nn.MultiheadAttention calls too, torch._C._nn's, and any name bound to it in ``fn``'s module or
    closure).
    """
    real = torch.nn.functional.scaled_dot_product_attention
    used: list[str] = []

    def switched_off(*args, **kwargs):
        used.append(FUSED)
        raise RuntimeError(
            tr(
                "`{name}` is switched off while your answer is checked: this exercise asks you to write attention yourself.",
                name=FUSED,
            )  # fmt: skip
        )

    owners = [torch.nn.functional.__dict__, vars(torch._C._nn)]
    owners += [getattr(fn, "__globals__", {})]
    saved = [(o, k) for o in owners for k, v in list(o.items()) if v is real]
    cells = [c for c in getattr(fn, "__closure__", None) or () if _holds(c, real)]
    try:
        for owner, key in saved:
            owner[key] = switched_off
        for cell in cells:
            cell.cell_contents = switched_off
        yield used
    finally:
        for owner, key in saved:
            owner[key] = real
        for cell in cells:
            cell.cell_contents = real


def _holds(cell, value) -> bool:
    try:
        return cell.cell_contents is value
    except ValueError:  # a cell not filled yet
        return False


class Attention(Question):
    name, function, points, notebook = "q1", "attention", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "by sqrt(d_k)",
        "1/sqrt(d_k)",
        "/ sqrt(d_k)",
        "softmax(Q K^T / sqrt(d_k)) V",
    )
    returns, references = TENSOR, ("posenc_lib.attention.self_attention",)
    title = N_("Single-head self-attention by hand")
    hints = (
        N_("Three matrix products give Q = x @ w_q, K = x @ w_k and V = x @ w_v."),
        N_("The scores are Q @ K.T, shape (T, T): entry (i, j) is query i against key j."),
        N_(
            "Divide the scores by sqrt(d_k), where d_k = w_k.shape[1], then softmax over the last "
            "axis (dim=-1) so each row sums to 1; multiply the weights by V."
        ),
    )

    def run(self, fn, cases):
        """As ``Question.run``, with torch's fused attention switched off too."""
        with _fused_attention_off(fn) as used:
            outcomes = super().run(fn, cases)
        return [Outcome(SHORTCUT, error=FUSED)] if used else outcomes

    def cases(self, seed=0):
        generator = draws.seeded(seed, 1)
        # (T, D, d_k, d_v), all four different, so a shape names the mistake that made it.
        sizes = [(4, 6, 3, 5), (3, 5, 2, 4)] if seed == 0 else []
        # Whatever the seed: T, D, d_k and d_v all different in every case, and each case its
        # own d_k, so neither a wrong size nor a hard-coded scale passes.
        while len(sizes) < 3:
            n_pos = draws.randint(5, 10, generator)
            size = (n_pos, *torch.randint(2, 8, (3,), generator=generator).tolist())
            if len(set(size)) == 4 and size[2] not in {s[2] for s in sizes}:
                sizes.append(size)
        cases = []
        for n_pos, d_in, d_k, d_v in sizes:
            x = torch.randn(n_pos, d_in, generator=generator)
            scale = 1 / math.sqrt(d_in)
            w_q, w_k = (torch.randn(d_in, d_k, generator=generator) * scale for _pair in range(2))
            w_v = torch.randn(d_in, d_v, generator=generator) * scale
            cases.append(
                Case(
                    (x, w_q, w_k, w_v),
                    tr(
                        "x {shape}, w_q and w_k ({d_in}, {d_k}), w_v ({d_in}, {d_v})",
                        shape=tuple(x.shape),
                        d_in=d_in,
                        d_k=d_k,
                        d_v=d_v,
                    ),
                )
            )
        return cases

    def diagnose(self, case, value):
        x, w_q, w_k, w_v = (a.double() for a in case.args)
        n_pos, d_k, d_v = x.shape[0], w_k.shape[1], w_v.shape[1]
        got, problem = as_tensor(value, N_("The output"), None)
        if problem:
            return problem
        if tuple(got.shape) != (n_pos, d_v):
            shape = tr("The output should have shape (T, d_v) = ({n_pos}, {d_v}), but yours has shape {shape}", n_pos=n_pos, d_v=d_v, shape=tuple(got.shape))  # fmt: skip
            weights = self_attention(x, w_q, w_k, w_v)[1]  # (T, T)
            if close(got, weights):
                return tr("{shape}: that is the weight matrix; multiply it by V.", shape=shape)
            if close(got, weights @ x):
                return tr(
                    "{shape}: you multiplied the weights by x; multiply them by V = x @ w_v.",
                    shape=shape,
                )
            return tr(
                "{shape}. Multiply the (T, T) weights by V = x @ w_v, shape (T, d_v).", shape=shape
            )
        q, k, v = x @ w_q, x @ w_k, x @ w_v
        scores = q @ k.T
        if close(got, self_attention(x, w_q, w_k, w_v)[0]):
            return None
        mistakes = [
            (torch.softmax(scores, -1) @ v, N_("the scores go into the softmax unscaled: re-read the scale in the question's formula (section 2 of the lecture).")),
            (torch.softmax(scores / d_k, -1) @ v, N_("you divide the scores by d_k itself: look again at how the question's formula scales them (section 2).")),
            (torch.softmax(scores / math.sqrt(x.shape[1]), -1) @ v, N_("the scale uses D, the size of x's rows; re-read which size the question's formula divides by (section 2).")),
            (torch.softmax(scores / math.sqrt(d_v), -1) @ v, N_("the scale uses d_v, the size of a value; re-read which size the question's formula divides by (section 2).")),
            (torch.softmax(scores / math.sqrt(n_pos), -1) @ v, N_("the scale uses T, the number of positions; re-read which size the question's formula divides by (section 2).")),
            (torch.softmax((scores / math.sqrt(d_k)).masked_fill(torch.ones(n_pos, n_pos, dtype=torch.bool).triu(1), float("-inf")), -1) @ v, N_("you applied a causal mask; this question's attention lets every query see every key (no mask).")),
            (torch.softmax((scores / math.sqrt(d_k)).flatten(), -1).view(n_pos, n_pos) @ v, N_("your softmax normalises the whole score matrix at once; each row (one query's weights over the keys) should sum to 1: softmax over the last axis.")),
            (torch.softmax(scores / math.sqrt(d_k), 0) @ v, N_("your softmax normalises each column (over the queries); each query's weights over the keys, a row, should sum to 1: softmax over the last axis.")),
            (torch.softmax(scores.T / math.sqrt(d_k), -1) @ v, N_("your score matrix is transposed: entry (i, j) should be query i against key j, Q K^T rather than K Q^T.")),
            (scores / math.sqrt(d_k) @ v, N_("the weights are not normalised: apply a softmax to the scaled scores, so each row sums to 1.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong))
        if named:
            return named
        return _(
            "The output has the right shape but not the right values; compare each step (the products, the scale, the softmax's axis) with the question's formula and section 2 of the lecture."
        )


# -- q2: a permutation matrix -------------------------------------------------------------------------


class Permutation(Question):
    name, function, points, notebook = "q2", "permutation_matrix", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "P[i, order[i]] = 1",
        "its single 1 in column order[i]",
        "p[row, column] = 1",
    )
    returns, references = TENSOR, ("posenc_lib.analysis.ch01_order.permutation_matrix",)
    title = N_("Build the permutation matrix P")
    hints = (
        N_(
            "P is a T x T matrix of zeros and ones with exactly one 1 in every row and every column."
        ),
        N_(
            "(P @ X)[i] is the sum of P[i, j] * X[j] over j: to make it X[order[i]], row i of P "
            "needs its single 1 in column order[i]."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            orders = [[2, 0, 1], [1, 3, 0, 2], [4, 2, 0, 3, 1], [0]]
        else:
            generator = draws.seeded(seed, 2)
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
            return _(
                "Every entry of P should be 0 or 1, with exactly one 1 in each row and each column."
            )
        if close(got, want.T):
            return _(
                "Your P puts row i of X at position order[i]: it undoes the reordering (it is the transpose, the inverse permutation). Row i of P @ X should be row order[i] of X."
            )
        if close(got, torch.eye(n, dtype=got.dtype)):
            return _("Your P is the identity whatever the order: it should depend on `order`.")
        if not (bool((got.sum(0) == 1).all()) and bool((got.sum(1) == 1).all())):
            return _("P should have exactly one 1 in each row and each column.")
        return _(
            "P @ X does not reorder the rows of X as `order` says: row i of P @ X should be row order[i] of X."
        )
