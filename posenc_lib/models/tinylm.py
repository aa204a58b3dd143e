"""A tiny decoder-only language model whose position method is one setting (chapter 7).

    model = TinyLM(LMConfig(position="alibi"))
    logits = model(ids)                       # ids (B, T) -> logits (B, T, vocab)
    model.set_rope_scaling({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64})
    model.set_window(64)                      # local attention: each query sees the last 64 tokens

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

Three settings of the config and three switches at evaluation change how positions enter:
- ``embed_scale``: the token embeddings start at N(0, 1/D) and are multiplied by sqrt(D), as
  Vaswani et al. 2017 do (section 3.4, "we multiply those weights by sqrt(d_model)"), so an added
  position vector of unit amplitude does not drown the words; a learned table then starts at
  N(0, 1/D) too (both inits are fairseq's ``Embedding`` and ``PositionalEmbedding``). Without it
  the embeddings and a learned table start at N(0, 0.02^2), as in GPT-2;
- ``random_positions = N`` (RoPE only): every text gets sorted positions drawn from 0 .. N-1
  (``posenc_lib.randomized``, Ruoss et al. 2023), in training and at evaluation;
- ``set_window(W)``: local attention, each query sees only the last W tokens;
- ``set_table_stretch(True)``: a learned table meeting a text longer than its rows is stretched to
  the text's length by linear interpolation (``absolute.interpolate_table``), and
  ``resize_learned_table(rows)`` makes the stretch permanent, for fine-tuning;
- ``set_rope_scaling(...)``: a RoPE scaling (above).

Shapes: B batch, T positions, D d_model, H heads, Dh = D / H.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from posenc_lib import _validate as validate
from posenc_lib.absolute import LearnedPositionalEmbedding, interpolate_table, sinusoidal_encoding
from posenc_lib.alibi import alibi_bias
from posenc_lib.attention import causal_mask, sliding_window_mask
from posenc_lib.randomized import randomized_positions
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
    embed_scale: bool = False
    random_positions: int = 0  # N > 0: sorted positions drawn from 0..N-1 (RoPE only)

    def __post_init__(self):
        validate.choice("position", self.position, POSITIONS)
        for name in ("vocab_size", "d_model", "n_heads", "n_layers", "d_ff", "max_len"):
            validate.positive_int(name, getattr(self, name))
        validate.boolean("embed_scale", self.embed_scale)
        if self.random_positions:
            validate.positive_int("random_positions", self.random_positions)
            if self.position != "rope":
                raise ValueError(
                    f"random_positions is implemented for position='rope' only, not {self.position!r}."
                )
            if self.random_positions < self.max_len:
                raise ValueError(
                    f"random_positions={self.random_positions} must be at least max_len="
                    f"{self.max_len}: a text of max_len tokens needs that many different positions."
                )
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
        nn.init.normal_(self.embed.weight, std=config.d_model**-0.5 if config.embed_scale else 0.02)
        self.embed_multiplier = math.sqrt(config.d_model) if config.embed_scale else 1.0
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.norm = nn.LayerNorm(config.d_model)
        self.learned = (
            LearnedPositionalEmbedding(config.max_len, config.d_model)
            if config.position == "learned"
            else None
        )
        if self.learned is not None and config.embed_scale:  # fairseq's init for both tables
            nn.init.normal_(self.learned.weight, std=config.d_model**-0.5)
        self.t5 = (
            RelativePositionBias(
                config.n_heads, config.t5_buckets, config.t5_max_distance, bidirectional=False
            )
            if config.position == "t5"
            else None
        )
        self.rope_scaling = None
        self.window = None
        self.stretch_table = False
        self.position_generator = torch.Generator().manual_seed(0)  # random_positions' draws

    def set_window(self, window: int | None) -> None:
        """From now on each query sees only the last ``window`` tokens (itself included); None for
        full causal attention. Changes no weight."""
        self.window = None if window is None else validate.positive_int("window", window)

    def set_table_stretch(self, stretch: bool) -> None:
        """True: a learned table meeting a text longer than its rows is stretched to the text's
        length (``absolute.interpolate_table``) instead of raising. Changes no weight."""
        if self.learned is None:
            raise ValueError(f"a {self.config.position!r} model has no learned table to stretch.")
        self.stretch_table = validate.boolean("stretch", stretch)

    def resize_learned_table(self, rows: int) -> None:
        """Replace the learned table by its interpolation to ``rows`` rows (a new trainable
        parameter), as a fine-tune at a longer length needs."""
        if self.learned is None:
            raise ValueError(f"a {self.config.position!r} model has no learned table to resize.")
        weight = self.learned.weight.detach()
        table = LearnedPositionalEmbedding(rows, self.config.d_model, device=weight.device)
        with torch.no_grad():
            table.weight.copy_(interpolate_table(weight, rows))
        self.learned = table

    def reseed_positions(self, seed: int) -> None:
        """Restart the random position draws of a ``random_positions`` model (reproducible runs)."""
        self.position_generator.manual_seed(seed)

    def set_rope_scaling(self, scaling: dict | None) -> None:
        """Use a RoPE scaling (a ``rope_inv_freq`` dict) from now on; None for plain RoPE."""
        if self.config.position != "rope":
            raise ValueError(f"a {self.config.position!r} model has no RoPE to scale.")
        # Validate the scaling now, so a bad dict fails here rather than at the first forward pass.
        rope_inv_freq(self.config.head_dim, self.config.rope_base, scaling, seq_len=1)
        self.rope_scaling = scaling

    def position_inputs(self, n_pos: int, device=None, batch: int = 1):
        """(added to embeddings (T, D) or None, logit bias (H, T, T), rotation (cos, sin) or None).

        With ``random_positions`` the rotation is (B, 1, T, Dh): one draw per text of the batch.
        """
        config = self.config
        masked = (
            causal_mask(n_pos, device=device)
            if self.window is None
            else sliding_window_mask(n_pos, self.window, device=device)
        )  # (T, T), True where a query must not look
        blocked = torch.zeros(n_pos, n_pos, device=device).masked_fill(masked, float("-inf"))
        added, bias, rotation = None, blocked[None], None  # bias (1, T, T)
        if config.position == "sinusoidal":
            added = sinusoidal_encoding(n_pos, config.d_model, device=device)
        elif config.position == "learned":
            if self.stretch_table and n_pos > self.learned.max_len:
                added = interpolate_table(self.learned.weight, n_pos)  # (T, D)
            else:
                added = self.learned(n_pos)  # raises past max_len, with a sentence
        elif config.position == "t5":
            bias = self.t5(n_pos) + blocked  # (H, T, T)
        elif config.position == "alibi":
            bias = alibi_bias(config.n_heads, n_pos, device=device) + blocked  # (H, T, T)
        elif config.position == "rope":
            inv_freq, scale = rope_inv_freq(
                config.head_dim, config.rope_base, self.rope_scaling, seq_len=n_pos, device=device
            )
            positions = n_pos
            if config.random_positions:
                positions = randomized_positions(
                    n_pos,
                    config.random_positions,
                    batch=(batch,),
                    generator=self.position_generator,
                ).to(device)  # (B, T)
            cos, sin = rope_cos_sin(positions, inv_freq, scale)  # (T, Dh) or (B, T, Dh)
            rotation = (cos[:, None], sin[:, None]) if cos.dim() == 3 else (cos, sin)
        return added, bias, rotation

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        """ids (B, T) int64 -> logits (B, T, vocab)."""
        added, bias, rotation = self.position_inputs(ids.shape[1], ids.device, ids.shape[0])
        x = self.embed(ids) * self.embed_multiplier  # (B, T, D)
        if added is not None:
            x = x + added
        for block in self.blocks:
            x = block(x, bias, rotation)
        return self.norm(x) @ self.embed.weight.T  # (B, T, vocab)

    @torch.no_grad()
    def attention_weights(self, ids: torch.Tensor, layer: int = 0) -> torch.Tensor:
        """The attention weights (B, H, T, T) of one layer on ``ids``."""
        added, bias, rotation = self.position_inputs(ids.shape[1], ids.device, ids.shape[0])
        x = self.embed(ids) * self.embed_multiplier + (added if added is not None else 0)
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
