"""Chapter 8, section 6: the long-context measurements on SmolLM2 (short inputs, so it runs fast)."""

import math

import pytest
import torch
import torch.nn.functional as F

from posenc_lib.analysis import ch08_long as long
from posenc_lib.models.smollm import load_smollm, rope_parameters
from posenc_lib.rope_scaling import METHODS, rope_inv_freq


@pytest.fixture(scope="module")
def llm():
    return load_smollm()


def test_the_constants_are_the_models_own(llm):
    config = llm.config
    assert long.TRAINED == config.max_position_embeddings == 8192
    assert long.HEAD_DIM == config.head_dim
    assert long.ROPE_THETA == config.rope_parameters["rope_theta"]


def test_the_methods_are_named_as_the_library_names_them():
    assert list(long.SCALINGS) == ["none", "PI", "dynamic", "YaRN"]
    assert long.SCALINGS["none"] == {"rope_type": "default"}
    for name in ("PI", "dynamic", "YaRN"):
        assert long.SCALINGS[name]["rope_type"] == METHODS[name]
        assert long.SCALINGS[name]["factor"] == 2.0
    assert long.SCALINGS["YaRN"]["original_max_position_embeddings"] == 8192
    assert long.scaling("YaRN", 4)["factor"] == 4.0
    with pytest.raises(ValueError, match="name must be one of"):
        long.scaling("linear")
    with pytest.raises(ValueError, match="factor"):
        long.scaling("PI", 0.5)


@pytest.mark.parametrize("name", ["PI", "YaRN"])
def test_transformers_rotary_uses_the_librarys_frequencies(llm, name):
    params = long.SCALINGS[name]
    ours, scale = rope_inv_freq(long.HEAD_DIM, long.ROPE_THETA, params)
    with rope_parameters(llm, params):
        rotary = llm.model.model.rotary_emb
        # Same formula, same float32 operations: equal up to one rounding (1e-7 relative).
        assert torch.allclose(rotary.inv_freq, ours, rtol=1e-6, atol=0)
        assert rotary.attention_scaling == pytest.approx(scale)


def test_chunked_losses_equal_the_full_logits_cross_entropy(llm):
    ids = long.long_text_ids(llm, 96)  # (1, 96)
    with torch.inference_mode():
        logits = llm.model(ids).logits[0, :-1]  # (95, V)
    full = F.cross_entropy(logits, ids[0, 1:], reduction="none")
    chunked = long.token_losses(llm, ids, chunk=20)  # five chunks, the last one short
    assert chunked.shape == (95,)
    # Same matrices, lm_head applied per chunk: float32 rounding of a 576-long dot product.
    assert torch.allclose(chunked, full, atol=1e-4)
    assert 1.0 < float(chunked.mean()) < 5.0  # English the model reads well


def test_a_window_is_the_prefix_of_a_longer_one_for_static_scalings(llm):
    # Causal attention and frequencies that do not depend on the length: the losses of the first
    # 63 predictions do not depend on the tokens after them (float32 rounding aside).
    for name in ("none", "YaRN"):
        short = long.position_losses(llm, long.SCALINGS[name], 64)
        longer = long.position_losses(llm, long.SCALINGS[name], 128)
        assert torch.allclose(longer[:63], short, atol=1e-4)


def test_dynamic_ntk_is_no_scaling_inside_the_trained_length_and_pi_is_not(llm):
    none = long.position_losses(llm, long.SCALINGS["none"], 64)
    dynamic = long.position_losses(llm, long.SCALINGS["dynamic"], 64)
    pi = long.position_losses(llm, long.SCALINGS["PI"], 64)
    assert torch.equal(dynamic, none)  # the same frequencies (stretch 1): the same computation
    assert float(pi.mean()) > float(none.mean()) + 0.1  # squeezed positions cost something


def test_binned_perplexity_and_its_last_quarter():
    losses = torch.tensor([0.0, 0.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0])
    assert torch.allclose(
        long.binned_perplexity(losses, 4), torch.tensor([1, math.e, math.e**2, math.e**3]).double()
    )
    assert long.last_quarter_perplexity(losses) == pytest.approx(math.e**3)
    assert long.perplexity(losses) == pytest.approx(math.exp(1.5))
    with pytest.raises(ValueError, match="bins=9"):
        long.binned_perplexity(losses, 9)


def test_the_long_text_is_long_enough_and_small(llm):
    assert long.LONG_TEXT.stat().st_size < 120_000
    assert long.long_text_ids(llm).shape[1] >= 17_000
    with pytest.raises(ValueError, match="more than the long text has"):
        long.long_text_ids(llm, 10**6)


def test_the_passkey_prompt_has_the_length_and_the_key_where_asked(llm):
    for depth in (0.0, 1.0):
        ids = long.passkey_prompt(llm, 400, depth, "38412")
        assert abs(ids.shape[1] - 400) < 25
        text = llm.tokenizer.decode(ids[0])
        at = text.index("38412") / len(text)
        assert at < 0.2 if depth == 0 else at > 0.8
        assert text.endswith("What is the pass key? The pass key is")
    with pytest.raises(ValueError, match="depth"):
        long.passkey_prompt(llm, 400, 1.5, "38412")
    with pytest.raises(ValueError, match="key"):
        long.passkey_prompt(llm, 400, 0.5, 38412)


def test_the_model_finds_a_passkey_in_a_short_prompt(llm):
    trial = long.passkey(llm, long.SCALINGS["none"], 300, 0.5, seed=1)
    assert trial.key.isdigit() and len(trial.key) == 5
    assert trial.found and trial.key in trial.answer


def test_copy_test_second_copy_is_easier_unless_positions_are_squeezed(llm):
    ids = long.copy_ids(40, seed=3)
    assert ids.shape == (1, 80) and torch.equal(ids[0, :40], ids[0, 40:])
    plain = long.copy_loss(llm, long.SCALINGS["none"], 40, seed=3)
    assert plain["first"] > 8 and plain["second"] < plain["first"] - 4


def test_bad_input_is_refused_at_the_door(llm):
    with pytest.raises(ValueError, match="rope_type"):
        long.position_losses(llm, {"factor": 2}, 64)
    with pytest.raises(ValueError, match="one sequence"):
        long.token_losses(llm, torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ValueError, match="integer tensor"):
        long.token_losses(llm, torch.zeros(1, 5))
