"""Chapter 8's exercises: q3, greedy generation with your own KV-cache loop, on SmolLM2-135M.

The learner's function gets the real model (transformers' ``LlamaForCausalLM``: calling it is the
point, not a shortcut) and must feed the prompt once, then one token per step with the cache and
the positions that continue it, given explicitly (``position_ids``): n_new calls in all. The model
each case hands over is the course's loaded model (``load_smollm``) seen through a light copy (it
shares every weight and layer) that:
- is its own ``deepcopy`` (a check copies its arguments; copying 540 MB per call is not needed), and
- watches what each call feeds its decoder: a call that re-feeds the sequence, forgets the cache,
  leaves the positions to transformers, gives positions that do not continue the cache (restarting
  at 0, off by one), or goes past the n_new calls the loop needs, stops the answer with a
  sentence naming it. That is how the check, and the grader, tell a cache loop from re-feeding
  the whole sequence each step (same tokens, T times the work).
The tokens are compared with ``model.generate(do_sample=False)`` (switched off while the answer
runs), up to ties (``TIE``). Besides fixed prompts, each check (``check_cases``) and each hidden
draw has a prompt of random token ids, so an answer cannot hard-code the tokens it was shown.
"""

from __future__ import annotations

import collections
import copy
import functools
import json
import os
import threading

import torch

from posenc_lib.checks import draws
from posenc_lib.checks.answers import INT_TENSOR
from posenc_lib.checks.ch08.setting import NOTEBOOK
from posenc_lib.checks.question import Case, Question
from posenc_lib.checks.run import RAISED
from posenc_lib.i18n import N_, _, tr

# Prompts whose greedy continuations are stable argmaxes; the public ones, then the hidden pool.
PUBLIC = (("The capital of Italy is", 6), ("Once upon a time, there was a", 5))
POOL = (
    "The largest planet in the solar system is",
    "The chemical symbol for gold is",
    "Roses are red, violets are",
    "The opposite of hot is",
    "To be or not to be, that is",
    "Monday, Tuesday, Wednesday,",
    "def add(a, b):\n    return",
    "A, B, C, D, E,",
)
# Random prompts draw token ids from FIRST_ID to the vocabulary's end (SmolLM2's special tokens are
# ids 0 .. 16); the public check draws a new one of PUBLIC_RANDOM = (T, n_new) at every run.
FIRST_ID = 100
PUBLIC_RANDOM = (8, 4)
# A token whose logit is within TIE of the largest counts as greedy's: a plain loop and generate
# differ by a few 1e-5 (different kernels), and a random prompt may bring two logits that close.
TIE = 1e-3


_LOADING = threading.Lock()


@functools.cache
def _load():
    from posenc_lib.models.smollm import load_smollm

    return load_smollm()


def _llm():
    """The course's model, loaded once per process. A grader judges submissions in threads: a
    second load running beside a judgement would hand it tensors on the meta device."""
    with _LOADING:
        return _load()


@functools.cache
def _reference(prompt: tuple[int, ...], n_new: int) -> tuple[int, ...]:
    """transformers' greedy continuation of ``prompt`` (n_new token ids), computed once.

    generate stops at an end-of-text token (a random prompt may bring one); a loop does not, so
    greedy decoding goes on from the sequence so far until there are n_new tokens."""
    model = _llm().model
    ends = model.generation_config.eos_token_id
    ends = set(ends) if isinstance(ends, (list, tuple)) else {ends}
    new: list[int] = []
    with torch.no_grad():
        while len(new) < n_new:
            ids = torch.tensor([prompt + tuple(new)])  # (1, T + so far)
            out = model.generate(
                ids,
                max_new_tokens=n_new - len(new),
                do_sample=False,
                pad_token_id=model.config.eos_token_id,
            )
            more = out[0, ids.shape[1] :].tolist()
            end = next((i + 1 for i, t in enumerate(more) if t in ends), len(more))
            new += more[:end]
    return tuple(new)


def _greedy_up_to_ties(prompt: tuple[int, ...], got: tuple[int, ...]) -> bool:
    """True when each token of ``got`` has, after the prompt and the tokens before it, a logit
    within TIE of the largest: greedy's choice, up to a near tie."""
    if min(got) < 0 or max(got) >= _llm().model.config.vocab_size:
        return False
    with torch.no_grad():
        logits = _llm().model(torch.tensor([prompt + got[:-1]])).logits[0, len(prompt) - 1 :]
    chosen = logits.gather(1, torch.tensor(got)[:, None])[:, 0]  # (n_new,)
    return bool((chosen >= logits.max(-1).values - TIE).all())


@functools.cache
def _first_position_token(prompt: tuple[int, ...]) -> int:
    """The argmax of the prompt's FIRST position's logits (the usual slip of logits[:, 0])."""
    with torch.no_grad():
        logits = _llm().model(torch.tensor([prompt])).logits  # (1, T, V)
    return int(logits[0, 0].argmax())


def _argument(args, kwargs, index, *names):
    for name in names:
        if kwargs.get(name) is not None:
            return kwargs[name]
    return args[index] if len(args) > index else None


# The instrumented model stops a call that breaks the loop's rules by raising this marker with a
# reason and its numbers (short: the grader's child sends at most 300 characters of an error);
# ``GreedyWithCache`` turns it into a sentence on what the learner's function did.
STOPPED = "posenc-check-stopped"


def _stop(reason: str, **values) -> RuntimeError:
    return RuntimeError(f"{STOPPED} {reason} {json.dumps(values)}")


def _stopped(error: str) -> tuple[str, dict] | None:
    """(reason, values) of the marker in an outcome's error text, or None."""
    head = f"RuntimeError: {STOPPED} "
    if not error.startswith(head):
        return None
    reason, _, values = error[len(head) :].partition(" ")
    try:
        values = json.loads(values)
    except ValueError:
        return None
    return (reason, values) if isinstance(values, dict) else None


def _watched(model, prompt_len: int, n_new: int):
    """A light copy of ``model`` (weights and layers shared) whose decoder checks each call."""
    calls = [0]  # the decoder's calls so far, for this case

    def watch(module, args, kwargs):
        calls[0] += 1
        ids = _argument(args, kwargs, 0, "input_ids")
        embeds = kwargs.get("inputs_embeds")
        fed = ids.shape[-1] if ids is not None else embeds.shape[1]
        cache = _argument(args, kwargs, 3, "cache", "past_key_values")
        cached = int(cache.get_seq_length()) if cache is not None else 0
        if calls[0] > n_new:
            raise _stop("too_many", call=calls[0], n_new=n_new)
        if cached == 0 and fed > prompt_len:
            raise _stop("refed", fed=fed)
        if calls[0] == 1 and fed < prompt_len:
            raise _stop("part_of_prompt", fed=fed, prompt_len=prompt_len)
        if calls[0] > 1 and cached == 0:
            raise _stop("prompt_again" if fed == prompt_len else "no_cache", fed=fed)
        if cached > 0 and fed > 1:
            raise _stop("cached_again", fed=fed, cached=cached)
        positions = _argument(args, kwargs, 2, "position_ids")
        if positions is None and calls[0] > 1:
            raise _stop("no_positions")
        if positions is not None:
            given = [int(p) for p in torch.as_tensor(positions).reshape(-1)[-fed:]]
            if given != list(range(cached, cached + fed)):
                if cached > 0 and given[0] == 0:
                    raise _stop("restart", cached=cached)
                raise _stop("off", given=given[:3], cached=cached, off=given[0] - cached)

    decoder = copy.copy(model.model)  # shares its layers, embeddings and rotary module
    decoder._forward_pre_hooks = collections.OrderedDict()
    decoder._forward_pre_hooks_with_kwargs = collections.OrderedDict()
    decoder.register_forward_pre_hook(watch, with_kwargs=True)
    top = copy.copy(model)
    top._modules = collections.OrderedDict(model._modules)  # its own dict: the shared one unchanged
    top._modules["model"] = decoder
    cls = type(model)
    top.__class__ = type(
        cls.__name__,
        (cls,),
        {"__deepcopy__": lambda self, memo: self, "__module__": cls.__module__},
    )
    return top


def _random_case(generator, length: int, n_new: int, drawn: str) -> Case:
    """A case whose prompt is ``length`` random token ids; its description does not show them."""
    model = _llm().model
    ids = torch.randint(FIRST_ID, model.config.vocab_size, (1, length), generator=generator)
    return Case(
        (_watched(model, length, n_new), ids, n_new),
        tr(
            "SmolLM2-135M, a prompt of {length} random token ids {drawn}, n_new = {n_new}",
            length=length,
            drawn=drawn,
            n_new=n_new,
        ),
    )


class GreedyWithCache(Question):
    name, function, points, notebook = "q3", "greedy_generate", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "out.logits[:, -1].argmax(-1)",
        "position_ids = [[T + k]]",
        "position_ids=torch.tensor([[position]])",
        "cache=out.cache",
    )
    returns = INT_TENSOR
    references = (
        "transformers.generation.utils.GenerationMixin.generate",
        "posenc_lib.analysis.ch08_cache.greedy_generate_with_cache",
    )
    timeout = 10.0  # a few forward passes of a 135 M model, on one core
    slow_hint = N_("feed the prompt once, then one token per step with the cache.")
    title = N_("Greedy generation with your own KV-cache loop")
    hints = (
        N_(
            "With a cache the model reads each token once: the prompt in one call, then each call "
            "carries only the newest token and the cache the last call returned. What must each "
            "such call also be told, since a token of one is fed alone?"
        ),
        N_(
            "Its position. The prompt's tokens sit at 0 .. T - 1, so the first token you feed sits "
            "at T and each later one a step further; a position that restarts at 0 rotates the "
            "new query wrongly against every cached key (section 4 of the lecture)."
        ),
        N_(
            "Count the calls: the first new token comes from the prompt's call, and the last token "
            "chosen is returned, never fed, so the loop feeds n_new - 1 tokens (n_new calls in "
            "all). No gradients are needed; return the tokens as one (1, n_new) tensor."
        ),
    )

    def cases(self, seed=0):
        """The fixed prompts (seed 0), or for a grader's seed a prompt of the pool and a prompt of
        random token ids, both drawn from the seed."""
        llm = _llm()
        if seed == 0:
            specs = PUBLIC
        else:
            generator = draws.seeded(seed, 83)
            specs = ((draws.pick(POOL, generator), draws.pick([4, 5], generator)),)
        cases = []
        for text, n_new in specs:
            ids = llm.ids(text)  # (1, T)
            cases.append(
                Case(
                    (_watched(llm.model, ids.shape[1], n_new), ids, n_new),
                    tr(
                        "SmolLM2-135M, the prompt {text!r} ({n} tokens), n_new = {n_new}",
                        text=text,
                        n=ids.shape[1],
                        n_new=n_new,
                    ),
                )
            )
        if seed != 0:
            length, n_new = draws.randint(6, 11, generator), draws.pick([4, 5], generator)
            cases.append(_random_case(generator, length, n_new, _("drawn from the grader's seed")))
        return cases

    def check_cases(self) -> list[Case]:
        """The check's inputs: the fixed prompts, then a prompt of random token ids drawn afresh at
        every check (from the operating system's randomness), so that no answer can know its
        tokens in advance. Its sentences never show the ids; a grader's draws come from its seed."""
        generator = torch.Generator().manual_seed(int.from_bytes(os.urandom(8), "little") >> 1)
        return self.cases(0) + [
            _random_case(generator, *PUBLIC_RANDOM, _("drawn afresh at each check"))
        ]

    def evaluate(self, fn):
        if not callable(fn):  # no function yet, or not one: the usual sentences
            return super().evaluate(fn)
        cases = self.check_cases()
        return self.judge(cases, self.run(fn, cases))

    def _not_returned(self, outcome, where):
        """A call the instrumented model stopped: what the learner's function did, and where the
        lecture explains it (never the internal exception)."""
        stopped = _stopped(outcome.error) if outcome.kind == RAISED else None
        what = self._what_it_did(*stopped) if stopped else None
        if what is None:
            return super()._not_returned(outcome, where)
        return tr(
            "{what} {where}; the check's model refused that call (section 4 of the lecture).",
            what=what,
            where=where,
        )

    def _what_it_did(self, reason: str, values: dict) -> str | None:
        fn = f"`{self.function}`"
        try:
            if reason == "too_many":
                return tr(
                    "{fn} asked the model for forward pass number {call}, more than n_new = "
                    "{n_new} new tokens need (the question's count: a token is fed only if a "
                    "later one is still to be chosen)",
                    fn=fn, call=int(values["call"]), n_new=int(values["n_new"]),
                )  # fmt: skip
            if reason == "refed":
                return tr(
                    "{fn} fed the model {fed} tokens again with no cache, the prompt and the "
                    "tokens chosen so far",
                    fn=fn, fed=int(values["fed"]),
                )  # fmt: skip
            if reason == "part_of_prompt":
                return tr(
                    "{fn}'s first call fed the model {fed} of the prompt's {prompt_len} tokens; "
                    "the first call reads the whole prompt",
                    fn=fn, fed=int(values["fed"]), prompt_len=int(values["prompt_len"]),
                )  # fmt: skip
            if reason == "prompt_again":
                return tr(
                    "{fn} fed the prompt to the model a second time, with no cache, although the "
                    "first call already computed its keys and values",
                    fn=fn,
                )  # fmt: skip
            if reason == "no_cache":
                return tr(
                    "{fn} fed the model {fed} token after the prompt's call without any cache, so "
                    "that token would see only itself",
                    fn=fn, fed=int(values["fed"]),
                )  # fmt: skip
            if reason == "cached_again":
                return tr(
                    "{fn} fed the model {fed} tokens with a cache that already holds {cached} of "
                    "them",
                    fn=fn, fed=int(values["fed"]), cached=int(values["cached"]),
                )  # fmt: skip
            if reason == "no_positions":
                return tr(
                    "{fn} called the model after the prompt without position_ids; the question "
                    "asks your loop to give each new token's position itself",
                    fn=fn,
                )  # fmt: skip
            if reason == "restart":
                return tr(
                    "{fn} gave a new token position_ids that restart at 0 while the cache holds "
                    "{cached} tokens whose keys are already rotated",
                    fn=fn, cached=int(values["cached"]),
                )  # fmt: skip
            if reason == "off":
                return tr(
                    "{fn} gave position_ids {given} to a token after {cached} cached ones (off "
                    "by {off}; positions count from 0)",
                    fn=fn, given=[int(g) for g in values["given"]][:3],
                    cached=int(values["cached"]), off=int(values["off"]),
                )  # fmt: skip
        except (KeyError, TypeError, ValueError):
            return None
        return None

    def diagnose(self, case, value):
        _model, ids, n_new = case.args
        prompt = tuple(ids[0].tolist())
        want = _reference(prompt, n_new)
        if not isinstance(value, torch.Tensor):
            return tr("Return the new token ids as a (1, {n_new}) tensor of integers.", n_new=n_new)
        if value.dim() == 1 and value.numel() == n_new:
            return tr("Return shape (1, {n_new}), with the batch axis, as generate's output has; yours is ({n_new},).", n_new=n_new)  # fmt: skip
        if value.dim() != 2 or value.shape[0] != 1:
            return tr("Return shape (1, {n_new}): one row of n_new new token ids; yours has shape {shape}.", n_new=n_new, shape=tuple(value.shape))  # fmt: skip
        got = tuple(int(t) for t in value[0].tolist())
        t = len(prompt)
        if len(got) == t + n_new and got[:t] == prompt:
            return tr(
                "You returned the prompt too; return only the {n_new} new tokens (output[:, T:]).",
                n_new=n_new,
            )
        if len(got) == n_new - 1:
            return tr("You returned {n} tokens, one short: the first new token comes from the prompt's own call (its last logits), then the loop adds n_new - 1 more.", n=n_new - 1)  # fmt: skip
        if len(got) == n_new + 1:
            return tr("You returned {n} tokens, one too many: return exactly n_new = {n_new}.", n=n_new + 1, n_new=n_new)  # fmt: skip
        if len(got) != n_new:
            return tr("Return exactly n_new = {n_new} new tokens; yours has {n}.", n_new=n_new, n=len(got))  # fmt: skip
        if got == want or _greedy_up_to_ties(prompt, got):
            return None
        if got[0] != want[0]:
            if got[0] == _first_position_token(prompt):
                return _("Your first new token is the argmax of the FIRST position's logits; re-read which position's logits predict the next token (section 4).")  # fmt: skip
            return _("Your first new token is not the greedy one: check which logits of the prompt's call you take it from, and how (section 4).")  # fmt: skip
        if len(set(got)) == 1 and len(set(want)) > 1:
            return _("Every new token is the same: feed each step the token just chosen, not the same token again.")  # fmt: skip
        first = next(k for k in range(n_new) if got[k] != want[k])
        return tr("Your first {first} new tokens are greedy's, then yours differ: check what each step feeds the model (which token, which cache, which position) and how it picks the next one (section 4).", first=first)  # fmt: skip
