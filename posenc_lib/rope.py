"""RoPE: rotary position embedding (Su et al. 2021, "RoFormer", arXiv:2104.09864), and its scalings.

Each pair of a query's (or key's) dims is a 2-D vector, rotated by the angle m * theta_i for the
query's position m (RoFormer eq. 15: theta_i = base ** (-2i / D)). Then
<R_m q, R_n k> = <q, R_{n-m} k>: the score depends on positions only through n - m.

Two layouts of the pairs exist in the wild (``style``):
- ``"half"``: dim i pairs with dim i + D/2 (Llama, GPT-NeoX, Qwen, Mistral: ``rotate_half``);
- ``"interleaved"``: dim 2i pairs with dim 2i + 1 (RoFormer, GPT-J: ``rotate_every_two``).
They are the same rotation up to a fixed permutation of the dims.

Scalings stretch the frequencies so a model trained on L positions copes with longer inputs; each
is one function in the ``ROPE_SCALING`` registry, named as in transformers' ``rope_type``.

Shapes: B batch, H heads, T positions, D = head_dim.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from posenc_lib import _validate as validate

STYLES = ("half", "interleaved")


def _default_inv_freq(head_dim: int, base: float, dtype) -> torch.Tensor:
    """theta_i = base ** (-2i / D), i = 0 .. D/2 - 1. RoFormer eq. (15). (D/2,)

    Computed in ``dtype`` with the same operations, in the same order, as transformers, so that on
    any one machine the float32 frequencies equal transformers' exactly (the tests compare them
    with torch.equal): at position 8000 one ulp of theta is already 5e-4 radians of angle.
    """
    return 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=dtype) / head_dim)


def _default(head_dim, base, params, seq_len, dtype):
    """No scaling: the frequencies the model was trained with."""
    return _default_inv_freq(head_dim, base, dtype), 1.0


def _linear(head_dim, base, params, seq_len, dtype):
    """Position Interpolation (Chen et al. 2023, arXiv:2306.15595): f'(x, m) = f(x, m L / L').

    Squeezing positions m -> m / s (s = L' / L) is the same as dividing every frequency by s.
    """
    return _default_inv_freq(head_dim, base, dtype) / params["factor"], 1.0


def _ntk(head_dim, base, params, seq_len, dtype):
    """Static NTK-aware scaling (bloc97, 2023; YaRN paper arXiv:2309.00071, section 3.1).

    Raise the base to base * s ** (D / (D - 2)): the highest frequency is unchanged and the lowest
    is divided by exactly s, so high frequencies extrapolate and low ones interpolate.
    """
    d = head_dim
    return _default_inv_freq(d, base * params["factor"] ** (d / (d - 2)), dtype), 1.0


def dynamic_ntk_stretch(seq_len, factor, original) -> float:
    """The NTK-aware stretch s that dynamic NTK uses on a text of ``seq_len`` tokens.

    s(T) = factor * T' / L - (factor - 1), with T' = max(T, L) and L = ``original`` (the trained
    length); ``seq_len`` None means T' = L. This is transformers' ``_compute_dynamic_ntk_parameters``
    (``modeling_rope_utils.py``), written as 1 + factor * (T' - L) / L: a line that is 1 (no
    scaling) up to L and grows by ``factor`` for every further L tokens. With factor 1 it is
    s = max(T, L) / L, the stretch of the YaRN paper's dynamic scaling (section 3.3). The one home
    of this formula: ``_dynamic`` and the chapters call it.
    """
    f = validate.positive_float("factor", factor, 1.0, inclusive=True)
    length = validate.positive_int("original (the trained length L)", original)
    t = length if seq_len is None else max(validate.positive_int("seq_len", seq_len), length)
    return f * t / length - (f - 1)


def _dynamic(head_dim, base, params, seq_len, dtype):
    """Dynamic NTK (emozilla, 2023; YaRN paper section 3.3), in transformers' form.

    NTK-aware scaling with the stretch s = ``dynamic_ntk_stretch(seq_len, factor, L)``:
    base' = base * s ** (D / (D - 2)). Inside the original context (T <= L) s = 1: default RoPE.
    """
    stretch = dynamic_ntk_stretch(
        seq_len, params["factor"], params["original_max_position_embeddings"]
    )
    return _default_inv_freq(head_dim, base * stretch ** (head_dim / (head_dim - 2)), dtype), 1.0


def _yarn_attention_scaling(params) -> float:
    """YaRN's attention scale sqrt(1/t) = 0.1 ln(s) + 1, t the softmax temperature (section 3.4)."""
    if params.get("attention_factor") is not None:
        return float(params["attention_factor"])

    def mscale(scale, m=1.0):
        return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0

    s, m, m_all = params["factor"], params.get("mscale"), params.get("mscale_all_dim")
    return mscale(s, m) / mscale(s, m_all) if m and m_all else mscale(s)


def _yarn(head_dim, base, params, seq_len, dtype):
    """YaRN (Peng et al. 2023, arXiv:2309.00071, section 3.4): NTK-by-parts plus a temperature.

    Pair i makes r_i = L * theta_i / (2 pi) turns over the original context L. Pairs with
    r_i > beta_fast keep their frequency (extrapolate), pairs with r_i < beta_slow are divided by
    s (interpolate), and a linear ramp in the pair index blends the two in between (section 3.2).
    The ramp ends are found in pair-index space and rounded outwards when ``truncate``, as in
    transformers.
    """
    s, original = params["factor"], params["original_max_position_embeddings"]
    beta_fast, beta_slow = params["beta_fast"], params["beta_slow"]

    def pair_index_of(turns):  # solve L * base ** (-2i/D) / (2 pi) = turns for i
        return head_dim * math.log(original / (turns * 2 * math.pi)) / (2 * math.log(base))

    low, high = pair_index_of(beta_fast), pair_index_of(beta_slow)
    if params["truncate"]:
        low, high = math.floor(low), math.ceil(high)
    # (sic) the upper clamp is head_dim - 1 although pair indices stop at D/2 - 1, as in
    # transformers. It matters when ``high`` lands past the last pair: the ramp is then shallower
    # than a clamp at D/2 - 1 would make it (D = 32, base 100, L = 4096: the last pair keeps 0.615
    # of its frequency's extrapolating part instead of 0). We follow transformers.
    low, high = max(low, 0), min(high, head_dim - 1)
    if low == high:
        high += 0.001  # a step instead of a ramp, without dividing by zero
    pair = torch.arange(head_dim // 2, dtype=dtype)  # (D/2,)
    keep = 1 - ((pair - low) / (high - low)).clamp(0.0, 1.0)  # 1 = extrapolate, 0 = divide by s
    theta = _default_inv_freq(head_dim, base, dtype)  # (D/2,)
    inv_freq = theta / s * (1 - keep) + theta * keep
    return inv_freq, _yarn_attention_scaling(params)


def _llama3(head_dim, base, params, seq_len, dtype):
    """Llama 3.1's scaling: Meta's ``apply_scaling`` in the llama-models code, as transformers has it.

    Used by Llama 3.1 (Meta 2024, "The Llama 3 Herd of Models", arXiv:2407.21783); the paper itself
    does not spell the formula out, the released code does.

    Wavelengths shorter than L / high_freq_factor are kept, longer than L / low_freq_factor are
    divided by s, and in between the frequency is blended by r = L / wavelength:
    ((1 - g) / s + g) * theta with g = (r - low_freq_factor) / (high_freq_factor - low_freq_factor).
    """
    s, original = params["factor"], params["original_max_position_embeddings"]
    low_f, high_f = params["low_freq_factor"], params["high_freq_factor"]
    inv_freq = _default_inv_freq(head_dim, base, dtype)  # (D/2,)
    wavelength = 2 * math.pi / inv_freq  # (D/2,)
    blend = ((original / wavelength - low_f) / (high_f - low_f)).clamp(0.0, 1.0)  # 0 long, 1 short
    return (1 - blend) * inv_freq / s + blend * inv_freq, 1.0


# rope_type -> (function, required keys, optional keys). A new scaling is one function and one line.
ROPE_SCALING: dict[str, tuple[Callable, frozenset, frozenset]] = {
    "default": (_default, frozenset(), frozenset()),
    "linear": (_linear, frozenset({"factor"}), frozenset()),
    "ntk": (_ntk, frozenset({"factor"}), frozenset()),
    "dynamic": (_dynamic, frozenset({"factor", "original_max_position_embeddings"}), frozenset()),
    "yarn": (
        _yarn,
        frozenset({"factor", "original_max_position_embeddings"}),
        frozenset(
            {"beta_fast", "beta_slow", "attention_factor", "mscale", "mscale_all_dim", "truncate"}
        ),
    ),
    "llama3": (
        _llama3,
        frozenset(
            {"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"}
        ),
        frozenset(),
    ),
}


def _checked_scaling(scaling) -> tuple[str, dict]:
    """The rope_type and its checked parameters, with YaRN's defaults filled in."""
    if scaling is None:
        return "default", {}
    if not isinstance(scaling, dict):
        raise ValueError(
            f"scaling must be None or a dict like {{'rope_type': 'linear', 'factor': 4.0}}, "
            f"got {validate.show(scaling)}."
        )
    rope_type = validate.choice(
        "scaling['rope_type']", scaling.get("rope_type"), tuple(ROPE_SCALING)
    )
    _, required, optional = ROPE_SCALING[rope_type]
    given = set(scaling) - {"rope_type"}
    if missing := sorted(required - given):
        raise ValueError(f"rope_type {rope_type!r} needs the keys {missing}; got {sorted(given)}.")
    if unknown := sorted(given - required - optional):
        allowed = sorted(required | optional)
        raise ValueError(
            f"rope_type {rope_type!r} does not use the keys {unknown}; it takes {allowed}."
        )
    params = {}
    for key in given:
        label, value = f"scaling[{key!r}]", scaling[key]
        if key == "factor":
            params[key] = validate.positive_float(label, value, 1.0, inclusive=True)
        elif key == "original_max_position_embeddings":
            params[key] = validate.positive_int(label, value)
        elif key == "truncate":
            params[key] = validate.boolean(label, value)
        else:  # frequency factors, betas, attention factor, mscales: positive numbers
            params[key] = validate.positive_float(label, value)
    if rope_type == "llama3" and not params["low_freq_factor"] < params["high_freq_factor"]:
        raise ValueError(
            "llama3 scaling needs low_freq_factor < high_freq_factor, got "
            f"{params['low_freq_factor']} and {params['high_freq_factor']}."
        )
    if rope_type == "yarn":
        params = {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True} | params
        if params["beta_fast"] < params["beta_slow"]:
            raise ValueError(
                "yarn scaling needs beta_fast >= beta_slow (turns over the original context above "
                f"which pairs extrapolate, below which they interpolate), got {params['beta_fast']} "
                f"and {params['beta_slow']}."
            )
    return rope_type, params


def rope_inv_freq(
    head_dim, base=10000.0, scaling=None, seq_len=None, *, dtype=torch.float32, device=None
):
    """The rotation frequencies theta_i of each pair, and the factor to scale cos and sin by.

    head_dim: D, even. base: the RoPE base (``rope_theta``). scaling: None, or a dict in
    transformers' ``rope_parameters`` form with a ``rope_type`` from ``ROPE_SCALING`` and the keys
    that method needs. seq_len: the current length, used by ``"dynamic"`` only.
    Computed in ``dtype``; for the default and for linear, dynamic, yarn and llama3 the values
    equal transformers' (``ROPE_INIT_FUNCTIONS``) for the same parameters.
    Returns (inv_freq (D/2,), attention_scaling float).
    """
    d = validate.even_int("head_dim", head_dim, "RoPE rotates the dims in pairs.")
    b = validate.positive_float("base", base, minimum=1.0)
    validate.table_dtype(dtype, device)
    if seq_len is not None:
        seq_len = validate.positive_int("seq_len", seq_len)
    rope_type, params = _checked_scaling(scaling)
    if rope_type in ("ntk", "dynamic") and d < 4:
        raise ValueError(
            f"{rope_type} scaling raises the base to the power D / (D - 2): head_dim must be at least 4, got {d}."
        )
    try:
        inv_freq, attention_scaling = ROPE_SCALING[rope_type][0](d, b, params, seq_len, dtype)
    except OverflowError:
        inv_freq = None
    if inv_freq is None or not bool(torch.isfinite(inv_freq).all() and (inv_freq > 0).all()):
        raise ValueError(
            f"base={b:g} with scaling={scaling} gives frequencies that overflow or vanish in {dtype}; "
            "use a smaller base or factor."
        )
    return inv_freq.to(device=device), float(attention_scaling)


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
            "inv_freq is empty; it needs one frequency per pair of dims (head_dim // 2)."
        )
    validate.choice("style", style, STYLES)
    scale = validate.positive_float("attention_scaling", attention_scaling)
    if not isinstance(positions, torch.Tensor):
        label = "positions (a sequence length, or a tensor of positions)"
        positions = torch.arange(validate.positive_int(label, positions), device=inv_freq.device)
    validate.tensor("positions", positions, min_rank=1, shape_hint="(..., T)")
    if positions.dtype == torch.bool or positions.dtype.is_complex:
        raise ValueError(f"positions must be real numbers, got dtype {positions.dtype}.")
    if positions.dtype.is_floating_point and not bool(torch.isfinite(positions).all()):
        raise ValueError("positions must be finite; got NaN or infinity among them.")
    validate.table_size("the cos and sin tables", positions.numel(), 2 * inv_freq.numel())
    # Half-precision angles lose whole radians past a few hundred positions: compute in >= float32.
    work = torch.promote_types(inv_freq.dtype, torch.float32)
    angles = positions[..., None].to(work) * inv_freq.to(work)  # (..., T, D/2)
    if style == "half":
        angles = torch.cat((angles, angles), dim=-1)  # (..., T, D)
    else:
        angles = angles.repeat_interleave(2, dim=-1)  # (..., T, D)
    return (angles.cos() * scale).to(inv_freq.dtype), (angles.sin() * scale).to(inv_freq.dtype)


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
    the CPU (benchmarks/bench_rope.py). tests/test_rope.py checks both give the same numbers.
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


def _check_rope_inputs(x, cos, sin, style) -> None:
    """apply_rope's input, each mistake named in a sentence."""
    validate.choice("style", style, STYLES)
    validate.float_tensor("x", x, min_rank=2, shape_hint="(..., T, head_dim)")
    validate.float_tensor("cos", cos, min_rank=2, shape_hint="(T, head_dim)")
    validate.float_tensor("sin", sin, min_rank=2, shape_hint="(T, head_dim)")
    if cos.shape != sin.shape:
        raise ValueError(
            f"cos and sin must have the same shape, got {tuple(cos.shape)} and {tuple(sin.shape)}."
        )
    validate.even_int("x.shape[-1] (head_dim)", x.shape[-1], "RoPE rotates the dims in pairs.")
    if cos.shape[-2:] != x.shape[-2:]:
        raise ValueError(
            f"cos and sin have shape {tuple(cos.shape)} but x has shape {tuple(x.shape)}; their "
            f"last two dims must be (T, head_dim) = {tuple(x.shape[-2:])}: an angle per position and dim."
        )
    try:
        fits = torch.broadcast_shapes(x.shape, cos.shape) == x.shape
    except RuntimeError:
        fits = False
    if not fits:
        raise ValueError(
            f"cos of shape {tuple(cos.shape)} does not broadcast to x's shape {tuple(x.shape)}."
        )
    if cos.requires_grad or sin.requires_grad:
        raise ValueError(
            "apply_rope does not differentiate through cos and sin; pass them detached."
        )
    for name, table in (("cos", cos), ("sin", sin)):
        first, second = _pair_halves(table, style)
        if not torch.equal(first, second):
            other = STYLES[1 - STYLES.index(style)]
            raise ValueError(
                f"{name} does not repeat each frequency over the two dims of a pair in the {style!r} "
                f"layout; was it built with rope_cos_sin(..., style={other!r})? Use one style for all."
            )


def apply_rope(x, cos, sin, style="half"):
    """Rotate every pair of dims of ``x`` by its position's angle: RoFormer eq. (34),
    ``x * cos + rotate_half(x) * sin`` in the "half" layout.

    x: (..., T, D), e.g. (B, H, T, D). cos, sin: (T, D) or any shape that broadcasts to x's, from
    ``rope_cos_sin`` with the same ``style``. Equal to transformers' Llama ``apply_rotary_pos_emb``
    (style="half") and GPT-J's (style="interleaved"). Differentiable in x (not in cos and sin).
    Returns a tensor of x's shape and dtype.
    """
    _check_rope_inputs(x, cos, sin, style)
    return _Rotation.apply(x, cos.to(x.dtype), sin.to(x.dtype), style)
