"""Chapter 2's exercises: q1, the binary code; q2, how uneven are the steps?."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from posenc_lib import absolute
from posenc_lib.analysis import ch02_naive as naive
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, TENSOR, as_number, as_tensor, close, same_number
from posenc_lib.checks.ch02.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import CLOSE_BUT, named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q1: the binary code ------------------------------------------------------------------------------


def _bits(positions: torch.Tensor, n_bits: int, lsb_first: bool = True) -> torch.Tensor:
    """Bits 0..n_bits-1 of each position as 0.0/1.0 float64, (T, n_bits); MSB first if asked."""
    j = torch.arange(n_bits)  # (n_bits,)
    table = ((positions[:, None] >> j[None, :]) & 1).double()  # (T, n_bits), LSB first
    return table if lsb_first else table.flip(-1)


class BinaryCode(Question):
    name, function, points, notebook = "q1", "binary_encoding", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "(t >> j) & 1",
        "(t // 2**j) % 2",
        "torch.arange(n_positions)[:, None]",
    )
    returns, references = TENSOR, ("posenc_lib.absolute.binary_encoding",)
    title = N_("Build the binary position code")
    hints = (
        N_(
            "Row t holds the binary digits of t. Which integer operation gives t's last bit (bit 0)? "
            "And which operation moves bit j of t down to that last place?"
        ),
        N_(
            "t % 2 (or t & 1) is the last bit of t; t >> j, the same as t // 2**j, shifts bit j into that place."
        ),
        N_(
            "Build a column of positions, torch.arange(n_positions)[:, None] (T, 1), and a row of bit "
            "numbers, torch.arange(n_bits)[None, :] (1, n_bits): broadcasting gives all T x n_bits bits."
        ),
        N_(
            "Column 0 is the least significant bit (t % 2). Finish with .float() so the table holds "
            "0.0 and 1.0, like any other position table."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            sizes = [(6, 3), (10, 5), (16, 4), (3, 6), (70, 8)]  # past 16 and past 64 positions
        else:  # each draw: a full table, one with spare bits, one with just enough bits
            generator = draws.seeded(seed, 1)
            n_bits = draws.randint(5, 8, generator)
            sizes = [(2**n_bits, n_bits)]  # n_positions = 2**n_bits: the last row is all ones
            n_pos = draws.randint(20, 101, generator)
            sizes.append((n_pos, (n_pos - 1).bit_length() + draws.randint(1, 4, generator)))
            n_pos = draws.randint(20, 101, generator)
            while n_pos & (n_pos - 1) == 0:  # not a power of two
                n_pos = draws.randint(20, 101, generator)
            sizes.append((n_pos, (n_pos - 1).bit_length()))
            sizes.append((100, 9))  # fixed: past 64 positions (bit 6 used), n_bits >= 8
        return [Case(size, f"n_positions = {size[0]}, n_bits = {size[1]}") for size in sizes]

    def diagnose(self, case, value):
        n_pos, n_bits = case.args
        t = torch.arange(n_pos)  # (T,)
        if isinstance(value, torch.Tensor) and value.dim() == 2:
            rows, cols = value.shape
            if (rows, cols) == (n_bits, n_pos) and n_pos != n_bits:
                return tr(
                    "Your table has shape ({n_bits}, {n_pos}): one row per bit. It should be (n_positions, n_bits) = ({n_pos}, {n_bits}), one row per position.",
                    n_bits=n_bits,
                    n_pos=n_pos,
                )
            if rows == n_pos and cols != n_bits:
                if cols == (n_pos - 1).bit_length():
                    return tr(
                        "Your table has {cols} columns: only as many bits as the largest position needs. It should have n_bits = {n_bits} columns, one per bit; bits above the largest position's are 0.",
                        cols=cols,
                        n_bits=n_bits,
                    )
                return tr(
                    "Your table has {cols} columns; it should have n_bits = {n_bits}, one per bit (column j holds bit j of t).",
                    cols=cols,
                    n_bits=n_bits,
                )
        got, problem = as_tensor(value, N_("The table"), (n_pos, n_bits))
        if problem:
            return problem
        want = _bits(t, n_bits)
        if close(got, want):
            return None
        mistakes = [
            (_bits(t, n_bits, lsb_first=False), N_("your bits are in reverse order (most significant first). Column 0 should be the least significant bit, t % 2, the one that flips at every step.")),
            (_bits(t + 1, n_bits), N_("row t holds the bits of t + 1: positions count from 0, so row 0 is all zeros.")),
            (_bits(t + 1, n_bits, lsb_first=False), N_("row t holds the bits of t + 1, and the bits are most significant first. Positions count from 0 (row 0 is all zeros), and column 0 is t % 2.")),
            (2 * want - 1, N_("your table holds -1 and +1; this question asks for 0.0 and 1.0.")),
            (_bits(t >> 1, n_bits), N_("column j holds bit j + 1 of t: column 0 should be bit 0, t % 2, which changes at every step.")),
            (1 - want, N_("your bits are inverted (1 where the bit is 0): row 0 should be all zeros.")),
            (want * 2.0 ** torch.arange(n_bits), N_("you kept the bit's place value: t & 2**j is 0 or 2**j, not 0 or 1. Shift it down by j places so that every entry is a bit.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong))
        if named:
            return named
        if not bool(((got == 0) | (got == 1)).all()):
            return _("Every entry should be a bit, 0.0 or 1.0.")
        return _(
            "Some rows are not the binary digits of their position: column j of row t should hold bit j of t, with column 0 the least significant bit (q1.hint() shows how to get one bit)."
        )


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
    n_pos, dim = (
        (9, 2) if seed == 0 else (draws.randint(10, 30, generator), draws.randint(2, 9, generator))
    )
    while True:
        table = _random_walk(n_pos, dim, generator, longest_last=False).double()  # (T, D)
        steps = _steps(table)  # (T-1,)
        inside = range(1, n_pos - 2)
        if int(steps.argmax()) in inside and int(steps.argmin()) in inside:
            if float(steps.max()) > 1.2 * float(steps[[0, -1]].max()):
                return [
                    Case(
                        (table,),
                        tr(
                            "table = a random walk of shape {shape}, float64",
                            shape=tuple(table.shape),
                        ),
                    )
                ]


def _unevenness_mistakes(table: torch.Tensor) -> list[tuple[float, str]]:
    """The usual wrong answers for one table, each with the sentence that names it."""
    steps = _steps(table)
    pairs = torch.cdist(table, table)[torch.triu_indices(len(table), len(table), 1).unbind()]
    return [
        (_ratio(_steps(table, "hamming")), N_("you counted the entries that change (the Hamming distance); measure each step by its Euclidean length, ||PE[t+1] - PE[t]||.")),
        (_ratio(_steps(table, "squared")), N_("you compare squared lengths; take the square root (the Euclidean length, .norm()) before the ratio.")),
        (_ratio(_steps(table, "l1")), N_("you measure each step by the sum of absolute differences (L1); re-read which length the question asks for.")),
        (1 / _ratio(steps), N_("your ratio is upside down: divide the longest step by the shortest, so that a value above 1 means uneven.")),
        (float(steps.max() - steps.min()), N_("you subtract the shortest step from the longest; the question asks for their ratio.")),
        (_ratio(steps[:-1]) if len(steps) > 1 else math.nan, N_("you left out the last pair: the steps run from t = 0 to t = T - 2 (T - 1 pairs), and (T-2, T-1) is one of them.")),
        (_ratio(steps[1:]) if len(steps) > 1 else math.nan, N_("you left out the first pair, (0, 1): there are T - 1 pairs, t = 0 to T - 2.")),
        (_ratio(_steps(table, wrap=True)), N_("you included a step from the last row back to the first; position T - 1 has no next neighbour.")),
        (_ratio(_steps(table.T.contiguous())), N_("you measured steps between columns; the rows are the positions, so compare row t with row t + 1.")),
        (float(steps.max() / steps.mean()), N_("you divided the longest step by the mean step; the question asks for the longest over the shortest.")),
        (_ratio(pairs), N_("you compared all pairs of positions, not neighbours: only pairs (t, t + 1).")),
        (_ratio((table[1:] - table[:-1]).norm(dim=0)), N_("you took the norm over positions (dim=0), one number per column; take it along each row, dim=-1, one length per step t -> t + 1.")),
        (1.0, N_("your ratio is 1.0, as if every step had the same length, and these steps do not. A .norm() without dim gives one norm of the whole (T-1, D) difference matrix, whose max / min is 1; pass dim=-1 for one length per step.")),
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
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "steps.max() / steps.min()",
        "(table[1:] - table[:-1]).norm(dim=-1)",
    )
    returns = FLOAT
    references = (
        "posenc_lib.analysis.ch02_naive.unevenness",
        "posenc_lib.analysis.ch02_naive.neighbour_distances",
    )
    title = N_("Measure how uneven the neighbour steps are")
    hints = (
        N_(
            "The step from position t to t + 1 is the Euclidean length of the difference of two "
            "neighbouring rows, ||table[t+1] - table[t]||."
        ),
        N_(
            "table[1:] - table[:-1] has shape (T-1, D): row t is the step from t to t + 1. Its norm "
            "along the last axis, .norm(dim=-1), gives all T - 1 step lengths at once."
        ),
        N_(
            "Return the longest step divided by the shortest, as a float: float(steps.max() / "
            "steps.min())."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 2)
        if seed == 0:
            walk = (7, 3)
            binary = [(9, 4), (33, 6)]
        else:
            walk = (draws.randint(10, 30, generator), draws.randint(3, 9, generator))
            n_pos = draws.randint(40, 200, generator)
            binary = [(n_pos, (n_pos - 1).bit_length() + draws.randint(0, 3, generator))]
        while True:  # a walk on which every usual mistake gives its own value
            table = _random_walk(*walk, generator)
            right = _ratio(_steps(table.double()))
            values = [right] + [v for v, _ in _unevenness_mistakes(table.double())]
            if all(abs(a - b) > 1e-2 * abs(b) for i, a in enumerate(values) for b in values[:i]):
                break
        cases = [
            Case((table,), tr("table = a random walk of shape {shape}", shape=tuple(table.shape)))
        ]
        cases += _wandering_walk(seed, generator)
        for n_pos, d_model in binary:
            cases.append(
                Case(
                    (absolute.binary_encoding(n_pos, d_model),),
                    f"table = binary_encoding({n_pos}, {d_model})",
                )
            )
        sinusoid = (12, 4) if seed == 0 else (draws.randint(20, 60, generator), 8)
        cases.append(
            Case(
                (absolute.sinusoidal_encoding(*sinusoid),),
                tr(
                    "table = sinusoidal_encoding{args} (all its steps have the same length)",
                    args=sinusoid,
                ),
            )
        )
        pair = torch.randn(
            2, 3 if seed == 0 else draws.randint(4, 9, generator), generator=generator
        )
        cases.append(
            Case(
                (pair,),
                tr("table = two random rows, shape {shape} (one step)", shape=tuple(pair.shape)),
            )
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
            return _(
                "You returned the T - 1 step lengths; reduce them to one number, the longest divided by the shortest."
            )
        got, problem = as_number(value, N_("The unevenness"))
        if problem:
            return problem
        want = _ratio(naive.neighbour_distances(table))
        if abs(got - want) <= 1e-4 * want:
            return None
        for i, (wrong, sentence) in enumerate(_unevenness_mistakes(table)):
            before = [values[i] for values in mistakes_before]
            if same_number(got, wrong, atol=1e-9) and _explains(before, right_before):
                return _(CLOSE_BUT) + _(sentence)
        steps = _steps(table)  # (T-1,)
        last_by_first = [float(_steps(t)[-1] / _steps(t)[0]) for t in earlier]
        if abs(got - float(steps[-1] / steps[0])) <= 1e-4 * want and _explains(
            last_by_first, right_before
        ):
            return _(CLOSE_BUT) + _(
                "you divided the last step by the first; the longest and the shortest steps can be anywhere along the table: take the max and the min of all T - 1 steps."
            )
        if got < 1:
            return _("The longest step divided by the shortest cannot be below 1.")
        return _(
            "Your ratio differs from the longest neighbour step divided by the shortest; compute the T - 1 step lengths ||table[t+1] - table[t]|| first, then their max / min."
        )
