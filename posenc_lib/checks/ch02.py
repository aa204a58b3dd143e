"""Chapter 2's exercises: the binary code, how uneven its steps are, the normalized code's
dependence on the sequence length, and how fast a real learned table's similarity fades.

    from posenc_lib.checks.ch02 import q1, q2, q3, q4
    q1.check(binary_encoding); q1.hint(); q1.solution()

The references are the library's own functions (``absolute.binary_encoding``,
``naive.neighbour_distances``, ``learned_table.first_offset_below``); the sentences name the usual
mistakes by recomputing them.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import torch

from posenc_lib import absolute
from posenc_lib.analysis import ch02_naive as naive
from posenc_lib.analysis import learned_table
from posenc_lib.checks import (
    FLOAT,
    INT,
    TENSOR,
    Case,
    Question,
    TooMany,
    as_int,
    as_number,
    as_tensor,
    close,
)

NOTEBOOK = "02_naive_encodings.ipynb"


def _generator(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 7919 + salt)


def _randint(low: int, high: int, generator: torch.Generator) -> int:
    """A whole number in low..high - 1."""
    return int(torch.randint(low, high, (1,), generator=generator))


# -- q1: the binary code ------------------------------------------------------------------------------


def _bits(positions: torch.Tensor, n_bits: int, lsb_first: bool = True) -> torch.Tensor:
    """Bits 0..n_bits-1 of each position as 0.0/1.0 float64, (T, n_bits); MSB first if asked."""
    j = torch.arange(n_bits)  # (n_bits,)
    table = ((positions[:, None] >> j[None, :]) & 1).double()  # (T, n_bits), LSB first
    return table if lsb_first else table.flip(-1)


class BinaryCode(Question):
    name, function, points, notebook = "q1", "binary_encoding", 3, NOTEBOOK
    returns, references = TENSOR, ("posenc_lib.absolute.binary_encoding",)
    title = "Build the binary position code"
    hints = (
        "Row t holds the binary digits of t. Bit j of t is (t >> j) & 1, or (t // 2**j) % 2.",
        "Build a column of positions, torch.arange(n_positions)[:, None] (T, 1), and a row of bit "
        "numbers, torch.arange(n_bits)[None, :] (1, n_bits): broadcasting gives all T x n_bits bits.",
        "Column 0 is the least significant bit (t % 2). Finish with .float() so the table holds "
        "0.0 and 1.0, like any other position table.",
    )

    def cases(self, seed=0):
        if seed == 0:
            sizes = [(6, 3), (10, 5), (16, 4), (3, 6), (70, 8)]  # past 16 and past 64 positions
        else:  # each draw: a full table, one with spare bits, one with just enough bits
            generator = _generator(seed, 1)
            n_bits = _randint(5, 8, generator)
            sizes = [(2**n_bits, n_bits)]  # n_positions = 2**n_bits: the last row is all ones
            n_pos = _randint(20, 101, generator)
            sizes.append((n_pos, (n_pos - 1).bit_length() + _randint(1, 4, generator)))
            n_pos = _randint(20, 101, generator)
            while n_pos & (n_pos - 1) == 0:  # not a power of two
                n_pos = _randint(20, 101, generator)
            sizes.append((n_pos, (n_pos - 1).bit_length()))
            sizes.append((100, 9))  # fixed: past 64 positions (bit 6 used), n_bits >= 8
        return [Case(size, f"n_positions = {size[0]}, n_bits = {size[1]}") for size in sizes]

    def diagnose(self, case, value):
        n_pos, n_bits = case.args
        t = torch.arange(n_pos)  # (T,)
        if isinstance(value, torch.Tensor) and value.dim() == 2:
            rows, cols = value.shape
            if (rows, cols) == (n_bits, n_pos) and n_pos != n_bits:
                return f"Your table has shape ({n_bits}, {n_pos}): one row per bit. It should be (n_positions, n_bits) = ({n_pos}, {n_bits}), one row per position."
            if rows == n_pos and cols != n_bits:
                if cols == (n_pos - 1).bit_length():
                    return f"Your table has {cols} columns: only as many bits as the largest position needs. It should have n_bits = {n_bits} columns, one per bit; bits above the largest position's are 0."
                return f"Your table has {cols} columns; it should have n_bits = {n_bits}, one per bit (column j holds bit j of t)."
        got, problem = as_tensor(value, "The table", (n_pos, n_bits))
        if problem:
            return problem
        want = _bits(t, n_bits)
        if close(got, want):
            return None
        mistakes = [
            (_bits(t, n_bits, lsb_first=False), "your bits are in reverse order (most significant first). Column 0 should be the least significant bit, t % 2, the one that flips at every step."),
            (_bits(t + 1, n_bits), "row t holds the bits of t + 1: positions count from 0, so row 0 is all zeros."),
            (_bits(t + 1, n_bits, lsb_first=False), "row t holds the bits of t + 1, and the bits are most significant first. Positions count from 0 (row 0 is all zeros), and column 0 is t % 2."),
            (2 * want - 1, "your table holds -1 and +1; this question asks for 0.0 and 1.0."),
            (_bits(t >> 1, n_bits), "column j holds bit j + 1 of t: column 0 should be bit 0, t % 2, which changes at every step."),
            (1 - want, "your bits are inverted (1 where the bit is 0): row 0 should be all zeros."),
            (want * 2.0 ** torch.arange(n_bits), "you kept the bit's place value: t & 2**j is 0 or 2**j, not 0 or 1. Shift it down by j places so that every entry is a bit."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if close(got, wrong):
                return "Close, but " + sentence
        if not bool(((got == 0) | (got == 1)).all()):
            return "Every entry should be a bit, 0.0 or 1.0."
        return "Some rows are not the binary digits of their position: column j of row t should hold bit j of t, with column 0 the least significant bit (q1.hint() shows how to get one bit)."


# -- q2: how uneven are the steps? --------------------------------------------------------------------


def _steps(table: torch.Tensor, norm: str = "euclidean", wrap: bool = False) -> torch.Tensor:
    """Neighbour steps of a (T, D) float64 table, (T-1,) or (T,) with the wrap-around step T-1 -> 0."""
    rows = torch.cat([table, table[:1]]) if wrap else table  # (T or T+1, D)
    diff = rows[1:] - rows[:-1]  # (T-1 or T, D)
    if norm == "hamming":
        return (diff != 0).sum(-1).double()
    if norm == "squared":
        return diff.pow(2).sum(-1)
    if norm == "l1":
        return diff.abs().sum(-1)
    return diff.norm(dim=-1)


def _ratio(distances: torch.Tensor) -> float:
    return float(distances.max() / distances.min())


def _random_walk(
    n_pos: int, dim: int, generator: torch.Generator, longest_last: bool = True
) -> torch.Tensor:
    """A (T, D) table whose rows take random steps; if asked, the last step is the longest and the
    first the shortest (so leaving out either end changes the ratio). float32.

    At each step about a third of the coordinates stay where they are (never all of them), so the
    number of entries that change varies from step to step, as in a binary table: counting them
    (the Hamming distance) gives a ratio of its own, not 1.0.
    """
    steps = torch.randn(n_pos - 1, dim, generator=generator, dtype=torch.float64)  # (T-1, D)
    still = torch.rand(n_pos - 1, dim, generator=generator) < 1 / 3  # (T-1, D) coordinates kept
    still[torch.arange(n_pos - 1), torch.randint(dim, (n_pos - 1,), generator=generator)] = False
    steps[still] = 0.0  # every step still moves at least one coordinate
    lengths = steps.norm(dim=-1)  # (T-1,)
    if longest_last:
        steps[-1] *= 1.5 * float(lengths.max()) / float(lengths[-1])  # the longest step is the last
        steps[0] *= 0.7 * float(lengths[1:-1].min()) / float(lengths[0])  # the shortest the first
    start = torch.randn(1, dim, generator=generator, dtype=torch.float64)  # (1, D)
    return torch.cat([start, start + steps.cumsum(0)]).float()  # (T, D)


def _wandering_walk(seed: int, generator: torch.Generator) -> list[Case]:
    """A float64 random walk whose longest and shortest steps both lie inside the table (neither
    the first step nor the last), so an answer that reads only the ends of the table fails."""
    n_pos, dim = (9, 2) if seed == 0 else (_randint(10, 30, generator), _randint(2, 9, generator))
    while True:
        table = _random_walk(n_pos, dim, generator, longest_last=False).double()  # (T, D)
        steps = _steps(table)  # (T-1,)
        inside = range(1, n_pos - 2)
        if int(steps.argmax()) in inside and int(steps.argmin()) in inside:
            if float(steps.max()) > 1.2 * float(steps[[0, -1]].max()):
                return [
                    Case((table,), f"table = a random walk of shape {tuple(table.shape)}, float64")
                ]


def _unevenness_mistakes(table: torch.Tensor) -> list[tuple[float, str]]:
    """The usual wrong answers for one table, each with the sentence that names it."""
    steps = _steps(table)
    pairs = torch.cdist(table, table)[torch.triu_indices(len(table), len(table), 1).unbind()]
    return [
        (_ratio(_steps(table, "hamming")), "you counted the entries that change (the Hamming distance); measure each step by its Euclidean length, ||PE[t+1] - PE[t]||."),
        (_ratio(_steps(table, "squared")), "you compare squared lengths; take the square root (the Euclidean length, .norm()) before the ratio."),
        (_ratio(_steps(table, "l1")), "you measure each step by the sum of absolute differences (L1); use the Euclidean length, .norm()."),
        (1 / _ratio(steps), "your ratio is upside down: divide the longest step by the shortest, so that a value above 1 means uneven."),
        (float(steps.max() - steps.min()), "you subtract the shortest step from the longest; the question asks for their ratio."),
        (_ratio(steps[:-1]) if len(steps) > 1 else math.nan, "you left out the last pair: the steps run from t = 0 to t = T - 2 (T - 1 pairs), and (T-2, T-1) is one of them."),
        (_ratio(steps[1:]) if len(steps) > 1 else math.nan, "you left out the first pair, (0, 1): there are T - 1 pairs, t = 0 to T - 2."),
        (_ratio(_steps(table, wrap=True)), "you included a step from the last row back to the first; position T - 1 has no next neighbour."),
        (_ratio(_steps(table.T.contiguous())), "you measured steps between columns; the rows are the positions, so compare row t with row t + 1."),
        (float(steps.max() / steps.mean()), "you divided the longest step by the mean step; the question asks for the longest over the shortest."),
        (_ratio(pairs), "you compared all pairs of positions, not neighbours: only pairs (t, t + 1)."),
        (_ratio((table[1:] - table[:-1]).norm(dim=0)), "you took the norm over positions (dim=0), one number per column; take it along each row, dim=-1, one length per step t -> t + 1."),
        (1.0, "your ratio is 1.0, as if every step had the same length, and these steps do not. A .norm() without dim gives one norm of the whole (T-1, D) difference matrix, whose max / min is 1; pass dim=-1 for one length per step."),
    ]  # fmt: skip


@dataclass
class _LaterCase(Case):
    """A case that knows the tables of the cases judged before it (which the answer passed)."""

    earlier: tuple = ()


def _explains(wrong_on_earlier: list[float], right_on_earlier: list[float]) -> bool:
    """A mistake can explain a wrong answer only if it also gives the right value on the cases
    the answer passed (on 0/1 tables, two different slips often give the same ratio)."""
    return all(
        abs(w - r) <= 1e-4 * r for w, r in zip(wrong_on_earlier, right_on_earlier, strict=True)
    )


class Unevenness(Question):
    name, function, points, notebook = "q2", "neighbour_unevenness", 3, NOTEBOOK
    returns = FLOAT
    references = (
        "posenc_lib.analysis.ch02_naive.unevenness",
        "posenc_lib.analysis.ch02_naive.neighbour_distances",
    )
    title = "Measure how uneven the neighbour steps are"
    hints = (
        "The step from position t to t + 1 is the Euclidean length of the difference of two "
        "neighbouring rows, ||table[t+1] - table[t]||.",
        "table[1:] - table[:-1] has shape (T-1, D): row t is the step from t to t + 1. Its norm "
        "along the last axis, .norm(dim=-1), gives all T - 1 step lengths at once.",
        "Return the longest step divided by the shortest, as a float: float(steps.max() / "
        "steps.min()).",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 2)
        if seed == 0:
            walk = (7, 3)
            binary = [(9, 4), (33, 6)]
        else:
            walk = (_randint(10, 30, generator), _randint(3, 9, generator))
            n_pos = _randint(40, 200, generator)
            binary = [(n_pos, (n_pos - 1).bit_length() + _randint(0, 3, generator))]
        while True:  # a walk on which every usual mistake gives its own value
            table = _random_walk(*walk, generator)
            right = _ratio(_steps(table.double()))
            values = [right] + [v for v, _ in _unevenness_mistakes(table.double())]
            if all(abs(a - b) > 1e-2 * abs(b) for i, a in enumerate(values) for b in values[:i]):
                break
        cases = [Case((table,), f"table = a random walk of shape {tuple(table.shape)}")]
        cases += _wandering_walk(seed, generator)
        for n_pos, d_model in binary:
            cases.append(
                Case(
                    (absolute.binary_encoding(n_pos, d_model),),
                    f"table = binary_encoding({n_pos}, {d_model})",
                )
            )
        sinusoid = (12, 4) if seed == 0 else (_randint(20, 60, generator), 8)
        cases.append(
            Case(
                (absolute.sinusoidal_encoding(*sinusoid),),
                f"table = sinusoidal_encoding{sinusoid} (all its steps have the same length)",
            )
        )
        pair = torch.randn(2, 3 if seed == 0 else _randint(4, 9, generator), generator=generator)
        cases.append(
            Case((pair,), f"table = two random rows, shape {tuple(pair.shape)} (one step)")
        )
        return [
            _LaterCase(case.args, case.describe, tuple(c.args[0] for c in cases[:i]))
            for i, case in enumerate(cases)
        ]

    def diagnose(self, case, value):
        (table,) = case.args
        earlier = [t.double() for t in getattr(case, "earlier", ())]
        right_before = [_ratio(_steps(t)) for t in earlier]
        mistakes_before = [[v for v, _ in _unevenness_mistakes(t)] for t in earlier]
        table = table.double()
        if (
            isinstance(value, torch.Tensor)
            and value.dim() == 1
            and value.numel() == len(table) - 1 > 1
        ):
            return "You returned the T - 1 step lengths; reduce them to one number, the longest divided by the shortest."
        got, problem = as_number(value, "The unevenness")
        if problem:
            return problem
        want = _ratio(naive.neighbour_distances(table))
        if abs(got - want) <= 1e-4 * want:
            return None
        for i, (wrong, sentence) in enumerate(_unevenness_mistakes(table)):
            before = [values[i] for values in mistakes_before]
            if abs(got - wrong) <= 1e-4 * abs(wrong) + 1e-9 and _explains(before, right_before):
                return "Close, but " + sentence
        steps = _steps(table)  # (T-1,)
        last_by_first = [float(_steps(t)[-1] / _steps(t)[0]) for t in earlier]
        if abs(got - float(steps[-1] / steps[0])) <= 1e-4 * want and _explains(
            last_by_first, right_before
        ):
            return "Close, but you divided the last step by the first; the longest and the shortest steps can be anywhere along the table: take the max and the min of all T - 1 steps."
        if got < 1:
            return "The longest step divided by the shortest cannot be below 1."
        return "Your ratio differs from the longest neighbour step divided by the shortest; compute the T - 1 step lengths ||table[t+1] - table[t]|| first, then their max / min."


# -- q3: the normalized code's length dependence ---------------------------------------------------


def _gaps(i, j, lengths, divide_by=lambda n: n - 1, signed=False):
    """|i - j| / divide_by(T) for each T, float64 (len(lengths),); j - i if signed."""
    n = torch.tensor(lengths, dtype=torch.float64)  # (L,)
    offset = float(j - i) if signed else float(abs(i - j))
    return offset / divide_by(n)


class NormalizedGap(Question):
    name, function, points, notebook = "q3", "normalized_gap", 2, NOTEBOOK
    returns, references = TENSOR, ()  # one division: the library has nothing closer than that
    title = "The same two tokens, sentences of different lengths"
    hints = (
        "Write down the codes of token i and token j in a sequence of T tokens, then subtract one "
        "from the other. By hand first: tokens 2 and 3 of a 5-token sentence have codes 0.5 and "
        "0.75, a gap of 0.25.",
        "The two codes share their denominator, so their difference is a single fraction. A gap is "
        "a distance: it must not depend on which of the two tokens comes first.",
        "Make a float tensor of the lengths, torch.tensor(lengths, dtype=torch.float32), shape "
        "(len(lengths),), and divide abs(i - j) by that tensor minus 1: one gap per length.",
    )

    def cases(self, seed=0):
        if seed == 0:
            # The first case tells every usual mistake apart: i, j, |i - j| and |i - j| + 1 all
            # differ (in (2, 3), the count |i - j| + 1 = 2 would look like the code of token i).
            # The third: the shortest length that holds both tokens (8 for token 7), lengths out
            # of order and one repeated; the fourth: a single length.
            triples = [
                (6, 2, [8, 20, 100]),
                (2, 3, [5, 500]),
                (0, 7, [64, 8, 1024, 16, 64]),
                (13, 4, [2000]),
            ]
        else:
            generator = _generator(seed, 3)
            triples = []
            for _ in range(3):
                i = j = 0
                while len({i, j, abs(i - j), abs(i - j) + 1}) < 4:  # mistakes told apart, i != j
                    i, j = _randint(1, 30, generator), _randint(1, 30, generator)
                smallest = max(i, j) + 1
                lengths = sorted({smallest + _randint(0, 5000, generator) for _ in range(4)})
                triples.append((i, j, lengths))
            triples[0] = (max(triples[0][:2]), min(triples[0][:2]), triples[0][2])  # one i > j
            # One case holds the shortest length that fits both tokens, with the lengths out of
            # order and one of them twice; one case has a single length.
            i, j, lengths = triples[1]
            lengths = [max(i, j) + 1, *lengths[::-1], lengths[-1]]
            triples[1] = (
                i,
                j,
                [lengths[k] for k in torch.randperm(len(lengths), generator=generator)],
            )
            i, j, _ = triples[2]
            triples.append((j, i, [max(i, j) + 1 + _randint(20, 5000, generator)]))
        return [Case(c, f"i = {c[0]}, j = {c[1]}, lengths = {c[2]}") for c in triples]

    def diagnose(self, case, value):
        i, j, lengths = case.args
        if isinstance(value, TooMany):
            return "Return a tensor of gaps; your function returned an endless iterator."
        if isinstance(value, numbers.Real) or (
            isinstance(value, torch.Tensor) and value.dim() == 0
        ):
            return f"Return one gap per length, a tensor of shape ({len(lengths)},), not a single number."
        if isinstance(value, torch.Tensor) and value.dtype in (torch.float16, torch.bfloat16):
            return f"Your gaps are {value.dtype}, which keeps only about {3 if value.dtype == torch.float16 else 2} significant digits: too coarse for sequences of thousands of tokens, where dividing by T instead of T - 1 changes a gap in its fourth digit. Return float32 or float64, as the question asks."
        if (
            isinstance(value, torch.Tensor)
            and value.dim() == 1
            and len(lengths) != len(set(lengths)) == value.numel()
        ):
            return "You returned one gap per distinct length; `lengths` may hold a length twice, and each entry of `lengths` gets its own gap, in the same order."
        got, problem = as_tensor(value, "The gaps", (len(lengths),))
        if problem:
            return problem
        # Tight: with T in the thousands, dividing by T instead of T - 1 changes a gap by 1 / T.
        want = _gaps(i, j, lengths)
        if close(got, want, rtol=1e-5, atol=1e-9):
            return None
        n = torch.tensor(lengths, dtype=torch.float64)
        mistakes = [
            (_gaps(i, j, lengths, lambda n: n), "you divide by T; the normalized code divides by T - 1, so that the last token, T - 1, lands exactly on 1."),
            (_gaps(i, j, lengths, lambda n: n + 1), "you divide by T + 1; the normalized code divides by T - 1, so that the last token, T - 1, lands exactly on 1."),
            (_gaps(i, j, lengths, signed=True), "a gap is a distance: it must not depend on which token comes first, so take the absolute value (here i > j)."),
            (_gaps(i, j, lengths, lambda n: torch.ones_like(n)), "you did not normalize: your gaps are counts of tokens, the same for every length, but the codes (and so their gap) are fractions of each sequence."),
            (j / (n - 1), "you returned the code of token j alone; the gap is the difference between the codes of tokens i and j."),
            (i / (n - 1), "you returned the code of token i alone; the gap is the difference between the codes of tokens i and j."),
            ((abs(i - j) + 1) / (n - 1), "you counted the tokens from i to j including both ends, one too many; the gap is the difference between the two codes."),
            (abs(i - j) / n - 1, "division comes before subtraction, so `x / lengths - 1` means `(x / lengths) - 1`: put the denominator in parentheses."),
            ((n - 1) / max(abs(i - j), 1), "your ratio is upside down: the gap between two codes in [0, 1] is at most 1."),
            (torch.full_like(n, abs(i - j) / (lengths[0] - 1)), "your gap is the same for every length: compute it with each T in `lengths`."),
            (_gaps(i, j, sorted(lengths)), "your gaps are in another order than `lengths`: entry m is the gap for lengths[m], and `lengths` need not be sorted."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if close(got, wrong, rtol=1e-5, atol=1e-9):
                return "Close, but " + sentence
        if bool((got < 0).any()):
            return "A gap is a distance: it cannot be negative."
        return "Your gaps differ from the difference between the codes of tokens i and j, one per length T: work out both codes for one length by hand and compare."


# -- q4: where does a learned table's similarity fade? ------------------------------------------------


def _first(curve: torch.Tensor, below) -> int:
    """The first offset k >= 1 where below(curve[k]) holds, else len(curve). curve: (T,)."""
    hits = below(curve[1:]).nonzero()  # offsets k - 1
    return int(hits[0]) + 1 if hits.numel() else int(curve.shape[0])


def _diagonals(matrix: torch.Tensor, reduce) -> torch.Tensor:
    """reduce(diagonal k) for k = 0 .. T-1 of a (T, T) matrix: (T,)."""
    return torch.stack([reduce(matrix.diagonal(k)) for k in range(matrix.shape[0])])


_ONE_TOO_LARGE = "your offset is one too large: return the first k whose mean is below the threshold itself, not the k after it (a loop that adds 1 after the test, or an index counted from 1 into a list that already starts at k = 1)."
_FROM_ZERO = "your offset is one too small: offsets count from 1 (the first pair of neighbours is k = 1), so return k itself, not its index in a list that starts at k = 1."
_AT_THRESHOLD = "you stopped at an offset whose mean equals the threshold exactly (the sliding-windows table has one); the question asks for the first mean strictly below it (<, not <=)."


def _offset_mistakes(table: torch.Tensor, threshold: float) -> dict[str, int]:
    """The usual wrong answers for one (T, D) float64 table: the sentence naming each -> its answer.

    The order is the order in which ``diagnose_all`` tries them.
    """
    n = table.shape[0]
    cosines = learned_table.cosine_matrix(table)  # (T, T)
    dots = table @ table.T  # (T, T): <P_s, P_t>
    lengths = table.norm(dim=-1)  # (T,)
    mean_dots = _diagonals(dots, torch.mean)  # (T,)
    curve = _diagonals(cosines, torch.mean)  # (T,)
    right = _first(curve, lambda c: c < threshold)
    at_or_above = (curve[1:] >= threshold).nonzero()  # offsets k - 1
    last = int(at_or_above[-1]) + 1 if at_or_above.numel() else 0
    distances = _diagonals(torch.cdist(table, table), torch.mean)  # (T,)
    by_t = torch.stack([cosines.diagonal(k).sum() / n for k in range(n)])  # (T,)
    centred = learned_table.cosine_matrix(table - table.mean(0))  # (T, T)
    return {
        _FROM_ZERO: right - 1,
        _ONE_TOO_LARGE: right + 1,
        _AT_THRESHOLD: _first(curve, lambda c: c <= threshold),
        "you returned the last offset whose mean is still at or above the threshold. The curve dips below the threshold and comes back above it; the question asks for the first offset below.": last,
        "you returned the offset from which the curve stays below the threshold for good; it first dips below earlier. Return the first offset whose mean is below.": last + 1,
        "you took the largest cosine at each offset (max over t); the curve is the mean over t of cos(P_t, P_t+k).": _first(_diagonals(cosines, torch.max), lambda c: c < threshold),
        "you stopped at the first offset where any single pair drops below (min over t); average the T - k cosines at each offset first, then compare the mean.": _first(_diagonals(cosines, torch.min), lambda c: c < threshold),
        "you took the median of the cosines at each offset; the curve is their mean over t.": _first(_diagonals(cosines, torch.median), lambda c: c < threshold),
        "you averaged |cos(P_t, P_t+k)|; keep the sign: a negative cosine (the rows point apart) must pull the mean down.": _first(_diagonals(cosines.abs(), torch.mean), lambda c: c < threshold),
        "you averaged raw dot products <P_t, P_t+k>; divide each by ||P_t|| ||P_t+k|| to get the cosine, which does not depend on the rows' lengths.": _first(mean_dots, lambda c: c < threshold),
        "you divided the dot products by the mean squared row length, one number for the whole table; divide each <P_t, P_t+k> by ||P_t|| ||P_t+k||, that pair's own lengths.": _first(mean_dots / lengths.pow(2).mean(), lambda c: c < threshold),
        "you divided the mean dot product by the mean of ||P_t|| ||P_t+k|| (a ratio of means); take each pair's cosine first, then the mean of the cosines.": _first(mean_dots / _diagonals(torch.outer(lengths, lengths), torch.mean), lambda c: c < threshold),
        "you compared every position with position 0 only; the curve averages cos(P_t, P_t+k) over every start t = 0 .. T-1-k.": _first(cosines[0], lambda c: c < threshold),
        "you measured the distance ||P_t - P_t+k|| (and waited for it to pass the threshold), not the cosine similarity cos(P_t, P_t+k).": _first(distances, lambda d: d > threshold),
        "you subtracted the mean row before taking cosines; measure the rows as they are, with no centring.": _first(_diagonals(centred, torch.mean), lambda c: c < threshold),
        "you divided each offset's sum by T; offset k has only T - k pairs (t = 0 .. T-1-k), so divide by T - k (the mean of that diagonal).": _first(by_t, lambda c: c < threshold),
        "you compared with 0.5 whatever the threshold; use the threshold the function is given.": _first(curve, lambda c: c < 0.5),
    }  # fmt: skip


def _smooth_table(n_pos: int, dim: int, generator: torch.Generator) -> torch.Tensor:
    """A (T, D) float32 table like a trained one. float32.

    Three rotations (a fast one, whose weight grows along the table, makes the similarity curve
    ripple and differ from row 0's; a middle one; a slow drift), a shared offset (so centring
    matters), rows whose lengths swell and shrink (so raw dot products differ from cosines), a
    little noise (so the max and min over t differ from the mean), a few odd rows, three times
    longer and pointing the other way (like MiniLM's row 0: they pull the mean of the cosines down
    but not their median, and weigh more in a ratio of means), scaled to a mean squared row
    length between 1 and 1.6 (so distances and dot products cross the threshold elsewhere).
    """
    t = torch.arange(n_pos, dtype=torch.float64)[:, None]  # (T, 1)

    def uniform(low, high):
        return low + (high - low) * float(torch.rand(1, generator=generator, dtype=torch.float64))

    periods = torch.tensor(
        [uniform(4.5, 8.5), uniform(12, 30), n_pos * uniform(3, 8)], dtype=torch.float64
    )  # (3,)
    weights = torch.tensor([uniform(0.5, 0.9), uniform(0.6, 1.0), 1.0], dtype=torch.float64)
    growth = torch.ones(n_pos, 3, dtype=torch.float64)  # (T, 3)
    growth[:, 0] = 0.2 + 0.8 * t[:, 0] / n_pos  # the fast rotation grows along the table
    angles = 2 * math.pi * (t / periods + torch.rand(3, generator=generator, dtype=torch.float64))
    waves = weights * growth  # (T, 3) radii
    waves = torch.cat([waves * angles.cos(), waves * angles.sin()], dim=1)  # (T, 6)
    basis, _ = torch.linalg.qr(torch.randn(dim, 7, generator=generator, dtype=torch.float64))
    table = waves @ basis[:, :6].T + uniform(0.3, 0.9) * basis[:, 6]  # (T, D)
    table = table + 0.04 * torch.randn(n_pos, dim, generator=generator, dtype=torch.float64)
    table = table * (1 + 0.4 * torch.sin(2 * math.pi * t / uniform(8, 38) + uniform(0, 6)))
    odd = torch.randperm(n_pos - 1, generator=generator)[: max(2, n_pos // 12)] + 1  # not row 0
    table[odd] *= -3.0
    scale = math.sqrt(uniform(1.0, 1.6) / float(table.pow(2).sum(-1).mean()))
    return (table * scale).float()


def _window_table(n_pos: int, dim: int, generator: torch.Generator) -> torch.Tensor:
    """A (T, D) float32 table of +-1 signs (times 1, 2 or 4): row t is +1 on a window of D/2 dims
    that slides one dim per position, so cos(P_t, P_t+k) = 1 - 4k / D exactly for 4k <= 2D, and
    the mean at k = D/8 equals 0.5 exactly, in float32 too. D: a square number, for exact norms."""
    j = torch.arange(dim)[None, :]  # (1, D)
    t = torch.arange(n_pos)[:, None]  # (T, 1)
    signs = torch.where((j - t) % dim < dim // 2, 1.0, -1.0)  # (T, D)
    return signs * 2.0 ** torch.randint(0, 3, (n_pos, 1), generator=generator)  # (T, D)


def _turning_table(n_pos: int, period: float) -> torch.Tensor:
    """(T, 2) float32: one point turning round a circle, a full turn every `period` positions."""
    angle = 2 * math.pi * torch.arange(n_pos, dtype=torch.float64) / period  # (T,)
    return torch.stack([angle.cos(), angle.sin()], dim=1).float()  # (T, 2)


def _ripple_table(n_pos: int, slow_period: float) -> tuple[torch.Tensor, float]:
    """(T, 4) float32 and a threshold: a fast turn (period 6, half the weight) on a slow one, so
    the curve, (0.5 cos(2 pi k / 6) + cos(2 pi k / slow)) / 1.5, dips at k = 3, rises again, and
    first drops below the threshold at the next dip: a search that stops once the curve rises
    misses it. The threshold lies halfway between the two dips."""
    angle = 2 * math.pi * torch.arange(n_pos, dtype=torch.float64)  # (T,)
    fast, slow = angle / 6, angle / slow_period  # (T,), (T,)
    w = math.sqrt(0.5)
    table = torch.stack([w * fast.cos(), w * fast.sin(), slow.cos(), slow.sin()], dim=1)  # (T, 4)

    def curve(k):
        return (0.5 * math.cos(2 * math.pi * k / 6) + math.cos(2 * math.pi * k / slow_period)) / 1.5

    return table.float(), round((curve(3) + curve(9)) / 2, 3)


def _last_offset_turn(n_pos: int, generator: torch.Generator) -> tuple[int, float, float]:
    """(T, period, threshold) of a turning table whose curve, cos(2 pi k / period), first drops
    below the threshold at the last offset, k = T - 1: an answer past the middle of the table and
    past 20, which a search that stops early (k < 10, k < T // 2, k < T - 1) misses. The threshold
    lies halfway between the curve at T - 2 and at T - 1, far from both in float32."""
    angle = 1.0 + 0.4 * float(torch.rand(1, generator=generator, dtype=torch.float64))
    period = float(round(2 * math.pi * (n_pos - 1) / angle))  # turned by about `angle` at T - 1
    ends = [math.cos(2 * math.pi * k / period) for k in (n_pos - 2, n_pos - 1)]
    return n_pos, period, round(sum(ends) / 2, 4)


_KNOWN: dict[tuple, tuple[int, dict[str, int]]] = {}  # a case's answers, computed once
_DRAWN: dict[int, list[Case]] = {}  # q4's inputs, by seed


def _case_answers(table: torch.Tensor, threshold: float) -> tuple[int, dict[str, int]]:
    """The right answer and each usual mistake's answer for one case, cached (MiniLM's table
    takes a third of a second, and every check of the same inputs asks again)."""
    table = table.double()
    key = (tuple(table.shape), threshold, float(table.sum()), float(table.pow(2).sum()))
    if key not in _KNOWN:
        if len(_KNOWN) > 1024:
            _KNOWN.clear()
        right = learned_table.first_offset_below(table, threshold)
        _KNOWN[key] = right, _offset_mistakes(table, threshold)
    return _KNOWN[key]


def _answers(cases) -> tuple[list[int], dict[str, list[int]]]:
    """The right answer for each case, and each usual mistake's answer for each case."""
    rights, wrongs = [], {}
    for case in cases:
        right, mistakes = _case_answers(*case.args)
        rights.append(right)
        for sentence, value in mistakes.items():
            wrongs.setdefault(sentence, []).append(value)
    return rights, wrongs


def _told_apart(cases, known=None) -> bool:
    """Every usual mistake fails on some case, and no two give the same answers on every case.

    known: ``_answers`` of more cases, already computed, that count as well.
    """
    rights, wrongs = _answers(cases)
    if known is not None:
        rights = rights + known[0]
        wrongs = {sentence: answers + known[1][sentence] for sentence, answers in wrongs.items()}
    patterns = [tuple(rights)] + [tuple(v) for v in wrongs.values()]
    return len(set(patterns)) == len(patterns)


def _explains_misses(wrongs: dict[str, list[int]], got: list[int], wrong_at: list[int]) -> str:
    """The one mistake that explains at least two of the learner's wrong answers, or "".

    One matching whole number is often a coincidence (a stray k + 1 can equal the max-over-t
    answer on one table), so a mistake is named only on two independent cases or more, and only
    when no other mistake explains as many, and more than half of the wrong answers.
    """
    counts = {s: sum(answers[i] == got[i] for i in wrong_at) for s, answers in wrongs.items()}
    best = max(counts.values(), default=0)
    winners = [s for s, c in counts.items() if c == best]
    return winners[0] if best >= 2 and 2 * best > len(wrong_at) and len(winners) == 1 else ""


class FirstOffsetBelow(Question):
    name, function, points, notebook = "q4", "first_offset_below", 3, NOTEBOOK
    returns = INT
    references = (
        "posenc_lib.analysis.learned_table.first_offset_below",
        "posenc_lib.analysis.learned_table.cosine_by_offset",
    )
    slow_hint = (
        "MiniLM's table has about 130,000 pairs (t, t + k); one matrix product gives all their "
        "cosines at once."
    )
    title = "Where does a learned table's similarity fade?"
    timeout = 10.0  # per call: a correct answer with a Python loop over pairs takes 2-5 s
    hints = (
        "The curve at offset k is the mean, over every start t = 0 .. T-1-k, of cos(P_t, P_t+k). "
        "Start with the cosine of every pair: scale each row to length 1, then one matrix product.",
        "In the (T, T) matrix of cosines, the pairs k apart are the k-th diagonal: "
        "matrix.diagonal(k) has T - k entries. Its .mean() is the curve at offset k.",
        "Walk k = 1, 2, ..., T - 1 and return the first k whose mean is below the threshold "
        "(strictly: <). If none is, return T, the table's length.",
    )

    def cases(self, seed=0):
        # A draw takes a third of a second (MiniLM's table, the search for a smooth table), and
        # every check of the same seed asks again: keep the last few (the inputs are never
        # changed: the learner's function gets copies).
        if seed not in _DRAWN:
            if len(_DRAWN) >= 32:
                _DRAWN.clear()
            _DRAWN[seed] = self._draw(seed)
        return list(_DRAWN[seed])

    def _draw(self, seed):
        from posenc_lib.models import minilm  # the real table, from the installed package (once)

        generator = _generator(seed, 4)
        if seed == 0:
            smooth, smooth_threshold, window, turning = (48, 24), 0.6, (40, 64), (30, 200.0, 0.2)
            real_threshold, swinging = 0.5, (40, 25.0, -0.5)
            last = (24, 100.0, 0.15)
        else:
            smooth = (_randint(60, 120, generator), _randint(24, 48, generator))
            smooth_threshold = [0.45, 0.55, 0.6, 0.65][_randint(0, 4, generator)]
            window = (_randint(60, 120, generator), 256)
            turning = (_randint(40, 90, generator), 1000.0 * _randint(2, 6, generator), 0.3)
            real_threshold = [0.3, 0.35, 0.4, 0.45][_randint(0, 4, generator)]
            swinging = (_randint(40, 90, generator), 20.0 + _randint(0, 12, generator) + 0.5, -0.45)
            last = _last_offset_turn(_randint(40, 90, generator), generator)
        real = minilm.position_weight()  # (512, 384) float32
        name = "MiniLM's position table"
        if seed == 0:  # its curve dips at k = 3 and rises again before dropping below 0.3 at k = 8
            rising = Case(
                (real, 0.3), f"table = {name}, shape {tuple(real.shape)}, threshold = 0.3"
            )
        else:  # the same shape of curve, on a made table
            slow = 50.0 + _randint(0, 31, generator)
            ripple, ripple_threshold = _ripple_table(_randint(40, 90, generator), slow)
            rising = Case(
                (ripple, ripple_threshold),
                f"table = a fast turn on a slow one, {len(ripple)} positions, periods 6 and {slow:g}, threshold = {ripple_threshold} (the curve rises before it drops below)",
            )
        if seed:  # its first rows (with row 0, unlike the others): new, and quicker to check
            n_rows = _randint(160, 321, generator)
            real = real[:n_rows]  # (n_rows, 384)
            name = f"the first {n_rows} rows of MiniLM's position table"
        shape = f"shape {tuple(real.shape)}"
        others = [
            Case((_window_table(*window, generator), 0.5), f"table = sliding +-1 windows, shape {window}, threshold = 0.5"),
            Case((real, real_threshold), f"table = {name}, {shape}, threshold = {real_threshold}"),
            Case((_turning_table(*turning[:2]), turning[2]), f"table = one slow turn, {turning[0]} positions, period {turning[1]:g}, threshold = {turning[2]}"),
            Case((_turning_table(*swinging[:2]), swinging[2]), f"table = a fast turn, {swinging[0]} positions, period {swinging[1]:g}, threshold = {swinging[2]} (the cosine swings below 0)"),
            Case((_turning_table(*last[:2]), last[2]), f"table = a quarter turn, {last[0]} positions, period {last[1]:g}, threshold = {last[2]}"),
            rising,
        ]  # fmt: skip
        known = _answers(others)  # the fixed cases, computed once
        while True:  # a smooth table on which the usual mistakes are told apart
            table = _smooth_table(*smooth, generator)
            first = Case(
                (table, smooth_threshold),
                f"table = a smooth table, shape {tuple(table.shape)}, threshold = {smooth_threshold}",
            )
            right = learned_table.first_offset_below(table.double(), smooth_threshold)
            if 3 <= right < smooth[0] // 3 and _told_apart([first], known):
                return [first, *others]

    def diagnose(self, case, value):
        table, _ = case.args
        n = table.shape[0]
        if isinstance(value, torch.Tensor) and value.numel() in (n, n - 1):
            return "You returned the whole similarity curve; return one offset, the first k where it drops below the threshold."
        if isinstance(value, float):  # a whole 3.0 got the type policy's sentence already
            return "Return an offset, a whole number of positions (an int), not a mean cosine."
        _, problem = as_int(value, "The offset")
        return problem  # the ints are judged together, in diagnose_all

    def diagnose_all(self, cases, values):
        got = [int(round(float(v))) for v in values]
        rights, wrongs = _answers(cases)
        wrong_at = [i for i, (a, b) in enumerate(zip(got, rights, strict=True)) if a != b]
        if not wrong_at:
            return None
        where = f" (Input: {cases[wrong_at[0]].describe}.)"
        for sentence, answers in wrongs.items():  # a mistake that explains every answer
            if answers == got:
                return "Close, but " + sentence + where
        n_rows = [case.args[0].shape[0] for case in cases]
        if all(got[i] == n_rows[i] > rights[i] for i in wrong_at):
            return f"Your function found no offset below the threshold, but one drops below it: search every offset k = 1 .. T - 1, up to the last (k = T - 1 has a single pair, P_0 and P_T-1), past the first few or the first half of the table, and past a place where the curve rises again.{where}"
        if all(rights[i] == n_rows[i] for i in wrong_at):
            i = wrong_at[0]
            return f"No offset of this table drops below the threshold; the question asks you to return T, the table's length, in that case, not {got[i]}.{where}"
        i = wrong_at[0]
        named = _explains_misses(wrongs, got, wrong_at)
        if named:
            return "Close, but " + named + where
        if not 1 <= got[i] <= n_rows[i]:
            return f"An offset between two positions of a {n_rows[i]}-row table is 1 .. {n_rows[i] - 1} (or {n_rows[i]} when none drops below).{where}"
        return (
            "Your offset is not the first k whose mean cosine over t = 0 .. T-1-k drops below the threshold: print your curve at offsets 1 to 10 and compare it with the lecture's."
            + where
        )


q1, q2, q3, q4 = BinaryCode(), Unevenness(), NormalizedGap(), FirstOffsetBelow()
QUESTIONS = (q1, q2, q3, q4)
