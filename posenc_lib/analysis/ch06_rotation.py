"""Chapter 6's rotation from positions, and the closed form of its scores as complex numbers.

The rotation itself is ``rope.apply_rope`` (RoFormer, Su et al. 2021, arXiv:2104.09864, eq. 34);
``rotate`` builds it from positions with the library's frequencies (``rope_inv_freq``) and cos/sin
tables, in float64. The sign convention: the pair (x1, x2), read as the complex number x1 + i x2,
is multiplied by e^{i m theta}: it turns counterclockwise by m * theta.

``as_complex`` reads each pair as a complex number in the pair order of a layout, and
``complex_scores`` is the closed form <R_m q, R_n k> = Re sum_i q_i conj(k_i) exp(1j (m - n)
theta_i) (RoFormer eq. 35 in section 3.4.3; eq. 12 in section 3.2.1 for one pair), which depends on
m - n only. ``_vector`` and ``_positions`` validate the inputs every chapter 6 function shares.

Shapes: T positions, D = head_dim, P positions or offsets. Float64 inside.
"""

from __future__ import annotations

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, tr
from posenc_lib.rope import STYLES, apply_rope, rope_cos_sin
from posenc_lib.rope_scaling import rope_inv_freq

F64 = torch.float64


# -- input validation ------------------------------------------------------------------------------


def _vector(name: str, value, head_dim: int | None = None) -> torch.Tensor:
    """A real 1-D tensor of even length (one query or key), as float64. (D,)."""
    validate.float_tensor(name, value, min_rank=1, max_rank=1, shape_hint="(head_dim,)")
    validate.even_int(
        f"{name}'s length (head_dim)", value.shape[0], N_("RoPE rotates the dims in pairs.")
    )
    if head_dim is not None and value.shape[0] != head_dim:
        raise ValueError(
            tr(
                "{name} has {dims} dims but the other vector has {head_dim}; a query and a key "
                "must have the same head_dim.",
                name=name,
                dims=value.shape[0],
                head_dim=head_dim,
            )
        )
    return value.detach().to(F64)


def _positions(name: str, value) -> torch.Tensor:
    """Positions as a float64 tensor (P,): an int T (meaning 0..T-1), a list, or a 1-D tensor."""
    if isinstance(value, torch.Tensor):
        validate.tensor(name, value, min_rank=1, max_rank=1, shape_hint="(P,)")
        if value.is_complex() or value.dtype == torch.bool:
            raise ValueError(
                tr(
                    "{name} must hold real numbers, got dtype {dtype}.",
                    name=name,
                    dtype=value.dtype,
                )
            )
        values = value.detach().to("cpu", F64)
    elif isinstance(value, (list, tuple, range)):
        values = torch.tensor(
            [validate.real_number(f"each of {name}", v) for v in value], dtype=F64
        )
    else:
        values = torch.arange(validate.positive_int(name, value), dtype=F64)
    if values.numel() == 0:
        raise ValueError(tr("{name} is empty; give at least one position.", name=name))
    if not bool(torch.isfinite(values).all()):
        raise ValueError(tr("{name} must be finite numbers.", name=name))
    return values


# -- the rotation and its closed form -------------------------------------------------------------


def rotate(x, positions, base=10000.0, style="half") -> torch.Tensor:
    """R_m x_m: row m of ``x`` rotated to position ``positions[m]`` (RoFormer eq. 34).

    x: (..., T, D) float. positions: an int T (0..T-1), a list or a (T,) tensor; may be fractional.
    Built from the library's ``rope_inv_freq``, ``rope_cos_sin`` and ``apply_rope``, in float64.
    Returns (..., T, D) float64.
    """
    validate.float_tensor("x", x, min_rank=2, shape_hint="(..., T, head_dim)")
    validate.choice("style", style, STYLES)
    pos = _positions("positions", positions)  # (T,)
    if pos.shape[0] != x.shape[-2]:
        raise ValueError(
            tr(
                "positions has {n} entries but x has T = {t} rows; give one position per row.",
                n=pos.shape[0],
                t=x.shape[-2],
            )
        )
    cos, sin = rope_cos_sin(
        pos, rope_inv_freq(x.shape[-1], base, dtype=F64)[0], style=style
    )  # (T, D) each
    return apply_rope(x.detach().to(F64), cos, sin, style)


def as_complex(x, style="half") -> torch.Tensor:
    """Each pair (x1, x2) of the last dim as x1 + i x2, in the pair order of ``style``.

    x: (..., D) -> (..., D/2) complex128. "half": pair i is (x_i, x_{i + D/2}); "interleaved":
    pair i is (x_{2i}, x_{2i+1}).
    """
    validate.float_tensor("x", x, min_rank=1, shape_hint="(..., head_dim)")
    validate.choice("style", style, STYLES)
    d = validate.even_int(
        "x.shape[-1] (head_dim)", x.shape[-1], N_("RoPE rotates the dims in pairs.")
    )
    x = x.detach().to(F64)
    if style == "half":
        return torch.complex(x[..., : d // 2], x[..., d // 2 :])
    return torch.complex(x[..., 0::2], x[..., 1::2])


def complex_scores(q, k, offsets, base=10000.0, style="half") -> torch.Tensor:
    """Re sum_i q_i conj(k_i) exp(1j delta theta_i) for each offset delta = m - n.

    RoFormer eq. 35 (section 3.4.3; eq. 12 of section 3.2.1 is the one-pair case). Equal to
    <R_m q, R_n k> for every m, n with m - n = delta. q, k: (D,). offsets: (P,) or an int P
    (0..P-1). Returns (P,) float64.
    """
    q = _vector("q", q)
    k = _vector("k", k, q.shape[0])
    delta = _positions("offsets", offsets)  # (P,)
    theta = rope_inv_freq(q.shape[0], base, dtype=F64)[0]  # (D/2,)
    phase = torch.polar(
        torch.ones(delta.shape[0], theta.shape[0], dtype=F64), delta[:, None] * theta
    )
    return (as_complex(q, style) * as_complex(k, style).conj() * phase).real.sum(-1)  # (P,)
