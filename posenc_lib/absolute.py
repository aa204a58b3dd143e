"""Absolute position encodings: one vector per position, added to the token embeddings.

Shapes: T positions, D = d_model. Every table is (T, D), row t is the vector for position t
(positions count from 0).

The first three encodings are the naive ones a learner tries first (chapter 2); the sinusoidal
encoding is Vaswani et al. 2017, "Attention Is All You Need", arXiv:1706.03762, section 3.5;
the learned table is the one BERT (arXiv:1810.04805) and GPT-2 use.
"""

from __future__ import annotations

import torch
from torch import nn

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, _, tr


def _sizes(n_positions, d_model, dtype, device, names=("n_positions", "d_model")):
    """The validated (T, D) of a table, refused before allocation if absurdly large."""
    n = validate.positive_int(names[0], n_positions)
    d = validate.positive_int(names[1], d_model)
    validate.table_dtype(dtype, device)
    validate.table_size(N_("a ({n}, {d}) position table"), n, d, n=n, d=d)
    return n, d


def _positions(n_positions: int, device) -> torch.Tensor:
    return torch.arange(n_positions, dtype=torch.float64, device=device)  # (T,)


def integer_encoding(n_positions, d_model, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """Every column holds the position index itself: row t is (t, t, ..., t).

    Unbounded: the values grow with T and soon dwarf token embeddings of size ~1.
    Returns (T, D).
    """
    n, d = _sizes(n_positions, d_model, dtype, device)
    # A float holds whole numbers exactly up to 2 / eps: 2**24 in float32, 2048 in float16.
    if n - 1 > 2 / torch.finfo(dtype).eps:
        if dtype == torch.float32:
            message = N_(
                "{dtype} cannot hold every position up to {last} exactly; use torch.float64."
            )
        else:
            message = N_(
                "{dtype} cannot hold every position up to {last} exactly; "
                "use torch.float32 or torch.float64."
            )
        raise ValueError(tr(message, dtype=dtype, last=n - 1))
    return _positions(n, device)[:, None].expand(n, d).to(dtype).contiguous()  # (T, D)


def normalized_encoding(n_positions, d_model, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """Every column holds t / (n_positions - 1), so the table spans [0, 1] whatever T is.

    Bounded, but a step of one token is worth 1 / (T - 1): it depends on the sequence length.
    A single position (T = 1) is encoded as 0. Returns (T, D).
    """
    n, d = _sizes(n_positions, d_model, dtype, device)
    scaled = _positions(n, device) / max(n - 1, 1)  # (T,)
    return scaled[:, None].expand(n, d).to(dtype).contiguous()  # (T, D)


def binary_encoding(n_positions, d_model, *, dtype=torch.float32, device=None) -> torch.Tensor:
    """Column j holds bit j of the position, least significant bit first, as 0.0 or 1.0.

    Bounded and unique while T <= 2**D, but discrete: neighbours can differ in one bit or in many.
    Returns (T, D).
    """
    n, d = _sizes(n_positions, d_model, dtype, device)
    if (n - 1).bit_length() > d:  # the largest position needs more than d bits
        raise ValueError(
            tr(
                "binary_encoding with d_model={d} has only 2**{d} = {codes} distinct codes, but "
                "n_positions={n} positions were asked for; positions would share codes. "
                "Use d_model >= {need}.",
                d=d,
                codes=2**d,
                n=n,
                need=(n - 1).bit_length(),
            )
        )
    t = torch.arange(n, dtype=torch.int64, device=device)  # (T,)
    bits = torch.arange(min(d, 63), dtype=torch.int64, device=device)  # (min(D, 63),)
    # (T, D); columns past 62 stay 0, as every position here is below 2**63
    table = torch.zeros(n, d, dtype=dtype, device=device)
    table[:, : bits.numel()] = ((t[:, None] >> bits[None, :]) & 1).to(dtype)
    return table


def sinusoidal_frequencies(d_model, base=10000.0, *, dtype=torch.float64, device=None):
    """omega_i = base ** (-2i / D) for i = 0 .. D/2 - 1: the angular frequency of pair i.

    Vaswani et al. 2017 (arXiv:1706.03762), section 3.5: "the wavelengths form a geometric
    progression from 2*pi to 10000 * 2*pi". With i < D/2 the longest is in fact
    2*pi * base ** ((D - 2) / D), just short of 2*pi * base. Returns (D/2,).
    """
    d = validate.even_int("d_model", d_model, N_("the encoding is built from (sin, cos) pairs."))
    b = validate.positive_float("base", base, minimum=1.0)
    validate.table_dtype(dtype, device)
    i = torch.arange(0, d, 2, dtype=torch.float64, device=device)  # (D/2,)
    return (b ** (-i / d)).to(dtype)


def sinusoidal_encoding(
    n_positions, d_model, base=10000.0, *, dtype=torch.float32, device=None
) -> torch.Tensor:
    """PE[t, 2i] = sin(t * omega_i), PE[t, 2i+1] = cos(t * omega_i), omega_i = base ** (-2i/D).

    Vaswani et al. 2017 (arXiv:1706.03762), section 3.5. The angles are computed in float64 and
    the table is cast to ``dtype`` at the end, so large positions keep every float32 digit.
    Returns (T, D).
    """
    n, _ = _sizes(n_positions, d_model, dtype, device)
    omega = sinusoidal_frequencies(d_model, base, device=device)  # (D/2,)
    angles = _positions(n, device)[:, None] * omega[None, :]  # (T, D/2)
    table = torch.stack((angles.sin(), angles.cos()), dim=-1)  # (T, D/2, 2)
    return table.reshape(n, -1).to(dtype)  # (T, D): sin, cos, sin, cos, ...


def sinusoidal_shift_matrix(offset, d_model, base=10000.0, *, dtype=torch.float32, device=None):
    """The matrix M_k with PE_{t+k} = M_k @ PE_t for every t (column vectors).

    M_k is block diagonal: one 2x2 rotation [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]] per
    pair. The pairs are ordered (sin, cos), so advancing the angle by k w_i is a rotation by -k w_i
    of the vector (sin, cos): (sin(a + b), cos(a + b)) = (s cos b + c sin b, -s sin b + c cos b).
    It depends on the offset k only, never on t: this is why a
    linear layer can learn to attend by relative position (Vaswani et al. 2017, section 3.5).
    For a table with rows PE[t], use ``PE[t] @ M_k.T``. ``offset`` may be negative or fractional.
    Returns (D, D).
    """
    offset = validate.real_number(_("offset (a number of positions)"), offset)
    validate.table_dtype(dtype, device)
    validate.table_size(N_("the shift matrix"), validate.positive_int("d_model", d_model), d_model)
    omega = sinusoidal_frequencies(d_model, base, device=device)  # (D/2,)
    c, s = (offset * omega).cos(), (offset * omega).sin()  # (D/2,) each
    blocks = torch.stack((torch.stack((c, s), -1), torch.stack((-s, c), -1)), -2)  # (D/2, 2, 2)
    return torch.block_diag(*blocks).to(dtype)  # (D, D)


def interpolate_table(table, n_rows) -> torch.Tensor:
    """A (T, D) table stretched (or shrunk) to ``n_rows`` rows by linear interpolation.

    New row r sits at old position r (T - 1) / (n_rows - 1): the first and last rows are kept
    exactly and every row between is a blend of its two nearest old rows: the learned-table
    counterpart of Position Interpolation (Chen et al. 2023, arXiv:2306.15595), which squeezes the
    positions of a longer text into the range the model was trained on. (T, D) -> (n_rows, D).
    """
    validate.float_tensor("table", table, min_rank=2, max_rank=2, shape_hint="(T, D)")
    n_old = table.shape[0]
    n = validate.positive_int("n_rows", n_rows)
    if n_old < 2 or n < 2:
        raise ValueError(
            tr(
                "interpolation needs at least 2 rows on each side (the table has {n_old}, n_rows is "
                "{n}): the first and last rows fix the ends.",
                n_old=n_old,
                n=n,
            )
        )
    validate.table_size(N_("the interpolated table"), n, table.shape[1])
    where = torch.linspace(0, n_old - 1, n, dtype=torch.float64, device=table.device)  # (n,)
    low = where.floor().long().clamp(max=n_old - 2)  # (n,)
    frac = (where - low).to(table.dtype)[:, None]  # (n, 1), 1 exactly at the last row
    return table[low] * (1 - frac) + table[low + 1] * frac  # (n, D)


class LearnedPositionalEmbedding(nn.Module):
    """A trainable table with one row per position 0 .. max_len - 1 (BERT, GPT-2).

    ``forward(positions)`` takes an int T (meaning positions 0 .. T-1) or a LongTensor of positions
    of shape (..., T) and returns (..., T, D). Rows start as N(0, 0.02**2) noise, as in Hugging
    Face's GPT-2 and BERT (``initializer_range=0.02``).
    A position >= max_len raises ValueError: the table has no row there, and nothing learned about
    positions 0 .. max_len - 1 says what such a row should be.
    """

    def __init__(self, max_len, d_model, *, dtype=torch.float32, device=None):
        super().__init__()
        self.max_len, self.d_model = _sizes(max_len, d_model, dtype, device, ("max_len", "d_model"))
        self.weight = nn.Parameter(
            torch.empty(self.max_len, self.d_model, dtype=dtype, device=device)
        )
        nn.init.normal_(self.weight, mean=0.0, std=0.02)

    def forward(self, positions) -> torch.Tensor:
        if not isinstance(positions, torch.Tensor):
            label = _("positions (a sequence length, or a tensor of positions)")
            n = validate.positive_int(label, positions)
            if n > self.max_len:  # before arange: a huge n never allocates
                raise self._past_the_end(
                    N_(
                        "a sequence of {n} tokens needs positions 0..{last}, and position {max_len}"
                        " is past the end of this learned table, which has max_len={max_len} rows "
                        "(positions 0..{top}). A learned table only has rows for the positions it "
                        "was built and trained for, so it cannot extrapolate to longer sequences: "
                        "there is no row to look up. Build a longer table (and train it), or use an "
                        "encoding defined at every position (sinusoidal, ALiBi, RoPE)."
                    ),
                    n=n,
                    last=n - 1,
                )
            positions = torch.arange(n, device=self.weight.device)  # (T,)
        validate.integer_tensor("positions", positions)
        positions = positions.long()  # a uint8 tensor would index as a mask
        if positions.numel() and int(positions.min()) < 0:
            raise ValueError(tr("positions must be >= 0, got {value}.", value=int(positions.min())))
        if positions.numel() and int(positions.max()) >= self.max_len:
            raise self._past_the_end(
                N_(
                    "position {position} is past the end of this learned table, which has "
                    "max_len={max_len} rows (positions 0..{top}). A learned table only has rows for "
                    "the positions it was built and trained for, so it cannot extrapolate to longer "
                    "sequences: there is no row to look up. Build a longer table (and train it), or "
                    "use an encoding defined at every position (sinusoidal, ALiBi, RoPE)."
                ),
                position=int(positions.max()),
            )
        return self.weight[positions]  # (..., T, D)

    def _past_the_end(self, message: str, **fields) -> ValueError:
        """``message`` (marked N_) translated, with this table's max_len and last position (top)."""
        return ValueError(tr(message, max_len=self.max_len, top=self.max_len - 1, **fields))

    def extra_repr(self) -> str:
        return f"max_len={self.max_len}, d_model={self.d_model}"
