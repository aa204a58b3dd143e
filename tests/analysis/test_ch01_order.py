"""Chapter 1's math: word vectors, permutation matrices, and what reordering does to attention."""

import itertools

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import self_attention
from posenc_lib.analysis.ch01_order import (
    checked_order,
    minilm_lookup,
    pair_experiment,
    permutation_matrix,
    reorder_experiment,
    sentence_units,
    toy_projections,
    word_vectors,
)
from posenc_lib.models.minilm import load_minilm


def test_a_word_has_one_vector_in_every_sentence():
    dbm, mbd = word_vectors("dog bites man"), word_vectors(["man", "bites", "dog"])
    assert torch.equal(dbm[0], mbd[2]) and torch.equal(dbm[1], mbd[1])
    assert not torch.equal(dbm[0], dbm[2])
    assert not torch.equal(word_vectors("dog", seed=1), word_vectors("dog", seed=0))


@given(st.permutations(list(range(6))))
def test_permutation_matrix_reorders_rows(order):
    x = torch.randn(6, 3)
    assert torch.equal(permutation_matrix(order) @ x, x[order])


@given(st.integers(2, 7).flatmap(lambda n: st.permutations(list(range(n)))))
def test_attention_is_permutation_equivariant(order):
    # Attn(PX) = P Attn(X): the claim chapter 1 proves, for any sentence length and order.
    x = torch.randn(len(order), 8, dtype=torch.float64)
    w = [w.double() for w in toy_projections()]
    p = permutation_matrix(order).double()
    lhs = self_attention(p @ x, *w)[0]
    rhs = p @ self_attention(x, *w)[0]
    torch.testing.assert_close(lhs, rhs, rtol=0, atol=1e-12)


def test_reordering_without_positions_changes_nothing_but_the_order():
    for order in itertools.permutations(range(4)):
        result = reorder_experiment("the dog bites man", order)
        assert result.max_deviation < 1e-6 and result.pooled_gap < 1e-6
        assert float(result.drift.max()) < 1e-6
        assert result.tokens == tuple("the dog bites man".split()[i] for i in order)


def test_positions_break_the_symmetry_in_proportion_to_their_strength():
    gaps = [reorder_experiment("dog bites man", [2, 1, 0], s).max_deviation for s in (0.01, 0.1, 1)]
    assert 1e-3 < gaps[0] < gaps[1] < gaps[2]


def test_causal_mask_keeps_the_rows_that_see_the_same_set_of_words():
    result = reorder_experiment("dog bites man", [1, 0, 2], causal=True)
    assert result.drift[2] < 1e-6  # "man" sees {dog, bites, man} either way
    assert (result.drift[:2] > 0.1).all()


def test_identity_order_changes_nothing_even_with_positions():
    result = reorder_experiment("dog bites man", [0, 1, 2], pe_scale=1.0, causal=True)
    assert result.max_deviation == 0.0


@pytest.mark.parametrize(
    "order, message",
    [
        ([0, 0, 1], "exactly once"),
        ([1, 2, 3], "exactly once"),
        ([], "exactly once"),
        ("012", "list of positions"),
        (3, "list of positions"),
        ([0.5, 1, 2], "whole number"),
    ],
)
def test_bad_orders_get_a_sentence(order, message):
    with pytest.raises(ValueError, match=message):
        checked_order(order)


def test_bad_sentences_and_settings_get_a_sentence():
    with pytest.raises(ValueError, match="non-empty"):
        word_vectors([])
    with pytest.raises(ValueError, match="non-empty"):
        word_vectors(["dog", 3])
    with pytest.raises(ValueError, match="exactly once"):
        reorder_experiment("dog bites man", [0, 1])  # an order for another length
    with pytest.raises(ValueError, match="pe_scale"):
        reorder_experiment("dog bites man", [0, 1, 2], pe_scale=-1)
    with pytest.raises(ValueError, match="causal"):
        reorder_experiment("dog bites man", [0, 1, 2], causal="yes")


# The seeds' Chinese pairs, character by character, and what MiniLM's vocabulary makes of them.


def test_a_text_without_spaces_is_read_character_by_character():
    assert sentence_units("我爱你") == ("我", "爱", "你")
    assert sentence_units("dog bites man") == ("dog", "bites", "man")
    with pytest.raises(ValueError, match="non-empty string"):
        sentence_units("  ")


@pytest.mark.parametrize("first, second", [("我爱你", "你爱我"), ("猫追狗", "狗追猫")])
def test_chinese_pairs_move_each_characters_output_with_it(first, second):
    pair = pair_experiment(first, second)
    assert pair.order == (2, 1, 0) and pair.second == tuple(second)
    assert pair.result.tokens == pair.second
    # Attn(PX) = P Attn(X): rounding only (float32, three rows of 8 numbers of size about 1).
    assert pair.result.max_deviation < 1e-6 and pair.result.pooled_gap < 1e-6
    # ... and yet slot by slot the outputs are not "the same result": another character sits there.
    assert pair.slot_gap > 0.5
    same = pair_experiment(first, first)  # no reordering: slot by slot equal, exactly
    assert same.slot_gap == 0.0


def test_pair_experiment_is_reorder_experiment_on_the_units():
    pair = pair_experiment("the dog bites the man", "the man bites the dog", pe_scale=0.5)
    direct = reorder_experiment("the dog bites the man".split(), pair.order, pe_scale=0.5)
    assert torch.equal(pair.result.outputs, direct.outputs)
    assert pair.result.max_deviation > 0.05  # positions on: the symmetry is broken


def test_pair_experiment_refuses_two_different_sentences():
    with pytest.raises(ValueError, match="reorder the units of first"):
        pair_experiment("我爱你", "我恨你")


def test_minilm_vocabulary_turns_most_of_the_seeds_characters_into_unk():
    found = minilm_lookup("我爱你")
    assert found.tokens == ("[CLS]", "我", "[UNK]", "[UNK]", "[SEP]")
    assert found.ids == (101, 1855, 100, 100, 102) and found.unk_id == 100
    assert found.unknown == ("爱", "你")
    assert found.vocabulary_size == 30522 and found.cjk_characters == 244
    assert minilm_lookup("猫追狗").ids == minilm_lookup("狗追猫").ids == (101, 100, 100, 100, 102)
    assert minilm_lookup("dog bites man").unknown == ()
    # The same ids as MiniLM's own tokenizer call (the one the model runs on).
    assert list(found.ids) == load_minilm().encode(["我爱你"])["input_ids"][0].tolist()
    with pytest.raises(ValueError, match="non-empty string"):
        minilm_lookup(3)
