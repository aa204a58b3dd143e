"""Chapter 8, reading a real config: rope_from_config against transformers' own ROPE_INIT_FUNCTIONS."""

import copy

import pytest
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from posenc_lib.analysis.ch08_config import (
    LLAMA31_SCALING,
    PUBLISHED_ROPE,
    head_dim_of,
    published_table,
    rope_from_config,
    rope_settings,
)

SMOLLM = next(e.config for e in PUBLISHED_ROPE if e.model == "SmolLM2-135M")
SCALINGS = {
    "linear": {"rope_type": "linear", "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "factor": 2.0},
    # transformers' dynamic NTK reads max_position_embeddings and ignores this field
    "dynamic-original": {
        "rope_type": "dynamic",
        "factor": 2.0,
        "original_max_position_embeddings": 2048,
    },
    "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 2048},
    "yarn-defaults": {"rope_type": "yarn", "factor": 2.0},  # L from max_position_embeddings
    "yarn-old-key": {"type": "yarn", "factor": 2.0, "beta_fast": 16.0},  # transformers 4's "type"
    "llama3": dict(LLAMA31_SCALING, original_max_position_embeddings=2048),
}


def transformers_rope(config: dict, seq_len=None):
    """transformers' (inv_freq, attention_scaling) for a config dict (a copy: LlamaConfig edits it)."""
    hf = LlamaConfig(**copy.deepcopy(config))
    rope_type = hf.rope_parameters["rope_type"]
    if rope_type == "default":
        return LlamaRotaryEmbedding.compute_default_rope_parameters(hf)
    return ROPE_INIT_FUNCTIONS[rope_type](hf, seq_len=seq_len)


@pytest.mark.parametrize("entry", PUBLISHED_ROPE, ids=lambda e: e.model)
def test_published_rows_match_transformers(entry):
    ours, scale = rope_from_config(entry.config)
    theirs, their_scale = transformers_rope(entry.config)
    # Same float32 operations in the same order (rope_scaling.default_inv_freq): equal bit for bit.
    assert torch.equal(ours, theirs)
    assert scale == their_scale
    assert ours.shape == (head_dim_of(entry.config) // 2,)
    assert entry.source and "/" in entry.repo


@pytest.mark.parametrize("name", SCALINGS)
@pytest.mark.parametrize("seq_len", [None, 16384])
def test_every_rope_type_matches_transformers(name, seq_len):
    config = dict(SMOLLM, rope_scaling=SCALINGS[name])
    ours, scale = rope_from_config(config, seq_len)
    theirs, their_scale = transformers_rope(config, seq_len)
    # float32, a few operations on values near 1: 1e-6 relative covers reordered roundings.
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=0)
    assert scale == pytest.approx(their_scale, rel=1e-12)


@pytest.mark.parametrize("name", SCALINGS)
def test_rope_parameters_and_rope_scaling_agree(name):
    old = dict(SMOLLM, rope_scaling=SCALINGS[name])
    new = {k: v for k, v in SMOLLM.items() if k not in ("rope_theta", "rope_scaling")}
    new["rope_parameters"] = dict(SCALINGS[name], rope_theta=SMOLLM["rope_theta"])
    a, s = rope_from_config(old, 16384, dtype=torch.float64)
    b, t = rope_from_config(new, 16384, dtype=torch.float64)
    assert torch.equal(a, b) and s == t


def test_smollm_row_is_the_loaded_model():
    from posenc_lib.models.smollm import load_smollm

    config = load_smollm().config
    assert config.rope_parameters["rope_theta"] == SMOLLM["rope_theta"]
    assert config.max_position_embeddings == SMOLLM["max_position_embeddings"]
    assert config.num_key_value_heads == SMOLLM["num_key_value_heads"]
    assert config.head_dim == head_dim_of(SMOLLM) == 64
    ours, _ = rope_from_config(config.to_dict())
    assert torch.equal(ours, load_smollm().model.model.rotary_emb.inv_freq)


def test_known_values():
    rows = {r["model"]: r for r in published_table()}
    assert rows["Llama 3 8B"]["rope_theta"] == 500000.0
    assert rows["Llama 3.1 8B"]["scaling"] == "llama3"
    assert rows["Qwen2 7B Instruct"]["kv_heads"] == 4
    # A higher base turns the slowest pair slower: Llama 3's wavelength exceeds Llama 2's.
    assert rows["Llama 3 8B"]["slowest_wavelength"] > 40 * rows["Llama 2 7B"]["slowest_wavelength"]
    assert rope_settings(dict(SMOLLM, rope_scaling={"rope_type": "default"})) == (100000.0, None)


@pytest.mark.parametrize(
    "config, words",
    [
        ({"hidden_size": 576, "rope_theta": 1e4}, "num_attention_heads"),
        ({"head_dim": 64}, "rope_theta"),
        (dict(SMOLLM, rope_scaling={"rope_type": "longrope"}), "longrope"),
        (dict(SMOLLM, rope_scaling={"rope_type": "linear"}), "factor"),
        (
            {
                "head_dim": 64,
                "rope_theta": 1e4,
                "rope_scaling": {"rope_type": "dynamic", "factor": 2},
            },
            "max_position_embeddings",
        ),
        (dict(SMOLLM, rope_scaling="yarn"), "dict"),
    ],
)
def test_bad_configs_say_what_is_missing(config, words):
    with pytest.raises(ValueError, match=words):
        rope_from_config(config)


def test_config_must_be_a_dict():
    with pytest.raises(TypeError, match="dict"):
        rope_from_config([("rope_theta", 1e4)])
