"""Chapter 8, order without positions: 我爱你 / 你爱我 on SmolLM2 with RoPE off and on."""

import pytest
import torch

from posenc_lib.analysis import ch08_order as order
from posenc_lib.analysis.ch08_heads import eager_attention
from posenc_lib.analysis.ch08_layout import causal_softmax
from posenc_lib.models.smollm import load_smollm


@pytest.fixture(scope="module")
def llm():
    return load_smollm()


@pytest.mark.parametrize("text", [t for pair in order.PAIRS for t in pair])
def test_character_by_character_is_how_the_tokenizer_reads_the_whole_text(llm, text):
    found = order.character_ids(llm, text)
    assert found.ids[0, 0] == llm.tokenizer.bos_token_id
    assert torch.equal(found.ids[:, 1:], llm.ids(text))  # no merge across two characters
    assert all(len(block) in (2, 3) for block in found.blocks)  # byte-level: 2 or 3 per character
    assert llm.tokenizer.unk_token_id not in found.ids[0].tolist()


def test_token_order_moves_each_characters_block(llm):
    a, b = order.character_ids(llm, "我爱你"), order.character_ids(llm, "你爱我")
    moved = order.token_order(a, b)
    assert moved == (0, 6, 7, 3, 4, 5, 1, 2)  # 我 = tokens 1-2, 爱 = 3-5, 你 = 6-7
    assert torch.equal(a.ids[0, list(moved)], b.ids[0])
    with pytest.raises(ValueError, match="reorder the characters"):
        order.token_order(a, order.character_ids(llm, "我恨你"))
    with pytest.raises(ValueError, match="no spaces"):
        order.character_ids(llm, "我 爱 你")


@pytest.mark.parametrize("rope", [True, False])
def test_layer0_scores_give_the_models_own_attention(llm, rope):
    # transformers' own layer 0 (eager attention, causal mask), with true positions or all at 0.
    ids = order.character_ids(llm, "猫追狗").ids  # (1, 9)
    t = ids.shape[1]
    positions = torch.arange(t) if rope else torch.zeros(t, dtype=torch.long)
    with eager_attention(llm), torch.no_grad():
        own = llm.model(ids, position_ids=positions[None], output_attentions=True).attentions[0][0]
    ours = causal_softmax(order.layer0_scores(llm, ids, rope=rope))  # (9, T, T)
    # float32, two orders of summation over 64 dims and 576 inputs: rounding near 1e-7.
    torch.testing.assert_close(ours, own, rtol=0, atol=1e-5)


@pytest.mark.parametrize("first, second", order.PAIRS)
def test_without_rope_layer0_scores_are_the_same_pairs_moved(llm, first, second):
    off = order.compare_scores(llm, first, second, rope=False)
    # scores of size about 6 in float32: rounding near 1e-6, a real change is 0.2 or more
    assert float(off.gap.max()) < 1e-5
    on = order.compare_scores(llm, first, second, rope=True)
    assert on.kept_gap < 1e-5  # RoPE sees the distance only
    assert on.moved_least > 0.1 and on.moved_most > 1.0
    t = len(on.order)
    assert on.kept.diagonal().all() and 0 < int(on.kept.sum()) < t * t


def test_kept_pairs_are_those_whose_distance_is_unchanged(llm):
    on = order.compare_scores(llm, "我爱你", "你爱我")
    # 8 tokens: each with itself (8), 我 and 你 inside (2 + 2), 爱 inside (6), <|im_start|> with
    # 爱's three tokens, both ways (6): 24 pairs.
    assert int(on.kept.sum()) == 24


@pytest.mark.parametrize("first, second", order.PAIRS)
def test_the_causal_mask_still_carries_order_without_rope(llm, first, second):
    changes = order.last_token_states(llm, first, second)
    off, on = changes[False], changes[True]
    assert float(off.gap[0]) == 0.0  # the same token, the same embedding: exact
    assert float(off.gap[1] / off.size[1]) < 1e-6  # layer 0: the same keys, summed in another order
    assert float(off.gap[2]) > 0.1 and off.logit_gap > 0.5  # layer 1 on: the mask's order
    assert float(on.gap[1]) > 0.1  # with RoPE, order is in layer 0 already
    assert on.logit_gap > off.logit_gap


def test_last_token_states_agree_with_one_sentence_at_a_time(llm):
    # The batched pass (4 rows) against the model run on one text alone, true positions.
    changes = order.last_token_states(llm, "我爱你", "你爱我")
    ids = [order.character_ids(llm, t + order.SUFFIX).ids for t in ("我爱你", "你爱我")]
    with torch.no_grad():
        alone = [llm.model(x).logits[0, -1] for x in ids]  # (V,) each
    # logits of size about 20 in float32, batched or not: rounding near 1e-5
    assert abs(float((alone[1] - alone[0]).abs().max()) - changes[True].logit_gap) < 1e-3


def test_rope_off_keeps_the_causal_mask_whatever_use_cache_says(llm):
    # transformers 5, given no attention_mask and no cache, reads position_ids as packed
    # sequences: all-zero positions make each token a sequence of its own. last_token_states
    # passes a mask of ones, so its RoPE-off logits are the ordinary causal model's (built with a
    # cache here, use_cache=True) and not the packed one's (no mask, use_cache=False).
    changes = order.last_token_states(llm, "我爱你", "你爱我")
    ids = [order.character_ids(llm, t + order.SUFFIX).ids for t in ("我爱你", "你爱我")]
    zeros = [torch.zeros_like(x) for x in ids]
    with torch.no_grad():
        causal = [
            llm.model(x, position_ids=z, use_cache=True).logits[0, -1]
            for x, z in zip(ids, zeros, strict=True)
        ]
        packed = llm.model(ids[0], position_ids=zeros[0], use_cache=False).logits[0, -1]
    # logits of size about 20 in float32, batched or not: rounding near 1e-5
    assert abs(float((causal[1] - causal[0]).abs().max()) - changes[False].logit_gap) < 1e-3
    assert float((packed - causal[0]).abs().max()) > 1.0  # the trap the mask avoids


def test_bad_input_is_refused(llm):
    ids = order.character_ids(llm, "我爱你").ids
    with pytest.raises(ValueError, match="True or False"):
        order.layer0_scores(llm, ids, rope=1)
    with pytest.raises(ValueError, match="reorder the characters"):
        order.last_token_states(llm, "我爱你", "我爱他")
