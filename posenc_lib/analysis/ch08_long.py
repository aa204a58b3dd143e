"""Chapter 8, section 6: a real RoPE model past its trained length, with and without scaling.

SmolLM2-135M's config (``posenc_lib.models.smollm``) declares 8,192 positions
(``max_position_embeddings``; the chapter calls this its trained length, though the field itself
does not record what lengths the model was trained on). These measurements
run it on longer inputs with each RoPE scaling set through ``rope_parameters`` (transformers'
own rotary module does the scaling; ``posenc_lib.rope_scaling`` has the same formulas):

- ``position_losses`` / ``binned_perplexity``: the loss of every token of a long text in one
  window, and the perplexity of each stretch of positions ("the last quarter" of a 16,384-token
  window is positions 12,288..16,383, all past the trained length).
- ``passkey``: passkey retrieval (Mohtashami & Jaggi 2023, "Landmark Attention",
  arXiv:2305.16300, section 4.2): a 5-digit key hidden at a depth in repeated filler, then
  "What is the pass key? The pass key is" continued greedily; success = the key appears.
- ``copy_loss``: an induction copy test (Olsson et al. 2022, "In-context Learning and Induction
  Heads", arXiv:2209.11895, section 3): a block of random tokens written twice; the second
  copy's loss is low only if attention can reach back one block length.

The scalings (``SCALINGS``) are those chapter 7 compared, at factor 2 for a trained length of
8,192: no scaling, Position Interpolation (Chen et al. 2023, arXiv:2306.15595), dynamic NTK
(YaRN paper, Peng et al. 2023, arXiv:2309.00071, section 3.3) and YaRN (same paper, section 3.4).
Their names follow ``posenc_lib.rope_scaling.METHODS``, plus "none".

Memory: the model's logits for 16,384 tokens would be 49,152 x 16,384 float32 = 3.2 GB, so the
loss is computed from the last hidden states (``model.model``) one chunk of positions at a time
through ``lm_head``. Shapes: T tokens, V = 49,152 vocabulary entries, D = 576 hidden size.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch08_cache import greedy_generate_with_cache
from posenc_lib.i18n import N_
from posenc_lib.models.smollm import SmolLM, rope_parameters
from posenc_lib.rope_scaling import METHODS

TRAINED = 8192  # SmolLM2's max_position_embeddings: the length its config declares
HEAD_DIM = 64  # SmolLM2's head_dim (576 / 9 heads)
ROPE_THETA = 100000.0  # SmolLM2's rope_theta, the RoPE base
LONG_TEXT = Path(__file__).resolve().parent.parent / "data" / "real_model" / "long_text.txt"
NONE = "none"  # the course's name for default RoPE (rope_type "default") in this chapter


def scaling(name: str, factor: float = 2.0, original: int = TRAINED) -> dict:
    """The ``rope_parameters`` dict of a method by its course name ("none", "PI", "dynamic", "YaRN").

    ``factor`` is the stretch s; ``original`` the trained length L the scaling is relative to.
    """
    allowed = (NONE, *(k for k in METHODS if k != "NTK"))
    validate.choice("name", name, allowed)
    if name == NONE:
        return {"rope_type": "default"}
    s = validate.positive_float("factor", factor, 1.0, inclusive=True)
    params = {"rope_type": METHODS[name], "factor": s}
    if name in ("dynamic", "YaRN"):
        params["original_max_position_embeddings"] = validate.positive_int("original", original)
    return params


# The methods compared, course name -> rope_parameters, at factor 2 over the trained 8,192.
# (Static NTK, METHODS["NTK"], is the course's own and has no transformers rope_type to run.)
SCALINGS: dict[str, dict] = {name: scaling(name) for name in (NONE, "PI", "dynamic", "YaRN")}


_LONG_IDS: dict[int, torch.Tensor] = {}


def long_text_ids(llm: SmolLM, n_tokens: int | None = None) -> torch.Tensor:
    """The committed long English text (``data/real_model/long_text.txt``) as ids, (1, T).

    ``n_tokens`` keeps the first n (it must not exceed the text's length, about 28,000 tokens).
    """
    key = id(llm.tokenizer)
    if key not in _LONG_IDS:  # tokenizing 115 KB takes a while: once per tokenizer
        _LONG_IDS[key] = llm.ids(LONG_TEXT.read_text(encoding="utf-8"))  # (1, T)
    ids = _LONG_IDS[key]
    if n_tokens is not None:
        n = validate.positive_int("n_tokens", n_tokens)
        if n > ids.shape[1]:
            raise ValueError(
                f"n_tokens={n} is more than the long text has ({ids.shape[1]} tokens); "
                "ask for fewer."
            )
        ids = ids[:, :n]
    return ids


def _check_ids(ids) -> torch.Tensor:
    ids = validate.integer_tensor("ids", ids, N_("token ids"))
    if ids.dim() == 1:
        ids = ids[None]
    if ids.dim() != 2 or ids.shape[0] != 1 or ids.shape[1] < 2:
        raise ValueError(
            f"ids must be one sequence of at least 2 token ids, shape (1, T) or (T,); got shape "
            f"{tuple(ids.shape)}."
        )
    return ids


def _check_params(params) -> Mapping:
    if not isinstance(params, Mapping) or "rope_type" not in params:
        raise ValueError(
            "params must be a rope_parameters dict with a 'rope_type', e.g. SCALINGS['YaRN']; "
            f"got {params!r}."
        )
    return params


@torch.inference_mode()
def token_losses(llm: SmolLM, ids: torch.Tensor, chunk: int = 1024) -> torch.Tensor:
    """The loss (nats) of predicting each token 1..T-1 from the ones before it, (T-1,) float32.

    The last hidden states (1, T, D) come from ``llm.model.model``; ``lm_head`` and the
    cross-entropy run on ``chunk`` positions at a time, so at most (chunk, V) logits exist at once.
    Uses the model's current RoPE settings (wrap the call in ``rope_parameters``).
    """
    ids = _check_ids(ids)
    chunk = validate.positive_int("chunk", chunk)
    hidden = llm.model.model(input_ids=ids, use_cache=False).last_hidden_state[0, :-1]  # (T-1, D)
    targets = ids[0, 1:]  # (T-1,)
    losses = []
    for start in range(0, len(targets), chunk):
        logits = llm.model.lm_head(hidden[start : start + chunk]).float()  # (c, V)
        losses.append(F.cross_entropy(logits, targets[start : start + chunk], reduction="none"))
    return torch.cat(losses)  # (T-1,)


def position_losses(
    llm: SmolLM, params: Mapping, n_tokens: int, ids: torch.Tensor | None = None
) -> torch.Tensor:
    """Per-token losses (T-1,) of one window of ``n_tokens`` of the long text, run with ``params``.

    ``ids`` (1, >= n_tokens) replaces the long text if given. The window starts at position 0, so
    entry p is the loss of the token at position p + 1, predicted from positions 0..p.
    """
    params = _check_params(params)
    n = validate.positive_int("n_tokens", n_tokens)
    ids = long_text_ids(llm, n) if ids is None else _check_ids(ids)[:, :n]
    if ids.shape[1] < n:
        raise ValueError(f"ids has {ids.shape[1]} tokens, fewer than n_tokens={n}.")
    with rope_parameters(llm, params):
        return token_losses(llm, ids)


def binned_perplexity(losses: torch.Tensor, bins: int = 8) -> torch.Tensor:
    """exp(mean loss) over ``bins`` equal stretches of positions, (bins,) float64.

    With bins=4 the last entry is the "last quarter" perplexity.
    """
    losses = validate.float_tensor("losses", losses, 1, 1, "(T,)")
    b = validate.positive_int("bins", bins)
    if b > len(losses):
        raise ValueError(f"bins={b} is more than the {len(losses)} losses; use fewer bins.")
    edges = [round(i * len(losses) / b) for i in range(b + 1)]
    return torch.stack(
        [losses[lo:hi].double().mean().exp() for lo, hi in zip(edges, edges[1:], strict=False)]
    )


def last_quarter_perplexity(losses: torch.Tensor) -> float:
    """exp(mean loss) over the last quarter of the positions: a float."""
    return float(binned_perplexity(losses, 4)[-1])


# Passkey retrieval, worded as in Mohtashami & Jaggi (2023), section 4.2.
PASSKEY_INTRO = (
    "There is an important info hidden inside a lot of irrelevant text. Find it and memorize "
    "them. I will quiz you about the important information there.\n"
)
PASSKEY_FILLER = (
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. "
)
PASSKEY_LINE = "The pass key is {key}. Remember it. {key} is the pass key. "
PASSKEY_QUESTION = "\nWhat is the pass key? The pass key is"


@dataclass
class PasskeyTrial:
    """One passkey trial: the prompt's length, where the key was, and what the model said."""

    key: str  # the 5-digit key hidden
    depth: float  # where the key sits, as a share of the filler before it (0 = start, 1 = end)
    n_tokens: int  # the prompt's length in tokens
    answer: str  # the greedy continuation
    found: bool  # the key appears in the answer
    details: dict = field(default_factory=dict)


def passkey_prompt(llm: SmolLM, n_tokens: int, depth: float, key: str) -> torch.Tensor:
    """The passkey prompt, (1, T) with T close to ``n_tokens`` (within one filler sentence)."""
    n = validate.positive_int("n_tokens", n_tokens)
    d = validate.real_number("depth", depth)
    if not 0.0 <= d <= 1.0:
        raise ValueError(f"depth must be between 0 (start) and 1 (end), got {d:g}.")
    if not (isinstance(key, str) and key.isdigit()):
        raise ValueError(f"key must be a string of digits, e.g. '38412'; got {key!r}.")
    fixed = llm.ids(PASSKEY_INTRO + PASSKEY_LINE.format(key=key) + PASSKEY_QUESTION).shape[1]
    per = llm.ids(PASSKEY_FILLER * 8).shape[1] / 8  # tokens per filler repeat
    repeats = max(1, round((n - fixed) / per))
    before = round(repeats * d)
    text = (
        PASSKEY_INTRO
        + PASSKEY_FILLER * before
        + PASSKEY_LINE.format(key=key)
        + PASSKEY_FILLER * (repeats - before)
        + PASSKEY_QUESTION
    )
    return llm.ids(text)


@torch.inference_mode()
def passkey(
    llm: SmolLM, params: Mapping, n_tokens: int, depth: float, seed: int = 0
) -> PasskeyTrial:
    """One passkey trial at ``n_tokens`` with the key at ``depth``, run with ``params``.

    The key is 5 digits drawn from ``seed`` (10000..99999). The answer is 8 greedy tokens
    (SmolLM2's tokenizer writes each digit as its own token).
    """
    params = _check_params(params)
    key = str(random.Random(validate.whole_int("seed", seed)).randint(10_000, 99_999))
    ids = passkey_prompt(llm, n_tokens, depth, key)
    with rope_parameters(llm, params):
        new = greedy_generate_with_cache(llm, ids, 8)[0, ids.shape[1] :]  # (<= 8,)
    answer = llm.tokenizer.decode(new.tolist())
    return PasskeyTrial(key, float(depth), ids.shape[1], answer, key in answer)


def copy_ids(block: int, seed: int = 0, low: int = 1000, high: int = 40000) -> torch.Tensor:
    """A block of ``block`` random token ids (from ``low``..``high``) written twice: (1, 2 * block)."""
    n = validate.positive_int("block", block)
    generator = torch.Generator().manual_seed(validate.whole_int("seed", seed))
    tokens = torch.randint(low, high, (n,), generator=generator)  # (n,)
    return torch.cat([tokens, tokens])[None]  # (1, 2n)


def copy_loss(llm: SmolLM, params: Mapping, block: int, seed: int = 0) -> dict:
    """The induction copy test: mean loss (nats) on the first and on the second copy of a block.

    Each second-copy token is the token ``block`` positions back; a model that copies gets a
    loss near 0 there, one that cannot reach back gets about the first copy's (near ln V = 10.8).
    Returns {"first": float, "second": float} (the second excludes its first token, which cannot
    be predicted from the copy).
    """
    params = _check_params(params)
    ids = copy_ids(block, seed)  # (1, 2n)
    with rope_parameters(llm, params):
        losses = token_losses(llm, ids)  # (2n - 1,)
    n = ids.shape[1] // 2
    return {"first": float(losses[: n - 1].mean()), "second": float(losses[n:].mean())}


def perplexity(losses: torch.Tensor) -> float:
    """exp(mean loss): a float."""
    losses = validate.float_tensor("losses", losses, 1, 1, "(T,)")
    return math.exp(float(losses.double().mean()))
