"""RoPE's frequencies and scalings (``posenc_lib.rope_scaling``), pinned to transformers' numbers.

transformers 5.x, ``transformers/modeling_rope_utils.py``: ``ROPE_INIT_FUNCTIONS`` (rope_type ->
function), ``_compute_linear_scaling_rope_parameters`` (PI), ``_compute_dynamic_ntk_parameters``,
``_compute_yarn_parameters`` with its inner ``get_mscale``, ``find_correction_dim``,
``find_correction_range`` and ``linear_ramp_factor``, ``_compute_llama3_parameters``; and
``LlamaRotaryEmbedding.compute_default_rope_parameters``. YaRN's inner functions are not importable,
so ``yarn_helper`` rebuilds each from the code object transformers compiled for it: the tests call
transformers' own code, not a copy of it.
"""

import itertools
import math
import types

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close
from transformers import LlamaConfig, modeling_rope_utils
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

from posenc_lib import ROPE_SCALING, rope_inv_freq, rope_scaling
from posenc_lib import rope as rope_module
from posenc_lib.rope import dynamic_ntk_stretch
from posenc_lib.rope_scaling import (
    METHODS,
    ntk_base,
    yarn_attention_scale,
    yarn_correction_range,
    yarn_ramp,
)

F64 = {"dtype": torch.float64}


def yarn_helper(name, defaults=None):
    """transformers' function ``name`` defined inside ``_compute_yarn_parameters``, rebuilt from
    its compiled code (its free variables, e.g. find_correction_range's find_correction_dim, too)."""
    outer = modeling_rope_utils._compute_yarn_parameters.__code__
    codes = {c.co_name: c for c in outer.co_consts if isinstance(c, types.CodeType)}
    assert name in codes, f"transformers' _compute_yarn_parameters no longer defines {name}"
    code = codes[name]
    closure = tuple(types.CellType(yarn_helper(free)) for free in code.co_freevars)
    return types.FunctionType(code, vars(modeling_rope_utils), name, defaults, closure or None)


get_mscale = yarn_helper("get_mscale", (1,))
find_correction_range = yarn_helper("find_correction_range")
linear_ramp_factor = yarn_helper("linear_ramp_factor")


def llama_config(head_dim, base, scaling=None, max_positions=2048):
    """A hand-built config: transformers reads 'original' length for dynamic from max_position_embeddings."""
    params = {"rope_type": "default", "rope_theta": base, **(scaling or {})}
    if params["rope_type"] == "dynamic":
        max_positions = params.pop("original_max_position_embeddings")
    return LlamaConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_positions,
        rope_parameters=params,
    )


def scaling_cases():
    for head_dim, base, factor, original in itertools.product(
        (16, 64, 128), (10000.0, 500000.0), (2.0, 4.0, 8.0, 32.0), (512, 4096)
    ):
        yield head_dim, base, {"rope_type": "linear", "factor": factor}
        yield (
            head_dim,
            base,
            {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": original},
        )
        yield (
            head_dim,
            base,
            {
                "rope_type": "llama3",
                "factor": factor,
                "original_max_position_embeddings": original,
                "low_freq_factor": 1.0,
                "high_freq_factor": 4.0,
            },
        )
    yarn = {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096}
    for extra in (
        {"beta_fast": 16, "beta_slow": 2},
        {"truncate": False},
        {"attention_factor": 1.5},
        {"mscale": 1.0, "mscale_all_dim": 0.707},
        {"beta_fast": 4, "beta_slow": 4},
    ):
        yield 128, 10000.0, {**yarn, **extra}
    yield (
        128,
        500000.0,
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "original_max_position_embeddings": 8192,
            "low_freq_factor": 2.0,
            "high_freq_factor": 8.0,
        },
    )


@pytest.mark.parametrize(("head_dim", "base", "scaling"), list(scaling_cases()))
def test_scaled_frequencies_equal_transformers(head_dim, base, scaling):
    # a consistent config: the extended length is factor x the original one
    length = int(scaling.get("factor", 1) * scaling.get("original_max_position_embeddings", 2048))
    config = llama_config(head_dim, base, dict(scaling), max_positions=length)
    theirs, their_scale = ROPE_INIT_FUNCTIONS[scaling["rope_type"]](config, "cpu")
    ours, our_scale = rope_inv_freq(head_dim, base, scaling)
    assert_close(ours, theirs, rtol=1e-6, atol=0)
    assert our_scale == pytest.approx(their_scale, rel=1e-12)


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 8.0])  # 1.0: chapter 7's setting
@pytest.mark.parametrize("seq_len", [None, 100, 511, 512, 513, 1000, 4096, 10_000])  # L = 512
def test_dynamic_equals_transformers(head_dim, factor, seq_len):
    scaling = {"rope_type": "dynamic", "factor": factor, "original_max_position_embeddings": 512}
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](
        llama_config(head_dim, 10000.0, dict(scaling)), "cpu", seq_len
    )
    ours, scale = rope_inv_freq(head_dim, 10000.0, scaling, seq_len=seq_len)
    assert_close(ours, theirs, rtol=1e-6, atol=0)
    assert scale == 1.0


@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0])
@pytest.mark.parametrize("seq_len", [1, 63, 64, 65, 128, 256, 512, 1000])  # L = 64
def test_dynamic_stretch_is_the_one_transformers_uses(factor, seq_len):
    """transformers' base' = base * s ** (D / (D - 2)); recover s from its pair-1 frequency."""
    head_dim, base = 32, 10000.0
    scaling = {"rope_type": "dynamic", "factor": factor, "original_max_position_embeddings": 64}
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](
        llama_config(head_dim, base, dict(scaling)), "cpu", seq_len
    )
    their_base = float(theirs[1].double()) ** (-head_dim / 2)  # theta_1 = base' ** (-2 / D)
    their_stretch = (their_base / base) ** ((head_dim - 2) / head_dim)
    ours = dynamic_ntk_stretch(seq_len, factor, 64)
    # float32 frequencies: about 1e-7 relative, raised to the power 16 * 30 / 32 = 15 on the way
    assert ours == pytest.approx(their_stretch, rel=1e-5)
    assert ours == (factor * max(seq_len, 64) / 64 - (factor - 1))  # the formula, in Python floats
    if factor == 1.0:
        assert ours == max(seq_len, 64) / 64  # factor 1: s = T / L past L


def test_dynamic_stretch_rejects_bad_input():
    with pytest.raises(ValueError, match="factor"):
        dynamic_ntk_stretch(100, 0.5, 64)
    with pytest.raises(ValueError, match="trained length"):
        dynamic_ntk_stretch(100, 1.0, 0)


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize("factor", [1.5, 4.0, 16.0])
def test_static_ntk_equals_transformers_dynamic_at_factor_times_the_length(head_dim, factor):
    """transformers has no static NTK; its dynamic rule with factor 1 at length s * L is the same base."""
    dynamic = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": 1000}
    config = llama_config(head_dim, 10000.0, dynamic)
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", int(factor * 1000))
    ours, _ = rope_inv_freq(head_dim, 10000.0, {"rope_type": "ntk", "factor": factor})
    assert_close(ours, theirs, rtol=1e-6, atol=0)


@given(
    factor=st.floats(1.0, 64.0),
    head_dim=st.sampled_from([8, 32, 64, 128]),
    base=st.floats(100.0, 1e6),
)
def test_scaling_laws(factor, head_dim, base):
    default, _ = rope_inv_freq(head_dim, base, **F64)
    linear, _ = rope_inv_freq(head_dim, base, {"rope_type": "linear", "factor": factor}, **F64)
    assert_close(linear, default / factor)
    ntk, _ = rope_inv_freq(head_dim, base, {"rope_type": "ntk", "factor": factor}, **F64)
    assert_close(ntk[0], default[0])  # the fastest pair keeps its frequency
    assert_close(ntk[-1], default[-1] / factor)  # the slowest pair is interpolated by exactly s
    yarn_params = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": 2048}
    yarn, _ = rope_inv_freq(head_dim, base, yarn_params, **F64)
    assert torch.all(yarn <= default * (1 + 1e-12)) and torch.all(
        yarn >= default / factor * (1 - 1e-12)
    )
    turns = 2048 * default / (2 * torch.pi)  # r_i: turns of pair i over the original context
    fast, slow = turns > 32, turns < 1  # YaRN's default beta_fast = 32, beta_slow = 1
    assert_close(yarn[fast], default[fast], rtol=1e-12, atol=0)  # fast pairs extrapolate
    assert_close(yarn[slow], default[slow] / factor, rtol=1e-12, atol=0)  # slow ones interpolate
    kept = yarn / default  # from 1 (kept) down to 1 / s (interpolated), never back up
    assert torch.all(kept.diff() <= 1e-12)
    dyn = {"rope_type": "dynamic", "factor": factor, "original_max_position_embeddings": 2048}
    for seq_len in (None, 1, 1000, 2048):
        assert_close(rope_inv_freq(head_dim, base, dyn, seq_len, **F64)[0], default)
    longer, _ = rope_inv_freq(head_dim, base, dyn, 8192, **F64)
    assert torch.all(longer <= default * (1 + 1e-12))


def test_every_registry_entry_runs_and_default_is_unscaled():
    params = {
        "factor": 4.0,
        "original_max_position_embeddings": 1024,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    }
    default, _ = rope_inv_freq(64)
    for rope_type, (_, required, _) in ROPE_SCALING.items():
        scaling = {"rope_type": rope_type, **{key: params[key] for key in required}}
        inv_freq, scale = rope_inv_freq(64, scaling=scaling, seq_len=4096)
        assert inv_freq.shape == (32,) and inv_freq.dtype == torch.float32 and scale >= 1.0
        assert torch.all(inv_freq <= default * (1 + 1e-6)) and torch.all(inv_freq > 0)
    assert torch.equal(rope_inv_freq(64, scaling={"rope_type": "default"})[0], default)


def test_head_dim_two_is_allowed_where_the_method_allows_it():
    inv_freq, _ = rope_inv_freq(2)
    assert inv_freq.tolist() == [1.0]


# -- each formula's one home, against transformers' own functions -----------------------------------


def test_the_rebuilt_yarn_helpers_are_transformers_own():
    assert get_mscale(4.0) == 0.1 * math.log(4.0) + 1.0 and get_mscale(0.5) == 1.0
    assert find_correction_range(32, 1, 128, 10000.0, 4096, True) == (20, 46)
    assert torch.equal(linear_ramp_factor(1, 3, 4), torch.tensor([0.0, 0.0, 0.5, 1.0]))


@pytest.mark.parametrize("factor", [0.5, 1.0, 1.25, 2.0, 4.0, 16.0, 40.0, 1000.0])
@pytest.mark.parametrize("mscale", [1.0, 0.707, 1.2])
def test_yarn_attention_scale_is_transformers_get_mscale(factor, mscale):
    assert yarn_attention_scale(factor, mscale) == get_mscale(factor, mscale)
    assert yarn_attention_scale(factor) == get_mscale(factor)


@given(
    head_dim=st.sampled_from([4, 8, 16, 32, 64, 128, 256]),
    base=st.sampled_from([100.0, 10000.0, 500000.0, 1e6]),
    original=st.integers(16, 200_000),
    betas=st.tuples(st.floats(0.25, 64.0), st.floats(0.25, 64.0)),
    truncate=st.booleans(),
)
def test_yarn_ends_and_ramp_are_transformers_correction_range_and_linear_ramp(
    head_dim, base, original, betas, truncate
):
    """1 - linear_ramp_factor(*find_correction_range(...)): the share each pair keeps, bit for bit."""
    fast, slow = max(betas), min(betas)
    low, high = find_correction_range(fast, slow, head_dim, base, original, truncate)
    assert yarn_correction_range(head_dim, base, original, fast, slow, truncate) == (low, high)
    theirs = 1 - linear_ramp_factor(low, high, head_dim // 2)  # (D/2,) float32
    ours = yarn_ramp(head_dim, base, original, fast, slow, truncate, dtype=torch.float32)
    assert torch.equal(ours, theirs)


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize("base", [10000.0, 500000.0])
def test_default_frequencies_equal_transformers_exactly(head_dim, base):
    config = llama_config(head_dim, base)
    theirs, scale = LlamaRotaryEmbedding.compute_default_rope_parameters(config)
    assert torch.equal(rope_inv_freq(head_dim, base)[0], theirs) and scale == 1.0
    assert torch.equal(rope_scaling.default_inv_freq(head_dim, base, torch.float32), theirs)


@pytest.mark.parametrize(("head_dim", "base", "factor"), [(16, 10000.0, 2.0), (128, 500000.0, 8.0)])
@pytest.mark.parametrize("seq_len", [None, 511, 512, 513, 4096, 10_000])
def test_pi_dynamic_and_llama3_equal_transformers_bit_for_bit(head_dim, base, factor, seq_len):
    """Same operations in the same order as transformers: torch.equal, not just close."""
    pi = {"rope_type": METHODS["PI"], "factor": factor}
    theirs, _ = ROPE_INIT_FUNCTIONS["linear"](llama_config(head_dim, base, dict(pi)), "cpu")
    assert torch.equal(rope_inv_freq(head_dim, base, pi)[0], theirs)
    dynamic = {"rope_type": "dynamic", "factor": factor, "original_max_position_embeddings": 512}
    config = llama_config(head_dim, base, dict(dynamic))
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", seq_len)
    assert torch.equal(rope_inv_freq(head_dim, base, dynamic, seq_len)[0], theirs)
    llama3 = {
        "rope_type": "llama3",
        "factor": factor,
        "original_max_position_embeddings": 512,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
    }
    config = llama_config(head_dim, base, dict(llama3), max_positions=int(512 * factor))
    theirs, _ = ROPE_INIT_FUNCTIONS["llama3"](config, "cpu")
    assert torch.equal(rope_inv_freq(head_dim, base, llama3)[0], theirs)


@pytest.mark.parametrize("head_dim", [4, 16, 128])
@pytest.mark.parametrize("factor", [1.0, 1.5, 4.0, 32.0])
def test_ntk_base_is_the_base_transformers_dynamic_rule_raises_to(head_dim, factor):
    """transformers: base * (factor * T / L - (factor - 1)) ** (dim / (dim - 2)), here with
    factor 1 at T = s L; read back from its last pair, theta_{D/2-1} = base' ** (-(D - 2) / D)."""
    dynamic = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": 1000}
    config = llama_config(head_dim, 10000.0, dynamic)
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](config, "cpu", round(factor * 1000))
    their_base = float(theirs[-1].double()) ** (-head_dim / (head_dim - 2))
    assert ntk_base(10000.0, factor, head_dim) == pytest.approx(their_base, rel=1e-5)
    stretch = dynamic_ntk_stretch(round(factor * 1000), 1.0, 1000)
    assert ntk_base(10000.0, stretch, head_dim) == 10000.0 * stretch ** (head_dim / (head_dim - 2))


def test_pi_is_linear_once_and_every_course_name_is_a_registry_key():
    """The course says "PI", transformers' rope_type says "linear": METHODS is the one mapping."""
    assert METHODS["PI"] == "linear" and "linear" in ROPE_INIT_FUNCTIONS
    assert set(METHODS.values()) <= set(ROPE_SCALING)
    assert ROPE_SCALING["linear"][0].__name__ == "_position_interpolation"
    shared = set(METHODS.values()) & set(ROPE_INIT_FUNCTIONS)
    assert shared == {"linear", "dynamic", "yarn"}  # "ntk" (static) is the course's own


def test_the_old_import_paths_give_the_one_home():
    assert rope_module.rope_inv_freq is rope_scaling.rope_inv_freq
    assert rope_module.ROPE_SCALING is rope_scaling.ROPE_SCALING
    assert rope_module.dynamic_ntk_stretch is rope_scaling.dynamic_ntk_stretch
