"""A tiny decoder-only language model whose position method is one setting (chapter 7).

    model = TinyLM(LMConfig(position="alibi"))
    logits = model(ids)                       # ids (B, T) -> logits (B, T, vocab)
    model.set_rope_scaling({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64})

Pre-LayerNorm blocks (attention, then a two-layer MLP), causal attention. The position method is
picked from ``POSITIONS``; each method touches the model in one place:
- absolute methods (``sinusoidal``, ``learned``) add a vector to the token embeddings;
- bias methods (``t5``, ``alibi``) add a (H, T, T) bias to every layer's attention logits;
- ``rope`` rotates queries and keys (``posenc_lib.rope``), with a scaling from ``ROPE_SCALING``
  that can be changed at inference without touching the weights;
- ``none`` (NoPE) adds nothing. Haviv et al. 2022 (arXiv:2203.16634) found that such causal models
  still learn positional information (probes read position from their hidden states), and
  conjectured, without proving it, that causal attention is how: each token can count the tokens
  it may attend to.

Shapes: B batch, T positions, D d_model, H heads, Dh = D / H.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from posenc_lib import _validate as validate
from posenc_lib.absolute import LearnedPositionalEmbedding, sinusoidal_encoding
from posenc_lib.alibi import alibi_bias
from posenc_lib.relative import RelativePositionBias
from posenc_lib.rope import apply_rope, rope_cos_sin, rope_inv_freq

POSITIONS = ("none", "sinusoidal", "learned", "t5", "alibi", "rope")


@dataclass
class LMConfig:
    """The model's sizes and its position method. ``max_len`` is the training length L."""

    vocab_size: int = 51
    d_model: int = 128
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 256
    max_len: int = 64
    position: str = "rope"
    rope_base: float = 10000.0
    t5_buckets: int = 32
    t5_max_distance: int = 128

    def __post_init__(self):
        validate.choice("position", self.position, POSITIONS)
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            validate.positive_int(name, getattr(self, name))
        if self.d_model % self.n_heads or (self.d_model // self.n_heads) % 2:
            raise ValueError(
                f"d_model={self.d_model} must split into n_heads={self.n_heads} heads of an even "
                "size (RoPE rotates pairs of dims)."
            )

    @property
    def head_dim(self) -> int:
        return self.d_model // self.n_heads


class Attention(nn.Module):
    """Causal multi-head self-attention with an optional logit bias and an optional rotation."""

    def __init__(self, config: LMConfig):
        super().__init__()
        self.n_heads, self.head_dim = config.n_heads, config.head_dim
        self.qkv = nn.Linear(config.d_model, 3 * config.d_model, bias=False)
        self.out = nn.Linear(config.d_model, config.d_model, bias=False)

    def forward(self, x, bias, rotation):
        batch, n_pos, d_model = x.shape  # (B, T, D)
        qkv = self.qkv(x).view(batch, n_pos, 3, self.n_heads, self.head_dim)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)  # each (B, H, T, Dh)
        if rotation is not None:
            cos, sin = rotation  # (T, Dh) each
            q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)  # (B, H, T, Dh)
        return self.out(out.transpose(1, 2).reshape(batch, n_pos, d_model))

    def weights(self, x, bias, rotation):
        """The attention weights (B, H, T, T) this layer uses, for analysis."""
        batch, n_pos, _ = x.shape
        qkv = self.qkv(x).view(batch, n_pos, 3, self.n_heads, self.head_dim)
        q, k, _ = qkv.permute(2, 0, 3, 1, 4)
        if rotation is not None:
            q, k = apply_rope(q, *rotation), apply_rope(k, *rotation)
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + bias  # (B, H, T, T)
        return scores.softmax(-1)


class Block(nn.Module):
    def __init__(self, config: LMConfig):
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(config.d_model), nn.LayerNorm(config.d_model)
        self.attention = Attention(config)
        self.mlp = nn.Sequential(
            nn.Linear(config.d_model, config.d_ff),
            nn.GELU(),
            nn.Linear(config.d_ff, config.d_model),
        )

    def forward(self, x, bias, rotation):
        x = x + self.attention(self.norm1(x), bias, rotation)
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    """Token embedding -> blocks -> LayerNorm -> logits (weights tied with the embedding)."""

    def __init__(self, config: LMConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.learned = (
            LearnedPositionalEmbedding(config.max_len, config.d_model)
            if config.position == "learned"
            else None
        )
        self.t5 = (
            RelativePositionBias(
                config.n_heads, config.t5_buckets, config.t5_max_distance, bidirectional=False
            )
            if config.position == "t5"
            else None
        )
        self.rope_scaling = None

    def set_rope_scaling(self, scaling: dict | None) -> None:
        """Use a RoPE scaling (a ``rope_inv_freq`` dict) from now on; None for plain RoPE."""
        if self.config.position != "rope":
            raise ValueError(f"a {self.config.position!r} model has no RoPE to scale.")
        # Validate the scaling now, so a bad dict fails here rather than at the first forward pass.
        rope_inv_freq(self.config.head_dim, self.config.rope_base, scaling, seq_len=1)
        self.rope_scaling = scaling

    def position_inputs(self, n_pos: int, device=None):
        """(added to embeddings (T, D) or None, logit bias (H, T, T), rotation (cos, sin) or None)."""
        config = self.config
        causal = torch.full((n_pos, n_pos), float("-inf"), device=device).triu(1)  # (T, T)
        added, bias, rotation = None, causal[None], None  # bias (1, T, T)
        if config.position == "sinusoidal":
            added = sinusoidal_encoding(n_pos, config.d_model, device=device)
        elif config.position == "learned":
            added = self.learned(n_pos)  # raises past max_len, with a sentence
        elif config.position == "t5":
            bias = self.t5(n_pos) + causal  # (H, T, T)
        elif config.position == "alibi":
            bias = alibi_bias(config.n_heads, n_pos, device=device)  # (H, T, T), -inf above
        elif config.position == "rope":
            inv_freq, scale = rope_inv_freq(
                config.head_dim, config.rope_base, self.rope_scaling, seq_len=n_pos, device=device
            )
            rotation = rope_cos_sin(n_pos, inv_freq, scale)  # (T, Dh) each
        return added, bias, rotation

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) int64 -> logits (B, T, vocab)."""
        added, bias, rotation = self.position_inputs(ids.shape[1], ids.device)
        x = self.embed(ids)  # (B, T, D)
        if added is not None:
            x = x + added
        for block in self.blocks:
            x = block(x, bias, rotation)
        return self.norm(x) @ self.embed.weight.T  # (B, T, vocab)

    @torch.no_grad()
    def attention_weights(self, ids: torch.Tensor, layer: int = 0) -> torch.Tensor:
        """The attention weights (B, H, T, T) of one layer on ``ids``."""
        added, bias, rotation = self.position_inputs(ids.shape[1], ids.device)
        x = self.embed(ids) + (added if added is not None else 0)
        for block in self.blocks[:layer]:
            x = block(x, bias, rotation)
        return self.blocks[layer].attention.weights(self.blocks[layer].norm1(x), bias, rotation)

    def position_parameters(self) -> int:
        """How many parameters the position method itself has."""
        part = self.learned if self.learned is not None else self.t5
        return sum(p.numel() for p in part.parameters()) if part is not None else 0

    def save(self, path) -> None:
        """Weights in float16 (a few hundred KB) with the config."""
        state = {k: v.half() for k, v in self.state_dict().items()}
        torch.save({"config": asdict(self.config), "state": state}, path)

    @classmethod
    def load(cls, path) -> TinyLM:
        data = torch.load(path, weights_only=True)
        model = cls(LMConfig(**data["config"]))
        model.load_state_dict({k: v.float() for k, v in data["state"].items()})
        return model.eval()
