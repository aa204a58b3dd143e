"""Chapter 8, order without positions: can SmolLM2 tell 我爱你 from 你爱我 with RoPE switched off?

Chapter 1 proved that attention without positions is permutation equivariant (Attn(PX) =
P Attn(X)) and showed it on MiniLM, whose English vocabulary turns most Chinese characters into
[UNK]. SmolLM2-135M (``posenc_lib.models.smollm``) reads bytes (byte-level BPE), so every character
gets through, as two or three tokens. Here each character is tokenized on its own, so that
reordering the characters reorders blocks of tokens and nothing else.

"RoPE off" means every token at position 0: cos(0 * theta_i) = 1 and sin(0 * theta_i) = 0, so
RoPE's rotation (RoFormer, Su et al. 2021, arXiv:2104.09864, eq. 34) is the identity and every
query and key is the unrotated projection of its token. Two things can still carry order, and the
functions below keep them apart:

- ``compare_scores``: layer 0's attention scores q_i . k_j / sqrt(Dh) with no mask, for both
  sentences. A layer-0 query or key depends on its token alone (embedding, RMSNorm, projection),
  so without RoPE the scores of the second sentence are the first's with rows and columns moved,
  S' = P S P^T (chapter 1's argument). With RoPE the score of two tokens depends on their
  distance (RoFormer eq. 16): it changes exactly for the pairs whose distance changed.
- ``last_token_states``: the whole model, causal mask included, on both sentences followed by the
  same final token ("。"), which sees every character in both orders. Without RoPE its layer-0
  output is the same in both orders (a weighted sum over the same keys); from layer 1 on it is
  not, because the causal mask gave the earlier tokens different sets of keys to see (chapter 1,
  section 6; Haviv et al. 2022, arXiv:2203.16634). The mask carries order; RoPE is not the only
  source.

Shapes: T tokens, H = 9 query heads, KV = 3 key/value heads, Dh = 64, L = 30 layers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from posenc_lib import _validate as validate
from posenc_lib._threads import one_thread
from posenc_lib.analysis.ch01_order import permutation_matrix
from posenc_lib.analysis.ch08_layout import layer0_queries_keys, rotated_logits
from posenc_lib.models.minilm import reordering
from posenc_lib.rope import rope_cos_sin

PAIRS = (("我爱你", "你爱我"), ("猫追狗", "狗追猫"))  # chapter 1's pairs: roles swapped
SUFFIX = "。"  # a final token that sees every character of the sentence in both orders


@dataclass(frozen=True)
class CharacterIds:
    """A text tokenized character by character (``character_ids``)."""

    text: str
    ids: torch.Tensor  # (1, T): the beginning token, then each character's tokens in turn
    blocks: tuple[tuple[int, ...], ...]  # each character's token ids, one tuple per character


def character_ids(llm, text) -> CharacterIds:
    """``text`` as the model's beginning token followed by each character tokenized on its own.

    Byte-level BPE writes a Chinese character as 2 or 3 tokens; tokenizing each character alone
    keeps a character's tokens together, so reordering characters reorders whole blocks. (For
    the four sentences of ``PAIRS`` this equals tokenizing the whole text: the tests check it.)
    """
    if not isinstance(text, str) or not text or any(c.isspace() for c in text):
        raise ValueError(
            f"text must be a non-empty string of characters with no spaces, such as '我爱你'; "
            f"got {validate.show(text)}."
        )
    blocks = tuple(tuple(llm.ids(c)[0].tolist()) for c in text)
    ids = [llm.tokenizer.bos_token_id, *(i for block in blocks for i in block)]
    return CharacterIds(text=text, ids=torch.tensor([ids]), blocks=blocks)  # ids: (1, T)


def token_order(first: CharacterIds, second: CharacterIds) -> tuple[int, ...]:
    """The token order with second.ids[0, i] == first.ids[0, order[i]]: the beginning token stays
    at 0 and each character's block of tokens moves with the character.

    Raises ValueError if ``second`` is not ``first`` with its characters reordered.
    """
    if sorted(first.text) != sorted(second.text):
        raise ValueError(
            f"the second text must reorder the characters of the first, each as often; got "
            f"{first.text!r} and {second.text!r}."
        )
    starts = [1]  # token 0 is the beginning token
    for block in first.blocks:
        starts.append(starts[-1] + len(block))
    # characters: second.text[i] == first.text[moved[i]]
    moved = reordering(list(first.text), list(second.text))
    order = (0, *(t for c in moved for t in range(starts[c], starts[c + 1])))
    return order


def layer0_scores(llm, ids: torch.Tensor, rope: bool = True) -> torch.Tensor:
    """Layer 0's attention scores (H, T, T), rows are queries, no mask, for ``ids`` (1, T).

    q_i . k_j / sqrt(Dh) (Vaswani et al. 2017, arXiv:1706.03762, eq. 1) from the model's own
    layer-0 weights, rotated by the library's ``apply_rope`` at positions 0..T-1 (``rope=True``)
    or all at position 0 (``rope=False``: cos 1, sin 0, the rotation is the identity).
    Chapter 8 section 2 checks this recomputation against the model's own attention.
    """
    rope = validate.boolean("rope", rope)
    attn = llm.model.model.layers[0].self_attn
    q, k = layer0_queries_keys(llm, ids, attn.q_proj.weight, attn.k_proj.weight)  # (H|KV, T, Dh)
    t = ids.shape[1]
    positions = torch.arange(t) if rope else torch.zeros(t, dtype=torch.long)  # (T,)
    cos, sin = rope_cos_sin(positions, llm.model.model.rotary_emb.inv_freq)  # (T, Dh) each
    with torch.no_grad():
        return rotated_logits(q, k, cos, sin)  # (H, T, T)


@dataclass(frozen=True)
class ScoreChange:
    """Layer 0's scores of the same two tokens in two orders (``compare_scores``)."""

    order: tuple[int, ...]  # second.ids[0, i] == first.ids[0, order[i]]
    gap: torch.Tensor  # (H, T, T): |S_second - P S_first P^T|, the same token pair in each cell
    kept: torch.Tensor  # (T, T) bool: pairs whose query-key distance is the same in both orders
    kept_gap: float  # largest gap over the kept pairs, all heads
    moved_least: float  # over the pairs whose distance changed: the smallest largest-over-heads gap
    moved_most: float  # the largest gap over those pairs
    scale: float  # max |S_first|: the size of a score


def compare_scores(llm, first: str, second: str, rope: bool = True) -> ScoreChange:
    """Layer 0's scores of ``first`` and of ``second`` (its characters reordered), compared token
    pair by token pair: S_second against P S_first P^T, P = ``permutation_matrix(token_order)``.

    Without RoPE the two agree to float32 rounding for every pair (``gap`` at rounding level).
    With RoPE a pair's score depends on its distance, so ``kept_gap`` stays at rounding level and
    ``moved_least`` shows the smallest change among the pairs whose distance changed.
    """
    a, b = character_ids(llm, first), character_ids(llm, second)
    order = token_order(a, b)
    p = permutation_matrix(order)  # (T, T)
    s_a, s_b = layer0_scores(llm, a.ids, rope), layer0_scores(llm, b.ids, rope)  # (H, T, T)
    gap = (s_b - p @ s_a @ p.T).abs()  # (H, T, T)
    where = torch.tensor(order)  # (T,): where each token of the second stood in the first
    steps = torch.arange(len(order))  # (T,)
    kept = (steps[:, None] - steps[None, :]) == (where[:, None] - where[None, :])  # (T, T)
    per_pair = gap.amax(0)  # (T, T): largest over heads
    moved = per_pair[~kept]
    return ScoreChange(
        order=order,
        gap=gap,
        kept=kept,
        kept_gap=float(per_pair[kept].max()),
        moved_least=float(moved.min()) if moved.numel() else math.nan,
        moved_most=float(moved.max()) if moved.numel() else math.nan,
        scale=float(s_a.abs().max()),
    )


@dataclass(frozen=True)
class LastTokenChange:
    """The final token's state in two orders, layer by layer (``last_token_states``)."""

    gap: torch.Tensor  # (L + 1,): max |h_second - h_first| of the final token; 0 = embeddings
    size: torch.Tensor  # (L + 1,): max |h_first| of the final token, for scale
    logit_gap: float  # max |next-token logits, second - first| after the final token


def last_token_states(llm, first: str, second: str, suffix: str = SUFFIX) -> dict:
    """Run the whole model (causal mask, 30 layers) on ``first + suffix`` and ``second + suffix``
    and compare the suffix token's state after every layer, and its next-token logits.

    Returns {False: LastTokenChange without RoPE, True: with RoPE}; ``gap[1]`` is after layer 0.
    Without RoPE every token is at position 0 (``position_ids`` all zero), so the model's own
    rotary module turns nothing. The causal mask must stay the ordinary one, and that needs the
    explicit ``attention_mask`` of ones passed here: given neither an ``attention_mask`` nor a
    cache (``use_cache=False``), transformers 5 reads ``position_ids`` as packed sequences
    (``masking_utils.find_packed_sequence_indices``: a new sequence wherever a position does not
    follow its neighbour + 1), so all-zero positions would make every token a sequence of its
    own that sees only itself. With the mask given, the causal mask comes from the input's length
    whatever ``use_cache`` says (the tests check both). One batched pass: 2 sentences x 2 settings.
    """
    a, b = character_ids(llm, first + suffix), character_ids(llm, second + suffix)
    token_order(character_ids(llm, first), character_ids(llm, second))  # validates the pair
    t = a.ids.shape[1]
    ids = torch.cat([a.ids, b.ids, a.ids, b.ids])  # (4, T): rows 0-1 without RoPE, 2-3 with
    positions = torch.stack([torch.zeros(t, dtype=torch.long)] * 2 + [torch.arange(t)] * 2)
    with torch.inference_mode(), one_thread():
        out = llm.model(
            ids,
            attention_mask=torch.ones_like(ids),  # keeps position_ids out of the mask (docstring)
            position_ids=positions,
            use_cache=False,
            output_hidden_states=True,
            logits_to_keep=1,
        )
    states = torch.stack([h[:, -1] for h in out.hidden_states], dim=1)  # (4, L + 1, D)
    logits = out.logits[:, -1]  # (4, V): after the suffix token
    return {
        rope: LastTokenChange(
            gap=(states[row + 1] - states[row]).abs().amax(-1),
            size=states[row].abs().amax(-1),
            logit_gap=float((logits[row + 1] - logits[row]).abs().max()),
        )
        for rope, row in ((False, 0), (True, 2))
    }
