"""Chapter 2's measurements of the naive position tables: how far apart neighbours are, how fast
each column changes, and how large the position is next to the word it is added to.

The tables themselves live in ``absolute`` (integer, normalized, binary, learned). The questions:

- Are neighbouring positions evenly spaced? ``neighbour_distances`` gives ||PE_{t+1} - PE_t|| for
  t = 0 .. T-2, or the number of entries that differ (the Hamming distance). For the binary code
  the step t -> t+1 flips k bits when t ends in k - 1 ones, so the steps are uneven; the first
  step that flips k bits is t = 2**(k-1) - 1 -> 2**(k-1) (bits 0 .. k-1 all flip).
- How fast does each column change? ``flip_rate``: column j of the binary code flips once every
  ``flip_period(j) = 2**j`` steps, a square wave of period 2**(j + 1). Smoothing each column into
  a sine and a cosine of that period is the sinusoidal encoding of chapter 3 (Vaswani et al.
  2017, arXiv:1706.03762, section 3.5).
- Is the position on the same scale as the word? ``norm_ratio`` is ||PE_t|| / ||x_t||.

Shapes: T positions, D dims. Tensors in, tensors out; no plotting here.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.absolute import (
    binary_encoding,
    integer_encoding,
    normalized_encoding,
    sinusoidal_encoding,
)
from posenc_lib.analysis import report
from posenc_lib.i18n import N_

# The tables chapter 2 compares, by name: f(n_positions, d_model) -> (T, D). The sinusoidal table
# (chapter 3) is here as the smooth answer the naive ones are measured against.
TABLES = {
    "integer": integer_encoding,
    "normalized": normalized_encoding,
    "binary": binary_encoding,
    "sinusoidal": sinusoidal_encoding,
}
METRICS = ("euclidean", "hamming")


def _table(name: str, table, min_rows: int = 1) -> torch.Tensor:
    validate.float_tensor(name, table, min_rank=2, max_rank=2, shape_hint="(T, D)")
    if table.shape[0] < min_rows or table.shape[1] == 0:
        raise ValueError(
            f"{name} needs at least {min_rows} rows (positions) and one column, "
            f"got shape {tuple(table.shape)}."
        )
    return table


def neighbour_distances(table, metric: str = "euclidean") -> torch.Tensor:
    """How far each position is from the next: one number per pair (t, t+1), t = 0 .. T-2.

    table: (T, D) with T >= 2. metric "euclidean": ||PE_{t+1} - PE_t||_2 (float, the table's
    dtype). "hamming": how many of the D entries differ (for a 0/1 table, the number of bits that
    flip; Hamming 1950). For 0/1 rows the Euclidean distance is the square root of the Hamming one.
    Returns (T-1,).
    """
    table = _table("table", table, min_rows=2)
    validate.choice("metric", metric, METRICS)
    if metric == "hamming":
        return (table[1:] != table[:-1]).sum(dim=-1).to(table.dtype)  # (T-1,)
    return report.neighbour_distances(table)  # (T-1,): the yardstick's own measurement


def neighbour_cosines(table) -> torch.Tensor:
    """Cosine similarity of each row with the next, cos(PE_t, PE_{t+1}), t = 0 .. T-2. (T-1,).

    Near 1: neighbours point the same way. Near 0: they are unrelated, as the rows of an untrained
    learned table are (independent noise in D dims has cosines of about 1/sqrt(D)).
    """
    table = _table("table", table, min_rows=2)
    return torch.nn.functional.cosine_similarity(table[1:], table[:-1], dim=-1)  # (T-1,)


def unevenness(table, metric: str = "euclidean") -> float:
    """max / min of ``neighbour_distances``: 1.0 when every step is the same length.

    Raises ValueError if two neighbouring rows are equal (a step of length 0: no ratio).
    """
    distances = neighbour_distances(table, metric)  # (T-1,)
    smallest = float(distances.min())
    if smallest == 0:
        t = int(distances.argmin())
        raise ValueError(
            f"rows {t} and {t + 1} of the table are equal, so the smallest step is 0 and the "
            "ratio largest / smallest is undefined: two positions share a code."
        )
    return float(distances.max()) / smallest


def flip_rate(table) -> torch.Tensor:
    """For each column, the fraction of the T-1 steps t -> t+1 at which its value changes. (D,).

    For the binary code, column j changes when t + 1 is a multiple of 2**j: a rate of about 2**-j.
    """
    table = _table("table", table, min_rows=2)
    return (table[1:] != table[:-1]).to(table.dtype).mean(dim=0)  # (D,)


def flip_period(bits) -> torch.Tensor:
    """Steps between two flips of bit j of a counter, 2**j; its full cycle is 2**(j + 1).

    bits: an int or an integer tensor of bit indices (0 = least significant), each in 0..62.
    Returns an int64 tensor of the same shape.
    """
    if not isinstance(bits, torch.Tensor):
        bits = torch.tensor(validate.whole_int("bits", bits, maximum=62))
    validate.integer_tensor("bits", bits, N_("bit indices"))
    if bits.numel() and (int(bits.min()) < 0 or int(bits.max()) > 62):
        raise ValueError(
            f"bit indices must lie in 0..62 (an int64 counter), got {int(bits.min())} to "
            f"{int(bits.max())}."
        )
    return 2 ** bits.long()


def norm_ratio(table, tokens) -> torch.Tensor:
    """||PE_t|| / ||x_t|| per position: how many times larger the position is than the word.

    table, tokens: (T, D) each (the position vectors and the word vectors they are added to).
    Returns (T,).
    """
    table = _table("table", table)
    tokens = _table("tokens", tokens)
    if tokens.shape != table.shape:
        raise ValueError(
            f"tokens has shape {tuple(tokens.shape)} but table has shape {tuple(table.shape)}; "
            "each position vector is added to one word vector, so the shapes must match."
        )
    return table.norm(dim=-1) / tokens.norm(dim=-1)  # (T,)


class TableView(NamedTuple):
    """One table seen through chapter 2's measurements (what the dashboard shows)."""

    name: str  # a key of TABLES
    table: torch.Tensor  # (T, D)
    position: int  # the marked position, 0 .. T-1
    distances: torch.Tensor  # (T-1,) ||PE_{t+1} - PE_t||
    max_abs: float  # the largest |value| in the table
    clamped: bool  # the position asked for was past the end and was moved to T-1


def table_view(name: str, n_positions, d_model, position) -> TableView:
    """Build table ``name`` of TABLES, (T, D) with T >= 2, and measure it; mark ``position``.

    A position past the end is shown at T-1 (``clamped`` says so): a sequence-length slider may
    move under a position slider.
    """
    validate.choice("name", name, tuple(TABLES))
    n = validate.positive_int("n_positions", n_positions)
    if n < 2:
        raise ValueError(f"n_positions must be at least 2 to have a neighbour, got {n}.")
    position = validate.whole_int("position", position)
    if position < 0:
        raise ValueError(f"position must be >= 0, got {position}.")
    table = TABLES[name](n, d_model)  # (T, D)
    return TableView(
        name=name,
        table=table,
        position=min(position, n - 1),
        distances=neighbour_distances(table),
        max_abs=float(table.abs().max()),
        clamped=position > n - 1,
    )
