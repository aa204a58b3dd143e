"""Chapter 8's exercises: q1, RoPE's frequencies and attention scale read from a config.json."""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch08_config import head_dim_of, rope_settings
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, TENSOR, as_number, as_tensor, close, same_number
from posenc_lib.checks.ch08.setting import F64, NOTEBOOK, RTOL
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.checks.run import CHANGED_INPUT
from posenc_lib.i18n import N_, _, tr
from posenc_lib.rope_scaling import rope_inv_freq


# The keys each rope_type passes on to the library (besides factor), as in transformers.
def _read(config: dict) -> tuple[int, float, str, dict]:
    """(head_dim, base, rope_type, scaling in ``rope_inv_freq``'s form, {} for none), read from a
    config dict as transformers does: by ``ch08_config``, the one home of that reading."""
    base, scaling = rope_settings(config)
    scaling = scaling or {}
    return head_dim_of(config), base, scaling.get("rope_type", "default"), scaling


def _frequencies(config: dict, seq_len: int, **change) -> tuple[torch.Tensor, float]:
    """(inv_freq (D/2,) float64, attention scale) for the config; ``change`` gives a usual mistake:
    head_dim, base, rope_type, scaling (a library dict, or None for none)."""
    head_dim, base, _type, rope = _read(config)
    head_dim, base = change.get("head_dim", head_dim), change.get("base", base)
    scaling = change["scaling"] if "scaling" in change else (rope or None)
    return rope_inv_freq(head_dim, base, scaling, seq_len, dtype=F64)


def _dynamic_without_max(config: dict, seq_len: int) -> torch.Tensor | None:
    """Dynamic NTK's inv_freq with the stretch factor * seq_len / L - (factor - 1), without
    max(seq_len, L): below L the stretch is under 1 (None when it is not even positive)."""
    head_dim, base, _type, rope = _read(config)
    factor, original = float(rope["factor"]), config["max_position_embeddings"]
    stretch = factor * seq_len / original - (factor - 1)
    if stretch <= 0:
        return None
    raised = base * stretch ** (head_dim / (head_dim - 2))  # ntk_base, which wants stretch >= 1
    try:
        return rope_inv_freq(head_dim, raised, None, dtype=F64)[0]
    except ValueError:  # a base below 1
        return None


def _paper_ramp(config: dict) -> torch.Tensor:
    """YaRN's frequencies with the ramp the YaRN paper writes (arXiv:2309.00071, section 3.2):
    linear in the turns r_i = L theta_i / (2 pi) over L, from beta_slow to beta_fast, where
    transformers' ramp is linear in the pair index. A learner who codes the paper's formula."""
    head_dim, base, _type, rope = _read(config)
    factor, original = float(rope["factor"]), rope["original_max_position_embeddings"]
    fast, slow = float(rope.get("beta_fast", 32.0)), float(rope.get("beta_slow", 1.0))
    theta = rope_inv_freq(head_dim, base, None, dtype=F64)[0]  # (D/2,)
    turns = original * theta / (2 * math.pi)
    keep = ((turns - slow) / (fast - slow)).clamp(0.0, 1.0)  # 1 = keep theta_i
    return theta * keep + theta / factor * (1 - keep)


def _config(hidden, heads, theta, max_pos, rope, *, head_dim=None, old_key=False) -> dict:
    """A config.json's fields that RoPE reads: the rope dict under the new or the old key."""
    config = {
        "hidden_size": hidden,
        "num_attention_heads": heads,
        "num_key_value_heads": max(1, heads // 4),
        "max_position_embeddings": max_pos,
    }
    if head_dim is not None:
        config["head_dim"] = head_dim
    if old_key:  # transformers 4: rope_theta beside rope_scaling (None when unscaled)
        config["rope_theta"] = theta
        config["rope_scaling"] = rope or None
    else:  # transformers 5: everything in rope_parameters
        config["rope_parameters"] = {"rope_theta": theta, "rope_type": "default", **(rope or {})}
    return config


def _yarn_given(factor: float, original: int, generator=None) -> dict:
    """A YaRN dict that gives its own attention_factor (not 0.1 ln s + 1) and its own beta_fast and
    beta_slow (not 32 and 1), drawn when a generator is given."""
    pick = (lambda options: draws.pick(options, generator)) if generator else (lambda o: o[0])
    return {
        "rope_type": "yarn",
        "factor": factor,
        "original_max_position_embeddings": original,
        "attention_factor": pick([1.25, 0.8, 1.5]),
        "beta_fast": pick([16.0, 24.0, 64.0]),
        "beta_slow": pick([2.0, 0.5]),
    }


def _describe(config: dict, seq_len: int) -> str:
    head_dim, base, rope_type, rope = _read(config)
    key = "rope_parameters" if "rope_parameters" in config else "rope_scaling"
    dims = (
        tr("head_dim = {head_dim}, ", head_dim=config["head_dim"]) if "head_dim" in config else ""
    )
    given = "".join(
        f", {name} = {rope[name]:g}"
        for name in ("attention_factor", "beta_fast", "beta_slow")
        if rope.get(name) is not None
    )
    return tr(
        "hidden_size = {hidden}, {heads} heads, {dims}rope_theta = {base:g}, "
        "max_position_embeddings = {max_pos}, {key} of type {rope_type!r}{given}, "
        "seq_len = {seq_len}",
        given=given,
        hidden=config["hidden_size"],
        heads=config["num_attention_heads"],
        dims=dims,
        base=base,
        max_pos=config["max_position_embeddings"],
        key=key,
        rope_type=rope_type,
        seq_len=seq_len,
    )


class RopeFromConfig(Question):
    name, function, points, notebook = "q1", "rope_from_config", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "theta_i * ramp_i + theta_i / factor * (1 - ramp_i)",
        'rope.get("attention_factor") or',
        "factor * max(seq_len, L) / L - (factor - 1)",
        "low = floor(i(beta_fast)), high = ceil(i(beta_slow))",
    )
    returns = (TENSOR, FLOAT)
    references = (
        "posenc_lib.rope_scaling.rope_inv_freq",
        "posenc_lib.analysis.ch08_config.rope_from_config",
        # transformers' own: ROPE_INIT_FUNCTIONS holds these (and the default type's, per model)
        "transformers.modeling_rope_utils._compute_linear_scaling_rope_parameters",
        "transformers.modeling_rope_utils._compute_dynamic_ntk_parameters",
        "transformers.modeling_rope_utils._compute_yarn_parameters",
        "transformers.modeling_rope_utils._compute_llama3_parameters",
        "transformers.models.llama.modeling_llama.LlamaRotaryEmbedding.compute_default_rope_parameters",
    )
    title = N_("RoPE's frequencies and attention scale from a config.json")
    hints = (
        N_(
            "Read three things: head_dim (given, or hidden_size // num_attention_heads), the base "
            "rope_theta (inside rope_parameters, or at the top level beside rope_scaling), and the "
            "scaling dict (rope_parameters, or the older rope_scaling; its type under 'rope_type' "
            "or the older 'type')."
        ),
        N_(
            "theta_i = base ** (-2i / D) for i = 0 .. D/2 - 1. linear divides every theta_i by the "
            "factor; dynamic raises the base to base * σ ** (D / (D - 2)) with the stretch "
            "σ = factor * max(seq_len, L) / L - (factor - 1), L = max_position_embeddings (σ = 1 "
            "up to L); yarn and llama3 blend theta_i and theta_i / factor by the pair's wavelength "
            "(chapter 7). yarn's ramp is your chapter 7 question 2 ramp: i(beta) = D * "
            "ln(L / (2π * beta)) / (2 * ln(base)) is the (real) pair index that turns beta times "
            "over L = original_max_position_embeddings, and the ramp falls linearly in the pair "
            "index from floor(i(beta_fast)) to ceil(i(beta_slow))."
        ),
        N_(
            "The attention scale is 1 for every type but yarn, whose scale is attention_factor if "
            "given, else 0.1 * ln(factor) + 1. Return (inv_freq, scale): a (D/2,) tensor and a "
            "float."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [
                # SmolLM2-135M's own config: no scaling, head_dim derived (576 / 9 = 64).
                (_config(576, 9, 100000.0, 8192, None, old_key=True), 2048),
                # Llama 2 with PI, under the old key and the old name "type".
                (
                    _config(
                        4096, 32, 10000.0, 4096, {"type": "linear", "factor": 4.0}, old_key=True
                    ),
                    16384,
                ),  # fmt: skip
                # Dynamic NTK past max_position_embeddings (stretch 2 * 6000 / 2048 - 1).
                (_config(2048, 16, 10000.0, 2048, {"rope_type": "dynamic", "factor": 2.0}), 6000),
                # Qwen3-0.6B-like: head_dim 128 given, not 1024 / 16 = 64; YaRN x4.
                (
                    _config(
                        1024,
                        16,
                        1000000.0,
                        131072,
                        {
                            "rope_type": "yarn",
                            "factor": 4.0,
                            "original_max_position_embeddings": 32768,
                        },
                        head_dim=128,
                    ),
                    65536,
                ),  # fmt: skip
                # Llama 3.1 8B's scaling.
                (
                    _config(
                        4096,
                        32,
                        500000.0,
                        131072,
                        {
                            "rope_type": "llama3",
                            "factor": 8.0,
                            "low_freq_factor": 1.0,
                            "high_freq_factor": 4.0,
                            "original_max_position_embeddings": 8192,
                        },
                        old_key=True,
                    ),
                    8192,
                ),  # fmt: skip
                # Dynamic inside max_position_embeddings: no stretch yet (without max(T, L) the
                # stretch would be 2 * 3000 / 4096 - 1 = 0.46, below 1).
                (_config(768, 12, 10000.0, 4096, {"rope_type": "dynamic", "factor": 2.0}), 3000),
                # YaRN with its own attention_factor and betas: the statement's "if given" clauses.
                (_config(2048, 16, 500000.0, 32768, _yarn_given(8.0, 8192)), 20000),
            ]
        else:
            # One case per rope_type, in every draw; yarn's has a head_dim given that differs from
            # hidden_size / heads, dynamic's a seq_len past max_position_embeddings.
            generator = draws.seeded(seed, 81)
            specs = []
            for rope_type in ("default", "linear", "dynamic", "yarn", "llama3"):
                heads = draws.pick([8, 12, 14, 20, 24], generator)
                head_dim = draws.pick([48, 80, 96, 128], generator)
                theta = draws.pick([50000.0, 250000.0, 2000000.0], generator)
                max_pos = draws.pick([2048, 8192, 16384], generator)
                factor = draws.pick([2.0, 3.0, 6.0, 16.0], generator)
                rope = {"rope_type": rope_type, "factor": factor}
                if rope_type == "default":
                    rope = None
                elif rope_type == "yarn":
                    rope["original_max_position_embeddings"] = max_pos // 2
                elif rope_type == "llama3":
                    rope |= {"low_freq_factor": 1.0, "high_freq_factor": 4.0,
                             "original_max_position_embeddings": max_pos // 4}  # fmt: skip
                # Every way of writing a config, in every draw: no dict (old key, None), the old key
                # with the older name "type" and with "rope_type", and the new rope_parameters.
                old_key = rope_type in ("default", "linear", "llama3")
                if rope_type == "linear":
                    rope["type"] = rope.pop("rope_type")
                given = rope_type == "yarn" or bool(draws.randint(0, 2, generator))
                config = _config(
                    heads * (head_dim // 2 if rope_type == "yarn" else head_dim),
                    heads,
                    theta,
                    max_pos,
                    rope,
                    head_dim=head_dim if given else None,
                    old_key=old_key,
                )
                seq_len = max_pos * draws.pick([2, 3], generator) + draws.randint(1, 500, generator)
                specs.append((config, seq_len))
            # Dynamic again, inside max_position_embeddings: no stretch (without max(T, L) it would
            # be 1 - factor * (L - T) / L, below 1 but above 0).
            heads, head_dim = draws.pick([8, 12, 16], generator), draws.pick([64, 128], generator)
            max_pos, factor = draws.pick([4096, 8192], generator), draws.pick([2.0, 3.0], generator)
            rope = {"rope_type": "dynamic", "factor": factor}
            config = _config(heads * head_dim, heads, 500000.0, max_pos, rope)
            specs.append((config, max_pos - draws.randint(1, max_pos // 4, generator)))
            # Type "default" written out in rope_parameters (no scaling either).
            heads, head_dim = draws.pick([6, 10, 12], generator), draws.pick([64, 96], generator)
            config = _config(heads * head_dim, heads, 1000000.0, 4096, None)
            specs.append((config, draws.randint(100, 4000, generator)))
            # YaRN with its own attention_factor, beta_fast and beta_slow (the "if given" clauses).
            heads, head_dim = draws.pick([8, 16], generator), draws.pick([64, 128], generator)
            max_pos, factor = (
                draws.pick([16384, 32768], generator),
                draws.pick([4.0, 8.0], generator),
            )
            rope = _yarn_given(factor, max_pos // 4, generator)
            config = _config(heads * head_dim, heads, 500000.0, max_pos, rope)
            specs.append((config, max_pos + draws.randint(1, 500, generator)))
        return [Case(s, _describe(*s)) for s in specs]

    def _not_returned(self, outcome, where):
        if outcome.kind == CHANGED_INPUT:  # the config: a dict of dicts (seq_len is an int)
            name = outcome.error.strip("`") if outcome.error.startswith("`") else "config"
            return tr(
                "`{function}` changed its argument {argument} in place {where}: work on "
                "a copy, `{name} = copy.deepcopy({name})` (dict({name}) would share the inner "
                "rope dict), or only read it (rope.get, not rope.pop).",
                function=self.function,
                argument=outcome.error,
                where=where,
                name=name,
            )
        return super()._not_returned(outcome, where)

    def diagnose(self, case, value):
        config, seq_len = case.args
        head_dim, base, rope_type, rope = _read(config)
        if isinstance(value, torch.Tensor) or not isinstance(value, (tuple, list)):
            return _("Return two things, (inv_freq, attention_scale): a (D/2,) tensor and a float.")
        if len(value) != 2:
            return tr(
                "Return exactly two things, (inv_freq, attention_scale); yours has {n}.",
                n=len(value),
            )
        freq_value, scale_value = value
        want, want_scale = _frequencies(config, seq_len)
        if isinstance(freq_value, torch.Tensor) and freq_value.dim() == 1:
            n = freq_value.numel()
            hidden = config["hidden_size"]
            if n == head_dim and n != head_dim // 2:
                return tr("You returned {n} frequencies, one per dim; RoPE has one per pair of dims: D/2 = {half}.", n=n, half=head_dim // 2)  # fmt: skip
            if n in (hidden // 2, hidden) and hidden != head_dim:
                return _("You used hidden_size as the head dimension; RoPE rotates each head's vectors: D = head_dim, given in the config or hidden_size // num_attention_heads.")  # fmt: skip
            derived = hidden // config["num_attention_heads"]
            if "head_dim" in config and derived != head_dim and n == derived // 2:
                return tr("This config gives head_dim = {head_dim} itself, which is not hidden_size // num_attention_heads = {derived}: use the head_dim given when there is one.", head_dim=head_dim, derived=derived)  # fmt: skip
        freq, problem = as_tensor(freq_value, "inv_freq", (head_dim // 2,))
        if problem:
            return problem
        scale, problem = as_number(scale_value, N_("The attention scale"))
        if problem:
            return problem
        if not close(freq, want, rtol=RTOL, atol=0.0):
            if freq.numel() > 1 and bool(freq[-1] > freq[0]):
                return _("Close, but your frequencies grow with the pair index: theta_i = base ** (-2i / D), with a minus (or 1 / base ** (2i / D)), so that the last pairs turn slowest.")  # fmt: skip
            factor = float(rope.get("factor", 1.0))
            where = "rope_parameters" if "rope_parameters" in config else "rope_scaling"
            type_key = "rope_type" if "rope_type" in (config.get(where) or {}) else "type"
            mistakes = [
                (dict(scaling=None), tr("you ignored the {rope_type!r} scaling: the config's rope dict changes the frequencies; this one is under {where}, with its type under the key {type_key!r}.", rope_type=rope_type, where=where, type_key=type_key)),
                (dict(base=10000.0), tr("you used base 10000; this config's rope_theta is {base:g} (inside rope_parameters, or at the top level beside rope_scaling).", base=base)),
                (dict(scaling={"rope_type": "linear", "factor": factor}), tr("you divided every frequency by the factor, as PI does; {rope_type!r} scaling is not that (see chapter 7).", rope_type=rope_type)),
                (dict(scaling={"rope_type": "ntk", "factor": factor}), N_("you raised the base with the factor itself (static NTK); dynamic NTK raises it with a stretch that depends on seq_len: re-read the question's dynamic rule (chapter 7, section 4).")),
            ]  # fmt: skip
            if rope_type == "dynamic":
                mistakes.append((dict(scaling={"rope_type": "ntk", "factor": factor * seq_len / config["max_position_embeddings"]}), N_("your stretch, factor * seq_len / max_position_embeddings, is not the question's σ: compare the two at seq_len = max_position_embeddings, where dynamic NTK does not scale yet.")))  # fmt: skip
                without_max = _dynamic_without_max(config, seq_len)
                if without_max is not None and not close(without_max, want, rtol=RTOL, atol=0.0):
                    mistakes.append((dict(inv_freq=without_max), N_("your stretch falls below 1 for a seq_len under max_position_embeddings: re-read the question's σ, which leaves a sequence shorter than L unscaled.")))  # fmt: skip
            if rope_type == "yarn":
                yarn = rope
                default, _scale = _frequencies(config, seq_len, scaling=None)
                mistakes += [
                    (dict(scaling=dict(yarn, truncate=False)), N_("your YaRN ramp runs between the real indices i(beta_fast) and i(beta_slow), unrounded; transformers rounds its ends first (chapter 7, section 4, and its question 2).")),
                    (dict(inv_freq=default + default / factor - want), N_("you swapped the ramp's two ends: your fast pairs are divided by the factor and your slow ones kept (chapter 7, section 4: which pairs does YaRN leave alone?).")),
                    (dict(inv_freq=_paper_ramp(config)), N_("your YaRN ramp is linear in the number of turns r_i, as the YaRN paper writes it; transformers' ramp is linear in the pair index, between i(beta_fast) and i(beta_slow) (chapter 7's question 2 and its deep dive on the scalings).")),
                ]  # fmt: skip
            if rope_type in ("yarn", "llama3"):
                original = rope["original_max_position_embeddings"]
                changed = dict(
                    rope, original_max_position_embeddings=config["max_position_embeddings"]
                )
                if rope_type == "yarn" and ("beta_fast" in rope or "beta_slow" in rope):
                    defaults = {
                        k: v for k, v in rope.items() if k not in ("beta_fast", "beta_slow")
                    }
                    mistakes.append((dict(scaling=defaults), N_("your YaRN ramp uses the default beta_fast and beta_slow where this config gives its own: re-read what the question says to read from a yarn config.")))  # fmt: skip
                if original != config["max_position_embeddings"]:
                    mistakes.append((dict(scaling=changed), tr("you used max_position_embeddings ({max_pos}) as the original context; {rope_type} blends by the pretraining length original_max_position_embeddings ({original}).", max_pos=config["max_position_embeddings"], rope_type=rope_type, original=original)))  # fmt: skip

            if rope_type == "linear":
                default, _scale = _frequencies(config, seq_len, scaling=None)
                if close(freq, default * factor, rtol=RTOL, atol=0.0):
                    return _("Close, but you multiplied the frequencies by the factor; PI divides them (positions m -> m / s is theta_i -> theta_i / s).")  # fmt: skip

            def matches(change):
                try:
                    wrong = change.get("inv_freq")
                    if wrong is None:
                        wrong, _scale = _frequencies(config, seq_len, **change)
                except ValueError:
                    return False
                return close(freq, wrong, rtol=RTOL, atol=0.0)

            named = named_mistake(mistakes, matches)
            if named:
                return named
            odd = head_dim // 2
            half = base ** (-torch.arange(odd, dtype=F64) / head_dim)  # (D/2,) exponent i / D
            if rope_type == "default" and close(freq, half, rtol=RTOL, atol=0.0):
                return _(
                    "Close, but your exponent is -i / D; with pairs i = 0 .. D/2 - 1 it is -2i / D."
                )
            return tr("Your inv_freq differs from the {rope_type!r} frequencies of this config: check head_dim, rope_theta and how {rope_type!r} changes theta_i = base ** (-2i / D).", rope_type=rope_type)  # fmt: skip
        if same_number(scale, want_scale, rtol=RTOL, atol=0.0, floor=1.0):
            return None
        if rope_type == "yarn":
            s = float(rope["factor"])
            default_scale = 0.1 * math.log(s) + 1
            mistakes = [
                (1.0, N_("your attention scale is 1: YaRN scales cos and sin (re-read the question's yarn rule).")),
            ]  # fmt: skip
            if rope.get("attention_factor") is not None:  # a config that gives its own
                mistakes.append((default_scale, N_("this config gives its own attention_factor and your scale ignores it: re-read the question's yarn rule.")))  # fmt: skip
            mistakes += [
                (default_scale - 1, N_("your scale has lost its constant term: compare it with the question's yarn rule.")),
                (want_scale**2, N_("your scale is squared: the factor multiplies cos and sin once each (q and k both carry it, so the logits get its square without your help).")),
                (1 / want_scale, N_("your scale is inverted: YaRN's scale sharpens attention (chapter 7, section 4).")),
            ]  # fmt: skip
            named = named_mistake(
                mistakes,
                lambda w: same_number(scale, w, rtol=RTOL, atol=0.0, floor=1.0),
                lead=N_("The frequencies are right, but "),
            )
            return (
                named
                or _(
                    "The frequencies are right, but the attention scale differs from YaRN's: re-read the question's yarn rule (chapter 7, section 4)."
                )  # fmt: skip
            )
        return tr("The frequencies are right, but the attention scale of {rope_type!r} RoPE is 1 (only yarn scales cos and sin).", rope_type=rope_type)  # fmt: skip
