"""Chapter 8, reading a real config: published models' RoPE settings, and a config to frequencies.

A model's ``config.json`` (the Hugging Face hub's format) carries everything RoPE needs:

- ``rope_theta``: the base b of theta_i = b ** (-2i / Dh) (RoFormer, arXiv:2104.09864, eq. 15).
  10,000 in RoFormer and Llama 2; raised to make the slowest pair turn slower, so that far-apart
  positions stay distinguishable: 500,000 in Llama 3 (arXiv:2407.21783, section 3.2), 1,000,000
  in Qwen2 (arXiv:2407.10671, section 3.2, long-context training).
- ``head_dim`` (or ``hidden_size / num_attention_heads`` when absent): Dh, so Dh/2 rotary pairs.
- ``num_attention_heads`` / ``num_key_value_heads``: grouped-query attention (GQA, Ainslie et al.
  2023, arXiv:2305.13245): each key/value head serves heads / kv_heads query heads. RoPE turns
  queries and keys alike, whatever the grouping.
- ``max_position_embeddings``: the length the model is meant to be used at. It is no table (RoPE
  has none): only the scalings read it, as the original length L when they are not given one.
- ``rope_scaling`` (transformers 4) or ``rope_parameters`` (transformers 5, which also holds
  ``rope_theta``): None / ``{"rope_type": "default"}``, or a scaling. Its fields, by ``rope_type``:

  * ``"linear"`` (Position Interpolation, the course's "PI"; Chen et al. 2023, arXiv:2306.15595):
    ``factor`` s. Every frequency is divided by s, i.e. position m is read as m / s.
  * ``"dynamic"`` (dynamic NTK; YaRN paper arXiv:2309.00071, section 3.3): ``factor`` and
    ``original_max_position_embeddings`` L (default: ``max_position_embeddings``). Up to L nothing
    changes; past it the base is raised to b * s(T) ** (Dh / (Dh - 2)) with the stretch s(T)
    growing with the current length T (``rope_scaling.dynamic_ntk_stretch``).
  * ``"yarn"`` (YaRN, arXiv:2309.00071, sections 3.2 and 3.4): ``factor`` s,
    ``original_max_position_embeddings`` L, ``beta_fast`` (32) and ``beta_slow`` (1): pairs that
    turn more than beta_fast times over L keep their frequency, fewer than beta_slow times are
    divided by s, a linear ramp in between; ``attention_factor`` (default 0.1 ln s + 1, the
    temperature; ``mscale`` / ``mscale_all_dim`` are DeepSeek's variant of it) scales cos and sin;
    ``truncate`` rounds the ramp's ends to whole pairs.
  * ``"llama3"`` (Llama 3.1; Meta's released ``apply_scaling``): ``factor`` s (8),
    ``original_max_position_embeddings`` L (8192), ``low_freq_factor`` (1) and
    ``high_freq_factor`` (4): wavelengths shorter than L / high_freq_factor are kept, longer than
    L / low_freq_factor are divided by s, and in between the two are blended smoothly.

``rope_from_config`` reads those fields and hands them to ``rope_scaling.rope_inv_freq`` (the one
home of the formulas); the tests compare it with transformers' ``ROPE_INIT_FUNCTIONS``.
``PUBLISHED_ROPE`` is a table of published models' settings, each row with its source.

Shapes: Dh = head_dim, Dh/2 pairs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_
from posenc_lib.rope_scaling import ROPE_SCALING, rope_inv_freq


@dataclass(frozen=True)
class PublishedRope:
    """One published model's RoPE settings: its config.json fields and where they come from."""

    model: str  # the model's name, e.g. "Llama 3 8B"
    repo: str  # its Hugging Face hub repository, whose config.json holds ``config``
    config: dict  # the RoPE-relevant fields of that config.json, with their names there
    source: str  # where the numbers are stated: the paper and section, and/or the config.json


def _config(hidden, heads, kv_heads, max_pos, theta, scaling=None, head_dim=None) -> dict:
    config = {
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "max_position_embeddings": max_pos,
        "rope_theta": theta,
        "rope_scaling": scaling,
    }
    if head_dim is not None:
        config["head_dim"] = head_dim
    return config


LLAMA31_SCALING = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}

PUBLISHED_ROPE: tuple[PublishedRope, ...] = (
    PublishedRope(
        "Llama 2 7B",
        "meta-llama/Llama-2-7b-hf",
        _config(4096, 32, 32, 4096, 10000.0),
        "Llama 2 paper (Touvron et al. 2023, arXiv:2307.09288), section 2.2 and Table 1: context "
        "length 4k, GQA only for 34B/70B; rope_theta from the repo's config.json (RoFormer's 10,000)",
    ),
    PublishedRope(
        "Llama 3 8B",
        "meta-llama/Meta-Llama-3-8B",
        _config(4096, 32, 8, 8192, 500000.0),
        "Llama 3 paper (Meta 2024, arXiv:2407.21783), section 3.2 and Table 3: RoPE base raised "
        "to 500,000; 32 heads, 8 key/value heads, model dim 4096; length from config.json",
    ),
    PublishedRope(
        "Llama 3.1 8B",
        "meta-llama/Llama-3.1-8B",
        _config(4096, 32, 8, 131072, 500000.0, LLAMA31_SCALING),
        "the repo's config.json (rope_scaling of rope_type llama3); the Llama 3 paper "
        "(arXiv:2407.21783) section 3.4.2 extends the context to 128K tokens",
    ),
    PublishedRope(
        "Qwen2 7B Instruct",
        "Qwen/Qwen2-7B-Instruct",
        _config(3584, 28, 4, 32768, 1000000.0),
        "Qwen2 report (arXiv:2407.10671), Table 1 (28 query, 4 key/value heads, hidden 3,584) and "
        "section 3.2 (long-context training: base 10,000 -> 1,000,000, context 4,096 -> 32,768)",
    ),
    PublishedRope(
        "Mistral 7B v0.1",
        "mistralai/Mistral-7B-v0.1",
        _config(4096, 32, 8, 32768, 10000.0),
        "Mistral 7B paper (arXiv:2310.06825), Table 1 (head_dim 128, 32 heads, 8 kv heads, "
        "window 4096); max_position_embeddings and rope_theta from the repo's config.json",
    ),
    PublishedRope(
        "SmolLM2-135M",
        "HuggingFaceTB/SmolLM2-135M",
        _config(576, 9, 3, 8192, 100000.0),
        "the repo's config.json (the same fields as the course's GGUF copy of "
        "SmolLM2-135M-Instruct); SmolLM2 paper arXiv:2502.02737",
    ),
)


def head_dim_of(config: Mapping) -> int:
    """Dh: ``head_dim`` if the config has it, else hidden_size // num_attention_heads (as transformers)."""
    if not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a dict (a parsed config.json), got {type(config).__name__}."
        )
    if config.get("head_dim"):
        return validate.even_int("config['head_dim']", config["head_dim"], N_("RoPE turns pairs."))
    missing = [k for k in ("hidden_size", "num_attention_heads") if config.get(k) is None]
    if missing:
        raise ValueError(
            f"config has no head_dim and no {missing} to derive it from (head_dim = hidden_size // "
            "num_attention_heads); add head_dim or both fields."
        )
    hidden = validate.positive_int("config['hidden_size']", config["hidden_size"])
    heads = validate.positive_int("config['num_attention_heads']", config["num_attention_heads"])
    return validate.even_int(
        "hidden_size // num_attention_heads", hidden // heads, N_("RoPE turns pairs.")
    )


def rope_settings(config: Mapping) -> tuple[float, dict | None]:
    """(rope_theta, scaling) read from a config dict: ``scaling`` in ``rope_inv_freq``'s form.

    Reads ``rope_parameters`` (transformers 5: a dict with ``rope_type``, ``rope_theta`` and the
    scaling's fields) if present, else ``rope_theta`` and ``rope_scaling`` (transformers 4; its
    older key ``"type"`` is read as ``"rope_type"``). ``original_max_position_embeddings`` defaults
    to ``max_position_embeddings`` for the scalings that need it, as transformers does.
    """
    if not isinstance(config, Mapping):
        raise TypeError(
            f"config must be a dict (a parsed config.json), got {type(config).__name__}."
        )
    params = config.get("rope_parameters")
    if params is not None:
        if not isinstance(params, Mapping):
            raise ValueError(f"config['rope_parameters'] must be a dict, got {params!r}.")
        params = dict(params)
        theta = params.pop("rope_theta", config.get("rope_theta"))
    else:
        theta = config.get("rope_theta")
        params = config.get("rope_scaling")
        if params is not None and not isinstance(params, Mapping):
            raise ValueError(f"config['rope_scaling'] must be a dict or null, got {params!r}.")
        params = dict(params or {})
        theta = theta if theta is not None else params.get("rope_theta")
        params.pop("rope_theta", None)  # transformers 5 may copy it in; the top level's wins
    if theta is None:
        raise ValueError(
            "config has no rope_theta (neither at the top level nor in rope_parameters); every "
            "RoPE model needs its base, e.g. 10000.0."
        )
    if "type" in params:  # transformers 4's older name for the key
        params.setdefault("rope_type", params.pop("type"))
    if float(params.pop("partial_rotary_factor", 1.0)) != 1.0:
        raise ValueError(
            "partial_rotary_factor < 1 (rotating only part of each head) is not handled here."
        )
    rope_type = params.pop("rope_type", "default")
    if rope_type not in ROPE_SCALING:
        raise ValueError(
            f"rope_type {rope_type!r} is not one the course implements; use one of {sorted(ROPE_SCALING)}."
        )
    if rope_type == "default":
        return float(theta), None
    if rope_type == "dynamic":
        # transformers' dynamic NTK stretches past max_position_embeddings, whatever
        # original_max_position_embeddings says (modeling_rope_utils._compute_dynamic_ntk_parameters).
        params.pop("original_max_position_embeddings", None)
    needs_length = "original_max_position_embeddings" in ROPE_SCALING[rope_type][1]
    if needs_length and "original_max_position_embeddings" not in params:
        if config.get("max_position_embeddings") is None:
            raise ValueError(
                f"rope_type {rope_type!r} needs original_max_position_embeddings (or, failing "
                "it, max_position_embeddings) in the config: the length the model was trained on."
            )
        params["original_max_position_embeddings"] = config["max_position_embeddings"]
    return float(theta), {"rope_type": rope_type, **params}


def rope_from_config(config: Mapping, seq_len=None, *, dtype=torch.float32):
    """The frequencies and attention scale a config.json asks for: (inv_freq (Dh/2,), scale).

    config: a dict as in config.json (``rope_parameters``, or ``rope_theta`` + ``rope_scaling``;
    ``head_dim`` or ``hidden_size`` / ``num_attention_heads``; ``max_position_embeddings``).
    seq_len: the current length, used by ``"dynamic"`` only. Built on
    ``rope_scaling.rope_inv_freq``; equal to transformers' ``ROPE_INIT_FUNCTIONS`` for the same
    config (``tests/analysis/test_ch08_config.py``).
    """
    theta, scaling = rope_settings(config)
    return rope_inv_freq(head_dim_of(config), theta, scaling, seq_len, dtype=dtype)


def published_table() -> list[dict]:
    """One row per published model: name, Dh, heads, kv heads, length, base, scaling, slowest wavelength.

    The slowest pair's wavelength 2 pi / theta_{Dh/2 - 1} (in positions, float64) says how long a
    text can be before the slowest pair completes a turn.
    """
    rows = []
    for entry in PUBLISHED_ROPE:
        c = entry.config
        inv_freq, scale = rope_from_config(c, dtype=torch.float64)
        theta, scaling = rope_settings(c)
        rows.append(
            {
                "model": entry.model,
                "head_dim": head_dim_of(c),
                "heads": c["num_attention_heads"],
                "kv_heads": c["num_key_value_heads"],
                "max_position": c["max_position_embeddings"],
                "rope_theta": theta,
                "scaling": "none" if scaling is None else scaling["rope_type"],
                "slowest_wavelength": float(2 * torch.pi / inv_freq[-1]),  # positions
                "attention_scale": scale,
            }
        )
    return rows


def published_wavelengths() -> dict[str, torch.Tensor]:
    """Each published model's wavelengths 2 pi / theta_i in positions (Dh/2,) float64, by name."""
    return {
        e.model: 2 * torch.pi / rope_from_config(e.config, dtype=torch.float64)[0]
        for e in PUBLISHED_ROPE
    }
