"""Chapter 8, the layout detective on real weights: GGUF's interleaved rows against transformers' half.

llama.cpp rotates the pairs (2i, 2i + 1) of each head ("interleaved", RoFormer's layout), so its
GGUF files store the rows of W_q and W_k in that order; transformers' Llama rotates (i, i + Dh/2)
("half", ``rotate_half``) and reorders the rows on load: loaded row h*Dh + j*Dh/2 + i is GGUF row
h*Dh + 2i + j. That reordering is ``analysis.ch06_rope.convert_projection`` (interleaved -> half,
the permutation of ``layout_permutation``), the same one transformers' conversion script applies
to Meta's checkpoints. Here it is checked on SmolLM2-135M's real (4-bit, dequantized) weights:

- ``gguf_projections``: the q and k weights straight from the GGUF file, rows in the file's order;
- ``layer0_attention``: layer 0's attention probabilities recomputed by hand from some q/k weights
  with the library's ``apply_rope`` in either layout (RMSNorm, GQA, 1/sqrt(Dh), causal mask);
- ``unreversed_qk``: a context in which every layer's q/k rows are put back in GGUF order, to
  measure what the wrong layout costs the whole model.

Shapes: T tokens, H = 9 query heads, KV = 3 key/value heads, Dh = 64, D = 576 hidden.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator
from pathlib import Path

import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch06_rope import convert_projection
from posenc_lib.attention import causal_mask
from posenc_lib.rope import STYLES, apply_rope, rope_cos_sin

GGUF_NAMES = {"q": "blk.{layer}.attn_q.weight", "k": "blk.{layer}.attn_k.weight"}


@functools.lru_cache(maxsize=1)
def _gguf_tensors(path: str) -> dict:
    """The tensors of a GGUF file by name (memory-mapped), read once per process: opening the file
    costs about 3 s, for the reader parses the whole tokenizer stored in it."""
    import gguf

    return {t.name: t for t in gguf.GGUFReader(path).tensors}


def gguf_projections(path: Path | str, layer: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """Layer ``layer``'s q and k projections read from a GGUF file, dequantized: (H*Dh, D), (KV*Dh, D).

    GGUF lists a tensor's shape fastest dim first ([D, out] for an nn.Linear weight (out, D));
    ``gguf.quants.dequantize`` returns row-major (out, D) numpy arrays. The rows stay in the
    file's (interleaved) order: no permutation is undone. The file is opened once per process.
    """
    import gguf

    layer = validate.whole_int("layer", layer)
    found = _gguf_tensors(str(path))
    weights = []
    for which in ("q", "k"):
        name = GGUF_NAMES[which].format(layer=layer)
        if name not in found:
            raise ValueError(
                f"The GGUF file {path} has no tensor {name!r}; is it a Llama-architecture model "
                "with that many layers?"
            )
        tensor = found[name]
        values = gguf.quants.dequantize(tensor.data, tensor.tensor_type)  # (out, D) numpy
        shape = [int(n) for n in reversed(tensor.shape.tolist())]  # GGUF [D, out] -> (out, D)
        weights.append(torch.from_numpy(values.copy()).to(torch.float32).reshape(shape))
    return weights[0], weights[1]


def match_rows(raw: torch.Tensor, loaded: torch.Tensor) -> tuple[torch.Tensor, float]:
    """The detective's step: for each loaded row, the raw row nearest to it, and the largest gap.

    raw, loaded: (R, D) weights holding the same rows in two orders. Returns (source (R,) int64,
    with loaded[r] ~ raw[source[r]], and max_r |loaded[r] - raw[source[r]]|, 0.0 when the rows
    were only moved). Found from the numbers alone, with no layout formula.
    """
    validate.float_tensor("raw", raw, min_rank=2, max_rank=2, shape_hint="(R, D)")
    validate.float_tensor("loaded", loaded, min_rank=2, max_rank=2, shape_hint="(R, D)")
    if raw.shape != loaded.shape:
        raise ValueError(
            f"raw {tuple(raw.shape)} and loaded {tuple(loaded.shape)} must have one shape."
        )
    distance = torch.cdist(loaded.double(), raw.double())  # (R, R)
    source = distance.argmin(dim=1)  # (R,)
    return source, float((loaded - raw[source]).abs().max())


def to_half_rows(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """GGUF (interleaved) rows of an nn.Linear q/k weight (H*Dh, D) -> transformers' (half) rows.

    ``convert_projection`` permutes columns of an x @ w matrix, so it is applied to w.T.
    """
    return convert_projection(w.T, n_heads, "interleaved", "half").T  # (H*Dh, D)


def to_interleaved_rows(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """The inverse of ``to_half_rows``: transformers' rows back in GGUF order. (H*Dh, D)."""
    return convert_projection(w.T, n_heads, "half", "interleaved").T  # (H*Dh, D)


def layer0_queries_keys(llm, ids: torch.Tensor, w_q: torch.Tensor, w_k: torch.Tensor):
    """Layer 0's unrotated queries (H, T, Dh) and keys (KV, T, Dh) for ``ids`` (1, T), from the
    given projection weights (H*Dh, D) and (KV*Dh, D): embedding, the layer's input RMSNorm, x W^T."""
    cfg = llm.config
    validate.tensor("ids", ids, min_rank=2, max_rank=2, shape_hint="(1, T)")
    dh = cfg.head_dim
    layer = llm.model.model.layers[0]
    with torch.no_grad():
        x = layer.input_layernorm(llm.model.model.embed_tokens(ids))[0]  # (T, D)
        q = (x @ w_q.T).view(x.shape[0], -1, dh).transpose(0, 1)  # (H, T, Dh)
        k = (x @ w_k.T).view(x.shape[0], -1, dh).transpose(0, 1)  # (KV, T, Dh)
    return q, k


def rotated_logits(q, k, cos, sin, style="half") -> torch.Tensor:
    """Attention logits (H, T, T) of queries q (H, T, Dh) and keys k (KV, T, Dh) rotated by
    ``apply_rope`` with the tables cos, sin (T, Dh) in ``style``: GQA (each key head serves
    H / KV query heads), scaled by 1 / sqrt(Dh) (Vaswani et al. 2017, eq. 1). No mask."""
    q, k = apply_rope(q, cos, sin, style), apply_rope(k, cos, sin, style)  # (H|KV, T, Dh)
    k = k.repeat_interleave(q.shape[0] // k.shape[0], dim=0)  # (H, T, Dh): GQA groups
    return q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # (H, T, T)


def causal_softmax(logits: torch.Tensor) -> torch.Tensor:
    """Softmax over keys with future keys masked: (..., T, T) -> (..., T, T)."""
    return logits.masked_fill(causal_mask(logits.shape[-1]), float("-inf")).softmax(-1)


def rotated_probabilities(q, k, inv_freq, style="half", positions=None) -> torch.Tensor:
    """Causal attention probabilities (H, T, T) of q (H, T, Dh) and k (KV, T, Dh) rotated in
    ``style`` at ``positions`` ((T,) tensor; default 0 .. T-1), tables from ``rope_cos_sin``."""
    validate.choice("style", style, STYLES)
    where = q.shape[-2] if positions is None else positions
    cos, sin = rope_cos_sin(where, inv_freq, style=style)  # (T, Dh)
    return causal_softmax(rotated_logits(q, k, cos, sin, style))


def layer0_attention(llm, ids, w_q, w_k, style="half") -> torch.Tensor:
    """Layer 0's attention probabilities (H, T, T) recomputed from q/k weights in ``style``."""
    q, k = layer0_queries_keys(llm, ids, w_q, w_k)
    inv_freq = llm.model.model.rotary_emb.inv_freq
    return rotated_probabilities(q, k, inv_freq, style)


def model_layer0_attention(llm_eager, ids) -> torch.Tensor:
    """The model's own layer-0 attention probabilities (H, T, T) (needs ``load_smollm("eager")``)."""
    with torch.no_grad():
        out = llm_eager.model(ids, output_attentions=True)
    return out.attentions[0][0]  # (H, T, T)


@contextlib.contextmanager
def unreversed_qk(llm) -> Iterator[None]:
    """Inside the block, every layer's q/k rows are in GGUF's (interleaved) order, as a converter
    that forgot to reverse the permutation would leave them; restored on exit."""
    cfg = llm.config
    saved = []
    try:
        for layer in llm.model.model.layers:
            attn = layer.self_attn
            for proj, heads in (
                (attn.q_proj, cfg.num_attention_heads),
                (attn.k_proj, cfg.num_key_value_heads),
            ):
                saved.append((proj, proj.weight.data))
                proj.weight.data = to_interleaved_rows(proj.weight.data, heads)
        yield
    finally:
        for proj, data in saved:
            proj.weight.data = data


def with_bos(llm, text: str) -> torch.Tensor:
    """``text``'s ids after the tokenizer's beginning token (``<|im_start|>`` for SmolLM2). (1, T+1)"""
    bos = torch.tensor([[llm.tokenizer.bos_token_id]])  # (1, 1)
    return torch.cat((bos, llm.ids(text)), dim=1)  # (1, T + 1)


def loss_and_next_token(llm, text: str) -> tuple[float, str, float]:
    """The mean next-token loss (nats) on ``text`` (after the beginning token), the greedy next
    token after it, and the gap between the top two next-token probabilities (how robust it is)."""
    ids = with_bos(llm, text)  # (1, T + 1)
    with torch.no_grad():
        out = llm.model(ids, labels=ids)
    top = out.logits[0, -1].softmax(-1).topk(2)  # the two likeliest next tokens
    gap = float(top.values[0] - top.values[1])
    return float(out.loss), llm.tokenizer.decode(int(top.indices[0])), gap
