"""RoPE: rotary position embedding (Su et al. 2021, "RoFormer", arXiv:2104.09864), and its scalings.

Each pair of a query's (or key's) dims is a 2-D vector, rotated by the angle m * theta_i for the
query's position m (RoFormer eq. 15: theta_i = base ** (-2i / D)). Then
<R_m q, R_n k> = <q, R_{n-m} k>: the score depends on positions only through n - m.

Two layouts of the pairs exist in the wild (``style``):
- ``"half"``: dim i pairs with dim i + D/2 (Llama, GPT-NeoX, Qwen, Mistral: ``rotate_half``);
- ``"interleaved"``: dim 2i pairs with dim 2i + 1 (RoFormer, GPT-J: ``rotate_every_two``).
They are the same rotation up to a fixed permutation of the dims.

The frequencies theta_i and the scalings that stretch them so a model trained on L positions copes
with longer inputs (``rope_inv_freq`` and the ``ROPE_SCALING`` registry, named as in transformers'
``rope_type``) live in ``rope_scaling``; this module imports them, so ``posenc_lib.rope.X`` still
works for each of them.

Shapes: B batch, H heads, T positions, D = head_dim.
"""

from __future__ import annotations

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, _, tr

# The frequencies and their scalings live in rope_scaling; imported here, where they always were.
from posenc_lib.rope_scaling import (  # noqa: F401 - re-exported
    ROPE_SCALING,
    dynamic_ntk_stretch,
    rope_inv_freq,
)

STYLES = ("half", "interleaved")


def rope_cos_sin(positions, inv_freq, attention_scaling=1.0, style="half"):
    """cos(m theta_i) and sin(m theta_i) for every position m, laid out for ``style``.

    positions: an int T (meaning 0 .. T-1) or a tensor (..., T); fractional positions are allowed.
    inv_freq: (D/2,) from ``rope_inv_freq``. The angles are computed in inv_freq's dtype (float32
    by default, as in transformers' Llama), and in float32 at least for half-precision inv_freq.
    ``"half"`` repeats the frequencies as [theta, theta]; ``"interleaved"`` as
    [theta_0, theta_0, theta_1, theta_1, ...].
    Returns (cos, sin), each (..., T, D), already multiplied by attention_scaling.
    """
    validate.float_tensor(
        "inv_freq", inv_freq, min_rank=1, max_rank=1, shape_hint="(head_dim // 2,)"
    )
    if inv_freq.numel() == 0:
        raise ValueError(
            _("inv_freq is empty; it needs one frequency per pair of dims (head_dim // 2).")
        )
    validate.choice("style", style, STYLES)
    scale = validate.positive_float("attention_scaling", attention_scaling)
    if not isinstance(positions, torch.Tensor):
        label = _("positions (a sequence length, or a tensor of positions)")
        positions = torch.arange(validate.positive_int(label, positions), device=inv_freq.device)
    validate.tensor("positions", positions, min_rank=1, shape_hint="(..., T)")
    if positions.dtype == torch.bool or positions.dtype.is_complex:
        raise ValueError(_real_numbers("positions", positions))
    if positions.dtype.is_floating_point and not bool(torch.isfinite(positions).all()):
        raise ValueError(_("positions must be finite; got NaN or infinity among them."))
    validate.table_size(N_("the cos and sin tables"), positions.numel(), 2 * inv_freq.numel())
    # Half-precision angles lose whole radians past a few hundred positions: compute in >= float32.
    work = torch.promote_types(inv_freq.dtype, torch.float32)
    angles = positions[..., None].to(work) * inv_freq.to(work)  # (..., T, D/2)
    if style == "half":
        angles = torch.cat((angles, angles), dim=-1)  # (..., T, D)
    else:
        angles = angles.repeat_interleave(2, dim=-1)  # (..., T, D)
    return (angles.cos() * scale).to(inv_freq.dtype), (angles.sin() * scale).to(inv_freq.dtype)


def _real_numbers(name: str, value: torch.Tensor) -> str:
    return tr("{name} must be real numbers, got dtype {dtype}.", name=name, dtype=value.dtype)


def _pair_halves(t: torch.Tensor, style: str):
    """The first and second member of every pair, as views of ``t`` (..., D) -> two (..., D/2)."""
    if style == "half":
        half = t.shape[-1] // 2
        return t[..., :half], t[..., half:]
    return t[..., 0::2], t[..., 1::2]


def _rotate(x, cos, sin, style):
    """(x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin) for every pair: RoFormer eq. (34).

    In the textbook form this is ``x * cos + rotate_half(x) * sin`` (transformers' Llama), where
    rotate_half(x) = (-x2, x1). That form makes five full-size temporaries; here each half of the
    output is written in place with two fused passes (mul, then addcmul_), about twice as fast on
    the CPU (benchmarks/bench_rope.py). tests/core/test_rope.py checks both give the same numbers.
    """
    out = torch.empty_like(x, memory_format=torch.contiguous_format)  # (..., T, D)
    x1, x2 = _pair_halves(x, style)
    out1, out2 = _pair_halves(out, style)
    c, s = _pair_halves(cos, style)[0], _pair_halves(sin, style)[0]  # (..., T, D/2)
    torch.mul(x1, c, out=out1)
    out1.addcmul_(x2, s, value=-1.0)
    torch.mul(x2, c, out=out2)
    out2.addcmul_(x1, s)
    return out


class _Rotation(torch.autograd.Function):
    """y = R x per pair. R is orthogonal up to the scale, so the gradient is R^T g: sin negated.

    The backward pass is itself a _Rotation, so second derivatives work too.
    """

    @staticmethod
    def forward(ctx, x, cos, sin, style):
        ctx.save_for_backward(cos, sin)
        ctx.style = style
        return _rotate(x, cos, sin, style)

    @staticmethod
    def backward(ctx, grad):
        cos, sin = ctx.saved_tensors
        return _Rotation.apply(grad, cos, -sin, ctx.style), None, None, None


def _validate_rope_inputs(x, cos, sin, style) -> None:
    """apply_rope's input, each mistake named in a sentence."""
    validate.choice("style", style, STYLES)
    validate.float_tensor("x", x, min_rank=2, shape_hint="(..., T, head_dim)")
    validate.float_tensor("cos", cos, min_rank=2, shape_hint="(T, head_dim)")
    validate.float_tensor("sin", sin, min_rank=2, shape_hint="(T, head_dim)")
    if cos.shape != sin.shape:
        raise ValueError(
            tr(
                "cos and sin must have the same shape, got {cos} and {sin}.",
                cos=tuple(cos.shape),
                sin=tuple(sin.shape),
            )
        )
    validate.even_int("x.shape[-1] (head_dim)", x.shape[-1], N_("RoPE rotates the dims in pairs."))
    if cos.shape[-2:] != x.shape[-2:]:
        raise ValueError(
            tr(
                "cos and sin have shape {cos} but x has shape {x}; their last two dims must be "
                "(T, head_dim) = {last}: an angle per position and dim.",
                cos=tuple(cos.shape),
                x=tuple(x.shape),
                last=tuple(x.shape[-2:]),
            )
        )
    try:
        fits = torch.broadcast_shapes(x.shape, cos.shape) == x.shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            tr(
                "cos of shape {cos} does not broadcast to x's shape {x}.",
                cos=tuple(cos.shape),
                x=tuple(x.shape),
            )
        )
    if cos.requires_grad or sin.requires_grad:
        raise ValueError(
            _("apply_rope does not differentiate through cos and sin; pass them detached.")
        )
    for name, table in (("cos", cos), ("sin", sin)):
        first, second = _pair_halves(table, style)
        if not torch.equal(first, second):
            other = STYLES[1 - STYLES.index(style)]
            raise ValueError(
                tr(
                    "{name} does not repeat each frequency over the two dims of a pair in the "
                    "{style!r} layout; was it built with rope_cos_sin(..., style={other!r})? Use "
                    "one style for all.",
                    name=name,
                    style=style,
                    other=other,
                )
            )


def apply_rope(x, cos, sin, style="half"):
    """Rotate every pair of dims of ``x`` by its position's angle: RoFormer eq. (34),
    ``x * cos + rotate_half(x) * sin`` in the "half" layout.

    x: (..., T, D), e.g. (B, H, T, D). cos, sin: (T, D) or any shape that broadcasts to x's, from
    ``rope_cos_sin`` with the same ``style``. Equal to transformers' Llama ``apply_rotary_pos_emb``
    (style="half") and GPT-J's (style="interleaved"). Differentiable in x (not in cos and sin).
    Returns a tensor of x's shape and dtype.
    """
    _validate_rope_inputs(x, cos, sin, style)
    return _Rotation.apply(x, cos.to(x.dtype), sin.to(x.dtype), style)


def rope_2d_cos_sin(rows, cols, inv_freq, style="half"):
    """cos and sin for 2-D (axial) RoPE on a grid of image patches: each patch at (row, column).

    The first half of each head's pairs turn with the patch's row, the second half with its
    column, both at the frequencies ``inv_freq`` (D/4,), so D = 4 * len(inv_freq). The score of
    a query at (r, c) and a key at (r', c') then depends on (r - r', c - c') only. This is the
    vision tower of Qwen2-VL (Wang et al. 2024, arXiv:2409.12191, "2D-RoPE" in the
    ViT, as transformers implements it: ``Qwen2VLVisionRotaryEmbedding``, rows first, with inv_freq =
    ``rope_inv_freq(D // 2, base)``), and RoPE-Axial of Heo et al. 2024 ("Rotary Position
    Embedding for Vision Transformer", arXiv:2403.13298; ``compute_axial_cis`` in
    github.com/naver-ai/rope-vit, base 100, interleaved): that one is
    ``rope_2d_cos_sin(cols, rows, ..., style="interleaved")``, columns first.

    rows, cols: tensors (..., T) of one shape (a patch's row and column; fractional allowed).
    inv_freq: (D/4,), e.g. ``rope_inv_freq(D // 2, base)[0]``. Returns (cos, sin), each
    (..., T, D) in inv_freq's dtype, laid out for ``style``: pass them to ``apply_rope``.
    """
    for name, value in (("rows", rows), ("cols", cols)):
        validate.tensor(name, value, min_rank=1, shape_hint="(..., T)")
        if value.dtype == torch.bool or value.dtype.is_complex:
            raise ValueError(_real_numbers(name, value))
    if rows.shape != cols.shape:
        raise ValueError(
            tr(
                "rows has shape {rows} but cols has {cols}; give one row and one column per patch.",
                rows=tuple(rows.shape),
                cols=tuple(cols.shape),
            )
        )
    cos_r, sin_r = rope_cos_sin(rows, inv_freq, style=style)  # (..., T, D/2) each
    cos_c, sin_c = rope_cos_sin(cols, inv_freq, style=style)  # (..., T, D/2) each
    if style == "interleaved":  # pairs (2i, 2i + 1): the row pairs, then the column pairs
        return torch.cat((cos_r, cos_c), -1), torch.cat((sin_r, sin_c), -1)  # (..., T, D)
    quarter = inv_freq.shape[-1]  # "half": pair i is (i, i + D/2); each table is [f, f]
    cos = torch.cat((cos_r[..., :quarter], cos_c[..., :quarter]), -1)  # (..., T, D/2)
    sin = torch.cat((sin_r[..., :quarter], sin_c[..., :quarter]), -1)  # (..., T, D/2)
    return torch.cat((cos, cos), -1), torch.cat((sin, sin), -1)  # (..., T, D)
