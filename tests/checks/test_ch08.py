"""Chapter 8's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer).

q3 runs the real model (SmolLM2-135M, 4-bit, dequantized to float32): its known-wrong answers that
return tokens keep what they computed per prompt (``_memo``), and the two that differ from the right
loop only in what they return (the prompt too, one token short) share one greedy loop per prompt
(``_greedy``), so the 20 hidden draws cost one right loop per prompt, not one per wrong answer."""

import copy
import functools
import math
from pathlib import Path

import pytest
import torch
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib.analysis.ch08_config import PUBLISHED_ROPE, rope_from_config
from posenc_lib.checks import FAIL, PASS
from posenc_lib.checks.ch08 import (
    CONCEPTS,
    EXERCISE_CONCEPTS,
    QUESTIONS,
    c1,
    c2,
    c3,
    c4,
    q1,
    q2,
    q3,
)
from posenc_lib.checks.ch08.cache import POOL, PUBLIC, _llm
from posenc_lib.checks.ch08.config import _frequencies
from posenc_lib.checks.ch08.layout import _unpermuted

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = answer_functions(ROOT / "solutions" / "08_real_model.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "08_real_model.ipynb")
F64 = torch.float64


# -- q1: written independently of the check's helpers ---------------------------------------------


def _read(config):
    rope = config.get("rope_parameters") or config.get("rope_scaling") or {}
    base = float(rope.get("rope_theta", config.get("rope_theta", 10000.0)))
    kind = rope.get("rope_type", rope.get("type", "default"))
    d = config.get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    return rope, base, kind, d


def _theta(d, base, sign=-1):
    return base ** (sign * torch.arange(0, d, 2, dtype=F64) / d)  # (D/2,)


def _rope(config, seq_len, *, sign=-1, d=None, base=None, linear_times=False, scale_one=False,
          static_ntk=False, ignore=False, derived=False, no_max=False, no_round=False,
          swap=False, ignore_attention_factor=False, default_betas=False, paper=False):  # fmt: skip
    """q1's answer, or a usual mistake."""
    rope, base0, kind, d0 = _read(config)
    if derived:
        d0 = config["hidden_size"] // config["num_attention_heads"]
    d, base = d or d0, base or base0
    theta, scale = _theta(d, base, sign), 1.0
    if ignore or kind == "default":
        return theta, scale
    s = rope["factor"]
    if kind == "linear":
        theta = theta * s if linear_times else theta / s
    elif kind == "dynamic":
        original = config["max_position_embeddings"]
        stretch = s if static_ntk else s * max(seq_len, original) / original - (s - 1)
        if no_max:  # the stretch from seq_len itself: below 1 inside max_position_embeddings
            stretch = s * seq_len / original - (s - 1)
        theta = _theta(d, base * stretch ** (d / (d - 2)), sign)
    elif kind == "yarn":
        original = rope.get("original_max_position_embeddings", config["max_position_embeddings"])

        def index(turns):
            return d * math.log(original / (turns * 2 * math.pi)) / (2 * math.log(base))

        fast, slow = (
            (32.0, 1.0)
            if default_betas
            else (rope.get("beta_fast", 32.0), rope.get("beta_slow", 1.0))
        )
        low, high = index(fast), index(slow)
        if not no_round:
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, d - 1)
        high += 0.001 if low == high else 0
        keep = 1 - ((torch.arange(d // 2, dtype=F64) - low) / (high - low)).clamp(0, 1)
        if swap:  # the ramp's ends swapped: the fast pairs divided, the slow ones kept
            keep = 1 - keep
        if paper:  # the YaRN paper's ramp, linear in the turns over L instead of the pair index
            keep = ((original * theta / (2 * math.pi) - slow) / (fast - slow)).clamp(0, 1)
        theta = theta / s * (1 - keep) + theta * keep
        scale = 1.0 if scale_one else 0.1 * math.log(s) + 1
        if rope.get("attention_factor") is not None and not (scale_one or ignore_attention_factor):
            scale = rope["attention_factor"]
    elif kind == "llama3":
        original = rope["original_max_position_embeddings"]
        low, high = rope["low_freq_factor"], rope["high_freq_factor"]
        blend = ((original * theta / (2 * math.pi) - low) / (high - low)).clamp(0, 1)
        theta = (1 - blend) * theta / s + blend * theta
    return theta, scale


def _transformers_rope(config: dict, seq_len: int):
    """transformers' (inv_freq, attention scale) for a config dict, through LlamaConfig."""
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    hf = LlamaConfig(**copy.deepcopy(config))
    kind = hf.rope_parameters["rope_type"]
    if kind == "default":
        return LlamaRotaryEmbedding.compute_default_rope_parameters(hf)
    return ROPE_INIT_FUNCTIONS[kind](hf, None, seq_len=seq_len)


# -- q2 ----------------------------------------------------------------------------------------------


def _unpermute(w, n, *, forward=False, whole=False, flip=False, dh=None):
    rows, d_in = w.shape
    dh = dh or rows // n
    if whole:
        return w.reshape(rows // 2, 2, d_in).transpose(0, 1).reshape(rows, d_in)
    if forward:  # GGUF's own permutation (half-split -> interleaved)
        return w.reshape(-1, 2, dh // 2, d_in).transpose(1, 2).reshape(rows, d_in)
    pairs = w.reshape(-1, dh // 2, 2, d_in)  # (H, Dh/2, 2, D_in)
    if flip:
        pairs = pairs.flip(2)
    return pairs.transpose(1, 2).reshape(rows, d_in)


# -- q3 ----------------------------------------------------------------------------------------------

_STORED: dict = {}


def _memo(fn):
    """A known-wrong answer that returns tokens, computed once per (prompt, n_new)."""

    def answer(model, input_ids, n_new):
        key = (fn.__name__, tuple(input_ids[0].tolist()), n_new)
        if key not in _STORED:
            _STORED[key] = fn(model, input_ids, n_new)
        return _STORED[key].clone()

    answer.__name__ = fn.__name__
    return answer


def _loop(model, input_ids, n_new, *, start=None, offset=0, refeed=False, first=-1, skip=False):
    """Greedy decoding with a cache, or a usual mistake: positions restarting at ``start``,
    shifted by ``offset``, the whole sequence fed again each step, the first position's logits."""
    with torch.no_grad():
        out = model(input_ids, use_cache=True)
        token = out.logits[:, first].argmax(-1, keepdim=True)  # (1, 1)
        tokens, seq, t = [token], torch.cat([input_ids, token], 1), input_ids.shape[1]
        for k in range(n_new - 1):
            if refeed:
                out = model(seq)
            else:
                position = (start + k) if start is not None else t + k + offset
                out = model(token, cache=out.cache, position_ids=torch.tensor([[position]]))
            token = out.logits[:, -1].argmax(-1, keepdim=True)
            tokens.append(token)
            seq = torch.cat([seq, token], 1)
    new = torch.cat(tokens, 1)  # (1, n_new)
    return new[:, 1:] if skip else new


# The course's model, taken before any check runs (a check switches ``_llm`` off while an answer
# runs; the cases hand over a watched copy that counts calls).
COURSE_MODEL = _llm().model


@functools.cache
def _greedy(prompt: tuple[int, ...], n_new: int) -> torch.Tensor:
    """The right loop's tokens for ``prompt``, (1, n_new), run once per (prompt, n_new) on the
    course's model (not the check's watched copy): the wrong answers below derive from it."""
    return _loop(COURSE_MODEL, torch.tensor([prompt]), n_new)


def _greedy_of(input_ids, n_new):
    return _greedy(tuple(input_ids[0].tolist()), n_new).clone()


def _with_prompt(model, input_ids, n_new):
    """The right loop's tokens, with the prompt in front (as generate returns them)."""
    return torch.cat([input_ids, _greedy_of(input_ids, n_new)], 1)


def _one_short(model, input_ids, n_new):
    """The right loop's tokens but the first (the prompt's call's): n_new - 1 of them."""
    return _greedy_of(input_ids, n_new)[:, 1:]


@_memo
def _first_logits(model, input_ids, n_new):
    return _loop(model, input_ids, n_new, first=0)


def _rope_without_old_type(config, seq_len):
    """q1's answer that reads the type only under "rope_type", not the older "type"."""
    config = copy.deepcopy(config)
    for key in ("rope_parameters", "rope_scaling"):
        if config.get(key):
            config[key].pop("type", None)
    return _rope(config, seq_len)


def _rope_top_level_base(config, seq_len):
    """q1's answer that reads rope_theta only at the top level (older files), else 10000."""
    return _rope(config, seq_len, base=float(config.get("rope_theta", 10000.0)))


def _rope_with_defaults_filled(config, seq_len):
    """q1's answer, after filling in the config's head_dim: it changes its argument in place."""
    config.setdefault("head_dim", config["hidden_size"] // config["num_attention_heads"])
    return _rope(config, seq_len)


def _rope_transformers_scaled(config, seq_len):
    """q1's answer for unscaled configs, and transformers' ROPE_INIT_FUNCTIONS for the rest."""
    if _read(config)[2] == "default":
        return _rope(config, seq_len)
    return _transformers_rope(config, seq_len)


def _unpermute_by_transformers(w, n):
    """q2 through transformers' GGUF loader."""
    from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

    processor = LlamaTensorProcessor(config={"num_attention_heads": n, "num_key_value_heads": n})
    return torch.from_numpy(processor._reverse_permute_weights(w.numpy(), n, n))


def _without_cache(model, input_ids, n_new):
    """The right positions, but no cache: each new token fed alone sees only itself."""
    with torch.no_grad():
        out = model(input_ids, use_cache=True)
        token, t, tokens = out.logits[:, -1].argmax(-1, keepdim=True), input_ids.shape[1], []
        for k in range(n_new - 1):
            tokens.append(token)
            out = model(token, position_ids=torch.tensor([[t + k]]))
            token = out.logits[:, -1].argmax(-1, keepdim=True)
    return torch.cat([*tokens, token], 1)


def _without_positions(model, input_ids, n_new):
    """The cache, but no position_ids: transformers numbers the token from the cache's length."""
    with torch.no_grad():
        out = model(input_ids, use_cache=True)
        tokens = [out.logits[:, -1].argmax(-1, keepdim=True)]
        for _ in range(n_new - 1):
            out = model(tokens[-1], cache=out.cache)
            tokens.append(out.logits[:, -1].argmax(-1, keepdim=True))
    return torch.cat(tokens, 1)


def _one_call_too_many(model, input_ids, n_new):
    """n_new tokens fed after the prompt (the last one needlessly), then the first n_new kept."""
    with torch.no_grad():
        out = model(input_ids, use_cache=True)
        tokens, t = [out.logits[:, -1].argmax(-1, keepdim=True)], input_ids.shape[1]
        for k in range(n_new):
            out = model(tokens[-1], cache=out.cache, position_ids=torch.tensor([[t + k]]))
            tokens.append(out.logits[:, -1].argmax(-1, keepdim=True))
    return torch.cat(tokens[:n_new], 1)


def _prompt_twice(model, input_ids, n_new):
    """The prompt fed once for its logits and again for its cache: one call too many."""
    with torch.no_grad():
        first = model(input_ids).logits[:, -1].argmax(-1, keepdim=True)
        out = model(input_ids, use_cache=True)
        tokens, t = [first], input_ids.shape[1]
        for k in range(n_new - 1):
            out = model(tokens[-1], cache=out.cache, position_ids=torch.tensor([[t + k]]))
            tokens.append(out.logits[:, -1].argmax(-1, keepdim=True))
    return torch.cat(tokens, 1)


# The public prompts' greedy tokens, written down: an answer that only knows these.
SEEN = {
    (504, 3575, 282, 7158, 314): [7268, 30, 198, 198, 504, 4469],
    (6403, 1980, 253, 655, 28, 665, 436, 253): [1165, 3102, 32047, 281, 260],
}


def _hard_coded(model, input_ids, n_new):
    return torch.tensor([SEEN.get(tuple(input_ids[0].tolist()), [0] * n_new)[:n_new]])


def _with_cache_again(model, input_ids, n_new):
    with torch.no_grad():
        out = model(input_ids, use_cache=True)
        seq = torch.cat([input_ids, out.logits[:, -1].argmax(-1, keepdim=True)], 1)
        out = model(seq, cache=out.cache)  # the whole sequence again, into the cache
        return seq[:, -n_new:]


def _generate(model, input_ids, n_new):
    return model.generate(input_ids, max_new_tokens=n_new, do_sample=False)[:, -n_new:]


WRONG = {
    "q1": [
        (lambda c, n: _rope(c, n, sign=1), "frequencies grow with the pair index"),
        (lambda c, n: _rope(c, n, d=c["hidden_size"]), "hidden_size as the head dimension"),
        (lambda c, n: _rope(c, n, derived=True), "use the head_dim given"),
        (lambda c, n: _rope(c, n, linear_times=True), "multiplied the frequencies by the factor"),
        (lambda c, n: _rope(c, n, scale_one=True), "your attention scale is 1"),
        # The statement's "attention_factor if given": an answer that always computes 0.1 ln s + 1.
        (lambda c, n: _rope(c, n, ignore_attention_factor=True), "gives its own attention_factor"),
        (lambda c, n: _rope(c, n, default_betas=True), "default beta_fast and beta_slow"),
        (lambda c, n: _rope(c, n, static_ntk=True), "static NTK"),
        (lambda c, n: _rope(c, n, ignore=True), "scaling: the config's rope dict"),
        (lambda c, n: _rope(c, n, base=10000.0), "you used base 10000"),
        (lambda c, n: (_rope(c, n)[0], 0.1 * math.log(_read(c)[0].get("factor", 1.0)) + 1
                       if _read(c)[2] != "default" else 1.0), "attention scale of 'linear'"),
        (lambda c, n: (_rope(c, n)[0].repeat(2), _rope(c, n)[1]), "one per pair of dims"),
        (lambda c, n: _rope(c, n, no_round=True), "i(beta_slow), unrounded"),
        (lambda c, n: _rope(c, n, swap=True), "you swapped the ramp's two ends"),
        (lambda c, n: _rope(c, n, paper=True), "linear in the number of turns"),
        (lambda c, n: _rope(c, n, no_max=True), "your stretch falls below 1"),
        (_rope_without_old_type, "you ignored the 'linear' scaling: the config's rope dict changes the frequencies; this one is under rope_scaling, with its type under the key 'type'"),
        (_rope_top_level_base, "you used base 10000"),
        (_rope_with_defaults_filled, "`config = copy.deepcopy(config)`"),
        (_rope_transformers_scaled, "`transformers.modeling_rope_utils._compute_linear_scaling_rope_parameters` is switched off"),
        (_transformers_rope, "`transformers.models.llama.modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters` is switched off"),
    ],
    "q2": [
        (lambda w, n: _unpermute(w, n, forward=True), "the forward permutation"),
        (lambda w, n: _unpermute(w, n, whole=True), "as if it were one head"),
        (lambda w, n: _unpermute(w, n, flip=True), "swapped the two members of each pair"),
        (lambda w, n: w.clone(), "returned the rows unchanged"),
        (lambda w, n: _unpermute(w, n).T, "transposed"),
        (lambda w, n: _unpermute(w, n, dh=64), "raised RuntimeError"),
        (_unpermute_by_transformers, "`transformers.modeling_gguf_pytorch_utils.LlamaTensorProcessor._reverse_permute_weights` is switched off"),
    ],
    "q3": [
        (lambda m, x, n: _loop(m, x, n, start=0), "position_ids that restart at 0"),
        (lambda m, x, n: _loop(m, x, n, offset=1), "(off by 1;"),
        (lambda m, x, n: _loop(m, x, n, offset=-1), "(off by -1;"),
        (lambda m, x, n: _loop(m, x, n, refeed=True), "tokens again with no cache"),
        (_with_cache_again, "with a cache that already holds"),
        (_with_prompt, "You returned the prompt too"),
        (_one_short, "one short"),
        (_first_logits, "FIRST position's logits"),
        (_generate, "`transformers.generation.utils.GenerationMixin.generate` is switched off"),
        (_without_cache, "token after the prompt's call without any cache"),
        (_without_positions, "called the model after the prompt without position_ids"),
        (_one_call_too_many, "asked the model for forward pass number"),
        (_prompt_twice, "fed the prompt to the model a second time"),
        (_hard_coded, "a prompt of 8 random token ids drawn afresh at each check"),
    ],
}  # fmt: skip

BY_NAME = {q.name: q for q in QUESTIONS}


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=8))


def _gguf_rows(rows, n):
    """For each loaded row h*Dh + j*Dh/2 + i, in order, its GGUF row h*Dh + 2i + j."""
    dh = rows // n
    return [h * dh + 2 * i + j for h in range(n) for j in (0, 1) for i in range(dh // 2)]


def _old_names_flat_positions(model, input_ids, n_new):
    """The loop with the cache's old name (past_key_values) and 1-D position_ids."""
    with torch.no_grad():
        out = model(input_ids=input_ids, use_cache=True)
        tokens, t = [out.logits[0, -1].argmax()], input_ids.shape[1]
        for k in range(n_new - 1):
            out = model(
                input_ids=tokens[-1].view(1, 1),
                past_key_values=out.past_key_values,
                position_ids=torch.tensor([t + k]),
                use_cache=True,
            )
            tokens.append(out.logits[0, -1].argmax())
    return torch.stack(tokens)[None]


RIGHT = {  # right answers in other forms than the worked solution's: each must pass
    "q1": [lambda c, n: (_rope(c, n)[0].float(), _rope(c, n)[1])],  # float32, as transformers
    "q2": [lambda w, n: w[_gguf_rows(w.shape[0], n)]],  # the rows gathered by the index formula
    "q3": [lambda m, x, n: _loop(m, x, n), _old_names_flat_positions],
}  # fmt: skip


# _old_names_flat_positions is a learner's answer written with the cache's old name, which
# transformers deprecates: the check must accept it, so its warning is expected here, and only here.
@pytest.mark.filterwarnings("ignore:`past_key_values` is deprecated:FutureWarning")
@pytest.mark.parametrize(
    "name, index", [(name, i) for name, fns in RIGHT.items() for i in range(len(fns))]
)
def test_right_answers_in_other_forms_pass_too(name, index):
    question, fn = BY_NAME[name], RIGHT[name][index]
    for seed in range(3):
        cases = question.cases(seed)
        verdict = question.judge(cases, question.run(fn, cases))
        assert verdict.status == PASS, (seed, verdict.message)


@pytest.mark.parametrize("seed", range(4))
def test_q1_reference_agrees_with_transformers_rope_init_functions(seed):
    for case in q1.cases(seed):
        want, want_scale = _transformers_rope(*case.args)
        got, scale = _frequencies(*case.args)
        # float32 (transformers) against float64 (the library): a few 1e-7 relative
        assert torch.allclose(got.float(), want.float(), rtol=1e-5, atol=0), case.describe
        assert math.isclose(scale, float(want_scale), rel_tol=1e-6), case.describe


def test_q1_cases_cover_every_rope_type_both_keys_and_head_dim_given_and_derived():
    cases = q1.cases(0)
    kinds = {(c.args[0].get("rope_parameters") or c.args[0].get("rope_scaling") or {}).get(
        "rope_type", "default") for c in cases}  # fmt: skip
    assert {"default", "dynamic", "yarn", "llama3"} <= kinds
    assert any((c.args[0].get("rope_scaling") or {}).get("type") == "linear" for c in cases)
    assert any("head_dim" in c.args[0] for c in cases)
    assert any("head_dim" not in c.args[0] for c in cases)
    assert any("rope_parameters" in c.args[0] for c in cases)
    assert any("rope_scaling" in c.args[0] for c in cases)


def test_q2_reference_agrees_with_transformers_gguf_loader():
    from transformers.modeling_gguf_pytorch_utils import LlamaTensorProcessor

    processor = LlamaTensorProcessor(config={"num_attention_heads": 9, "num_key_value_heads": 3})
    for seed in range(3):
        for case in q2.cases(seed):
            w, n = case.args
            # transformers' loader takes (n_head, n_kv_head) and reverses per kv head for K
            theirs = processor._reverse_permute_weights(w.numpy(), n, n)
            assert torch.equal(_unpermuted(w, n), torch.from_numpy(theirs)), case.describe


def test_q2_tiny_case_by_hand():
    w, n = q2.cases(0)[0].args  # (16, 3) arange: 2 heads of 8 rows
    rows = _unpermuted(w, n)[:, 0].long() // 3  # each row's GGUF row number
    # head 0: the pairs' first members (GGUF rows 0, 2, 4, 6), then the second (1, 3, 5, 7)
    assert rows.tolist() == [0, 2, 4, 6, 1, 3, 5, 7, 8, 10, 12, 14, 9, 11, 13, 15]


def test_q3_reference_is_generate_and_the_real_model_continues_rome():
    llm = _llm()
    ids = llm.ids(PUBLIC[0][0])
    new = _loop(llm.model, ids, PUBLIC[0][1])
    assert llm.tokenizer.decode(new[0]).startswith(" Rome")
    assert torch.equal(new, _generate(llm.model, ids, PUBLIC[0][1]))


def test_q3_the_model_given_is_the_loaded_model_shared_not_copied():
    model, ids, _ = q3.cases(0)[0].args
    assert copy.deepcopy(model) is model
    assert model.model.embed_tokens.weight is _llm().model.model.embed_tokens.weight
    assert not _llm().model.model._forward_pre_hooks  # the course's model is not watched
    assert set(POOL).isdisjoint(text for text, _ in PUBLIC)


def test_hidden_inputs_share_no_case_with_the_public_ones():
    for question in QUESTIONS:
        public = {c.describe for c in question.cases(0)}
        for seed in range(1, 6):
            assert not public & {c.describe for c in question.cases(seed)}, question.name


def test_checks_never_show_the_answer(capsys):
    verdict = q3.check(lambda m, x, n: torch.zeros(1, n, dtype=torch.long))
    assert verdict.status == FAIL and "Rome" not in verdict.message


def test_q3_check_draws_a_new_random_prompt_each_time_and_graders_draw_from_their_seed():
    first, second = q3.check_cases(), q3.check_cases()
    assert [c.describe for c in first[:-1]] == [c.describe for c in q3.cases(0)]
    assert first[-1].describe == second[-1].describe  # the same sentence: no ids in it
    assert "random token ids" in first[-1].describe
    assert not torch.equal(first[-1].args[1], second[-1].args[1])
    # a grader's hidden prompt is the seed's: its two processes draw the same
    assert torch.equal(q3.cases(3)[-1].args[1], q3.cases(3)[-1].args[1])
    assert "random token ids" in q3.cases(3)[-1].describe


def test_q3_says_what_the_loop_did_when_the_check_stops_the_model(capsys):
    # The instrumented model stops a call that breaks the loop's rules by raising; the verdict
    # describes the learner's call (in the notebook and as the grader judges it), never the
    # internal exception.
    from chapter_checks import judged_as_graded

    for fn, said in (
        (_one_call_too_many, "asked the model for forward pass number"),
        (_without_positions, "called the model after the prompt without position_ids"),
    ):
        for graded in (False, True):
            cases = q3.cases(0)[:1]  # fresh cases: each counts its own model's calls
            if graded:
                verdict = judged_as_graded(q3, fn, cases)
            else:
                verdict = q3.judge(cases, q3.run(fn, cases))
            message = verdict.message
            assert verdict.status == FAIL and said in message, message
            assert "the check's model refused that call" in message
            for internal in ("RuntimeError", "raised", "posenc-check-stopped", "{"):
                assert internal not in message, message


# -- the concept questions: the exercises ask others than the lecture's quiz, each one applied ----


def _slowest(head_dim, base):
    """The slowest pair's wavelength of a config with this head_dim and rope_theta."""
    config = {"hidden_size": 2048, "num_attention_heads": 32, "head_dim": head_dim,
              "max_position_embeddings": 8192, "rope_theta": base}  # fmt: skip
    return 2 * math.pi / float(rope_from_config(config, dtype=F64)[0][-1])


def _first_inexact(dtype):
    n = torch.arange(1 << 16, dtype=F64)
    return int(torch.nonzero(n.to(dtype).double() != n)[0])


def test_c1_asks_about_a_config_the_lectures_table_does_not_hold():
    asked = (64, 500000.0)
    table = {(c.get("head_dim", c["hidden_size"] // c["num_attention_heads"]), c["rope_theta"])
             for c in (e.config for e in PUBLISHED_ROPE)}  # fmt: skip
    assert asked not in table


def _yarn_factor(pair):
    """YaRN's (s = 2, betas 32 and 1) factor on SmolLM2's pair ``pair``, from transformers."""
    config = {"hidden_size": 576, "num_attention_heads": 9, "head_dim": 64,
              "max_position_embeddings": 8192,
              "rope_parameters": {"rope_theta": 100000.0, "rope_type": "yarn", "factor": 2.0,
                                  "original_max_position_embeddings": 8192}}  # fmt: skip
    scaled = _transformers_rope(config, 16384)[0][pair]
    return float(scaled) / 100000.0 ** (-2 * pair / 64)


def _yarn_paper(pair):
    """The same with the YaRN paper's ramp, linear in the turns r over 8,192 (from 1 to 32)."""
    turns = 8192 * 100000.0 ** (-2 * pair / 64) / (2 * math.pi)
    keep = min(max((turns - 1) / 31, 0.0), 1.0)
    return keep + (1 - keep) / 2


# (question, a known-wrong answer computed with the library, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, _slowest(128, 500000.0), "Llama 3 8B's row"),
    (c1, 2 * math.pi * 500000, "common tutorial's wavelength"),
    (c1, _slowest(64, 100000.0), "SmolLM2's slowest pair"),
    (c1, _slowest(64, 500000.0) / (2 * math.pi), "positions per radian"),
    (c1, 500000.0, "the base itself"),
    (c1, 2 * math.pi, "pair 0, the fastest"),
    (c1, 1_000_000.0, "That is not the number"),
    (c2, "a", "Nothing checks the position"),
    (c2, "b", "never rotated again"),
    (c2, "d", "all 14 keys"),
    (c3, 2048.0, "still exact"),
    (c3, 1025.0, "you counted 10 significant bits"),
    (c3, float(_first_inexact(torch.bfloat16)), "bfloat16's limit"),
    (c3, 65504.0, "largest number"),
    (c3, 2.0**24 + 1, "float32's limit"),
    (c3, 2050.0, "That is not the number"),
    (c4, 1.0, "1 (kept)"),
    (c4, 0.5, "0.5 (halved)"),
    (c4, _yarn_paper(15), "linear in the number of turns"),
    (c4, 1.5, "more than 1"),
    (c4, 0.9, "That is not the number"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    right = {
        c1: _slowest(64, 500000.0),
        c2: "c",
        c3: _first_inexact(torch.float16),
        c4: _yarn_factor(15),
    }
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name
    assert c1.evaluate(2 * math.pi * 500000 ** (62 / 64)).status == PASS
    assert c3.evaluate(2**11 + 1).status == PASS
    assert c4.evaluate(0.5 + 0.5 / 2).status == PASS  # pair 15: ramp 0.5 (pairs 10 to 20)


def test_c4_asks_about_a_pair_on_yarns_ramp():
    turns = 8192 * 100000.0 ** (-30 / 64) / (2 * math.pi)
    assert 1 < turns < 32  # between beta_slow and beta_fast: neither kept nor halved
    assert 0.5 < _yarn_factor(15) < 1


globals().update(
    concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "08_real_model", CONCEPT_WRONG)
)


def test_c4_prompt_states_the_ramp_it_grades():
    """c4 grades transformers' ramp, linear in the pair index: the prompt says so and names its
    ends, so the paper's ramp (linear in the turns) is a mistake the prompt rules out."""
    from posenc_lib.rope_scaling import rope_inv_freq

    theta = rope_inv_freq(64, 100000.0, dtype=F64)[0]
    turns = 8192 * theta / (2 * math.pi)
    i_of = lambda beta: 64 * math.log(8192 / (2 * math.pi * beta)) / (2 * math.log(100000.0))  # noqa: E731
    assert (math.floor(i_of(32)), math.ceil(i_of(1))) == (10, 20)
    assert 1 < turns[15] < 32
    for fragment in ("linear in the pair index", "floor(i(32)) = 10", "ceil(i(1)) = 20"):
        assert fragment in c4.prompt
    assert "section 6" not in c4.section and c4.nudge


def test_coding_hints_nudge_first_and_never_hand_over_the_code():
    """q2's and q3's first hint is the idea; no hint holds the solution's key lines."""
    for question, code in (
        (q2, ("reshape(", "transpose(", ".permute(")),
        (q3, ("position_ids=", "torch.cat(", "argmax(", "use_cache=")),
    ):
        for hint in question.hints:
            assert not any(c in hint for c in code), (question.name, hint)
        assert "?" in question.hints[0], question.name
