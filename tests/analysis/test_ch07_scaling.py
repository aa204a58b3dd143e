"""Chapter 7's RoPE scalings pair by pair: full turns, the NTK-aware base, YaRN's ramp and
attention scale agree with transformers and with the library's registry; the dashboard's view."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

from posenc_lib.analysis import ch07_scaling
from posenc_lib.models.results import load_results
from posenc_lib.rope import rope_inv_freq


def _config(head_dim, base, params, max_positions):
    return LlamaConfig(
        hidden_size=head_dim * 2,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=max_positions,
        rope_parameters={"rope_theta": base, **params},
    )


@given(
    head_dim=st.sampled_from([8, 16, 32, 64, 128]),
    base=st.sampled_from([100.0, 10000.0, 500000.0]),
    length=st.integers(2, 50000),
)
def test_full_turn_pairs_are_those_whose_largest_training_angle_reaches_2_pi(
    head_dim, base, length
):
    theta = ch07_scaling.frequencies(head_dim, base)
    expected = [i for i, t in enumerate(theta.tolist()) if (length - 1) * t >= 2 * math.pi]
    assert ch07_scaling.full_turn_pairs(head_dim, base, length) == expected


def test_the_chapters_model_has_five_full_turn_pairs_and_the_edge_is_L_minus_1():
    assert ch07_scaling.full_turn_pairs(32, 10000.0, 64) == [0, 1, 2, 3, 4]
    assert ch07_scaling.full_turn_pairs(32, 10000.0, 63) == [0, 1, 2, 3]  # wavelength 62.8 > 62
    assert (
        ch07_scaling.full_turn_pairs(8, 10000.0, 7) == []
    )  # even pair 0 needs 2 pi = 6.28 positions
    assert ch07_scaling.wavelengths(32)[0] == pytest.approx(2 * math.pi)


@pytest.mark.parametrize("head_dim", [16, 32, 128])
@pytest.mark.parametrize("factor", [1.0, 2.0, 4.0, 16.0])
def test_ntk_base_keeps_pair_0_and_divides_the_last_pair_by_exactly_s(head_dim, factor):
    new = ch07_scaling.frequencies(head_dim, ch07_scaling.ntk_base(10000.0, factor, head_dim))
    old = ch07_scaling.frequencies(head_dim, 10000.0)
    assert new[0] == old[0] == 1.0
    assert float(new[-1] / old[-1]) == pytest.approx(1 / factor, rel=1e-12)


@pytest.mark.parametrize("head_dim", [16, 64, 128])
@pytest.mark.parametrize("factor", [2.0, 4.0, 8.0])
def test_ntk_base_equals_transformers_dynamic_rule_at_s_times_the_length(head_dim, factor):
    params = {"rope_type": "dynamic", "factor": 1.0}
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](
        _config(head_dim, 10000.0, params, 1000), "cpu", int(factor * 1000)
    )
    ours = ch07_scaling.frequencies(head_dim, ch07_scaling.ntk_base(10000.0, factor, head_dim))
    torch.testing.assert_close(ours.float(), theirs, rtol=1e-6, atol=0)


@pytest.mark.parametrize("length", [32, 63, 64, 65, 128, 256, 512])  # below, at and above L = 64
def test_chapter_dynamic_ntk_equals_transformers_at_every_length(length):
    """Chapter 7's dynamic NTK (factor 1, L = 64) is transformers' rule, and its stretch is T / L."""
    scaling = ch07_scaling.scaling_for("dynamic", 4, 64)
    assert scaling["factor"] == 1.0 and scaling["original_max_position_embeddings"] == 64
    params = {k: v for k, v in scaling.items() if k != "original_max_position_embeddings"}
    theirs, _ = ROPE_INIT_FUNCTIONS["dynamic"](_config(32, 10000.0, params, 64), "cpu", length)
    ours, _ = rope_inv_freq(32, 10000.0, scaling, seq_len=length)
    torch.testing.assert_close(ours, theirs, rtol=1e-6, atol=0)
    if length > 64:  # NTK-aware with s = T / L
        ntk = ch07_scaling.frequencies(32, ch07_scaling.ntk_base(10000.0, length / 64, 32))
        torch.testing.assert_close(ours.double(), ntk, rtol=1e-6, atol=0)


YARN_CASES = [
    (32, 10000.0, 64, 4.0, 32.0, 1.0),
    (128, 10000.0, 4096, 16.0, 32.0, 1.0),
    (64, 500000.0, 8192, 8.0, 32.0, 1.0),
    (128, 10000.0, 2048, 2.0, 16.0, 2.0),
    (64, 10000.0, 512, 4.0, 4.0, 4.0),  # low == high: a step
]


@pytest.mark.parametrize(("head_dim", "base", "length", "factor", "fast", "slow"), YARN_CASES)
def test_yarn_ramp_and_attention_scale_equal_transformers(
    head_dim, base, length, factor, fast, slow
):
    params = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": length}
    params |= {"beta_fast": fast, "beta_slow": slow}
    theirs, their_scale = ROPE_INIT_FUNCTIONS["yarn"](
        _config(head_dim, base, params, int(factor * length)), "cpu"
    )
    theta = ch07_scaling.frequencies(head_dim, base)
    keep = (theirs.double() / theta - 1 / factor) / (1 - 1 / factor)  # invert theta (r + (1-r)/s)
    ramp = ch07_scaling.yarn_ramp(head_dim, base, length, fast, slow)
    torch.testing.assert_close(ramp, keep, rtol=0, atol=1e-5)
    assert ch07_scaling.yarn_attention_scale(factor) == pytest.approx(their_scale, rel=1e-12)


def test_yarn_ramp_without_rounding_and_the_attention_scale_at_s_1():
    ramp = ch07_scaling.yarn_ramp(
        32, 10000.0, 64, truncate=False
    )  # ends at pair indices 0 and 4.03
    assert ramp[0] == 1.0 and 0 < float(ramp[4]) < 0.01 and ramp[5] == 0.0
    assert ch07_scaling.yarn_attention_scale(1.0) == 1.0 and ch07_scaling.yarn_attention_scale(
        4.0
    ) == pytest.approx(0.1 * math.log(4) + 1)


@pytest.mark.parametrize("factor", [2, 4, 8])
def test_frequency_ratios_per_method(factor):
    pi, ntk, dynamic, yarn = (
        ch07_scaling.frequency_ratio(m, factor) for m in ("PI", "NTK", "dynamic", "YaRN")
    )
    assert torch.allclose(pi, torch.full_like(pi, 1 / factor))
    assert ntk[0] == 1.0 and float(ntk[-1]) == pytest.approx(1 / factor, rel=1e-6)
    assert torch.allclose(dynamic, ntk, rtol=1e-6)  # dynamic NTK at s L is NTK-aware with s
    ramp = ch07_scaling.yarn_ramp(32, 10000.0, 64)
    assert torch.allclose(yarn, ramp + (1 - ramp) / factor, atol=1e-6)
    assert bool((torch.diff(ntk) < 0).all())  # the faster the pair, the less it is slowed


def test_the_scalings_registry_names_agree_with_the_library():
    for method in ch07_scaling.METHODS:
        scaling = ch07_scaling.scaling_for(method, 4, 64)
        rope_inv_freq(32, 10000.0, scaling, seq_len=256)  # accepted by the library


def test_scaling_view_reads_the_experiment_and_knows_when_it_applies():
    results = load_results()
    view = ch07_scaling.scaling_view("PI", 4, 10000.0, 64, results)
    assert view.measured and view.full_turn == 5 and view.lengths == (64, 128, 256, 512)
    assert view.scaled == tuple(results["scaled"]["linear"]["4"].values())
    assert view.finetuned == tuple(results["finetuned"]["linear"]["ppl"].values())
    # the control comes with every fine-tuned curve: plain RoPE fine-tuned the same way
    assert view.control == tuple(results["finetuned"]["default"]["ppl"].values())
    assert ch07_scaling.scaling_view("YaRN", 4, 10000.0, 64, results).control == view.control
    assert torch.allclose(view.scaled_wavelengths, 4 * view.wavelengths)
    dynamic = ch07_scaling.scaling_view("dynamic", 8, 10000.0, 64, results)
    assert dynamic.scaled == tuple(results["scaled"]["dynamic"]["1"].values())
    assert dynamic.finetuned is None and dynamic.control is None
    assert (
        ch07_scaling.scaling_view("NTK", 2, 10000.0, 64, results).finetuned is None
    )  # only s = 4 tuned
    assert not ch07_scaling.scaling_view("YaRN", 4, 500.0, 64, results).measured
    assert not ch07_scaling.scaling_view("YaRN", 4, 10000.0, 128, results).measured
    assert ch07_scaling.scaling_view("YaRN", 4, 10000.0, 64).scaled is None  # no results given


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ch07_scaling.full_turn_pairs(7, 10000.0, 64), "must be even"),
        (lambda: ch07_scaling.full_turn_pairs(32, 10000.0, 1), "at least 2"),
        (lambda: ch07_scaling.full_turn_pairs(32, 0.5, 64), "base"),
        (lambda: ch07_scaling.ntk_base(10000.0, 0.5, 32), "factor"),
        (lambda: ch07_scaling.ntk_base(10000.0, 2.0, 2), "at least 4"),
        (
            lambda: ch07_scaling.yarn_ramp(32, 10000.0, 64, beta_fast=1.0, beta_slow=32.0),
            "beta_fast must",
        ),
        (lambda: ch07_scaling.yarn_ramp(32, 10000.0, 64, truncate=1), "True or False"),
        (lambda: ch07_scaling.yarn_attention_scale(-1.0), "factor"),
        (lambda: ch07_scaling.frequency_ratio("ALiBi", 4), "method must be one of"),
        (lambda: ch07_scaling.scaling_view("PI", float("nan"), 10000.0, 64), "finite"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_papers_ramp_is_linear_in_turns_and_keeps_0_30_of_pair_0_for_the_chapters_model():
    ramp = ch07_scaling.yarn_ramp_by_turns(32, 10000.0, 64)  # (16,)
    turns = 64 / ch07_scaling.wavelengths(32, 10000.0)
    assert ramp[0] == pytest.approx((64 / (2 * math.pi) - 1) / 31)  # r_0 = 10.19 turns
    assert float(ramp[0]) == pytest.approx(0.296, abs=1e-3)
    assert torch.equal(ramp == 0, turns <= 1)  # at most one turn: divided by s
    assert ch07_scaling.yarn_ramp(32, 10000.0, 64)[0] == 1.0  # the code's form keeps pair 0 whole
    with pytest.raises(ValueError, match="beta_fast must be above beta_slow"):
        ch07_scaling.yarn_ramp_by_turns(32, 10000.0, 64, beta_fast=1.0, beta_slow=1.0)


def test_the_chapters_formulas_are_the_cores_one_home():
    from posenc_lib import rope_scaling

    assert ch07_scaling.ntk_base is rope_scaling.ntk_base
    assert ch07_scaling.yarn_attention_scale is rope_scaling.yarn_attention_scale
    assert ch07_scaling.METHODS is rope_scaling.METHODS and ch07_scaling.METHODS["PI"] == "linear"
    for args in ((32, 10000.0, 64), (128, 500000.0, 8192, 16.0, 2.0, False)):
        assert torch.equal(ch07_scaling.yarn_ramp(*args), rope_scaling.yarn_ramp(*args))
