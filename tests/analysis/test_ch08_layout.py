"""Chapter 8, the layout detective: GGUF's q/k rows, transformers' reordering, and the library's RoPE."""

import pytest
import torch

from posenc_lib.analysis.ch06_rope import layout_permutation
from posenc_lib.analysis.ch08_layout import (
    gguf_projections,
    layer0_attention,
    layer0_queries_keys,
    loss_and_next_token,
    match_rows,
    model_layer0_attention,
    rotated_probabilities,
    to_half_rows,
    to_interleaved_rows,
    unreversed_qk,
    with_bos,
)
from posenc_lib.models.smollm import gguf_path, load_smollm

TEXT = "The capital of France is Paris. The capital of Germany is Berlin. The capital of Italy is Rome."


@pytest.fixture(scope="module")
def raw():
    return gguf_projections(gguf_path(), 0)  # (576, 576), (192, 576) in GGUF row order


@pytest.fixture(scope="module")
def llm():
    return load_smollm()


def test_raw_rows_are_the_loaded_rows_permuted(raw, llm):
    attn = llm.model.model.layers[0].self_attn
    raw_q, raw_k = raw
    # A gather of the same dequantized numbers: exact.
    assert torch.equal(to_half_rows(raw_q, 9), attn.q_proj.weight)
    assert torch.equal(to_half_rows(raw_k, 3), attn.k_proj.weight)
    assert torch.equal(to_interleaved_rows(attn.k_proj.weight, 3), raw_k)
    assert not torch.equal(raw_q, attn.q_proj.weight)
    # The formula: loaded row h*64 + j*32 + i is GGUF row h*64 + 2i + j.
    h, j, i = 2, 1, 5
    assert torch.equal(attn.q_proj.weight[h * 64 + j * 32 + i], raw_q[h * 64 + 2 * i + j])


def test_match_rows_finds_the_permutation_from_the_numbers(raw, llm):
    source, gap = match_rows(raw[1], llm.model.model.layers[0].self_attn.k_proj.weight)
    assert gap == 0.0  # rows were only moved
    expected = (torch.arange(3)[:, None] * 64 + layout_permutation(64)).flatten()
    assert torch.equal(source, expected)


def test_library_rope_reproduces_the_models_attention(raw, llm):
    ids = with_bos(llm, TEXT)
    own = model_layer0_attention(load_smollm("eager"), ids)  # (9, T, T)
    attn = llm.model.model.layers[0].self_attn
    half = layer0_attention(llm, ids, attn.q_proj.weight, attn.k_proj.weight, "half")
    inter = layer0_attention(llm, ids, *raw, "interleaved")
    wrong = layer0_attention(llm, ids, *raw, "half")
    assert half.shape == own.shape == (9, ids.shape[1], ids.shape[1])
    # float32 rounding of a 576-long dot product and a softmax: the issue measured 0.0 and 6.6e-7.
    assert float((half - own).abs().max()) < 1e-5
    assert float((inter - own).abs().max()) < 1e-5
    assert float((wrong - own).abs().max()) > 0.3  # the wrong pairing moves attention a lot


def test_rotated_probabilities_rows_sum_to_one_and_are_causal(llm):
    ids = with_bos(llm, "one two three four")
    attn = llm.model.model.layers[0].self_attn
    q, k = layer0_queries_keys(llm, ids, attn.q_proj.weight, attn.k_proj.weight)
    assert q.shape == (9, 5, 64) and k.shape == (3, 5, 64)
    p = rotated_probabilities(q, k, llm.model.model.rotary_emb.inv_freq)
    torch.testing.assert_close(p.sum(-1), torch.ones(9, 5))  # softmax rows, float32
    assert float(p.triu(1).abs().max()) == 0.0  # masked future keys get exactly 0


def test_unreversed_weights_cost_loss_and_the_answer(llm):
    weight = llm.model.model.layers[3].self_attn.q_proj.weight.clone()
    loss, token, _ = loss_and_next_token(llm, TEXT)
    _, capital, margin = loss_and_next_token(llm, "The capital of Italy is")
    with unreversed_qk(llm):
        bad_loss, _, _ = loss_and_next_token(llm, TEXT)
        _, bad_capital, bad_margin = loss_and_next_token(llm, "The capital of Italy is")
    assert torch.equal(llm.model.model.layers[3].self_attn.q_proj.weight, weight)  # restored
    assert capital == " Rome" and margin > 0.1
    assert bad_capital != " Rome"
    assert bad_loss > loss + 0.5


def test_bad_input():
    with pytest.raises(ValueError, match="no tensor"):
        gguf_projections(gguf_path(), 99)
    with pytest.raises(ValueError, match="one shape"):
        match_rows(torch.zeros(4, 3), torch.zeros(3, 3))
