"""Relative position bias: a learned scalar per head for each (bucketed) key - query offset.

T5: Raffel et al. 2020, "Exploring the Limits of Transfer Learning with a Unified Text-to-Text
Transformer", arXiv:1910.10683, section 2.1. Each direction has its own buckets (all of them
when causal, half of them when bidirectional); the first n // 2 of a direction's n buckets hold one
offset each (offsets 0..7 for T5's default 32 bidirectional buckets), the rest share logarithmically
wider ranges up to ``max_distance``, beyond which everything falls in the last bucket. One table is
shared by all layers.

Shapes: H heads, T_q query positions, T_k key positions.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, tr


def _bucket_args(num_buckets, max_distance, bidirectional):
    n = validate.positive_int("num_buckets", num_buckets)
    validate.boolean("bidirectional", bidirectional)
    per_side = n // 2 if bidirectional else n
    exact = per_side // 2
    if exact < 1:
        need = 4 if bidirectional else 2
        raise ValueError(
            tr(
                "num_buckets={n} is too small: with bidirectional={bidirectional} at least {need} "
                "buckets are needed, so that each direction has an exact bucket and a far bucket.",
                n=n,
                bidirectional=bidirectional,
                need=need,
            )
        )
    dist = validate.positive_int("max_distance", max_distance)
    if dist <= exact:
        raise ValueError(
            tr(
                "max_distance={dist} must be larger than the {exact} offsets that get exact buckets "
                "(num_buckets={n}, bidirectional={bidirectional}); the log buckets span "
                "{exact}..max_distance.",
                dist=dist,
                exact=exact,
                n=n,
                bidirectional=bidirectional,
            )
        )
    return per_side, exact, dist


def t5_relative_position_bucket(
    relative_position, bidirectional=True, num_buckets=32, max_distance=128
) -> torch.Tensor:
    """Map offsets (key position - query position) to bucket ids in [0, num_buckets).

    Bidirectional: half the buckets for keys before the query, half for keys after it (ids offset
    by num_buckets // 2). Causal (bidirectional=False): keys after the query all share bucket 0.
    Within a direction, with n buckets and e = n // 2 exact ones: distances 0 .. e - 1 map to
    themselves; a distance r >= e maps to e + floor(log(r / e) / log(max_distance / e) * (n - e)),
    capped at n - 1 (n - e log buckets: e + 1 of them when n is odd).
    Equal to transformers' ``T5Attention._relative_position_bucket``. Returns a LongTensor of the
    input's shape.
    """
    per_side, exact, dist = _bucket_args(num_buckets, max_distance, bidirectional)
    if not isinstance(relative_position, torch.Tensor):
        try:
            relative_position = torch.as_tensor(relative_position)
        except (TypeError, RuntimeError, ValueError, OverflowError):
            raise ValueError(
                tr(
                    "relative_position must be an int, a list of ints or an integer tensor of "
                    "offsets (key position - query position), got {value}.",
                    value=validate.show(relative_position),
                )
            ) from None
    validate.integer_tensor("relative_position", relative_position, N_("whole-number offsets"))
    rel = relative_position.long().clamp(
        -validate.MAX_SIZE, validate.MAX_SIZE
    )  # far is far: no overflow
    if bidirectional:
        side = (rel > 0).long() * per_side  # keys after the query use the upper half
        distance = rel.abs()
    else:
        side = torch.zeros_like(rel)
        distance = (-rel).clamp(min=0)  # only keys before the query are told apart
    # float32 on purpose: the bucket edges then fall exactly where T5 checkpoints put them.
    far = distance.clamp(min=exact).float() / exact  # >= 1, so the log is >= 0
    log_bucket = exact + (far.log() / math.log(dist / exact) * (per_side - exact)).long()
    log_bucket = log_bucket.clamp(max=per_side - 1)
    return side + torch.where(distance < exact, distance, log_bucket)


class RelativePositionBias(nn.Module):
    """T5's learned bias: one scalar per (bucket, head), looked up by the bucket of j - i.

    ``forward(q_len, k_len)`` returns the bias (H, q_len, k_len) for queries 0 .. q_len-1 and keys
    0 .. k_len-1, ready to add to the attention logits. ``query_offset`` shifts the query positions
    (for a decoder that has already seen that many tokens), as T5's ``past_seen_tokens`` does.
    Note the convention: queries start at position 0 unless shifted, whereas ``alibi_bias`` puts
    the queries at the last q_len of the k_len positions. The table is ``self.bias.weight``,
    (num_buckets, H), initialised at zero so an untrained bias changes nothing.
    """

    def __init__(self, num_heads, num_buckets=32, max_distance=128, bidirectional=True):
        super().__init__()
        _bucket_args(num_buckets, max_distance, bidirectional)
        self.num_heads = validate.positive_int("num_heads", num_heads)
        self.num_buckets, self.max_distance = num_buckets, max_distance
        self.bidirectional = bidirectional
        self.bias = nn.Embedding(num_buckets, self.num_heads)
        nn.init.zeros_(self.bias.weight)

    def buckets(self, q_len, k_len, query_offset=0) -> torch.Tensor:
        """Bucket ids (q_len, k_len) for every (query, key) pair."""
        q = validate.positive_int("q_len", q_len)
        k = validate.positive_int("k_len", k_len)
        heads = self.num_heads
        validate.table_size(N_("a ({heads}, {q}, {k}) bias"), heads, q, k, heads=heads, q=q, k=k)
        device = self.bias.weight.device
        offset = validate.whole_int("query_offset", query_offset)
        query_pos = torch.arange(q, device=device)[:, None] + offset  # (T_q, 1)
        key_pos = torch.arange(k, device=device)[None, :]  # (1, T_k)
        return t5_relative_position_bucket(
            key_pos - query_pos, self.bidirectional, self.num_buckets, self.max_distance
        )  # (T_q, T_k)

    def forward(self, q_len, k_len=None, query_offset=0) -> torch.Tensor:
        k_len = q_len if k_len is None else k_len
        values = self.bias(self.buckets(q_len, k_len, query_offset))  # (T_q, T_k, H)
        return values.permute(2, 0, 1)  # (H, T_q, T_k)

    def extra_repr(self) -> str:
        return (
            f"num_heads={self.num_heads}, num_buckets={self.num_buckets}, "
            f"max_distance={self.max_distance}, bidirectional={self.bidirectional}"
        )
