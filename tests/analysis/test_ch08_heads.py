"""Chapter 8, what the heads do with the frequencies: bands, pair shares, attention by distance."""

import pytest
import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from posenc_lib.analysis import ch08_heads as heads
from posenc_lib.analysis.ch06_rope import decay_bound
from posenc_lib.analysis.ch08_layout import layer0_queries_keys
from posenc_lib.models.smollm import load_smollm
from posenc_lib.rope import apply_rope, rope_cos_sin
from posenc_lib.rope_scaling import rope_inv_freq, yarn_correction_range


@pytest.fixture(scope="module")
def llm():
    return load_smollm()  # sdpa: capture_heads switches to eager attention for its pass


@pytest.fixture(scope="module")
def captured(llm):
    return heads.capture_heads(llm, llm.ids(heads.HEADS_TEXT))


def test_bands_follow_yarn_split():
    bands = heads.frequency_bands(64, 100000.0)
    # YaRN's ramp ends, unrounded: pairs below i(beta_fast) turn > 32 times, above i(beta_slow) < 1.
    low, high = yarn_correction_range(64, 100000.0, 8192, truncate=False)
    pair = torch.arange(32)
    assert torch.equal(bands == 0, pair < low)
    assert torch.equal(bands == 2, pair > high)
    assert torch.bincount(bands).tolist() == [11, 9, 12]
    with pytest.raises(ValueError, match="beta_fast must be above beta_slow"):
        heads.frequency_bands(64, 100000.0, beta_fast=1.0, beta_slow=2.0)


def test_pair_energy_is_unchanged_by_rope():
    x = torch.randn(3, 50, 64, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    cos, sin = rope_cos_sin(50, rope_inv_freq(64, 100000.0, dtype=torch.float64)[0], style="half")
    rotated = apply_rope(x, cos, sin, "half")  # (3, 50, 64)
    # A rotation keeps each pair's length; float64 rounding of cos^2 + sin^2 is ~1e-16.
    torch.testing.assert_close(heads.pair_energy(rotated), heads.pair_energy(x), rtol=1e-12, atol=0)
    assert torch.allclose(heads.pair_energy(x).sum(-1), x.pow(2).sum(-1))
    with pytest.raises(ValueError, match="head_dim"):
        heads.pair_energy(torch.ones(4, 7))


def test_captured_queries_are_the_model_s_own(llm):
    ids = llm.ids(heads.HEADS_TEXT)[:, :24]  # (1, 24)
    got = heads.capture_heads(llm, ids)
    attn = llm.model.model.layers[0].self_attn
    q, k = layer0_queries_keys(llm, ids, attn.q_proj.weight, attn.k_proj.weight)
    # The same Linear on the same normed input: float32 rounding only.
    torch.testing.assert_close(got.query[0], q, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(got.key[0], k, rtol=1e-5, atol=1e-5)
    assert got.query.shape == (30, 9, 24, 64) and got.key.shape == (30, 3, 24, 64)
    # Layer 0's probabilities from the captured q, k rotated by transformers' own RoPE.
    cos, sin = llm.model.model.rotary_emb(q, torch.arange(24)[None])  # (1, 24, 64)
    qr, kr = apply_rotary_pos_emb(q[None], k[None], cos, sin)  # (1, H|KV, 24, 64)
    logits = qr[0] @ kr[0].repeat_interleave(3, 0).transpose(-1, -2) / 8  # (9, 24, 24)
    mask = torch.ones(24, 24, dtype=torch.bool).triu(1)
    probs = logits.masked_fill(mask, float("-inf")).softmax(-1)
    torch.testing.assert_close(got.attention[0], probs, rtol=1e-4, atol=1e-5)
    assert torch.allclose(got.attention.sum(-1), torch.ones(30, 9, 24), atol=1e-5)


def test_capture_restores_the_attention_implementation(llm):
    assert llm.config._attn_implementation == "sdpa"
    got = heads.capture_heads(llm, llm.ids("One two three four"))
    assert got.attention.shape == (30, 9, 4, 4)
    assert llm.config._attn_implementation == "sdpa"
    with pytest.raises(ValueError, match="at least 2 tokens"):
        heads.capture_heads(llm, llm.ids("One"))


def test_pair_shares_sum_to_one_and_favour_low_frequencies(captured):
    shares = heads.pair_shares(captured.query, captured.key, 100000.0)
    assert shares.query.shape == (30, 9, 32) and shares.key.shape == (30, 3, 32)
    assert torch.allclose(shares.query.sum(-1), torch.ones(30, 9), atol=1e-5)
    assert torch.allclose(shares.query_bands.sum(-1), torch.ones(30, 9), atol=1e-5)
    assert torch.allclose(shares.uniform_bands, torch.tensor([11, 9, 12]) / 32)
    # The measured finding (SmolLM2-135M, Q4_1): most query norm sits in the low band.
    mean = shares.query_bands.mean((0, 1))  # (3,)
    assert mean[2] > 0.6 and mean[0] < 0.2
    count, margin = heads.heads_above(shares.query_bands[..., 2], 0.5)
    assert count == 239 and margin > 1e-4


def test_profile_of_synthetic_heads():
    t = 40
    previous = torch.zeros(t, t)
    previous[0, 0] = 1
    previous[torch.arange(1, t), torch.arange(t - 1)] = 1  # every query looks one back
    sink = torch.zeros(t, t)
    sink[:, 0] = 1
    uniform = torch.ones(t, t).tril()
    uniform = uniform / uniform.sum(-1, keepdim=True)
    attn = torch.stack([previous, sink, uniform])[None]  # (1, 3, T, T)
    p = heads.attention_profile(attn, min_query=8, local=4, far=16)
    assert p.local[0].tolist() == [
        1.0,
        0.0,
        pytest.approx(sum(5 / (q + 1) for q in range(8, t)) / 32),
    ]
    assert p.sink[0, :2].tolist() == [0.0, 1.0]
    assert p.far[0, 0] == 0 and p.far[0, 1] == 0
    assert p.by_distance[0, 0, 1] == 1 and p.by_distance[0, 0, 0] == 0
    assert not p.by_distance[..., : t - 1].isnan().any()
    assert heads.strongest_heads(p)["sink"] == (0, 1)
    assert p.binned.shape == (1, 3, len(p.edges) - 1)
    with pytest.raises(ValueError, match="square"):
        heads.attention_profile(torch.ones(1, 1, 3, 4) / 4)
    with pytest.raises(ValueError, match="min_query"):
        heads.attention_profile(attn, min_query=t)


def test_real_heads_have_sinks_local_and_far_heads(captured):
    p = heads.attention_profile(captured.attention)
    counts = {name: heads.heads_above(getattr(p, name), 0.5) for name in ("sink", "local", "far")}
    # Measured on this text; margins far above float32 rounding, so exact on every CPU.
    assert {k: c for k, (c, _) in counts.items()} == {"sink": 79, "local": 27, "far": 13}
    assert min(m for _, m in counts.values()) > 1e-4
    layer, head = heads.strongest_heads(p)["local"]
    assert p.local[layer, head] > 0.9


def test_decay_reference_is_the_ch06_bound_over_its_start():
    d = torch.arange(300)
    ref = heads.decay_reference(d)
    assert ref[0] == 1
    torch.testing.assert_close(ref, decay_bound(d, 64, 100000.0) / decay_bound(d, 64, 100000.0)[0])
    assert ref[1:].max() < 1
