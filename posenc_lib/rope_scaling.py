"""RoPE's frequencies and the scalings that stretch them, each formula in one place.

RoPE turns pair i of a query or key by m * theta_i at position m, theta_i = base ** (-2i / D)
(RoFormer, Su et al. 2021, arXiv:2104.09864, eq. 15): ``default_inv_freq``. A scaling changes the
frequencies so that a model trained on L positions copes with longer inputs; each is one function
in the ``ROPE_SCALING`` registry, keyed by ``rope_type`` (transformers' names; ``"ntk"``, the
static NTK-aware base, is the course's own: transformers has only its dynamic form), and
``rope_inv_freq`` is the one door to them. The formulas the chapters also use on their own live here too: the NTK-aware
base (``ntk_base``), dynamic NTK's stretch (``dynamic_ntk_stretch``), YaRN's ramp (``yarn_ramp``,
between the ends of ``yarn_correction_range``) and its attention scale (``yarn_attention_scale``).

Names: the course calls Position Interpolation (Chen et al. 2023, arXiv:2306.15595) "PI";
transformers' ``rope_type`` for it is ``"linear"``. ``METHODS`` is the one place the course's
names meet the ``rope_type`` keys; "linear" is used only as that key.

Shapes: D = head_dim, D/2 pairs.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, _, tr

# The course's name of each scaling chapter 7 compares -> its rope_type in ROPE_SCALING.
METHODS = {"PI": "linear", "NTK": "ntk", "dynamic": "dynamic", "YaRN": "yarn"}


def default_inv_freq(head_dim: int, base: float, dtype) -> torch.Tensor:
    """theta_i = base ** (-2i / D), i = 0 .. D/2 - 1. RoFormer eq. (15). (D/2,)

    Computed in ``dtype`` with the same operations, in the same order, as transformers, so that on
    any one machine the float32 frequencies equal transformers' exactly (the tests compare them
    with torch.equal): at position 8000 one ulp of theta is already 5e-4 radians of angle.
    Not validated: ``rope_inv_freq`` validates its arguments first.
    """
    return 1.0 / base ** (torch.arange(0, head_dim, 2, dtype=dtype) / head_dim)


def ntk_base(base: float, factor: float, head_dim: int) -> float:
    """The NTK-aware base for a scale factor s: base * s ** (D / (D - 2)).

    With it, theta'_i = theta_i * s ** (-2i / (D - 2)): pair 0 keeps its frequency and the last
    pair, i = D/2 - 1, is divided by exactly s (bloc97 2023; YaRN paper, Peng et al. 2023,
    arXiv:2309.00071, section 3.1). transformers' ``_compute_dynamic_ntk_parameters`` raises the
    base the same way, with s its dynamic stretch.
    """
    b = validate.positive_float("base", base, minimum=1.0)
    s = validate.positive_float("factor", factor, 1.0, inclusive=True)
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    if d < 4:
        raise ValueError(
            tr("head_dim must be at least 4 for D / (D - 2) to be defined, got {d}.", d=d)
        )
    return b * s ** (d / (d - 2))


def dynamic_ntk_stretch(seq_len, factor, original) -> float:
    """The NTK-aware stretch s that dynamic NTK uses on a text of ``seq_len`` tokens.

    s(T) = factor * T' / L - (factor - 1), with T' = max(T, L) and L = ``original`` (the trained
    length); ``seq_len`` None means T' = L. This is transformers' ``_compute_dynamic_ntk_parameters``
    (``modeling_rope_utils.py``), written as 1 + factor * (T' - L) / L: a line that is 1 (no
    scaling) up to L and grows by ``factor`` for every further L tokens. With factor 1 it is
    s = max(T, L) / L, the stretch of the YaRN paper's dynamic scaling (section 3.3).
    """
    f = validate.positive_float("factor", factor, 1.0, inclusive=True)
    length = validate.positive_int(_("original (the trained length L)"), original)
    t = length if seq_len is None else max(validate.positive_int("seq_len", seq_len), length)
    return f * t / length - (f - 1)


def yarn_attention_scale(factor: float, mscale: float = 1.0) -> float:
    """YaRN's attention scale sqrt(1/t) = 0.1 ln(s) + 1 (YaRN paper, section 3.4); 1 for s <= 1.

    t is the softmax temperature (softmax(q.k / (t sqrt(D)))), so t = 1 / (0.1 ln s + 1)^2 < 1 for
    s > 1. Queries and keys are both multiplied by sqrt(1/t), so the logits by 1/t. ``mscale``
    multiplies the 0.1 (DeepSeek's variant): transformers' ``get_mscale(scale, mscale)`` inside
    ``_compute_yarn_parameters``.
    """
    s = validate.positive_float("factor", factor)
    m = validate.positive_float("mscale", mscale)
    return 1.0 if s <= 1 else 0.1 * m * math.log(s) + 1.0


def yarn_correction_range(
    head_dim: int,
    base: float,
    original: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> tuple[float, float]:
    """The ends (low, high) of YaRN's ramp, in pair-index space: transformers' ``find_correction_range``.

    Pair i turns r_i = L theta_i / (2 pi) times over the original context L = ``original``; solving
    r_i = beta for i gives i(beta) = D ln(L / (2 pi beta)) / (2 ln base) (``find_correction_dim``).
    low = i(beta_fast), high = i(beta_slow), rounded outwards (floor, ceil) when ``truncate``, then
    clamped to [0, D - 1] (YaRN paper, arXiv:2309.00071, section 3.2, as the authors' code has it).
    """
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    b = validate.positive_float("base", base, minimum=1.0)
    length = validate.positive_int(_("original (the trained length L)"), original)
    fast = validate.positive_float("beta_fast", beta_fast)
    slow = validate.positive_float("beta_slow", beta_slow)
    if fast < slow:
        raise ValueError(
            tr(
                "beta_fast must be at least beta_slow (turns above which pairs keep their "
                "frequency, below which they are divided), got beta_fast={fast:g}, "
                "beta_slow={slow:g}.",
                fast=fast,
                slow=slow,
            )
        )

    def pair_index(turns):  # solve L * base ** (-2i / D) / (2 pi) = turns for i
        return d * math.log(length / (turns * 2 * math.pi)) / (2 * math.log(b))

    low, high = pair_index(fast), pair_index(slow)
    if validate.boolean("truncate", truncate):
        low, high = math.floor(low), math.ceil(high)
    # (sic) the upper clamp is head_dim - 1 although pair indices stop at D/2 - 1, as in
    # transformers. It matters when ``high`` lands past the last pair: the ramp is then shallower
    # than a clamp at D/2 - 1 would make it (D = 32, base 100, L = 4096: the last pair keeps 0.615
    # of its frequency's extrapolating part instead of 0). We follow transformers.
    return max(low, 0), min(high, d - 1)


def yarn_ramp(
    head_dim: int,
    base: float,
    original: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
    *,
    dtype=torch.float64,
) -> torch.Tensor:
    """YaRN's ramp: the share of each pair's own frequency it keeps, 1 (keep) to 0 (divide by s).

    Pairs turning more than beta_fast times over the original context L = ``original`` keep their
    frequency, pairs turning fewer than beta_slow times are divided by s, and in between the share
    falls linearly in the pair index from ``yarn_correction_range``'s low end to its high end
    (YaRN paper, arXiv:2309.00071, section 3.2; transformers' ``linear_ramp_factor``, subtracted
    from 1). The new frequency is theta_i (ramp_i + (1 - ramp_i) / s). Returns (D/2,) in ``dtype``.
    """
    low, high = yarn_correction_range(head_dim, base, original, beta_fast, beta_slow, truncate)
    if low == high:
        high += 0.001  # a step instead of a ramp, without dividing by zero
    pair = torch.arange(head_dim // 2, dtype=dtype)  # (D/2,)
    return 1 - ((pair - low) / (high - low)).clamp(0.0, 1.0)  # 1 = extrapolate, 0 = divide by s


# -- the scalings: (head_dim, base, validated params, seq_len, dtype) -> (inv_freq (D/2,), scale) ----


def _default(head_dim, base, params, seq_len, dtype):
    """No scaling: the frequencies the model was trained with."""
    return default_inv_freq(head_dim, base, dtype), 1.0


def _position_interpolation(head_dim, base, params, seq_len, dtype):
    """PI, rope_type "linear" (Chen et al. 2023, arXiv:2306.15595): f'(x, m) = f(x, m L / L').

    Squeezing positions m -> m / s (s = L' / L) is the same as dividing every frequency by s.
    """
    return default_inv_freq(head_dim, base, dtype) / params["factor"], 1.0


def _ntk(head_dim, base, params, seq_len, dtype):
    """Static NTK-aware scaling (bloc97, 2023; YaRN paper arXiv:2309.00071, section 3.1).

    Raise the base to ``ntk_base``: the highest frequency is unchanged and the lowest is divided
    by exactly s, so high frequencies extrapolate and low ones interpolate.
    """
    return default_inv_freq(head_dim, ntk_base(base, params["factor"], head_dim), dtype), 1.0


def _dynamic(head_dim, base, params, seq_len, dtype):
    """Dynamic NTK (emozilla, 2023; YaRN paper section 3.3), in transformers' form.

    NTK-aware scaling with the stretch s = ``dynamic_ntk_stretch(seq_len, factor, L)``:
    base' = ``ntk_base(base, s, D)``. Inside the original context (T <= L) s = 1: default RoPE.
    """
    stretch = dynamic_ntk_stretch(
        seq_len, params["factor"], params["original_max_position_embeddings"]
    )
    return default_inv_freq(head_dim, ntk_base(base, stretch, head_dim), dtype), 1.0


def _yarn_attention_scaling(params) -> float:
    """The scale of cos and sin: ``attention_factor`` if given, else ``yarn_attention_scale``
    (with DeepSeek's ratio mscale / mscale_all_dim when both are given, as transformers)."""
    if params.get("attention_factor") is not None:
        return float(params["attention_factor"])
    s, m, m_all = params["factor"], params.get("mscale"), params.get("mscale_all_dim")
    if m and m_all:
        return yarn_attention_scale(s, m) / yarn_attention_scale(s, m_all)
    return yarn_attention_scale(s)


def _yarn(head_dim, base, params, seq_len, dtype):
    """YaRN (Peng et al. 2023, arXiv:2309.00071, section 3.4): NTK-by-parts plus a temperature.

    Pairs the ramp keeps (``yarn_ramp``: those turning more than beta_fast times over the original
    context) keep their frequency, pairs it drops are divided by s, and the ramp blends the two in
    between (section 3.2); cos and sin are scaled by ``yarn_attention_scale``.
    """
    s = params["factor"]
    keep = yarn_ramp(
        head_dim,
        base,
        params["original_max_position_embeddings"],
        params["beta_fast"],
        params["beta_slow"],
        params["truncate"],
        dtype=dtype,
    )  # (D/2,)
    theta = default_inv_freq(head_dim, base, dtype)  # (D/2,)
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
    inv_freq = default_inv_freq(head_dim, base, dtype)  # (D/2,)
    wavelength = 2 * math.pi / inv_freq  # (D/2,)
    blend = ((original / wavelength - low_f) / (high_f - low_f)).clamp(0.0, 1.0)  # 0 long, 1 short
    return (1 - blend) * inv_freq / s + blend * inv_freq, 1.0


# rope_type -> (function, required keys, optional keys). A new scaling is one function and one line.
ROPE_SCALING: dict[str, tuple[Callable, frozenset, frozenset]] = {
    "default": (_default, frozenset(), frozenset()),
    "linear": (_position_interpolation, frozenset({"factor"}), frozenset()),  # PI
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


def _validated_scaling(scaling) -> tuple[str, dict]:
    """The rope_type and its validated parameters, with YaRN's defaults filled in."""
    if scaling is None:
        return "default", {}
    if not isinstance(scaling, dict):
        raise ValueError(
            tr(
                "scaling must be None or a dict like {{'rope_type': 'linear', 'factor': 4.0}}, "
                "got {value}.",
                value=validate.show(scaling),
            )
        )
    rope_type = validate.choice(
        "scaling['rope_type']", scaling.get("rope_type"), tuple(ROPE_SCALING)
    )
    _, required, optional = ROPE_SCALING[rope_type]
    given = set(scaling) - {"rope_type"}
    if missing := sorted(required - given):
        raise ValueError(
            tr(
                "rope_type {rope_type!r} needs the keys {missing}; got {given}.",
                rope_type=rope_type,
                missing=missing,
                given=sorted(given),
            )
        )
    if unknown := sorted(given - required - optional):
        allowed = sorted(required | optional)
        raise ValueError(
            tr(
                "rope_type {rope_type!r} does not use the keys {unknown}; it takes {allowed}.",
                rope_type=rope_type,
                unknown=unknown,
                allowed=allowed,
            )
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
            tr(
                "llama3 scaling needs low_freq_factor < high_freq_factor, got {low} and {high}.",
                low=params["low_freq_factor"],
                high=params["high_freq_factor"],
            )
        )
    if rope_type == "yarn":
        params = {"beta_fast": 32.0, "beta_slow": 1.0, "truncate": True} | params
        if params["beta_fast"] < params["beta_slow"]:
            raise ValueError(
                tr(
                    "yarn scaling needs beta_fast >= beta_slow (turns over the original context "
                    "above which pairs extrapolate, below which they interpolate), got {fast} and "
                    "{slow}.",
                    fast=params["beta_fast"],
                    slow=params["beta_slow"],
                )
            )
    return rope_type, params


def rope_inv_freq(
    head_dim, base=10000.0, scaling=None, seq_len=None, *, dtype=torch.float32, device=None
):
    """The rotation frequencies theta_i of each pair, and the factor to scale cos and sin by.

    head_dim: D, even. base: the RoPE base (``rope_theta``). scaling: None, or a dict in
    transformers' ``rope_parameters`` form with a ``rope_type`` from ``ROPE_SCALING`` and the keys
    that method needs. seq_len: the current length, used by ``"dynamic"`` only.
    Computed in ``dtype``; for the default and for PI ("linear"), dynamic, yarn and llama3 the
    values equal transformers' (``ROPE_INIT_FUNCTIONS``) for the same parameters.
    Returns (inv_freq (D/2,), attention_scaling float).
    """
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    b = validate.positive_float("base", base, minimum=1.0)
    validate.table_dtype(dtype, device)
    if seq_len is not None:
        seq_len = validate.positive_int("seq_len", seq_len)
    rope_type, params = _validated_scaling(scaling)
    if rope_type in ("ntk", "dynamic") and d < 4:
        raise ValueError(
            tr(
                "{rope_type} scaling raises the base to the power D / (D - 2): head_dim must be at "
                "least 4, got {d}.",
                rope_type=rope_type,
                d=d,
            )
        )
    try:
        inv_freq, attention_scaling = ROPE_SCALING[rope_type][0](d, b, params, seq_len, dtype)
    except OverflowError:
        inv_freq = None
    if inv_freq is None or not bool(torch.isfinite(inv_freq).all() and (inv_freq > 0).all()):
        raise ValueError(
            tr(
                "base={b:g} with scaling={scaling} gives frequencies that overflow or vanish in "
                "{dtype}; use a smaller base or factor.",
                b=b,
                scaling=scaling,
                dtype=dtype,
            )
        )
    return inv_freq.to(device=device), float(attention_scaling)
