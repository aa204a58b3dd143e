"""Chapter 8, precision: bf16 positions and angles against float64, and transformers' float32 way."""

import pytest
import torch

from posenc_lib.analysis.ch08_precision import (
    RECIPES,
    angle_error,
    attention_error,
    bf16_position_rounding,
    first_inexact_bf16_position,
    worst_angle_error,
)
from posenc_lib.rope_scaling import rope_inv_freq

INV_FREQ = rope_inv_freq(64, 100000.0, dtype=torch.float64)[0]


def test_bf16_integers_end_at_256():
    assert first_inexact_bf16_position() == 257
    # bf16 keeps 8 significant bits: spacing 2 above 256, 32 above 4096 (exact: powers of two).
    assert bf16_position_rounding([256, 257, 8191, 8192]).tolist() == [0.0, -1.0, 1.0, 0.0]


def test_float32_angles_stay_small_bf16_angles_are_lost():
    f32 = angle_error(8192, INV_FREQ, "float32")  # (8192, 32)
    assert f32.shape == (8192, 32)
    # float32 ulp at 8192 is 2 ** -10; rounding of theta and of the product: well under 1e-3.
    assert float(f32.max()) < 1e-3
    bf16 = angle_error(8192, INV_FREQ, "bfloat16")
    assert float(bf16[4096:].max()) > 2.0  # whole radians: the angle is effectively random
    positions = angle_error(8192, INV_FREQ, "bf16 positions")
    assert float(positions[:257].max()) < 1e-4  # exact positions up to 256
    assert float(positions[257, 0]) == pytest.approx(1.0, abs=1e-4)  # 257 read as 256: theta_0 = 1


def test_angle_error_matches_transformers_float32_recipe():
    # transformers' LlamaRotaryEmbedding.forward: position_ids.float() * inv_freq.float().
    from transformers import LlamaConfig
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    config = LlamaConfig(hidden_size=576, num_attention_heads=9, rope_theta=100000.0)
    rotary = LlamaRotaryEmbedding(config)
    positions = torch.arange(8192)[None]
    cos, _ = rotary(torch.zeros(1, dtype=torch.float32), positions)
    # transformers' own float32 frequencies, so that the recipe forms the very same float32 product.
    ours = RECIPES["float32"](positions[0].double(), rotary.inv_freq.double())  # (T, 32)
    # The same float32 angles; cos taken in float32 (theirs) vs float64 (ours): 1e-6.
    torch.testing.assert_close(cos[0, :, :32].double(), ours.cos(), rtol=0, atol=1e-6)


def test_attention_error_grows_with_position_for_bf16_only():
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(9, 16, 64, generator=gen) * 0.5, torch.randn(3, 16, 64, generator=gen) * 0.5
    bad = attention_error(q, k, INV_FREQ, [0, 4096], "bfloat16")
    good = attention_error(q, k, INV_FREQ, [0, 4096], "float32")
    assert bad["max_prob_error"][1] > 10 * bad["max_prob_error"][0]
    assert float(bad["max_logit_error"][1]) > 0.5
    assert float(good["max_logit_error"].max()) < 1e-2  # float32 angles: ~1e-4 rad at 4096


def test_bad_recipe():
    with pytest.raises(ValueError, match="recipe"):
        angle_error(10, INV_FREQ, "float16")


def test_worst_angle_error_is_a_running_maximum():
    worst = worst_angle_error(1000, INV_FREQ, "bf16 positions")
    assert bool((worst[1:] >= worst[:-1]).all())
    assert float(worst[256]) < 1e-4 and float(worst[257]) == pytest.approx(1.0, abs=1e-4)
