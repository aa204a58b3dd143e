"""Chapter 3's exercises: q1, the sinusoidal table; q2, the shift matrix M_k."""

from __future__ import annotations

import torch

from posenc_lib.absolute import sinusoidal_shift_matrix
from posenc_lib.analysis.ch03_sinusoid import to_concatenated
from posenc_lib.checks import draws
from posenc_lib.checks.answers import TENSOR, as_tensor, close
from posenc_lib.checks.ch03.setting import F64, NOTEBOOK, _table
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q1: the sinusoidal table -------------------------------------------------------------------------


class SinusoidalTable(Question):
    name, function, points, notebook = "q1", "sinusoidal_encoding", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "t / base ** (2i / d_model)",
        "t / base ** (two_i / d_model)",
        "torch.stack((angles.sin(), angles.cos())",
    )
    returns = TENSOR
    references = (
        "posenc_lib.absolute.sinusoidal_encoding",
        "posenc_lib.analysis.ch03_sinusoid.tensor2tensor_encoding",
        "transformers.models.distilbert.modeling_distilbert.create_sinusoidal_embeddings",
    )
    title = N_("Build the sinusoidal table")
    hints = (
        N_(
            "Make a column of positions t = 0 .. T-1, shape (T, 1), and a row of frequencies "
            "w_i = base ** (-2i / D) for the pair index i = 0 .. D/2 - 1, shape (D/2,)."
        ),
        N_(
            "Their product is a (T, D/2) table of angles. Column 2i holds sin of the angle, column "
            "2i + 1 its cos: stack (sin, cos) on a new last axis and reshape to (T, D)."
        ),
        N_(
            "torch.arange(0, d_model, 2) gives 2i directly; use a float dtype (dtype=torch.float64)."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            sizes = [(6, 8, 10000.0), (5, 4, 100.0), (12, 10, 10.0)]
        else:
            generator, sizes = draws.seeded(seed, 1), []
            while len(sizes) < 3:
                n = draws.randint(7, 31, generator)
                d = 2 * draws.randint(2, 9, generator)
                base = draws.pick([2.0, 10.0, 50.0, 100.0, 1000.0, 10000.0], generator)
                if n != d and (len(sizes) < 2 or base != 10000.0):  # one base other than 10000
                    sizes.append((n, d, base))
        return [Case(s, f"n_positions = {s[0]}, d_model = {s[1]}, base = {s[2]:g}") for s in sizes]

    def diagnose(self, case, value):
        n, d, base = case.args
        if isinstance(value, torch.Tensor) and value.dim() == 2:
            if tuple(value.shape) == (d, n):
                return tr(
                    "Your table has shape {shape}: it is transposed. Return one row per position, shape (n_positions, d_model) = {want}.",
                    shape=(d, n),
                    want=(n, d),
                )
            if value.shape[1] == d and value.shape[0] in (n - 1, n + 1):
                return tr(
                    "Your table has {rows} rows; it needs one per position 0 .. n_positions - 1, that is {n} rows.",
                    rows=value.shape[0],
                    n=n,
                )
        if isinstance(value, torch.Tensor) and value.dtype in (torch.float16, torch.bfloat16):
            return tr(
                "Your table holds {dtype}, too coarse for this check: it keeps about {digits} significant digits, and the check compares to 4. Build the table in float32 or float64 (and compute the angles in it too).",
                dtype=value.dtype,
                digits=3 if value.dtype == torch.float16 else 2,
            )
        got, problem = as_tensor(value, N_("The table"), (n, d))
        if problem:
            return problem
        want = _table(n, d, base)
        if close(got, want):
            return None
        mistakes = [
            (_table(n, d, base, first=torch.cos, second=torch.sin), N_("sin and cos are swapped: column 2i holds sin(t w_i) and column 2i + 1 holds cos(t w_i), so row 0 starts 0, 1, 0, 1, ...")),
            (_table(n, d, base, exponent="i/d"), N_("your frequencies use base ** (-i / d_model) with the pair index i; the exponent is 2i / d_model (equivalently, the column index of the sin column over d_model), so the slowest pair reaches base ** (-(d-2)/d).")),
            (_table(n, d, base, exponent="per column"), N_("each column uses its own index j in base ** (-j / d_model), so a cos column runs at a slightly different frequency from its sin partner. Both columns of pair i must share w_i = base ** (-2i / d_model).")),
            (_table(n, d, base, start=1), N_("your positions start at 1; they run 0 .. n_positions - 1, so row 0 is (0, 1, 0, 1, ...).")),
            (to_concatenated(want), N_("you put all the sines first and all the cosines after ([sin | cos], as tensor2tensor does). This question asks for the interleaved layout of Vaswani et al.: (sin, cos) pairs side by side. Same numbers, columns in another order.")),
            (to_concatenated(_table(n, d, base, exponent="t2t")), N_("this is tensor2tensor's variant: [sin | cos] blocks and exponent i / (d/2 - 1). The question asks for Vaswani et al.'s: interleaved (sin, cos) pairs with exponent 2i / d_model.")),
            (_multiplied(n, d, base), N_("your frequencies grow with the pair index (t times base ** (2i / d_model)); in the question's table they fall from 1 towards 1 / base: check the sign of the exponent (section 1).")),
            (_table(n, d, 10000.0), tr("you used base 10000 whatever the argument; use the `base` passed in (here {base:g}).", base=base)),
            (_table(n, d, base, second=torch.sin), N_("every column is a sine; the odd columns (2i + 1) hold the cosine.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong))
        if named:
            return named
        if close(got[0], want[0]):
            return _(
                "Row 0 is right but later rows are not: check the frequencies w_i = base ** (-2i / d_model) and that each angle is t * w_i."
            )
        return _(
            "The table has the right shape but not the right values: work out one entry by hand from the question's formula and compare it with yours (section 1 of the lecture)."
        )


def _multiplied(n, d, base):
    t = torch.arange(n, dtype=F64)[:, None]  # (T, 1)
    angles = t * base ** (2 * torch.arange(d // 2, dtype=F64) / d)  # (T, D/2)
    return torch.stack((angles.sin(), angles.cos()), -1).reshape(n, d)


# -- q2: the shift matrix M_k ---------------------------------------------------------------------------


def _shift(k, d, base, *, exponent="2i/d", sign=1.0, with_frequency=True):
    """M_k (D, D) float64 for interleaved (sin, cos) pairs, or a usual wrong variant of it."""
    i = torch.arange(d // 2, dtype=F64)  # (D/2,)
    omega = base ** (-(2 * i if exponent == "2i/d" else i) / d)  # (D/2,)
    angle = sign * k * (omega if with_frequency else torch.ones_like(omega))  # (D/2,)
    c, s = angle.cos(), angle.sin()
    blocks = torch.stack((torch.stack((c, s), -1), torch.stack((-s, c), -1)), -2)  # (D/2, 2, 2)
    return torch.block_diag(*blocks)  # (D, D)


def _concatenated_layout(m):
    """The interleaved-layout matrix m, written for [sin | cos] columns instead."""
    d = m.shape[0]
    order = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))  # (D,)
    return m[order][:, order]


class ShiftMatrix(Question):
    name, function, points, notebook = "q2", "shift_matrix", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "[[c, s], [-s, c]]",
        "[[cos b, sin b], [-sin b, cos b]]",
        "torch.block_diag",
    )
    returns, references = TENSOR, ("posenc_lib.absolute.sinusoidal_shift_matrix",)
    title = N_("Build M_k, the matrix that moves every position k steps")
    hints = (
        N_(
            "M_k acts on each (sin, cos) pair on its own, and section 2 wrote the 2x2 block for one "
            "pair: what does that block need besides k, and where in the D x D matrix does pair i's "
            "block go?"
        ),
        N_(
            "Block i uses the angle b = k * w_i, with w_i = base ** (-2i / d_model), and sits in rows "
            "and columns 2i, 2i + 1; everything outside the blocks is zero. torch.block_diag(*blocks) "
            "assembles a list of 2x2 blocks."
        ),
        N_(
            "Test the signs on the smallest case: with d_model = 2, M_k must send PE_0 = (0, 1) to "
            "PE_k = (sin k, cos k), and that fixes the block's second column; try a negative k too."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            triples = [(3, 8, 10000.0), (-2, 4, 10.0), (5, 6, 100.0)]
        else:
            generator, triples = draws.seeded(seed, 2), []
            while len(triples) < 3:
                k = draws.randint(-20, 21, generator)
                d = 2 * draws.randint(2, 7, generator)
                base = draws.pick([10.0, 50.0, 100.0, 1000.0, 10000.0], generator)
                # the first offset positive, the last negative and with a base other than 10000,
                # so that each of these clauses is tested on every draw
                wanted = (k > 1, True, k < 0 and base != 10000.0)[len(triples)]
                if k not in (0, 1) and wanted:
                    triples.append((k, d, base))
        return [Case(t, f"k = {t[0]}, d_model = {t[1]}, base = {t[2]:g}") for t in triples]

    def diagnose(self, case, value):
        k, d, base = case.args
        got, problem = as_tensor(value, "M_k", (d, d))
        if problem:
            return problem
        want = sinusoidal_shift_matrix(k, d, base, dtype=F64)
        if close(got, want, atol=1e-5):
            return None
        mistakes = [
            (_shift(k, d, base, sign=-1.0), N_("your M moves every position k steps the wrong way: it maps PE_t to PE_(t-k), not PE_(t+k). That is the transpose of M_k (a rotation by +k w_i of the pair (sin, cos), or M written for row vectors). Check it on one pair: (sin a, cos a) must become (sin(a + b), cos(a + b)).")),
            (_shift(1, d, base), N_("your M shifts by one position whatever k is: the angle of pair i is k * w_i.")),
            (_shift(k, d, base, exponent="i/d"), N_("your frequencies use base ** (-i / d_model); pair i turns at w_i = base ** (-2i / d_model).")),
            (_shift(k, d, base, with_frequency=False), N_("every block turns by k radians; block i must turn by k * w_i, the angle pair i advances in k steps.")),
            (_shift(k, d, 10000.0), tr("you used base 10000 whatever the argument; use the `base` passed in (here {base:g}).", base=base)),
            (_concatenated_layout(want), N_("your M is written for the [sin | cos] layout; here the pairs are interleaved, pair i in rows and columns 2i and 2i + 1.")),
        ]  # fmt: skip
        if close(got, torch.eye(d, dtype=F64), atol=1e-5):
            return _(
                "Your M is the identity: it leaves every position where it is. Each 2x2 block must turn pair i by the angle k * w_i."
            )
        named = named_mistake(mistakes, lambda wrong: close(got, wrong, atol=1e-5))
        if named:
            return named
        off_block = got.clone()
        for i in range(d // 2):
            off_block[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = 0
        if float(off_block.abs().max()) > 1e-6:
            return _(
                "Your M mixes different pairs: pair i of PE_(t+k) depends only on pair i of PE_t, so M is zero outside the 2x2 blocks on its diagonal."
            )
        return _(
            "M_k does not map PE_t to PE_(t+k): check one 2x2 block against the angle-addition formulas."
        )
