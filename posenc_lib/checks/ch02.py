"""Chapter 2's exercises: the binary code, how uneven its steps are, and the normalized code's
dependence on the sequence length.

    from posenc_lib.checks.ch02 import q1, q2, q3
    q1.check(binary_encoding); q1.hint(); q1.solution()

The references are the library's own functions (``absolute.binary_encoding``,
``naive.neighbour_distances``); the sentences name the usual mistakes by recomputing them.
"""

from __future__ import annotations

import numbers

import numpy as np
import torch

from .. import absolute, naive
from . import Case, Question, TooMany, as_number, as_tensor, close

NOTEBOOK = "02_naive_encodings.ipynb"
_NUMPY = "Return a torch tensor, not a NumPy array: position codes are added to torch tensors (torch.from_numpy converts one)."


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
            sizes = [(6, 3), (10, 5), (16, 4), (3, 6)]
        else:
            generator = _generator(seed, 1)
            sizes = []
            for _ in range(3):
                n_pos = _randint(20, 101, generator)
                sizes.append((n_pos, (n_pos - 1).bit_length() + _randint(0, 4, generator)))
        return [Case(size, f"n_positions = {size[0]}, n_bits = {size[1]}") for size in sizes]

    def diagnose(self, case, value):
        n_pos, n_bits = case.args
        t = torch.arange(n_pos)  # (T,)
        if isinstance(value, np.ndarray):
            return _NUMPY
        if isinstance(value, torch.Tensor) and not value.dtype.is_floating_point:
            kind = "True/False" if value.dtype == torch.bool else "whole numbers"
            return f"Your table holds {kind} ({value.dtype}); return a float tensor of 0.0 and 1.0 (add .float()): it is added to float word vectors."
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


def _random_walk(n_pos: int, dim: int, generator: torch.Generator) -> torch.Tensor:
    """A (T, D) table whose rows take random steps; the last step is the longest. float32.

    At each step about a third of the coordinates stay where they are (never all of them), so the
    number of entries that change varies from step to step, as in a binary table: counting them
    (the Hamming distance) gives a ratio of its own, not 1.0.
    """
    steps = torch.randn(n_pos - 1, dim, generator=generator, dtype=torch.float64)  # (T-1, D)
    still = torch.rand(n_pos - 1, dim, generator=generator) < 1 / 3  # (T-1, D) coordinates kept
    still[torch.arange(n_pos - 1), torch.randint(dim, (n_pos - 1,), generator=generator)] = False
    steps[still] = 0.0  # every step still moves at least one coordinate
    lengths = steps.norm(dim=-1)  # (T-1,)
    steps[-1] *= 1.5 * float(lengths.max()) / float(lengths[-1])  # the longest step is the last
    start = torch.randn(1, dim, generator=generator, dtype=torch.float64)  # (1, D)
    return torch.cat([start, start + steps.cumsum(0)]).float()  # (T, D)


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
        (_ratio(steps[:-1]), "you left out the last pair: the steps run from t = 0 to t = T - 2 (T - 1 pairs), and (T-2, T-1) is one of them."),
        (_ratio(steps[1:]), "you left out the first pair, (0, 1): there are T - 1 pairs, t = 0 to T - 2."),
        (_ratio(_steps(table, wrap=True)), "you included a step from the last row back to the first; position T - 1 has no next neighbour."),
        (_ratio(_steps(table.T.contiguous())), "you measured steps between columns; the rows are the positions, so compare row t with row t + 1."),
        (float(steps.max() / steps.mean()), "you divided the longest step by the mean step; the question asks for the longest over the shortest."),
        (_ratio(pairs), "you compared all pairs of positions, not neighbours: only pairs (t, t + 1)."),
        (_ratio((table[1:] - table[:-1]).norm(dim=0)), "you took the norm over positions (dim=0), one number per column; take it along each row, dim=-1, one length per step t -> t + 1."),
        (1.0, "your ratio is 1.0, as if every step had the same length, and these steps do not. A .norm() without dim gives one norm of the whole (T-1, D) difference matrix, whose max / min is 1; pass dim=-1 for one length per step."),
    ]  # fmt: skip


class Unevenness(Question):
    name, function, points, notebook = "q2", "neighbour_unevenness", 3, NOTEBOOK
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
                f"table = sinusoidal_encoding{sinusoid}",
            )
        )
        return cases

    def diagnose(self, case, value):
        (table,) = case.args
        table = table.double()
        if isinstance(value, torch.Tensor) and value.numel() == table.shape[0] - 1:
            return "You returned the T - 1 step lengths; reduce them to one number, the longest divided by the shortest."
        got, problem = as_number(value, "The unevenness")
        if problem:
            return problem
        want = _ratio(naive.neighbour_distances(table))
        if abs(got - want) <= 1e-4 * want:
            return None
        for wrong, sentence in _unevenness_mistakes(table):
            if abs(got - wrong) <= 1e-4 * abs(wrong) + 1e-9:
                return "Close, but " + sentence
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
            triples = [(6, 2, [8, 20, 100]), (2, 3, [5, 500]), (0, 7, [8, 16, 64, 1024])]
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
        return [Case(c, f"i = {c[0]}, j = {c[1]}, lengths = {c[2]}") for c in triples]

    def diagnose(self, case, value):
        i, j, lengths = case.args
        if isinstance(value, TooMany):
            return "Return a tensor of gaps; your function returned an endless iterator."
        if isinstance(value, np.ndarray):
            return _NUMPY
        if isinstance(value, torch.Tensor) and not value.dtype.is_floating_point:
            return f"Your gaps are {value.dtype}: whole numbers cannot hold a fraction. Divide in floating point (make the lengths a float tensor, or use / rather than //)."
        if isinstance(value, numbers.Real) or (
            isinstance(value, torch.Tensor) and value.dim() == 0
        ):
            return f"Return one gap per length, a tensor of shape ({len(lengths)},), not a single number."
        if isinstance(value, list):  # a returned generator also arrives here as a list
            return "Return one torch tensor of gaps; your function returned a Python list or a generator of numbers. Compute on a tensor of the lengths directly, or turn your numbers into one with torch.tensor."
        if isinstance(value, torch.Tensor) and value.dtype in (torch.float16, torch.bfloat16):
            return f"Your gaps are {value.dtype}, which keeps only about {3 if value.dtype == torch.float16 else 2} significant digits: too coarse for sequences of thousands of tokens, where dividing by T instead of T - 1 changes a gap in its fourth digit. Return float32 or float64, as the question asks."
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
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if close(got, wrong, rtol=1e-5, atol=1e-9):
                return "Close, but " + sentence
        if bool((got < 0).any()):
            return "A gap is a distance: it cannot be negative."
        return "Your gaps differ from the difference between the codes of tokens i and j, one per length T: work out both codes for one length by hand and compare."


q1, q2, q3 = BinaryCode(), Unevenness(), NormalizedGap()
QUESTIONS = (q1, q2, q3)
