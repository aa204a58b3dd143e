"""Chapter 8, RoPE and the KV cache: cached logits, the restarted-positions bug, greedy decoding."""

import warnings

import pytest
import torch

from posenc_lib.analysis import ch08_cache as cache
from posenc_lib.analysis.ch08_heads import HEADS_TEXT
from posenc_lib.models.smollm import load_smollm


@pytest.fixture(scope="module")
def llm():
    return load_smollm()


@pytest.fixture(scope="module")
def text(llm):
    ids = llm.ids(HEADS_TEXT)
    return ids[:, :40], ids[:, 40:46]  # prompt (1, 40), continuation (1, 6)


def test_new_positions_continue_or_restart():
    assert cache.new_position(40, 3, False).tolist() == [[43]]
    assert cache.new_position(40, 3, True).tolist() == [[3]]


def test_cache_reproduces_one_pass(llm, text):
    full = cache.full_logits(llm, *text)
    cached = cache.cached_logits(llm, *text)
    assert full.shape == cached.shape == (6, llm.config.vocab_size)
    # Logits are ~10-20 in size; float32 sums in another order differ by ~5e-5 (measured).
    torch.testing.assert_close(cached, full, rtol=0, atol=1e-3)
    assert torch.equal(cached.argmax(-1), full.argmax(-1))


def test_our_positions_are_transformers_own(llm, text):
    """Without position_ids transformers numbers new tokens from the cache's length: P + j."""
    prompt, continuation = text
    ours = cache.cached_logits(llm, prompt, continuation[:, :2])
    with torch.inference_mode():
        out = llm.model(prompt, use_cache=True)
        rows = []
        for j in range(2):
            out = llm.model(continuation[:, j : j + 1], cache=out.cache, use_cache=True)
            rows.append(out.logits[0, -1])
    # The same calls with the same positions: the same float32 operations, bit for bit.
    assert torch.equal(ours, torch.stack(rows))


def test_restarted_positions_break_the_logits(llm, text):
    full = cache.full_logits(llm, *text)
    bugged = cache.cached_logits(llm, *text, restart_positions=True)
    gap = (bugged - full).abs().amax(-1)  # (N,)
    assert gap.min() > 1.0  # every step, from the first one, moves by whole units
    assert not torch.equal(bugged.argmax(-1), full.argmax(-1))


def test_greedy_loop_equals_generate(llm, text):
    prompt = text[0]
    ours = cache.greedy_generate_with_cache(llm, prompt, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = llm.model.generate(prompt, max_new_tokens=10, do_sample=False)
    # Same calls (prefill with logits_to_keep=1, then one token per step): equal ids exactly.
    assert torch.equal(ours, theirs)
    assert ours.shape == (1, 50) and torch.equal(ours[:, :40], prompt)
    bugged = cache.greedy_generate_with_cache(llm, prompt, 10, restart_positions=True)
    assert bugged[0, 40] == ours[0, 40]  # the first new token comes from the prompt pass alone
    assert not torch.equal(bugged, ours)


def test_bad_input(llm):
    with pytest.raises(ValueError, match="n_new"):
        cache.greedy_generate_with_cache(llm, llm.ids("Hello"), 0)
    with pytest.raises(ValueError, match="prompt"):
        cache.greedy_generate_with_cache(llm, torch.tensor([1, 2, 3]), 2)
    with pytest.raises(ValueError, match="restart_positions"):
        cache.cached_logits(llm, llm.ids("Hello"), llm.ids(" world"), restart_positions=1)


def test_one_thread_restores_the_thread_count():
    before = torch.get_num_threads()
    with cache.one_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
