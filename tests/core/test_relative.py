"""T5 relative position buckets and bias: the bucket laws and agreement with transformers' T5."""

import pytest
import torch
from torch.testing import assert_close
from transformers import T5Config
from transformers.models.t5.modeling_t5 import T5Attention

from posenc_lib import RelativePositionBias, t5_relative_position_bucket

SETTINGS = [(32, 128), (16, 64), (8, 20), (64, 256), (4, 9), (10, 50)]


@pytest.mark.parametrize(("num_buckets", "max_distance"), SETTINGS)
@pytest.mark.parametrize("bidirectional", [True, False])
def test_buckets_equal_transformers_t5(num_buckets, max_distance, bidirectional):
    offsets = torch.arange(-3 * max_distance, 3 * max_distance + 1)
    ours = t5_relative_position_bucket(offsets, bidirectional, num_buckets, max_distance)
    theirs = T5Attention._relative_position_bucket(
        offsets, bidirectional, num_buckets, max_distance
    )
    assert ours.dtype == torch.long
    assert torch.equal(ours, theirs)


def test_bucket_laws():
    offsets = torch.arange(-500, 501)
    b = t5_relative_position_bucket(offsets)  # bidirectional, 32 buckets, max_distance 128
    assert b.min() == 0 and b.max() == 31
    assert torch.equal(b[500 : 500 + 8], torch.tensor([0, 17, 18, 19, 20, 21, 22, 23]))
    assert torch.equal(b[500 - 7 : 501].flip(0), torch.arange(8))  # exact buckets for |r| < 8
    future = b[501:]
    assert torch.all(future.diff() >= 0), "buckets grow with distance"
    assert torch.all(b[500 + 128 :] == 31) and torch.all(b[: 500 - 127] == 15)
    causal = t5_relative_position_bucket(offsets, bidirectional=False)
    assert torch.all(causal[500:] == 0), "a causal model does not tell future keys apart"
    assert causal.max() == 31


def test_extreme_offsets_land_in_the_far_buckets():
    extreme = torch.tensor([-(2**63), -(2**62), 2**62, 2**63 - 1])
    assert t5_relative_position_bucket(extreme).tolist() == [15, 15, 31, 31]
    assert t5_relative_position_bucket(extreme, bidirectional=False).tolist() == [31, 31, 0, 0]


def test_bias_module_equals_t5_compute_bias():
    for heads, buckets, dist, is_decoder in ((4, 32, 128, False), (3, 16, 40, True)):
        config = T5Config(
            d_model=16,
            d_kv=4,
            num_heads=heads,
            relative_attention_num_buckets=buckets,
            relative_attention_max_distance=dist,
            is_decoder=is_decoder,
        )
        theirs = T5Attention(config, has_relative_attention_bias=True)
        torch.nn.init.normal_(theirs.relative_attention_bias.weight)
        ours = RelativePositionBias(heads, buckets, dist, bidirectional=not is_decoder)
        ours.bias.weight.data.copy_(theirs.relative_attention_bias.weight.data)
        for q_len, k_len in ((7, 7), (1, 300), (200, 200)):
            assert_close(ours(q_len, k_len), theirs.compute_bias(q_len, k_len)[0], rtol=0, atol=0)
        assert_close(ours(3, 10, query_offset=7), theirs.compute_bias(3, 10, past_seen_tokens=7)[0])


def test_bias_is_translation_invariant_and_starts_at_zero():
    rpb = RelativePositionBias(2, bidirectional=False)
    assert torch.all(rpb(5) == 0)
    torch.nn.init.normal_(rpb.bias.weight)
    big = rpb(40)
    assert_close(big[:, 10:20, 10:20], rpb(10))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: t5_relative_position_bucket(torch.tensor([0.5])), "whole-number offsets"),
        (lambda: t5_relative_position_bucket(torch.tensor([1]), num_buckets=2), "too small"),
        (
            lambda: t5_relative_position_bucket(torch.tensor([1]), max_distance=8),
            "max_distance=8 must be larger",
        ),
        (
            lambda: t5_relative_position_bucket(torch.tensor([1]), bidirectional="yes"),
            "True or False",
        ),
        (lambda: RelativePositionBias(0), "num_heads must be at least 1"),
        (lambda: RelativePositionBias(2)(0), "q_len must be at least 1"),
        (lambda: RelativePositionBias(2)(3, 5, 2.7), "query_offset must be a whole number"),
        (lambda: RelativePositionBias(2)(3, 5, True), "query_offset must be a whole number"),
        (lambda: t5_relative_position_bucket("a"), "an int, a list of ints or an integer tensor"),
        (lambda: t5_relative_position_bucket(torch.tensor([1 + 0j])), "integer tensor"),
        (
            lambda: t5_relative_position_bucket(3, max_distance=10**400),
            "max_distance must be at most",
        ),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()
