"""Chapter 3's exercises: the sinusoidal table, its shift matrix, the direction gap, the base.

    from posenc_lib.checks.ch03 import q1, q2, q3, q4
    q1.check(sinusoidal_encoding); q1.hint(); q1.solution()

The references are the library's functions (``absolute.sinusoidal_encoding``,
``absolute.sinusoidal_shift_matrix``, ``sinusoid.direction_gap``, ``sinusoid.confusion``); each
usual mistake is recomputed and, when the learner's answer matches it, named.
"""

from __future__ import annotations

import functools
import math
import numbers

import torch

from posenc_lib.absolute import sinusoidal_encoding, sinusoidal_shift_matrix
from posenc_lib.analysis.ch03_sinusoid import confusion, direction_gap, to_concatenated
from posenc_lib.checks import FLOAT, TENSOR, Case, Question, as_number, as_tensor, close

# Results of slow case-building steps, by function and arguments. A module-level dict, not
# functools.lru_cache: the harness empties the checks' module-level containers while an answer
# runs, so no answer can read a cached result (an lru_cache would answer a call from its cache).
_MEMO: dict = {}


def _memo(fn):
    @functools.wraps(fn)
    def cached(*args):
        key = (fn.__name__, args)
        if key not in _MEMO:
            _MEMO[key] = fn(*args)
        return _MEMO[key]

    return cached


NOTEBOOK = "03_sinusoidal.ipynb"
F64 = torch.float64


def _generator(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 7919 + salt)


def _pick(options, generator):
    return options[int(torch.randint(0, len(options), (1,), generator=generator))]


def _table(n, d, base, *, exponent="2i/d", start=0, first=torch.sin, second=torch.cos):
    """A (T, D) float64 sinusoidal table, or one of its usual wrong variants."""
    t = torch.arange(start, start + n, dtype=F64)[:, None]  # (T, 1)
    if exponent == "per column":  # column j uses base ** (j / D): the cos columns run a bit slower
        columns = torch.arange(d, dtype=F64)  # (D,)
        angles = t / base ** (columns / d)  # (T, D)
        table = torch.empty(n, d, dtype=F64)
        table[:, 0::2], table[:, 1::2] = first(angles[:, 0::2]), second(angles[:, 1::2])
        return table
    i = torch.arange(d // 2, dtype=F64)  # (D/2,)
    power = {"2i/d": 2 * i / d, "i/d": i / d, "t2t": i / max(d // 2 - 1, 1)}[exponent]
    angles = t / base**power  # (T, D/2)
    return torch.stack((first(angles), second(angles)), -1).reshape(n, d)  # (T, D)


# -- q1: the sinusoidal table -------------------------------------------------------------------------


class SinusoidalTable(Question):
    name, function, points, notebook = "q1", "sinusoidal_encoding", 3, NOTEBOOK
    returns = TENSOR
    references = (
        "posenc_lib.absolute.sinusoidal_encoding",
        "posenc_lib.analysis.ch03_sinusoid.tensor2tensor_encoding",
        "transformers.models.distilbert.modeling_distilbert.create_sinusoidal_embeddings",
    )
    title = "Build the sinusoidal table"
    hints = (
        "Make a column of positions t = 0 .. T-1, shape (T, 1), and a row of frequencies "
        "w_i = base ** (-2i / D) for the pair index i = 0 .. D/2 - 1, shape (D/2,).",
        "Their product is a (T, D/2) table of angles. Column 2i holds sin of the angle, column "
        "2i + 1 its cos: stack (sin, cos) on a new last axis and reshape to (T, D).",
        "torch.arange(0, d_model, 2) gives 2i directly; use a float dtype (dtype=torch.float64).",
    )

    def cases(self, seed=0):
        if seed == 0:
            sizes = [(6, 8, 10000.0), (5, 4, 100.0), (12, 10, 10.0)]
        else:
            generator, sizes = _generator(seed, 1), []
            while len(sizes) < 3:
                n = int(torch.randint(7, 31, (1,), generator=generator))
                d = 2 * int(torch.randint(2, 9, (1,), generator=generator))
                base = _pick([2.0, 10.0, 50.0, 100.0, 1000.0, 10000.0], generator)
                if n != d and (len(sizes) < 2 or base != 10000.0):  # one base other than 10000
                    sizes.append((n, d, base))
        return [Case(s, f"n_positions = {s[0]}, d_model = {s[1]}, base = {s[2]:g}") for s in sizes]

    def diagnose(self, case, value):
        n, d, base = case.args
        if isinstance(value, torch.Tensor) and value.dim() == 2:
            if tuple(value.shape) == (d, n):
                return f"Your table has shape {(d, n)}: it is transposed. Return one row per position, shape (n_positions, d_model) = {(n, d)}."
            if value.shape[1] == d and value.shape[0] in (n - 1, n + 1):
                return f"Your table has {value.shape[0]} rows; it needs one per position 0 .. n_positions - 1, that is {n} rows."
        if isinstance(value, torch.Tensor) and value.dtype in (torch.float16, torch.bfloat16):
            return f"Your table holds {value.dtype}, too coarse for this check: it keeps about {3 if value.dtype == torch.float16 else 2} significant digits, and the check compares to 4. Build the table in float32 or float64 (and compute the angles in it too)."
        got, problem = as_tensor(value, "The table", (n, d))
        if problem:
            return problem
        want = _table(n, d, base)
        if close(got, want):
            return None
        mistakes = [
            (_table(n, d, base, first=torch.cos, second=torch.sin), "sin and cos are swapped: column 2i holds sin(t w_i) and column 2i + 1 holds cos(t w_i), so row 0 starts 0, 1, 0, 1, ..."),
            (_table(n, d, base, exponent="i/d"), "your frequencies use base ** (-i / d_model) with the pair index i; the exponent is 2i / d_model (equivalently, the column index of the sin column over d_model), so the slowest pair reaches base ** (-(d-2)/d)."),
            (_table(n, d, base, exponent="per column"), "each column uses its own index j in base ** (-j / d_model), so a cos column runs at a slightly different frequency from its sin partner. Both columns of pair i must share w_i = base ** (-2i / d_model)."),
            (_table(n, d, base, start=1), "your positions start at 1; they run 0 .. n_positions - 1, so row 0 is (0, 1, 0, 1, ...)."),
            (to_concatenated(want), "you put all the sines first and all the cosines after ([sin | cos], as tensor2tensor does). This question asks for the interleaved layout of Vaswani et al.: (sin, cos) pairs side by side. Same numbers, columns in another order."),
            (to_concatenated(_table(n, d, base, exponent="t2t")), "this is tensor2tensor's variant: [sin | cos] blocks and exponent i / (d/2 - 1). The question asks for Vaswani et al.'s: interleaved (sin, cos) pairs with exponent 2i / d_model."),
            (_multiplied(n, d, base), "you multiply t by base ** (2i / d_model); divide instead, t / base ** (2i / d_model), so that the frequencies fall from 1 to about 1 / base."),
            (_table(n, d, 10000.0), f"you used base 10000 whatever the argument; use the `base` passed in (here {base:g})."),
            (_table(n, d, base, second=torch.sin), "every column is a sine; the odd columns (2i + 1) hold the cosine."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if close(got, wrong):
                return "Close, but " + sentence
        if close(got[0], want[0]):
            return "Row 0 is right but later rows are not: check the frequencies w_i = base ** (-2i / d_model) and that each angle is t * w_i."
        return "The table has the right shape but not the right values: compare one entry by hand with sin(t / base ** (2i / d_model))."


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
    returns, references = TENSOR, ("posenc_lib.absolute.sinusoidal_shift_matrix",)
    title = "Build M_k, the matrix that moves every position k steps"
    hints = (
        "Work one pair at a time: with a = t w_i and b = k w_i, sin(a + b) = sin a cos b + cos a "
        "sin b and cos(a + b) = cos a cos b - sin a sin b. Write these as a 2x2 matrix acting on "
        "the column (sin a, cos a): its entries hold b only, so it is the same for every t.",
        "M_k is zero outside 2x2 blocks on its diagonal: block i sits in rows and columns 2i, "
        "2i + 1 and uses b = k * w_i, with w_i = base ** (-2i / d_model). torch.block_diag(*blocks) "
        "assembles the blocks.",
        "Block i is [[cos b, sin b], [-sin b, cos b]] with b = k * w_i.",
    )

    def cases(self, seed=0):
        if seed == 0:
            triples = [(3, 8, 10000.0), (-2, 4, 10.0), (5, 6, 100.0)]
        else:
            generator, triples = _generator(seed, 2), []
            while len(triples) < 3:
                k = int(torch.randint(-20, 21, (1,), generator=generator))
                d = 2 * int(torch.randint(2, 7, (1,), generator=generator))
                base = _pick([10.0, 50.0, 100.0, 1000.0, 10000.0], generator)
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
            (_shift(k, d, base, sign=-1.0), "your M moves every position k steps the wrong way: it maps PE_t to PE_(t-k), not PE_(t+k). That is the transpose of M_k (a rotation by +k w_i of the pair (sin, cos), or M written for row vectors). Check it on one pair: (sin a, cos a) must become (sin(a + b), cos(a + b))."),
            (_shift(1, d, base), "your M shifts by one position whatever k is: the angle of pair i is k * w_i."),
            (_shift(k, d, base, exponent="i/d"), "your frequencies use base ** (-i / d_model); pair i turns at w_i = base ** (-2i / d_model)."),
            (_shift(k, d, base, with_frequency=False), "every block turns by k radians; block i must turn by k * w_i, the angle pair i advances in k steps."),
            (_shift(k, d, 10000.0), f"you used base 10000 whatever the argument; use the `base` passed in (here {base:g})."),
            (_concatenated_layout(want), "your M is written for the [sin | cos] layout; here the pairs are interleaved, pair i in rows and columns 2i and 2i + 1."),
        ]  # fmt: skip
        if close(got, torch.eye(d, dtype=F64), atol=1e-5):
            return "Your M is the identity: it leaves every position where it is. Each 2x2 block must turn pair i by the angle k * w_i."
        for wrong, sentence in mistakes:
            if close(got, wrong, atol=1e-5):
                return "Close, but " + sentence
        off_block = got.clone()
        for i in range(d // 2):
            off_block[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = 0
        if float(off_block.abs().max()) > 1e-6:
            return "Your M mixes different pairs: pair i of PE_(t+k) depends only on pair i of PE_t, so M is zero outside the 2x2 blocks on its diagonal."
        return "M_k does not map PE_t to PE_(t+k): check one 2x2 block against the angle-addition formulas."


# -- q3: the direction gap -------------------------------------------------------------------------------


def _gap_variant(table, kind):
    """The direction gap of a (T, D) float64 table, or a usual wrong variant of it."""
    n = table.shape[0]
    if kind == "roll":  # torch.roll wraps around the ends: pairs that are not k apart
        return max(
            float(((table * table.roll(-k, 0)).sum(-1) - (table * table.roll(k, 0)).sum(-1)).abs().max())
            for k in range(1, n)
        )  # fmt: skip
    if kind == "translation":  # compares t with t = 0 instead of ahead with behind
        gram = table @ table.T
        return max(float((gram.diagonal(k) - gram[0, k]).abs().max()) for k in range(1, n))
    if kind == "cosine":
        unit = table / table.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        return direction_gap(unit)
    gram = table @ table.T  # (T, T)
    gaps = []
    last = {"k = 1": 1, "k short": (n - 1) // 2 - 1}.get(kind, (n - 1) // 2)
    for k in range(1, last + 1):
        if kind == "wrap behind":  # t from 0: gram[t, t - k] wraps to the end for t < k
            t = torch.arange(0, n - k)  # (n - k,)
            gaps.append(gram[t, t + k] - gram[t, t - k])
            continue
        end = n - k - (1 if kind == "short range" else 0)
        begin = k + (1 if kind == "t late" else 0)
        ahead = gram.diagonal(k)[begin:end]  # <PE_t, PE_t+k>
        behind = gram.diagonal(-k)[begin - k : end - k]  # <PE_t, PE_t-k>
        diff = ahead - behind
        if diff.numel() == 0:
            continue
        gaps.append(diff)
    if not gaps:  # no offset left to compare (a 3-row table with the largest offset skipped)
        return 0.0
    every = torch.cat(gaps)
    if kind == "mean":
        return float(every.abs().mean())
    if kind == "signed":
        return float(every.max())
    return float(every.abs().max())


_GAP_MISTAKES = ("roll", "mean", "signed", "k = 1", "translation", "cosine", "wrap behind",
                 "k short", "short range", "t late")  # fmt: skip


@_memo  # the search for a telling table takes up to a second
def _gap_tables(seed: int) -> tuple:
    """q3's tables for ``seed`` and their descriptions: ((table, describe), ...)."""
    # Every draw holds, besides a sinusoidal table: a random one whose largest difference is
    # negative (so the sign matters); a ramp with an even T (its largest gaps use the largest
    # offset, where range(1, T // 2 + 1) runs into an offset with no position, and a wrapped
    # index pairs far rows); tables with a long last row and a long first row (the largest
    # gaps use t + k = T - 1, or t - k = 0); and the smallest table allowed, T = 3 (one offset,
    # one position: an empty range of k or of t gives 0).
    generator = _generator(seed, 3)
    if seed == 0:
        n_sin, d_sin, base = 24, 8, 10000.0
        n_rand, d_rand = 9, 5
        n_ramp, d_ramp = 10, 3
        d_tiny = 4
    else:
        n_sin = int(torch.randint(25, 41, (1,), generator=generator))
        d_sin = 2 * int(torch.randint(2, 9, (1,), generator=generator))
        base = _pick([100.0, 1000.0, 10000.0], generator)
        n_rand = 2 * int(torch.randint(5, 9, (1,), generator=generator)) + 1  # 11 .. 17, odd
        d_rand = int(torch.randint(3, 9, (1,), generator=generator))
        n_ramp, d_ramp = 2 * int(torch.randint(6, 9, (1,), generator=generator)), 2  # even
        d_tiny = int(torch.randint(5, 9, (1,), generator=generator))
    sin_table = sinusoidal_encoding(n_sin, d_sin, base)  # float32, as a learner would build it
    # A random table, its rows reversed if need be so that its largest difference is
    # negative (reversing the rows swaps ahead and behind, so it flips every difference).
    random_table = torch.randn(n_rand, d_rand, generator=generator)  # float32
    if _gap_variant(random_table.double(), "signed") == direction_gap(random_table):
        random_table = random_table.flip(0)
    while True:  # a long last row: the largest gaps sit at the last t of an offset k > 1
        last_row = torch.randn(n_rand, d_rand, generator=generator)  # float32
        last_row[-1] *= 4
        want = direction_gap(last_row)
        # Reversed, it has a long first row, where "t late" gives what "short range" gives
        # here: that number must differ from the answer and from the other slips' numbers.
        pe = last_row.double()
        short, late = (_gap_variant(pe, k) for k in ("short range", "t late"))
        others = [_gap_variant(pe, k) for k in ("k = 1", "k short")]
        others.append(_gap_variant(pe.flip(0), "signed"))
        if abs(late - want) < 1e-9 * want and all(
            abs(short - w) > 0.02 * want for w in (want, *others)
        ):
            break
    first_row = last_row.flip(0)  # a long first row: the largest gaps use t - k = 0
    ramp = torch.arange(n_ramp, dtype=torch.float32)[:, None].expand(n_ramp, d_ramp).clone()
    ramp = ramp + 0.1 * torch.randn(n_ramp, d_ramp, generator=generator)
    while True:  # T = 3: one offset (k = 1) and one position (t = 1)
        tiny = torch.randn(3, d_tiny, generator=generator)  # float32
        if direction_gap(tiny) > 0.5:
            break
    return (
        (sin_table, f"table = sinusoidal_encoding({n_sin}, {d_sin}, {base:g})"),
        (ramp, f"table = a ({n_ramp}, {d_ramp}) table whose row t is about (t, t, ...)"),
        (last_row, f"table = a random ({n_rand}, {d_rand}) table with a long last row"),
        (first_row, f"table = a random ({n_rand}, {d_rand}) table with a long first row"),
        (random_table, f"table = a random ({n_rand}, {d_rand}) table"),
        (tiny, f"table = a random (3, {d_tiny}) table, the smallest allowed"),
    )


_WRAPS = (
    "your pairs wrap around the ends of the table (torch.roll does that, and so does a negative "
    "index t - k, which counts from the end): near the ends t gets paired with rows that are not k "
    "steps away. Keep only the t with both t - k and t + k inside the table, t = k .. T - 1 - k."
)


class DirectionGap(Question):
    name, function, points, notebook = "q3", "direction_gap", 2, NOTEBOOK
    returns, references = FLOAT, ("posenc_lib.analysis.ch03_sinusoid.direction_gap",)
    title = "Measure whether a position table has a direction"
    hints = (
        "G = table @ table.T holds every dot product: G[t, s] = <PE_t, PE_s>.",
        "For each k from 1 to (T - 1) // 2, the positions t with both t - k and t + k in the table "
        "are t = k .. T - 1 - k. Compare G[t, t + k] with G[t, t - k] for those t.",
        "Keep the largest absolute difference over all k and t, and return it as a float. "
        "G.diagonal(k) lists G[t, t + k] for t = 0, 1, ...; slice it to the t you need.",
    )

    def cases(self, seed=0):
        return [Case((table.clone(),), describe) for table, describe in _gap_tables(seed)]

    def diagnose(self, case, value):
        (table,) = case.args
        got, problem = as_number(value, "The direction gap")
        if problem:
            return problem
        pe = table.double()
        want = direction_gap(pe)
        if abs(got - want) <= 1e-4 * abs(want) + 1e-5:
            return None
        if pe.shape[0] == 3 and abs(got) < 1e-9 and want > 1e-3:
            return "Your gap is 0 for a 3-row table, the smallest the question allows: there the one offset k = 1 and the one position t = 1 count (rows 0, 1, 2). Does your range of k, or of t, come out empty for T = 3?"
        if got == 0.0 or (abs(got) < 1e-9 and want > 1e-3):
            return "Your gap is 0 for a table that has a direction. If you compared <PE_t, PE_(t+k)> with <PE_(t+k), PE_t>: a dot product does not care about the order of its two vectors, so that difference is 0 for every table and proves nothing. Compare position t's dot product with the one k steps ahead and with the one k steps behind."
        mistakes = [
            ("roll", _WRAPS),
            ("mean", "the gap is the largest absolute difference, not the mean."),
            ("signed", "take the absolute value before the max: a difference of -0.3 counts as much as +0.3."),
            ("k = 1", "you only tried k = 1; try every offset k = 1 .. (T - 1) // 2."),
            ("translation", "you compared <PE_t, PE_(t+k)> with <PE_0, PE_k>: that tests whether the dot product depends on t. The question compares the neighbour k steps ahead with the one k steps behind, from the same t."),
            ("cosine", "you normalised the vectors (cosine similarity); the question asks about the plain dot product <PE_t, PE_s>."),
            ("k short", "your offsets stop one short: k runs from 1 up to (T - 1) // 2, included (for an odd T, range(1, T // 2) misses the last one)."),
            ("wrap behind", _WRAPS),
            ("short range", "your range of t stops one short: t runs from k up to T - 1 - k, included."),
            ("t late", "your range of t starts one late: t runs from k (where t - k = 0, the first row) up to T - 1 - k."),
        ]  # fmt: skip
        for kind, sentence in mistakes:
            wrong = _gap_variant(pe, kind)
            if abs(got - wrong) <= 1e-4 * abs(wrong) + 1e-5:
                return "Close, but " + sentence
        if got < 0:
            return "A gap is a size: it cannot be negative."
        return "Your gap differs from the largest |<PE_t, PE_(t+k)> - <PE_t, PE_(t-k)>| over t and k; check which pairs of rows you compare."


# -- q4: the smallest base -------------------------------------------------------------------------------


def _ratios(d: int, bases: tuple, last: int) -> torch.Tensor:
    """dist(k)^2 / dist(1)^2 for k = 2 .. last, a row per base: (B, last - 1) float64.

    The same formulas as ``sinusoid.confusion``: dist(k)^2 = D - 2 sum_i cos(k w_i), and
    dist(1)^2 = 4 sum_i sin(w_i / 2)^2.
    """
    b = torch.tensor(bases, dtype=F64)[:, None]  # (B, 1)
    omega = b ** (-torch.arange(0, d, 2, dtype=F64) / d)  # (B, D/2)
    step_sq = 4 * (omega / 2).sin().pow(2).sum(-1, keepdim=True)  # (B, 1)
    k = torch.arange(2, last + 1, dtype=F64)  # (K,)
    dist_sq = d - 2 * (k[None, :, None] * omega[:, None, :]).cos().sum(-1)  # (B, K)
    return dist_sq / step_sq


def _first_of(row: torch.Tensor) -> int | None:
    """The first offset k (row[0] is k = 2) with dist(k) <= dist(1), or None."""
    bad = (row <= 1).nonzero()
    return int(bad[0, 0]) + 2 if bad.numel() else None


@_memo
def _first_offset(d: int, base: float, limit: int) -> int | None:
    """The first offset k in 2 .. limit with dist(k) <= dist(1) for this base, or None."""
    return _first_of(_ratios(d, (base,), limit)[0])


def _unambiguous(n, d, base, exponent="2i/d", last=None):
    """True if dist(k) > dist(1) for every 2 <= k <= last (default n - 1), for the given exponent."""
    last = n - 1 if last is None else last
    if exponent == "i/d":  # base ** (-i / d) is the right table of base sqrt(base)
        base = math.sqrt(base)
    first = _first_offset(d, base, -(-(last + 1) // 1024) * 1024)  # n - 2, n - 1, n: one scan
    return first is None or first > last


_TIE = 3e-3  # dist(k)^2 / dist(1)^2 this close to 1 is a tie a float32 table could get wrong


def _sharp_firsts(d: int, bases: tuple, last: int) -> list[tuple[float, float]]:
    """The bases (of ``bases``) whose dist(k) crosses dist(1) clearly, with their first offset.

    (base, first offset in 2 .. last or inf), for each base far from a tie over k = 2 .. last:
    every ratio before the first offset above 1 + _TIE, the one at it below 1 - _TIE.
    """
    found = []
    for base, row in zip(bases, _ratios(d, bases, last), strict=True):
        first = _first_of(row)
        before = row if first is None else row[: first - 2]
        if (before.numel() == 0 or float(before.min()) > 1 + _TIE) and (
            first is None or float(row[first - 2]) < 1 - _TIE
        ):
            found.append((base, math.inf if first is None else float(first)))
    return found


def _base_list(kind, n, b0, d, sharp, generator):
    """One hidden q4 input (n, d, candidates) built from ``sharp`` (see _hidden_base_lists), or None.

    kind 0: b0 is first confused at offset n - 1; kind 1: at offset n; kind 2: no b0.
    """
    works = [b for b, f in sharp if f >= n]
    fails = [b for b, f in sharp if f < n]
    if kind == 0:
        answer = next((b for b in works if b > b0), None)
        f0 = n - 1
        below = [b for b, f in sharp if b < b0 and f < f0]  # they fail for n - 2 too
    else:
        answer = b0 if kind == 1 else next(iter(works), None)
        below = [b for b in fails if answer is not None and b < answer]
    if answer is None or not below:
        return None
    trap = [b for b in fails if b > answer and sum(w > b for w in works) >= 2]
    if not trap:
        return None
    c = trap[int(torch.randint(len(trap), (1,), generator=generator))]
    p1, p2 = [b for b in works if b > c][:2]
    picks = torch.randperm(len(below), generator=generator)[:2].tolist()
    chosen = [below[j] for j in picks] + ([b0] if kind == 0 else []) + [answer, c, p1, p2]
    chosen = list(dict.fromkeys([*chosen, 1000.0]))
    for _ in range(20):  # an order whose first working candidate is p2
        order = torch.randperm(len(chosen), generator=generator).tolist()
        listed = tuple(chosen[j] for j in order)
        if next(b for b in listed if b in works or b == 1000.0) == p2:
            break
    else:
        return None
    # the i/d table's pick must differ from the answer, and no base sits at its own index
    half = next((b for b in sorted(listed) if _unambiguous(n, d, b, exponent="i/d")), None)
    if half == answer or any(float(i) == b for i, b in enumerate(listed)):
        return None
    return n, d, listed


@_memo
def _hidden_base_lists(seed: int) -> tuple:
    """q4's hidden inputs: ((n, d, candidates), ...), three of them, for ``seed``.

    Every draw holds a case whose n puts a candidate's first confusion exactly at the last offset
    n - 1 (stopping one offset short takes it), one whose answer's first confusion is at offset n
    (one offset too many rejects it), and one with n drawn freely. In each: smaller candidates that
    fail, a failing candidate above the answer and two passing ones above that (the first of them
    is where "a larger base is always safer" stops), 1000 (the 2 pi * base rule's pick), in an order
    whose first working candidate is neither the answer nor the monotone pick nor 1000.
    """
    generator = _generator(seed, 4)
    cases = []
    while len(cases) < 3:
        d = _pick([16, 20], generator)
        drawn = sorted(
            {round(1.6 + 6.4 * float(u), 3) for u in torch.rand(30, generator=generator)}
        )
        sharp = _sharp_firsts(d, (*drawn, 1000.0), 6001)
        if (1000.0, math.inf) not in sharp:
            continue
        sharp = sharp[:-1]  # 1000 goes in every list
        while len(cases) < 3:  # as many cases as this draw gives
            kind = len(cases)  # 0: confused at n - 1, 1: at n, 2: n drawn freely
            if kind < 2:
                starts = [(int(f) + 1 - kind, b) for b, f in sharp if 1500 <= f <= 5999]
            else:
                starts = [(int(torch.randint(1500, 6001, (1,), generator=generator)), None)]
            order = torch.randperm(len(starts), generator=generator).tolist()
            made = next(
                (c for j in order if (c := _base_list(kind, *starts[j], d, sharp, generator))),
                None,
            )
            if made is None:
                break  # draw again
            cases.append(made)
    return tuple(cases)


_SAME_BASE = 1e-6  # relative: a candidate read back from float32 (error 6e-8) is still itself


def _first(candidates, test):
    return next((b for b in candidates if test(b)), None)


class SmallestBase(Question):
    name, function, points, notebook = "q4", "smallest_base", 2, NOTEBOOK
    returns, references = FLOAT, ("posenc_lib.analysis.ch03_sinusoid.smallest_unambiguous_base",)
    title = "Find the smallest base that keeps every position unambiguous"
    timeout = 15.0  # a correct answer that builds a table per candidate needs a few seconds
    hints = (
        "Positions are unambiguous when dist(k) = ||PE_(t+k) - PE_t|| is larger than dist(1) for every "
        "offset k = 2 .. n_positions - 1. dist does not depend on t, so compare row 0 with every row.",
        "For one base: build the table (your q1), distance = (table - table[0]).norm(dim=-1), then "
        "test (distance[2:] > distance[1]).all(). No (T, T) matrix needed.",
        "Sort the candidates (the lists come in any order), try them from the smallest up and return "
        "the first that passes. Do not stop at the first failure after a pass, and do not bisect: a "
        "larger base is not always safer.",
    )

    def cases(self, seed=0):
        if seed == 0:
            triples = [
                (4096, 64, (1.2, 1.4, 1.6, 1.8, 2.5, 10.0, 100.0, 700.0, 1000.0, 10000.0, 1e5)),
                (1000, 16, (2.5, 1.8, 1.5, 5.0, 1.7, 1.6)),  # unsorted: the list order misleads
                (1891, 16, (1.2, 1.5, 2.0, 3.0, 5.0, 100.0)),
                (1892, 16, (1.5, 2.0, 3.0, 5.0, 100.0)),
            ]
        else:
            triples = _hidden_base_lists(seed)
        return [
            Case(
                (n, d, list(c)),
                f"n_positions = {n}, d_model = {d}, candidates = {[f'{b:g}' for b in c]}",
            )
            for n, d, c in triples
        ]

    def _judge(self, cases, outcomes):
        status, message = super()._judge(cases, outcomes)
        if "returned None" in message:
            message += " (If no candidate passed your test: every list here holds one that works. Start the offsets at k = 2, so that no position is compared with itself or its neighbour.)"
        return status, message

    def diagnose(self, case, value):
        n, d, candidates = case.args
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            if value not in candidates and 0 <= value < len(candidates):
                return "You returned a position in the list; return the base itself (an element of candidates)."
        got, problem = as_number(value, "The base")
        if problem:
            return problem
        # float32 rounding (torch.tensor(candidates)) moves 1.6 to 1.600000023841858: still 1.6
        match = [b for b in candidates if math.isclose(got, b, rel_tol=_SAME_BASE)]
        if not match:
            return f"Return one of the candidates; {got:g} is not in the list."
        got = match[0]
        ordered = sorted(candidates)
        want = _first(ordered, lambda b: _unambiguous(n, d, b))
        if got == want:
            return None
        passing = [b for b in ordered if _unambiguous(n, d, b)]
        last_fail = max((b for b in ordered if b not in passing), default=None)
        monotone = _first(ordered, lambda b: last_fail is None or b > last_fail)
        mistakes = [
            (_first(ordered, lambda b: 2 * math.pi * b >= n), "you used the popular wavelength rule, 2 pi * base >= n_positions. The lecture measured it: the longest wavelength is not a uniqueness bound. Test the criterion itself, dist(k) > dist(1) for k = 2 .. n_positions - 1."),
            (_first(ordered, lambda b: 2 * math.pi * b ** ((d - 2) / d) >= n), "you asked for the longest wavelength, 2 pi * base ** ((d-2)/d), to cover n_positions. The lecture measured that this is not a uniqueness bound: test dist(k) > dist(1) for k = 2 .. n_positions - 1."),
            (_first(ordered, lambda b: b >= n), "you used the rule 'the base must exceed the context length'; the lecture shows it is not needed for unambiguous positions. Test dist(k) > dist(1) for k = 2 .. n_positions - 1."),
            # checked early: a learner whose q1 passed has the right table, so an answer that is
            # the first working candidate in list order most likely skipped the sort
            (_first(candidates, lambda b: _unambiguous(n, d, b)), "you returned the first candidate that works in the list's order; this list is not sorted, and a smaller candidate further on works too. Sort the candidates first (or keep the smallest that works)."),
            (_first(ordered, lambda b: _unambiguous(n + 1, d, b)), "you tested one offset too many: positions run 0 .. n_positions - 1, so the offsets run up to n_positions - 1, not n_positions."),
            (_first(ordered, lambda b: _unambiguous(n, d, b, last=n - 2)), f"your search stopped before the last offset: with your base, the only offset as close as neighbours is k = n_positions - 1 = {n - 1} (positions 0 and {n - 1}), and the offsets run up to it, included."),
            (monotone, "you assumed that once a base works every larger one does, and returned the first candidate after the last failure. A larger base is not always safer: a smaller candidate already keeps every position unambiguous."),
            (_first(ordered, lambda b: _unambiguous(n, d, b, exponent="i/d")), "your table's frequencies use base ** (-i / d_model); pair i turns at base ** (-2i / d_model) (q1)."),
            (ordered[-1], "you returned the largest candidate; the question asks for the smallest one that keeps every position unambiguous."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if wrong is not None and got == wrong:
                return "Close, but " + sentence
        if not _unambiguous(n, d, got):
            k = confusion(n, d, got).first_offset
            return f"With base {got:g}, positions {k} steps apart are at least as close as neighbours (dist({k}) <= dist(1)), so this base does not keep every position unambiguous."
        return "Your base keeps every position unambiguous, but a smaller candidate does too: return the smallest."


q1, q2, q3, q4 = SinusoidalTable(), ShiftMatrix(), DirectionGap(), SmallestBase()
QUESTIONS = (q1, q2, q3, q4)
