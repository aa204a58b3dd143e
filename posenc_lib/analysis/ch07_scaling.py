"""Chapter 7's RoPE scalings, pair by pair: which pairs turn a full circle within the training
length, and what each scaling does to each pair's frequency.

RoPE turns pair i of a query or key by m * theta_i at position m, theta_i = base ** (-2i / D)
(RoFormer, Su et al. 2021, arXiv:2104.09864, eq. 15). Its wavelength, the distance over which the
pair turns once, is lambda_i = 2 pi / theta_i. In a training window of L tokens the largest
query-key distance is L - 1, so pair i has met every angle of its circle in training if and only
if lambda_i <= L - 1 (``full_turn_pairs``). The other pairs meet new angles past L.

The scalings change the frequencies at inference. Each formula has its one home in the core,
``rope_scaling`` (the registry ``ROPE_SCALING``, ``ntk_base``, ``dynamic_ntk_stretch``,
``yarn_ramp``, ``yarn_attention_scale`` and ``METHODS``, the course's names -> rope_type); this
module imports them under the chapter's names, and names and compares the scalings:
- Position Interpolation, "PI" (Chen et al. 2023, arXiv:2306.15595): theta_i / s for every pair;
- NTK-aware (bloc97 2023; YaRN paper, Peng et al. 2023, arXiv:2309.00071, section 3.1): base ->
  base s^(D/(D-2))
  (``ntk_base``): the fastest pair keeps its frequency, the slowest is divided by exactly s;
- dynamic NTK (YaRN paper section 3.3; transformers' form): NTK-aware with the stretch
  s(T) = factor * T / L - (factor - 1) recomputed for each length T > L (``rope_scaling.dynamic_ntk_stretch``);
  the chapter uses factor 1, where s(T) = T / L;
- YaRN (YaRN paper sections 3.2 and 3.4): keep the fast pairs, divide the slow ones by s, a ramp
  between (``yarn_ramp``), and queries and keys multiplied by the attention scale sqrt(1/t)
  (``yarn_attention_scale``; t is the paper's softmax temperature, below 1 for s > 1).

Shapes: D = head_dim, P = D / 2 pairs. Float64 throughout.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib import rope_scaling
from posenc_lib.i18n import N_, _
from posenc_lib.rope_scaling import (  # noqa: F401 - re-exported: the chapter's names for them
    METHODS,
    ntk_base,
    rope_inv_freq,
    yarn_attention_scale,
)

F64 = torch.float64


def _sizes(head_dim, base, train_len) -> tuple[int, float, int]:
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    b = validate.positive_float("base", base, minimum=1.0)
    length = validate.positive_int(_("train_len (the training length L)"), train_len)
    if length < 2:
        raise ValueError(
            f"train_len must be at least 2 (a window with one distance), got {length}."
        )
    return d, b, length


def frequencies(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """theta_i = base ** (-2i / D), i = 0 .. D/2 - 1 (RoFormer eq. 15), in float64. (P,)."""
    return rope_inv_freq(head_dim, base, dtype=F64)[0]


def wavelengths(head_dim: int, base: float = 10000.0) -> torch.Tensor:
    """lambda_i = 2 pi / theta_i: the distance over which pair i turns once. (P,) float64."""
    return 2 * math.pi / frequencies(head_dim, base)


def full_turn_pairs(head_dim: int, base: float, train_len: int) -> list[int]:
    """The pairs that turn a full circle within a training window of ``train_len`` tokens.

    The largest query-key distance in the window is L - 1, so pair i has met all of its angles
    when (L - 1) theta_i >= 2 pi, i.e. lambda_i <= L - 1. Returns their indices, ascending.
    """
    d, b, length = _sizes(head_dim, base, train_len)
    return [i for i, w in enumerate(wavelengths(d, b).tolist()) if w <= length - 1]


def yarn_ramp(
    head_dim: int,
    base: float,
    train_len: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> torch.Tensor:
    """YaRN's ramp: the share of each pair's own frequency it keeps, 1 (keep) to 0 (divide by s).

    ``rope_scaling.yarn_ramp`` (YaRN paper, arXiv:2309.00071, section 3.2, in the form of the
    authors' code and transformers) for a training length L = ``train_len`` >= 2, in float64. The
    new frequency is theta_i (ramp_i + (1 - ramp_i) / s). (P,) float64.
    """
    d, b, length = _sizes(head_dim, base, train_len)
    return rope_scaling.yarn_ramp(d, b, length, beta_fast, beta_slow, truncate, dtype=F64)


def yarn_ramp_by_turns(
    head_dim: int,
    base: float,
    train_len: int,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> torch.Tensor:
    """YaRN's ramp as the paper writes it: gamma(r) = (r - alpha) / (beta - alpha), clamped to
    [0, 1], linear in the number of turns r_i = L theta_i / (2 pi) rather than in the pair index
    (YaRN paper, arXiv:2309.00071, section 3.2; alpha = beta_slow, beta = beta_fast). The share of
    each pair's frequency kept, as ``yarn_ramp`` (which follows the authors' code). (P,) float64.
    """
    d, b, length = _sizes(head_dim, base, train_len)
    fast = validate.positive_float("beta_fast", beta_fast)
    slow = validate.positive_float("beta_slow", beta_slow)
    if not fast > slow:
        raise ValueError(
            f"beta_fast must be above beta_slow for a ramp in the number of turns, got "
            f"beta_fast={fast:g}, beta_slow={slow:g}."
        )
    turns = length / wavelengths(d, b)  # (P,) r_i
    return ((turns - slow) / (fast - slow)).clamp(0.0, 1.0)


def scaling_for(method: str, factor: float, train_len: int) -> dict:
    """The ``rope_inv_freq`` scaling dict for a method of ``METHODS`` and a factor s.

    "dynamic" gets factor 1 (the experiment's setting), so its stretch at length T,
    ``rope_scaling.dynamic_ntk_stretch(T, 1, L)`` = 1 * T / L - (1 - 1), is T / L.
    """
    validate.choice("method", method, tuple(METHODS))
    s = validate.positive_float("factor", factor, 1.0, inclusive=True)
    length = validate.positive_int("train_len", train_len)
    rope_type = METHODS[method]
    if method == "dynamic":
        return {"rope_type": rope_type, "factor": 1.0, "original_max_position_embeddings": length}
    if method == "YaRN":
        return {"rope_type": rope_type, "factor": s, "original_max_position_embeddings": length}
    return {"rope_type": rope_type, "factor": s}


def frequency_ratio(
    method: str, factor: float, head_dim: int = 32, base: float = 10000.0, train_len: int = 64
) -> torch.Tensor:
    """theta'_i / theta_i for each pair: what a scaling does to each frequency. (P,) float64.

    For "dynamic" (factor 1) the ratio is the one it uses on a text of T = factor * L tokens,
    where its stretch T / L equals ``factor``.
    """
    d, b, length = _sizes(head_dim, base, train_len)
    scaling = scaling_for(method, factor, length)
    seq_len = max(1, round(factor * length)) if method == "dynamic" else None
    scaled, _ = rope_inv_freq(d, b, scaling, seq_len=seq_len, dtype=F64)
    return scaled / frequencies(d, b)


# -- what the dashboard draws --------------------------------------------------------------------


class ScalingView(NamedTuple):
    """One setting of the chapter 7 dashboard: a method, a factor s, a base and a length L."""

    method: str
    factor: float
    base: float
    train_len: int
    wavelengths: torch.Tensor  # (P,) before scaling
    scaled_wavelengths: torch.Tensor  # (P,) with the chosen method
    ratios: dict  # method -> (P,) theta' / theta, for every method at this factor
    ramp: torch.Tensor  # (P,) YaRN's share kept
    attention_scale: float  # YaRN's sqrt(1/t) at this factor (t: the softmax temperature)
    full_turn: int  # how many pairs turn a full circle within L
    lengths: tuple  # the evaluation lengths of the experiment, in tokens
    plain: tuple | None  # plain RoPE's perplexity at each length, from results.json
    scaled: tuple | None  # the chosen method and factor, no fine-tuning
    finetuned: tuple | None  # the chosen method fine-tuned at 4L (PI and YaRN, factor 4 only)
    measured: bool  # the experiment's base and L: the curves belong to these frequencies
    control: tuple | None = None  # plain RoPE fine-tuned the same way, no scaling (with finetuned)


def _curve(entry) -> tuple | None:
    return None if entry is None else tuple(entry[k] for k in sorted(entry, key=int))


def scaling_view(
    method: str,
    factor: float,
    base: float,
    train_len: int,
    results: dict | None = None,
    head_dim: int = 32,
) -> ScalingView:
    """Everything the dashboard shows for one setting. ``results``: models.results.load_results()."""
    d, b, length = _sizes(head_dim, base, train_len)
    scaling = scaling_for(method, factor, length)
    ratios = {name: frequency_ratio(name, factor, d, b, length) for name in METHODS}
    lengths, plain, scaled, tuned, control, measured = (), None, None, None, None, False
    if results is not None:
        lengths = tuple(results["lengths"])
        measured = abs(b - 10000.0) < 1e-6 and length == results["L"] and d == 32
        plain = _curve(results["methods"]["rope"]["ppl"])
        family = results["scaled"].get(scaling["rope_type"], {})
        key = "1" if method == "dynamic" else f"{factor:g}"
        scaled = _curve(family.get(key))
        if factor == 4 and scaling["rope_type"] in results.get("finetuned", {}):
            tuned = _curve(results["finetuned"][scaling["rope_type"]]["ppl"])
            control = _curve(results["finetuned"].get("default", {}).get("ppl"))
    waves = wavelengths(d, b)
    return ScalingView(
        method=method,
        factor=float(factor),
        base=b,
        train_len=length,
        wavelengths=waves,
        scaled_wavelengths=waves / ratios[method],
        ratios=ratios,
        ramp=yarn_ramp(d, b, length),
        attention_scale=yarn_attention_scale(factor),
        full_turn=len(full_turn_pairs(d, b, length)),
        lengths=lengths,
        plain=plain,
        scaled=scaled,
        finetuned=tuned,
        measured=measured,
        control=control,
    )
