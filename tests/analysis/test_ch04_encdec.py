"""Chapter 4's encoder–decoder: cross-attention against torch's own attention, its blindness to the
order of the encoder's rows, and T5's placement of its relative bias in transformers."""

import math

import pytest
import torch
from transformers import T5Config, T5Model

from posenc_lib import sinusoidal_encoding
from posenc_lib.analysis.ch04_encdec import cross_attention, encode, permutation_change

F64 = torch.float64


def _inputs(n_dec=3, n_enc=5, d=6, d_k=4, d_v=2, seed=0, batch=()):
    g = torch.Generator().manual_seed(seed)
    dec = torch.randn(*batch, n_dec, d, generator=g, dtype=F64)
    enc = torch.randn(*batch, n_enc, d, generator=g, dtype=F64)
    w_q, w_k = torch.randn(2, d, d_k, generator=g, dtype=F64)
    return dec, enc, w_q, w_k, torch.randn(d, d_v, generator=g, dtype=F64)


@pytest.mark.parametrize("batch", [(), (2,), (2, 3)])
def test_cross_attention_matches_torch_scaled_dot_product_attention(batch):
    dec, enc, w_q, w_k, w_v = _inputs(batch=batch)
    out, weights = cross_attention(dec, enc, w_q, w_k, w_v)
    theirs = torch.nn.functional.scaled_dot_product_attention(dec @ w_q, enc @ w_k, enc @ w_v)
    assert out.shape == (*batch, 3, 2) and weights.shape == (*batch, 3, 5)
    assert torch.allclose(out, theirs, atol=1e-12)
    assert torch.allclose(weights.sum(-1), torch.ones(*batch, 3, dtype=F64), atol=1e-12)
    by_hand = torch.softmax((dec @ w_q) @ (enc @ w_k).transpose(-2, -1) / math.sqrt(4), -1)
    assert torch.allclose(weights, by_hand, atol=1e-12)


def test_cross_attention_sees_the_encoder_as_a_set_and_the_decoder_in_order():
    dec, enc, w_q, w_k, w_v = _inputs(n_dec=4, n_enc=6)
    out = cross_attention(dec, enc, w_q, w_k, w_v)[0]
    order = torch.tensor([3, 0, 5, 1, 4, 2])
    # A tolerance, not equality: the softmax sums the same terms in another order.
    assert torch.allclose(cross_attention(dec, enc[order], w_q, w_k, w_v)[0], out, atol=1e-12)
    flipped = cross_attention(dec.flip(0), enc, w_q, w_k, w_v)[0]
    assert torch.allclose(flipped, out.flip(0), atol=1e-12)  # each query row moves with its token


def test_encode_is_permutation_equivariant_without_positions_only():
    words = torch.randn(6, 8, generator=torch.Generator().manual_seed(1), dtype=F64)
    weights = torch.randn(3, 8, 8, generator=torch.Generator().manual_seed(2), dtype=F64) / 3
    order = torch.arange(5, -1, -1)
    plain = encode(words, *weights)
    assert torch.allclose(encode(words[order], *weights), plain[order], atol=1e-12)
    pe = sinusoidal_encoding(6, 8, dtype=F64)
    with_pe = encode(words, *weights, pe)
    assert not torch.allclose(encode(words[order], *weights, pe), with_pe[order], atol=1e-3)


def test_permutation_change_is_rounding_without_positions_and_real_with_them():
    g = torch.Generator().manual_seed(3)
    words, dec = (
        torch.randn(6, 8, generator=g, dtype=F64),
        torch.randn(3, 8, generator=g, dtype=F64),
    )
    enc_w, cross_w = torch.randn(2, 3, 8, 8, generator=g, dtype=F64) / 3
    change = permutation_change(
        words,
        dec,
        torch.arange(5, -1, -1),
        tuple(enc_w),
        tuple(cross_w),
        sinusoidal_encoding(6, 8, dtype=F64),
    )
    assert change.without_positions < 1e-12
    assert change.with_positions > 0.05 * change.scale


@pytest.mark.parametrize(
    "call, fragment",
    [
        (
            lambda: cross_attention(*_inputs()[:1], torch.zeros(5, 7, dtype=F64), *_inputs()[2:]),
            "width D",
        ),
        (lambda: cross_attention(_inputs()[0].float(), *_inputs()[1:]), "one dtype"),
        (
            lambda: encode(torch.zeros(4, 6), *torch.zeros(3, 6, 6), torch.zeros(5, 6)),
            "one position row",
        ),
        (
            lambda: encode(
                torch.zeros(4, 6), torch.zeros(6, 6), torch.zeros(6, 6), torch.zeros(6, 2)
            ),
            "residual",
        ),
        (
            lambda: permutation_change(
                torch.zeros(3, 2, dtype=F64), None, torch.tensor([0, 0, 1]), None, None, None
            ),
            "once",
        ),
    ],
)
def test_bad_input_gets_a_sentence(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call()


def test_t5_in_transformers_has_no_relative_bias_in_cross_attention():
    # modeling_t5: T5LayerCrossAttention builds EncDecAttention with has_relative_attention_bias=False,
    # and T5Attention then uses a bias of zeros; only block 0's self-attention of each stack owns one.
    torch.manual_seed(0)
    config = T5Config(vocab_size=8, d_model=8, d_kv=4, d_ff=16, num_layers=2, num_heads=2)
    model = T5Model(config).eval()
    owners = [
        n for n, m in model.named_modules() if getattr(m, "has_relative_attention_bias", False)
    ]
    assert owners == [
        "encoder.block.0.layer.0.SelfAttention",
        "decoder.block.0.layer.0.SelfAttention",
    ]
    cross = model.decoder.block[0].layer[1].EncDecAttention
    hidden = torch.randn(1, 3, 8)
    with torch.no_grad():
        _, bias, _ = cross(hidden, key_value_states=torch.randn(1, 5, 8))
    assert bias.shape == (1, 2, 3, 5) and not bool(bias.any())
