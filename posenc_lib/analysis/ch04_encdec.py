"""Chapter 4's encoder–decoder: where positions enter, and why cross-attention needs none of its own.

The original Transformer adds its position encodings "to the input embeddings at the bottoms of
the encoder and decoder stacks" (Vaswani et al. 2017, arXiv:1706.03762, section 3.5). Its
encoder–decoder attention takes "the queries from the previous decoder layer, and the memory
keys and values from the output of the encoder" (section 3.2.3): two sequences, each with its own
positions, so an offset j - i between a decoder query and an encoder key means nothing. T5 puts
its relative bias (Raffel et al. 2020, arXiv:1910.10683, section 2.1) in the self-attention of
each stack; transformers' ``modeling_t5`` builds ``EncDecAttention`` with
``has_relative_attention_bias=False``, and its position bias is then a tensor of zeros.

- ``cross_attention``: softmax(Q K^T / sqrt(d_k)) V with Q from the decoder, K and V from the
  encoder, computed by the library's ``self_attention`` (the formula's one home).
- ``encode``: one self-attention layer with its residual, optionally with positions added to the
  input first: a stand-in for an encoder.
- ``permutation_change``: how much cross-attention's output moves when the encoder's input tokens
  are permuted, with and without positions in the encoder.

Shapes: T_dec decoder positions, T_enc encoder positions, D model width, d_k, d_v head sizes.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.attention import self_attention


def _pair(decoder_x, encoder_x) -> None:
    validate.float_tensor("decoder_x", decoder_x, min_rank=2, shape_hint="(..., T_dec, D)")
    validate.float_tensor("encoder_x", encoder_x, min_rank=2, shape_hint="(..., T_enc, D)")
    if decoder_x.shape[:-2] != encoder_x.shape[:-2] or decoder_x.shape[-1] != encoder_x.shape[-1]:
        raise ValueError(
            f"decoder_x {tuple(decoder_x.shape)} and encoder_x {tuple(encoder_x.shape)} must share "
            "their leading (batch) dims and their width D; only the numbers of positions may differ."
        )
    if decoder_x.dtype != encoder_x.dtype:
        raise ValueError(
            f"decoder_x is {decoder_x.dtype} but encoder_x is {encoder_x.dtype}; give them one dtype."
        )


def cross_attention(decoder_x, encoder_x, w_q, w_k, w_v):
    """Encoder–decoder attention (Vaswani et al. 2017, section 3.2.3, eq. 1).

    decoder_x: (..., T_dec, D), the queries' side; encoder_x: (..., T_enc, D), the keys' and values'
    side; w_q, w_k: (D, d_k); w_v: (D, d_v). No mask: every decoder position sees every encoder
    position. Returns (out, weights): (..., T_dec, d_v) and (..., T_dec, T_enc), rows summing to 1.

    Computed as ``self_attention`` of the two sequences stacked, [decoder; encoder], with a bias of
    -inf on every decoder key: each decoder query then weighs the encoder's keys only (exp(-inf)
    is exactly 0), and its rows of the result are cross-attention's.
    """
    _pair(decoder_x, encoder_x)
    n_dec = decoder_x.shape[-2]
    both = torch.cat((decoder_x, encoder_x), dim=-2)  # (..., T_dec + T_enc, D)
    bias = torch.zeros(both.shape[-2], both.shape[-2], dtype=both.dtype)  # (T, T), T = sum
    bias[:, :n_dec] = float("-inf")  # no query sees a decoder key
    out, weights = self_attention(both, w_q, w_k, w_v, bias=bias)  # (..., T, d_v), (..., T, T)
    return out[..., :n_dec, :], weights[
        ..., :n_dec, n_dec:
    ]  # (..., T_dec, d_v), (..., T_dec, T_enc)


def encode(words, w_q, w_k, w_v, positions=None) -> torch.Tensor:
    """A one-layer encoder: h = x + self_attention(x), with x = words (+ positions, if given).

    words: (..., T, D); positions: None or a (T, D) table added to every sequence; w_v: (D, D), so
    that the residual can be added. Returns (..., T, D).
    """
    validate.float_tensor("words", words, min_rank=2, shape_hint="(..., T, D)")
    x = words
    if positions is not None:
        validate.float_tensor("positions", positions, min_rank=2, max_rank=2, shape_hint="(T, D)")
        if tuple(positions.shape) != tuple(words.shape[-2:]):
            raise ValueError(
                f"positions has shape {tuple(positions.shape)} but words end in "
                f"{tuple(words.shape[-2:])}: give one position row per word, of the same width."
            )
        x = words + positions  # (..., T, D)
    if w_v.shape[-1] != x.shape[-1]:
        raise ValueError(
            f"w_v has {w_v.shape[-1]} columns but the words have D = {x.shape[-1]}: the residual "
            "x + attention(x) needs the output as wide as the input."
        )
    return x + self_attention(x, w_q, w_k, w_v)[0]  # (..., T, D)


class PermutationChange(NamedTuple):
    """How much cross-attention's output moves when the encoder's input tokens are permuted."""

    without_positions: float  # largest |change| of the output, encoder without positions
    with_positions: float  # the same with positions added to the encoder's input
    scale: float  # largest |entry| of the output with positions, for comparison


def permutation_change(words, decoder_x, permutation, encoder_weights, cross_weights, positions):
    """Permute the encoder's input ``words`` (T_enc, D) by ``permutation`` (a (T_enc,) reordering of
    0..T_enc-1) and measure the change of cross-attention's output (T_dec, d_v), for an encoder
    without positions and for one with ``positions`` (T_enc, D) added to its input.

    encoder_weights, cross_weights: (w_q, w_k, w_v) each, for ``encode`` and ``cross_attention``.
    Returns a PermutationChange (float64 inside).
    """
    validate.float_tensor("words", words, min_rank=2, max_rank=2, shape_hint="(T_enc, D)")
    order = validate.integer_tensor("permutation", permutation)
    if not torch.equal(order.sort().values, torch.arange(words.shape[0])):
        raise ValueError(
            f"permutation must hold each of 0..{words.shape[0] - 1} once (a reordering of the "
            f"encoder's {words.shape[0]} tokens), got {order.tolist()}."
        )
    changes = []
    for table in (None, positions):
        outputs = [
            cross_attention(decoder_x, encode(x, *encoder_weights, table), *cross_weights)[0]
            for x in (words, words[order])
        ]  # two (T_dec, d_v)
        changes.append(float((outputs[1] - outputs[0]).abs().max()))
    return PermutationChange(changes[0], changes[1], float(outputs[0].abs().max()))
