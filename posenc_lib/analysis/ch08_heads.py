"""Chapter 8, what the heads do with the frequencies: rotary pairs, bands and attention by distance.

SmolLM2-135M (``posenc_lib.models.smollm``; 4-bit quantized, dequantized to float32) rotates each
head's 64 query and key dims as 32 pairs in the half-split layout: pair i is dims (i, i + 32),
turning at theta_i = 100000 ** (-2i / 64) radians per position (RoFormer, Su et al. 2021,
arXiv:2104.09864, eq. 15). What does a trained model put in those pairs, and where do its heads
look?

- ``capture_heads``: one forward pass of a text, keeping every layer's queries and keys as
  ``q_proj`` / ``k_proj`` return them (before the rotation) and the attention probabilities
  (eager attention switched on for the pass, ``output_attentions=True``).
- ``pair_shares``: the share of each head's squared query (and key) norm that each pair carries,
  measured after ``q_proj`` / ``k_proj`` and before the rotation (the rotation keeps each pair's
  norm, so before or after gives the same shares), summed over the tokens of a text.
- ``frequency_bands``: pairs grouped by how often they turn over the trained context L = 8,192:
  more than beta_fast = 32 turns is "high" frequency, fewer than beta_slow = 1 turn is "low",
  in between "mid" -- YaRN's split of the pairs (Peng et al. 2023, arXiv:2309.00071, section 3.2,
  "NTK-by-parts"; alpha = 1, beta = 32 for Llama).
- ``attention_profile``: from the attention probabilities, per layer and head: the mean probability at each query-key distance, the mass on the first token
  (an attention sink: Xiao et al. 2023, "Efficient Streaming Language Models with Attention
  Sinks", arXiv:2309.17453, section 3.1), the mass within a few tokens (local heads) and the
  mass far back (long-range heads).
- ``decay_reference``: RoFormer's long-term decay bound (section 3.4.3, eq. 37) of chapter 6,
  for base 100000 and head_dim 64, divided by its value at distance 0 -- an upper bound on a
  relative score |q . k| / max |h_{i+1} - h_i|, not a prediction of attention probability.

Shapes: L = 30 layers, H = 9 query heads, KV = 3 key/value heads, T tokens, Dh = 64, P = Dh/2
= 32 pairs, N_B = 3 bands.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch

from posenc_lib import _validate as validate
from posenc_lib._threads import one_thread
from posenc_lib.analysis.ch06_rope import decay_bound
from posenc_lib.analysis.ch07_scaling import wavelengths
from posenc_lib.i18n import N_, _

# A fixed English text (about 350 tokens) written for this measurement: plain narrative prose,
# no repeats, so that no head is rewarded for copying.
HEADS_TEXT = (
    "The river town woke slowly on market days. Before the sun had cleared the hills, the baker "
    "had already pulled the first loaves from the oven, and the smell of warm bread drifted down "
    "the narrow street toward the water. Fishermen tied their boats to the old stone pier and "
    "carried baskets of silver fish to the square, where the stalls were going up one by one. "
    "A girl named Clara sold honey from her grandmother's hives. She had learned to count change "
    "before she could read, and she liked to watch the faces of the people who tasted the honey "
    "for the first time. Most of them smiled. Some of them closed their eyes. Across the square, "
    "an old man repaired clocks at a folding table covered with tiny screws, springs and glass "
    "faces. He never hurried, and he never lost a part. When a customer asked how long a repair "
    "would take, he always gave the same answer: as long as it needs, and not a minute more. "
    "By noon the square was full. Farmers argued about the price of potatoes, children chased "
    "a dog that had stolen a sausage, and a band of three musicians played the same four songs "
    "over and over again. Nobody seemed to mind. In the afternoon clouds came in from the west, "
    "and the first drops of rain sent everyone hurrying to pack their goods. Clara covered her "
    "jars with a blue cloth, the clock maker slid his screws into a wooden box, and the baker "
    "sold his last loaf at half price. By evening the square was empty again, the stones shining "
    "wet under the lamps, and the only sound was the river running fast and brown under the bridge. "
    "The next market day was a week away, and the town settled back into its quiet, patient rhythm."
)

TRAINED = 8192  # SmolLM2's max_position_embeddings: the context the bands are measured against
BANDS = (N_("high"), N_("mid"), N_("low"))  # band 0, 1, 2 of ``frequency_bands``
BETA_FAST, BETA_SLOW = 32.0, 1.0  # YaRN's turn counts for Llama (section 3.2)
MIN_QUERY = 32  # sink, local and far masses are averaged over queries at positions >= this
LOCAL = 4  # a key at distance <= LOCAL from its query is "local"
FAR = 64  # a key at distance > FAR (not the first token) is "far"
DISTANCE_EDGES = (0, 1, 2, 3, 4, 5, 9, 17, 33, 65, 129, 257, 513)  # bins [e_r, e_{r+1})


def frequency_bands(
    head_dim: int,
    base: float,
    trained: int = TRAINED,
    beta_fast: float = BETA_FAST,
    beta_slow: float = BETA_SLOW,
) -> torch.Tensor:
    """Each pair's band: 0 "high" (more than beta_fast turns over ``trained`` positions), 2 "low"
    (fewer than beta_slow turns: lambda_i = 2 pi / theta_i > L), 1 "mid" in between.

    The split of YaRN's NTK-by-parts (arXiv:2309.00071, section 3.2): r_i = L / lambda_i turns.
    For SmolLM2 (Dh 64, base 100000, L 8192): pairs 0-10 high, 11-19 mid, 20-31 low. (P,) long.
    """
    fast = validate.positive_float("beta_fast", beta_fast)
    slow = validate.positive_float("beta_slow", beta_slow)
    if not fast > slow:
        raise ValueError(
            f"beta_fast must be above beta_slow (turns above which a pair is high frequency, below "
            f"which it is low), got beta_fast={fast:g}, beta_slow={slow:g}."
        )
    length = validate.positive_int(_("trained (the context length L)"), trained)
    turns = length / wavelengths(head_dim, base)  # (P,) r_i
    band = torch.ones(turns.shape, dtype=torch.long)  # (P,) mid
    band[turns > fast] = 0
    band[turns < slow] = 2
    return band


def pair_energy(x: torch.Tensor) -> torch.Tensor:
    """x_i^2 + x_{i + Dh/2}^2 for each pair i of the half-split layout: (..., Dh) -> (..., Dh/2).

    The rotation turns each pair without changing this (RoFormer eq. 13; section 3.2.2: the
    rotary matrix is orthogonal), so it is the same before and after RoPE.
    """
    validate.float_tensor("x", x, shape_hint="(..., Dh)")
    validate.even_int("x.shape[-1] (head_dim)", x.shape[-1], N_("RoPE rotates the dims in pairs."))
    half = x.shape[-1] // 2
    return x[..., :half].pow(2) + x[..., half:].pow(2)  # (..., P)


def _check_ids(ids) -> torch.Tensor:
    validate.integer_tensor("ids", ids, N_("token ids"))
    validate.tensor("ids", ids, min_rank=2, max_rank=2, shape_hint="(1, T)")
    if ids.shape[0] != 1 or ids.shape[1] < 2:
        raise ValueError(
            f"ids must be one text of at least 2 tokens, (1, T); got {tuple(ids.shape)}."
        )
    return ids


@dataclass(frozen=True)
class CapturedHeads:
    """What one forward pass shows of every head (``capture_heads``)."""

    query: torch.Tensor  # (L, H, T, Dh): q_proj's output per head, before the rotation
    key: torch.Tensor  # (L, KV, T, Dh): k_proj's output per key/value head, before the rotation
    attention: torch.Tensor  # (L, H, T, T): attention probabilities, rows = queries


@contextlib.contextmanager
def eager_attention(llm) -> Iterator[None]:
    """Run ``llm`` with transformers' eager attention inside the block, then restore its own.

    sdpa (the default) never forms the probabilities; eager computes softmax(q k^T / sqrt(Dh))
    explicitly and can return it (``output_attentions=True``). Same weights, no second model.
    """
    saved = llm.config._attn_implementation
    llm.model.set_attn_implementation("eager")
    try:
        yield
    finally:
        llm.model.set_attn_implementation(saved)


@torch.inference_mode()
def capture_heads(llm, ids: torch.Tensor) -> CapturedHeads:
    """Every layer's unrotated queries and keys and its attention probabilities for ``ids`` (1, T),
    from one forward pass with eager attention (``eager_attention``).

    q and k are taken as ``q_proj`` / ``k_proj`` return them (forward hooks), before RoPE turns
    them; the probabilities come from ``output_attentions=True``.
    """
    ids = _check_ids(ids)
    dh = llm.config.head_dim
    captured: dict[tuple[int, str], torch.Tensor] = {}
    hooks = []
    for index, layer in enumerate(llm.model.model.layers):
        for name in ("q", "k"):
            projection = getattr(layer.self_attn, f"{name}_proj")

            def keep(module, inputs, output, key=(index, name)):
                captured[key] = (
                    output[0].view(output.shape[1], -1, dh).transpose(0, 1)
                )  # (H, T, Dh)

            hooks.append(projection.register_forward_hook(keep))
    try:
        # one thread: on a busy 2-core machine two threads made this pass 5x slower
        with eager_attention(llm), one_thread():
            out = llm.model(ids, output_attentions=True)
    finally:
        for hook in hooks:
            hook.remove()
    n = len(llm.model.model.layers)
    return CapturedHeads(
        query=torch.stack([captured[(i, "q")] for i in range(n)]),  # (L, H, T, Dh)
        key=torch.stack([captured[(i, "k")] for i in range(n)]),  # (L, KV, T, Dh)
        attention=torch.stack([a[0] for a in out.attentions]),  # (L, H, T, T)
    )


@dataclass(frozen=True)
class PairShares:
    """How each head spreads its query and key norm over the rotary pairs (``pair_shares``)."""

    query: torch.Tensor  # (L, H, P): share of the head's squared query norm in pair i; sums to 1
    key: torch.Tensor  # (L, KV, P): the same for the keys
    bands: torch.Tensor  # (P,) long: each pair's band, 0 high, 1 mid, 2 low (``frequency_bands``)
    wavelengths: torch.Tensor  # (P,) float64: 2 pi / theta_i, in positions
    query_bands: torch.Tensor  # (L, H, N_B): the query shares summed over each band's pairs
    key_bands: torch.Tensor  # (L, KV, N_B)
    uniform_bands: torch.Tensor  # (N_B,): a band's share if every pair carried the same norm


def _band_sums(shares: torch.Tensor, bands: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(*shares.shape[:-1], len(BANDS), dtype=shares.dtype)  # (..., N_B)
    return out.index_add_(-1, bands, shares)


def pair_shares(
    query: torch.Tensor, key: torch.Tensor, base: float, trained: int = TRAINED
) -> PairShares:
    """Each pair's share of every head's squared query and key norm, summed over the tokens.

    query (..., T, Dh), key (..., T, Dh): unrotated, half-split layout (``capture_heads``).
    share[..., i] = sum_t (q_{t,i}^2 + q_{t,i+Dh/2}^2) / sum_t |q_t|^2. ``base`` (rope_theta) and
    ``trained`` (the context length) place the pairs in their bands.
    """
    validate.float_tensor("query", query, min_rank=2, shape_hint="(L, H, T, Dh)")
    validate.float_tensor("key", key, min_rank=2, shape_hint="(L, KV, T, Dh)")
    if query.shape[-1] != key.shape[-1]:
        raise ValueError(
            f"query and key must have the same head_dim (last dim), got {query.shape[-1]} and "
            f"{key.shape[-1]}."
        )
    dh = query.shape[-1]
    bands = frequency_bands(dh, base, trained)  # (P,)
    shares = []
    for x in (query, key):
        energy = pair_energy(x).sum(-2)  # (..., P): summed over tokens
        shares.append(energy / energy.sum(-1, keepdim=True))
    uniform = torch.bincount(bands, minlength=len(BANDS)).to(query.dtype) / bands.numel()  # (N_B,)
    return PairShares(
        query=shares[0],
        key=shares[1],
        bands=bands,
        wavelengths=wavelengths(dh, base),
        query_bands=_band_sums(shares[0], bands),
        key_bands=_band_sums(shares[1], bands),
        uniform_bands=uniform,
    )


@dataclass(frozen=True)
class AttentionProfile:
    """Where each head's attention goes, by distance (``attention_profile``)."""

    by_distance: torch.Tensor  # (L, H, T): mean probability on the key d back, key 0 left out
    binned: torch.Tensor  # (L, H, R): ``by_distance`` averaged over each bin of distances
    edges: torch.Tensor  # (R + 1,) long: bin r holds distances edges[r] <= d < edges[r + 1]
    sink: torch.Tensor  # (L, H): mean mass on the first token, queries at >= min_query
    local: torch.Tensor  # (L, H): mean mass on keys at distance <= ``local``, same queries
    far: torch.Tensor  # (L, H): mean mass on keys at distance > ``far`` except the first token
    min_query: int
    local_distance: int
    far_distance: int


def attention_profile(
    attn: torch.Tensor, min_query: int = MIN_QUERY, local: int = LOCAL, far: int = FAR
) -> AttentionProfile:
    """Mean attention by query-key distance, and the sink / local / far masses of every head.

    attn: (L, H, T, T) causal attention probabilities (``capture_heads``). by_distance[l, h, d]
    averages attn[l, h, t, t - d] over the queries t >= d whose key t - d is not the first token
    (the first token is the sink, counted apart); distances no query reaches are NaN. The masses
    average over the queries t >= ``min_query``, so that a query with few keys to choose from (the
    first ones, which must attend near) does not count.
    """
    validate.float_tensor("attn", attn, min_rank=4, max_rank=4, shape_hint="(L, H, T, T)")
    t = attn.shape[-1]
    if attn.shape[-2] != t:
        raise ValueError(
            f"attn must be square in its last two dims (T, T), got {tuple(attn.shape)}."
        )
    start = validate.whole_int("min_query", min_query)
    if not 0 <= start < t:
        raise ValueError(f"min_query must be in [0, T) = [0, {t}), got {start}.")
    near = validate.whole_int("local", local)
    back = validate.whole_int("far", far)
    if not 0 <= near < back:
        raise ValueError(f"local and far must satisfy 0 <= local < far, got {near} and {back}.")
    with one_thread():  # elementwise work on (L, H, T, T): threads cost more than they save
        return _profile(attn, start, near, back)


def _profile(attn: torch.Tensor, start: int, near: int, back: int) -> AttentionProfile:
    t = attn.shape[-1]
    position = torch.arange(t)  # (T,)
    distance = position[:, None] - position[None, :]  # (T, T) query - key
    not_first = position[None, :] > 0  # (1, T) keys other than the sink
    counted = attn[..., start:, :]  # (L, H, T', T) the queries the masses average over
    rows = slice(start, None)
    sink = counted[..., 0].mean(-1)  # (L, H)
    local_mass = (counted * ((distance >= 0) & (distance <= near))[rows]).sum(-1).mean(-1)
    far_mass = (counted * ((distance > back) & not_first)[rows]).sum(-1).mean(-1)
    # by distance: attn[..., t, t - d] is the d-th subdiagonal, keys t - d >= 1 only
    by_distance = torch.full(attn.shape[:-1], float("nan"), dtype=attn.dtype)  # (L, H, T)
    for d in range(t - 1):
        by_distance[..., d] = attn.diagonal(offset=-d, dim1=-2, dim2=-1)[..., 1:].mean(-1)
    edges = torch.tensor([e for e in DISTANCE_EDGES if e < t - 1] + [t - 1])  # (R + 1,)
    binned = torch.stack(
        [by_distance[..., a:b].mean(-1) for a, b in zip(edges[:-1], edges[1:], strict=True)], -1
    )  # (L, H, R)
    return AttentionProfile(
        by_distance=by_distance,
        binned=binned,
        edges=edges,
        sink=sink,
        local=local_mass,
        far=far_mass,
        min_query=start,
        local_distance=near,
        far_distance=back,
    )


def heads_above(mass: torch.Tensor, threshold: float = 0.5) -> tuple[int, float]:
    """How many heads have ``mass`` (L, H) above ``threshold``, and the smallest |mass - threshold|.

    The margin says whether the count can change on another CPU: rounding moves a mass by about
    1e-6, so a count whose margin is above 1e-3 is the same everywhere.
    """
    validate.float_tensor("mass", mass, min_rank=2, max_rank=2, shape_hint="(L, H)")
    level = validate.real_number("threshold", threshold)
    return int((mass > level).sum()), float((mass - level).abs().min())


def strongest_heads(profile: AttentionProfile) -> dict[str, tuple[int, int]]:
    """(layer, head) of the most local head, the strongest sink and the most far-reaching head."""
    out = {}
    for name, mass in (("local", profile.local), ("sink", profile.sink), ("far", profile.far)):
        index = int(mass.argmax())  # flat index into (L, H)
        out[name] = divmod(index, mass.shape[1])
    return out


def decay_reference(distances, head_dim: int = 64, base: float = 100000.0) -> torch.Tensor:
    """RoFormer's long-term decay bound (``ch06_rope.decay_bound``; Su et al. 2021, section
    3.4.3, eq. 37) at each distance, divided by its value at distance 0: (P,) float64, 1 at 0.

    It bounds |<R_m q, R_n k>| / max_i |h_{i+1} - h_i| for any q, k: a ceiling on a score, not
    the softmax probability a trained head gives.
    """
    return decay_bound(distances, head_dim, base) / decay_bound(1, head_dim, base)[0]
