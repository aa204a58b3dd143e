"""Chapter 8, RoPE and the KV cache (键值缓存): cached keys are stored already rotated.

A causal LM that generates one token at a time keeps every layer's keys and values of the tokens
it has seen (the KV cache) so that each new token costs one position of work, not a pass over the
whole text. In a RoPE model the cache holds the keys *after* the rotation: transformers' Llama
attention rotates q and k (``apply_rotary_pos_emb``) and only then calls ``cache.update``. So a
new token must be rotated to the position it really has, P + j after a prompt of P tokens:
RoPE's score depends on m - n (RoFormer, Su et al. 2021, arXiv:2104.09864, section 3.2.2, eq. 16),
and a query rotated to the wrong m meets keys at the wrong distances.

In transformers 5.24, ``LlamaModel.forward`` takes the cache as ``cache=`` (``past_key_values``
is its deprecated name) and, when ``position_ids`` is not given, numbers the new tokens
``cache.get_seq_length() + arange(T_new)``. The causal mask is built from the cache's length,
not from ``position_ids`` (``masking_utils._preprocess_mask_arguments`` with a cache): passing
``position_ids`` that restart at 0 changes only the rotation -- exactly the classic bug.

- ``cached_logits``: the prompt in one pass, then the continuation one token at a time with the
  cache, with positions continued or restarted at 0; the logits of every continuation token.
- ``full_logits``: the same logits from one pass over prompt + continuation, no cache.
- ``greedy_generate_with_cache``: greedy decoding with an explicit loop over ``model(...)`` calls,
  the reference that ``model.generate(do_sample=False)`` must equal token for token.

Shapes: P prompt tokens, N new tokens, V = 49,152 vocabulary entries.
"""

from __future__ import annotations

import torch

from posenc_lib import _validate as validate
from posenc_lib._threads import one_thread
from posenc_lib.i18n import N_


def _check_ids(name: str, ids) -> torch.Tensor:
    validate.integer_tensor(name, ids, N_("token ids"))
    validate.tensor(name, ids, min_rank=2, max_rank=2, shape_hint="(1, T)")
    if ids.shape[0] != 1 or ids.shape[1] < 1:
        raise ValueError(
            f"{name} must be one text of at least 1 token, (1, T); got {tuple(ids.shape)}."
        )
    return ids


def new_position(prompt_length: int, step: int, restart_positions: bool) -> torch.Tensor:
    """The position id of new token ``step`` (0, 1, ...) after a prompt of ``prompt_length``:
    P + step when the positions continue, ``step`` when they restart at 0 (the bug). (1, 1) long."""
    position = step if restart_positions else prompt_length + step
    return torch.tensor([[position]])  # (1, 1)


def _empty_cache(llm):
    from transformers import DynamicCache

    return DynamicCache(config=llm.config)


@torch.inference_mode()
def full_logits(llm, prompt: torch.Tensor, continuation: torch.Tensor) -> torch.Tensor:
    """Logits at the continuation's positions from one pass over prompt + continuation, no cache.

    prompt (1, P), continuation (1, N) -> (N, V): row j predicts the token after continuation j.
    """
    prompt, continuation = _check_ids("prompt", prompt), _check_ids("continuation", continuation)
    ids = torch.cat([prompt, continuation], 1)  # (1, P + N)
    with one_thread():  # a short text: too little work to share among threads
        return llm.model(ids, use_cache=False).logits[0, prompt.shape[1] :]  # (N, V)


@torch.inference_mode()
def cached_logits(
    llm, prompt: torch.Tensor, continuation: torch.Tensor, restart_positions: bool = False
) -> torch.Tensor:
    """The same logits as ``full_logits``, computed with the KV cache, one continuation token at a
    time: (N, V). ``restart_positions=True`` feeds token j at position j instead of P + j."""
    prompt, continuation = _check_ids("prompt", prompt), _check_ids("continuation", continuation)
    restart = validate.boolean("restart_positions", restart_positions)
    cache = _empty_cache(llm)
    with one_thread():  # one token per call: too little work to share among threads
        llm.model(prompt, cache=cache, use_cache=True, logits_to_keep=1)  # fills the cache: P keys
        rows = []
        for step in range(continuation.shape[1]):
            token = continuation[:, step : step + 1]  # (1, 1)
            position = new_position(prompt.shape[1], step, restart)  # (1, 1)
            out = llm.model(token, position_ids=position, cache=cache, use_cache=True)
            rows.append(out.logits[0, -1])  # (V,)
    return torch.stack(rows)  # (N, V)


@torch.inference_mode()
def greedy_generate_with_cache(
    llm, prompt: torch.Tensor, n_new: int, restart_positions: bool = False
) -> torch.Tensor:
    """Greedy decoding with the KV cache, written out: the prompt's ids followed by ``n_new``
    new ids, (1, P + n_new), as ``model.generate(prompt, max_new_tokens=n_new, do_sample=False)``.

    One pass over the prompt fills the cache and gives the first new token (argmax of the last
    logits); each later step feeds the previous new token alone, at position P + step (or at
    ``step`` with ``restart_positions=True``, the bug), and appends its argmax. Only the last
    position's logits are computed (``logits_to_keep=1``), as ``generate`` does. Stops early at
    the end-of-text token, as ``generate`` does. The prompt's pass uses every thread (a long
    prompt is real work); each one-token step runs on one CPU thread (``one_thread``).
    """
    prompt = _check_ids("prompt", prompt)
    steps = validate.positive_int("n_new", n_new)
    restart = validate.boolean("restart_positions", restart_positions)
    stop = llm.model.generation_config.eos_token_id
    stop = set(stop if isinstance(stop, list) else [] if stop is None else [stop])
    cache = _empty_cache(llm)
    out = llm.model(prompt, cache=cache, use_cache=True, logits_to_keep=1)  # logits (1, 1, V)
    new = [int(out.logits[0, -1].argmax())]
    with one_thread():  # one token per call: too little work to share among threads
        for step in range(steps - 1):
            if new[-1] in stop:
                break
            token = torch.tensor([[new[-1]]])  # (1, 1): the token just chosen
            position = new_position(prompt.shape[1], step, restart)  # (1, 1)
            out = llm.model(
                token, position_ids=position, cache=cache, use_cache=True, logits_to_keep=1
            )
            new.append(int(out.logits[0, -1].argmax()))
    return torch.cat([prompt, torch.tensor([new])], 1)  # (1, P + N)
