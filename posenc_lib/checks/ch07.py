"""Chapter 7's exercises: the NTK-aware base, YaRN's ramp and attention scale, which RoPE pairs turn a
full circle within the training length, and which pairs a trained model sees new scores on.

    from posenc_lib.checks.ch07 import q1, q2, q3, q4
    q1.check(ntk_base); q1.hint(); q1.solution()

The references are the library's (``scaling_demo.ntk_base``, ``yarn_ramp``,
``yarn_attention_scale``, ``full_turn_pairs``; ``extrapolation_demo.new_score_pairs``); each usual
mistake is recomputed and, when the learner's answer matches it, named.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from posenc_lib.analysis.ch07_extrapolation import new_score_pairs, score_excess
from posenc_lib.analysis.ch07_scaling import (
    frequencies,
    full_turn_pairs,
    ntk_base,
    wavelengths,
    yarn_attention_scale,
    yarn_ramp,
)
from posenc_lib.checks import (
    FLOAT,
    INDEX_LIST,
    TENSOR,
    Case,
    Question,
    as_index_list,
    as_number,
    as_tensor,
)

NOTEBOOK = "07_extrapolation.ipynb"
HAND_MADE = "a hand-made (2, 16, 14) curves, train_len = 6, tol = 0.25"
F64 = torch.float64


def _generator(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 7919 + salt)


def _pick(options, generator):
    return options[int(torch.randint(0, len(options), (1,), generator=generator))]


# Relative tolerance for a returned number: float32 arithmetic (a torch.tensor or np.float32 base)
# is off by up to ~6e-8 of the value; every named mistake is off by far more than 1e-6.
RTOL = 1e-6


def _same(got: float, want: float, rtol: float = RTOL) -> bool:
    return abs(got - want) <= rtol * max(1.0, abs(want))


# -- q1: the NTK-aware base ---------------------------------------------------------------------------


class NtkBase(Question):
    name, function, points, notebook = "q1", "ntk_base", 2, NOTEBOOK
    returns, references = FLOAT, ("posenc_lib.analysis.ch07_scaling.ntk_base",)
    title = "The NTK-aware base for a scale factor"
    hints = (
        "Write base' = base * s ** x. Then theta'_i = base' ** (-2i / D) = theta_i * s ** (-2 i x / D): "
        "pair 0 keeps its frequency whatever x is.",
        "The last pair is i = D/2 - 1, so its frequency is multiplied by s ** (-(D - 2) x / D). "
        "Choose x so that this is exactly 1 / s.",
        "x = D / (D - 2): return base * s ** (D / (D - 2)), one float.",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(10000.0, 4.0, 32), (10000.0, 8.0, 128), (500000.0, 2.0, 64), (100.0, 1.0, 16),
                     (10000.0, 2.5, 96)]  # fmt: skip
        else:
            # Every draw holds a small and a large head_dim, small and large factors, a factor that
            # is not a whole number, and the boundary s = 1; none of the public bases.
            generator = _generator(seed, 1)
            slots = [([2.0, 3.0, 4.0], [16, 48]), ([8.0, 16.0, 32.0], [96, 128, 256]),
                     ([1.5, 2.5, 6.0], [64, 80]), ([1.0], [16, 48, 64, 96, 128, 256]),
                     ([2.0, 3.0, 4.0, 8.0, 16.0, 32.0], [16, 48, 64, 96, 128, 256])]  # fmt: skip
            specs = [
                (
                    _pick([500.0, 50000.0, 1e6, 5e6], generator),
                    _pick(factors, generator),
                    _pick(dims, generator),
                )
                for factors, dims in slots
            ]
        return [Case(s, f"base = {s[0]:g}, factor = {s[1]:g}, head_dim = {s[2]}") for s in specs]

    def diagnose(self, case, value):
        base, s, d = case.args
        got, problem = as_number(value, "The new base")
        if problem:
            return problem
        want = ntk_base(base, s, d)
        if _same(got, want):
            return None
        mistakes = [
            (base * s, "you multiplied the base by s alone: then the slowest pair's frequency falls by s ** ((D - 2) / D), a little less than s. Raise s to the power that makes it exactly s."),
            (base * s ** ((d - 2) / d), "your exponent is upside down: with s ** ((D - 2) / D) the slowest pair falls by s ** ((D - 2)**2 / D**2), not s. Solve s ** (-(D - 2) x / D) = 1 / s for x again."),
            (base * s ** ((d / 2) / (d / 2 - 2)) if d > 4 else math.nan, "you used the number of pairs D/2 in the exponent where the head dimension D belongs (theta_i = base ** (-2i / D), D = head_dim)."),
            (s ** (d / (d - 2)), "you returned the factor the base is multiplied by; return the new base itself (base times that factor)."),
            (base / s ** (d / (d - 2)), "you divided the base; NTK-aware scaling raises it, so that the frequencies fall."),
            (base ** (d / (d - 2)) * s, "the exponent belongs on s, not on the base: base' = base * s ** x."),
            (base * s ** (d / (d - 2)) ** 0.5, "you took a square root somewhere: with your base the slowest pair falls by sqrt(s), not s."),
            (10000.0 * s ** (d / (d - 2)) if base != 10000.0 else math.nan, "you used base 10000 instead of the `base` given."),
            (base * s ** (128 / 126) if d != 128 else math.nan, "you used head_dim 128 instead of the `head_dim` given: the exponent D / (D - 2) depends on it."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if math.isfinite(wrong) and _same(got, wrong):
                return "Close, but " + sentence
        return "Your base is not the one asked for: with it, check that pair 0 keeps theta_0 = 1 and that the slowest pair's frequency falls by exactly s."


# -- q2: YaRN's ramp and attention scale -------------------------------------------------------------


def _ramp_variant(d, base, length, fast, slow, *, truncate=True, turns=False, reverse=False,
                  two_pi=True, pairs_for_d=False, swap=False, clamp_pairs=False,
                  bump=True, rounding=None, cap_low=True, cap_high=True, clamp=True,
                  first_pair=0):  # fmt: skip
    """YaRN's ramp (P,) float64, or one of its usual wrong variants.

    rounding: (low's, high's) rounding functions in place of (floor, ceil); cap_low / cap_high:
    whether max(low, 0) / min(high, D - 1) are applied; clamp: whether the ratio is clamped to
    [0, 1]; first_pair: the index of the first pair (1 for a ramp counted from 1).
    """
    if swap:
        fast, slow = slow, fast
    if (
        turns
    ):  # the paper's ramp (section 3.2): linear in r = L / lambda, (r - alpha) / (beta - alpha)
        r = length / wavelengths(d, base)  # (P,)
        keep = ((r - slow) / (fast - slow)).clamp(0.0, 1.0) if fast != slow else (r > fast) * 1.0
        return (1 - keep if reverse else keep).to(F64)
    size = d / 2 if pairs_for_d else d
    circle = 2 * math.pi if two_pi else 1.0

    def pair_index(n_turns):
        return size * math.log(length / (n_turns * circle)) / (2 * math.log(base))

    low, high = pair_index(fast), pair_index(slow)
    if truncate:
        round_low, round_high = rounding or (math.floor, math.ceil)
        low, high = round_low(low), round_high(high)
    if cap_low:
        low = max(low, 0)
    if cap_high:
        high = min(high, d // 2 - 1 if clamp_pairs else d - 1)
    if low == high and bump:
        high += 0.001
    pair = torch.arange(first_pair, first_pair + d // 2, dtype=F64)
    ratio = (pair - low) / (high - low)
    ramp = 1 - (ratio.clamp(0.0, 1.0) if clamp else ratio)
    return 1 - ramp if reverse else ramp


def _ends(d, base, length, fast, slow) -> tuple[int, int]:
    """The ramp's ends (low, high) after rounding and capping, before the 0.001 rule."""

    def pair_index(n_turns):
        return d * math.log(length / (2 * math.pi * n_turns)) / (2 * math.log(base))

    return max(math.floor(pair_index(fast)), 0), min(math.ceil(pair_index(slow)), d - 1)


def _step_case(generator) -> tuple:
    """A YaRN case where low == high (= 0): L is at most 2 pi beta_slow, so even pair 0 turns fewer
    than beta_slow times, i(beta_slow) lies in (-1, 0] and both ends land on pair 0. Only the rule
    "if low == high, add 0.001 to high" keeps (i - low) / (high - low) from dividing by zero."""
    d = _pick([16, 64, 128], generator)
    base = _pick([1000.0, 500000.0], generator)
    slow = _pick([2.0, 3.0], generator)
    return (d, base, math.floor(2 * math.pi * slow), _pick([2.0, 4.0], generator), 32.0, slow)


def _clamp_case(generator) -> tuple:
    """A YaRN case where the high end lands past the last pair, so that the cap at D - 1 (not
    D/2 - 1) shapes the ramp: L is a few turns of the slowest pair."""
    d = _pick([16, 32, 64], generator)
    base = _pick([50.0, 200.0, 1000.0], generator)
    slowest = float(wavelengths(d, base)[-1])
    turns = _pick(
        [2, 3, 4, 6], generator
    )  # < beta_fast = 32: the low end stays below the last pair
    return (d, base, math.ceil(turns * slowest), _pick([2.0, 4.0, 8.0], generator), 32.0, 1.0)


def _cap_case(generator) -> tuple:
    """A YaRN case where i(beta_slow) lies past D - 1, so that the cap high = min(high, D - 1)
    itself shapes the ramp, while the low end stays below the last pair. The two conditions leave a
    range of L exactly when beta_fast / beta_slow > base: ln L must lie between
    ln(2 pi beta_slow) + (D - 1) 2 ln(base) / D and ln(2 pi beta_fast) + (D/2 - 1) 2 ln(base) / D.
    The factor is 1 (the boundary of the scale's rule)."""
    d = _pick([8, 16, 32, 64], generator)
    base, fast = _pick([(10.0, 32.0), (8.0, 32.0), (20.0, 64.0), (16.0, 64.0)], generator)
    lowest = math.log(2 * math.pi) + (d - 1) * 2 * math.log(base) / d
    highest = math.log(2 * math.pi * fast) + (d / 2 - 1) * 2 * math.log(base) / d
    share = float(torch.rand(1, generator=generator)) * 0.5 + 0.25  # in the middle half
    return (d, base, round(math.exp(lowest + share * (highest - lowest))), 1.0, fast, 1.0)


def _rounding_case(generator) -> tuple:
    """A YaRN case whose ramp lies inside the pairs (1 <= low, high <= D/2 - 2), with
    i(beta_fast) = low + (more than a half) and i(beta_slow) = high - (more than a half): rounding
    both ends to the nearest integer, or flooring or ceiling both, moves an end. beta_fast and
    beta_slow are not the defaults, and the factor is below 1 (the scale is then 1)."""
    for _ in range(1000):
        d = _pick([64, 96, 128, 256], generator)
        base = _pick([10000.0, 500000.0], generator)
        fast, slow = _pick([(16.0, 2.0), (64.0, 2.0), (16.0, 0.5), (64.0, 4.0)], generator)
        per_unit = d / (2 * math.log(base))  # pair index per unit of ln L
        width = per_unit * math.log(fast / slow)  # i(beta_slow) - i(beta_fast)
        low = int(
            torch.randint(1, max(2, d // 2 - 3 - math.ceil(width)), (1,), generator=generator)
        )
        part = 0.55 + 0.4 * float(torch.rand(1, generator=generator))
        length = round(2 * math.pi * fast * math.exp((low + part) / per_unit))
        at_fast = per_unit * math.log(length / (2 * math.pi * fast))
        at_slow = per_unit * math.log(length / (2 * math.pi * slow))
        inside = 1 <= math.floor(at_fast) and math.ceil(at_slow) <= d // 2 - 2
        if inside and 0.55 < at_fast % 1 < 0.95 and 0.05 < at_slow % 1 < 0.45:
            return (d, base, length, _pick([0.25, 0.5, 0.8], generator), fast, slow)
    raise RuntimeError("no rounding case found")  # pragma: no cover - the search always succeeds


_STEP_SENTENCE = (
    "Here both ends of the ramp land on pair {low} (low == high), so (i - low) / (high - low) "
    "divides by zero. Follow the convention: if low == high, add 0.001 to high (the ramp becomes "
    "a step)."
)


def _not_finite(value) -> bool:
    try:
        tensor = torch.as_tensor(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError):
        return False
    return not bool(torch.isfinite(tensor).all())


class YarnRampScale(Question):
    name, function, points, notebook = "q2", "yarn_ramp_and_scale", 3, NOTEBOOK
    returns = (TENSOR, FLOAT)
    references = (
        "posenc_lib.analysis.ch07_scaling.yarn_ramp",
        "posenc_lib.analysis.ch07_scaling.yarn_attention_scale",
    )
    title = "YaRN's ramp and its attention scale"
    hints = (
        "Pair i turns r_i = L * theta_i / (2 pi) times over L, with theta_i = base ** (-2i / D). "
        "Set r_i = beta, take logs, and solve for i: i(beta) is a real number, not an integer.",
        "i(beta) = D * ln(L / (2 pi beta)) / (2 ln base). low = floor(i(beta_fast)), "
        "high = ceil(i(beta_slow)), then low = max(low, 0) and high = min(high, D - 1) (D - 1, as "
        "in the reference code); if low == high add 0.001 to high.",
        "ramp_i = 1 - clamp((i - low) / (high - low), 0, 1) for i = 0 .. D/2 - 1, and the scale is "
        "a plain float: 0.1 * ln(s) + 1 for s > 1 (math.log is ln), 1 for s <= 1. "
        "Return (ramp, scale).",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [
                (32, 10000.0, 64, 4.0, 32.0, 1.0),
                (128, 10000.0, 4096, 16.0, 32.0, 1.0),
                (64, 500000.0, 8192, 8.0, 32.0, 1.0),
                (128, 10000.0, 2048, 2.0, 16.0, 2.0),
                (32, 100.0, 4096, 1.0, 32.0, 1.0),  # high past the last pair: D - 1 matters; s = 1
                (32, 10000.0, 6, 4.0, 32.0, 1.0),  # L < 2 pi: low == high == 0, the 0.001 rule
                (16, 10.0, 1000, 0.5, 32.0, 1.0),  # i(beta_slow) past D - 1: the cap; s < 1
            ]
        else:
            # Random cases, then one case per rule of the statement, in every draw: the rounding
            # of both ends (with s < 1 and beta_fast, beta_slow not the defaults), the cap at D - 1
            # (with s = 1), high past the last pair, and low == high (which needs max(low, 0)).
            generator = _generator(seed, 2)
            specs = []
            for _ in range(3):
                d = _pick([32, 64, 96, 128, 256], generator)
                base = _pick([10000.0, 100000.0, 500000.0], generator)
                length = _pick([256, 1024, 2048, 4096, 8192, 32768], generator)
                factor = _pick([2.0, 4.0, 8.0, 16.0, 32.0], generator)
                fast = _pick([16.0, 32.0, 64.0], generator)
                specs.append((d, base, length, factor, fast, _pick([1.0, 2.0], generator)))
            specs.append(_rounding_case(generator))
            specs.append(_cap_case(generator))
            specs.append(_clamp_case(generator))
            specs.append(_step_case(generator))
        return [
            Case(
                s,
                f"head_dim = {s[0]}, base = {s[1]:g}, train_len = {s[2]}, factor = {s[3]:g}, "
                f"beta_fast = {s[4]:g}, beta_slow = {s[5]:g}",
            )
            for s in specs
        ]

    def diagnose(self, case, value):
        d, base, length, s, fast, slow = case.args
        if isinstance(value, torch.Tensor) or not isinstance(value, (tuple, list)):
            return "Return two things, (ramp, scale): the (D/2,) ramp and one float."
        if len(value) != 2:
            return f"Return exactly two things, (ramp, scale); yours has {len(value)}."
        ramp_value, scale_value = value
        if isinstance(ramp_value, numbers.Number) and isinstance(scale_value, torch.Tensor):
            return "You returned (scale, ramp); the order is (ramp, scale)."
        if isinstance(ramp_value, torch.Tensor) and ramp_value.numel() == d:
            return f"Your ramp has {d} values, one per dim; give one per pair: D/2 = {d // 2}."
        low, high = _ends(d, base, length, fast, slow)
        if low == high and _not_finite(ramp_value):
            return "Your ramp has NaN or infinite values. " + _STEP_SENTENCE.format(low=low)
        ramp, problem = as_tensor(ramp_value, "The ramp", (d // 2,))
        if problem:
            return problem
        scale, problem = as_number(scale_value, "The attention scale")
        if problem:
            return problem
        want_scale = yarn_attention_scale(s)
        if not _same(scale, want_scale):
            ln = math.log(s)
            if s < 1 and _same(scale, 0.1 * ln + 1):
                return (
                    "The ramp may be fine, but here the factor is below 1: YaRN's attention scale "
                    "0.1 ln(s) + 1 applies only when s > 1; otherwise the scale is 1 (no sharpening)."
                )
            mistakes = [
                (ln, "your scale is ln(s); YaRN's attention scale sqrt(1/t) is 0.1 ln(s) + 1."),
                (0.1 * ln, "your scale is 0.1 ln(s): add 1, so that s = 1 gives 1 (no change)."),
                ((0.1 * ln + 1) ** 2, "(0.1 ln s + 1)^2 = 1/t is what the logits end up multiplied by, since q and k are both scaled; return the scale of one vector, sqrt(1/t) = 0.1 ln(s) + 1."),
                (math.sqrt(0.1 * ln + 1), "you took the square root: 0.1 ln(s) + 1 is already sqrt(1/t), the scale of q and of k."),
                (1 / (0.1 * ln + 1), "you returned the inverse, sqrt(t): the scale is sqrt(1/t) = 0.1 ln(s) + 1, above 1 (t is below 1), which sharpens attention."),
                (1 / (0.1 * ln + 1) ** 2, "you returned the temperature t itself; the question asks for the scale of q and k, sqrt(1/t) = 0.1 ln(s) + 1."),
                (0.1 * math.log2(s) + 1, "you used log base 2; YaRN's 0.1 ln(s) + 1 uses the natural log (math.log)."),
                (0.1 * math.log10(s) + 1, "you used log base 10; YaRN's 0.1 ln(s) + 1 uses the natural log (math.log)."),
                (0.1 * math.log(1 / s) + 1, "you used ln(1/s); with s > 1 the scale should be above 1: 0.1 ln(s) + 1."),
            ]  # fmt: skip
            for wrong, sentence in mistakes:
                if _same(scale, wrong):
                    return "The ramp may be fine, but " + sentence
            return "Your scale differs from YaRN's sqrt(1/t) = 0.1 ln(s) + 1."
        want = yarn_ramp(d, base, length, fast, slow)
        if _close(ramp, want):
            return None
        variants = [
            (dict(reverse=True), "your ramp is reversed: 1 must mean keep (the fast pairs, low index, which turn more than beta_fast times) and 0 divide by s (the slow pairs)."),
            (dict(swap=True), "you swapped beta_fast and beta_slow: the low end comes from beta_fast (many turns), the high end from beta_slow."),
            (dict(turns=True), "your ramp is linear in the number of turns r (the YaRN paper's gamma, section 3.2); the authors' code and transformers make it linear in the pair index between i(beta_fast) and i(beta_slow). Use that form here."),
            (dict(clamp_pairs=True), "you capped the high end at the last pair, D/2 - 1; the reference code and transformers cap it at D - 1 (sic), which makes the ramp shallower when even the slowest pair turns more than once over L. Use D - 1 here."),
            (dict(turns=True, reverse=True), "your ramp is linear in the number of turns r, and reversed; use the pair-index form, with 1 for the fast pairs."),
            (dict(truncate=False), "the ramp's ends are not rounded: floor the low end i(beta_fast) and ceil the high end i(beta_slow), as the reference code does."),
            (dict(two_pi=False), "you counted turns as L * theta_i, leaving out the 2 pi: a pair turns r = L * theta_i / (2 pi) times over L."),
            (dict(pairs_for_d=True), "your pair index of a number of turns uses D/2 where D belongs: i(beta) = D * ln(L / (2 pi beta)) / (2 ln base)."),
            (dict(reverse=True, truncate=False), "your ramp is reversed and its ends are not rounded."),
            (dict(cap_high=False), "you did not cap the high end: high = min(ceil(i(beta_slow)), D - 1). Here i(beta_slow) lies past D - 1, so the cap changes the ramp."),
            (dict(cap_low=False), "you did not cap the low end at pair 0: low = max(floor(i(beta_fast)), 0). Here i(beta_fast) is negative (even pair 0 turns fewer than beta_fast times)."),
            (dict(clamp=False), "your ramp has values above 1 or below 0: clamp (i - low) / (high - low) to [0, 1] before taking 1 minus it."),
            (dict(first_pair=1), "your pair indices start at 1; pairs count from 0 (i = 0 .. D/2 - 1)."),
            (dict(fast=32.0, slow=1.0), "you used beta_fast = 32 and beta_slow = 1 instead of the `beta_fast` and `beta_slow` given."),
        ]  # fmt: skip
        if low == high:  # the step case: the 0.001 moved to the wrong end
            pairs = torch.arange(d // 2, dtype=F64)  # (D/2,)
            low_bumped = 1 - ((pairs - (low - 0.001)) / 0.001).clamp(0, 1)  # (D/2,)
            if _close(ramp, low_bumped):
                return f"The scale is right, but your ramp is 0 at pair {low}, where low == high: the convention adds 0.001 to high (it does not subtract it from low), so pair {low} keeps 1 and the ramp steps down after it."
        for options, sentence in variants:
            given = {"fast": fast, "slow": slow, **options}
            if _close(ramp, _ramp_variant(d, base, length, **given)):
                return "The scale is right, but " + sentence
        rounded = _rounding(ramp, d, base, length, fast, slow)
        if rounded:
            return "The scale is right, but " + rounded
        return "The scale is right, but the ramp differs: check the pair indices of beta_fast and beta_slow and the direction (1 = keep)."

    def _judge(self, cases, outcomes):
        status, message = super()._judge(cases, outcomes)
        if "ZeroDivisionError" in message:  # plain-float arithmetic on a case with low == high
            case = cases[len(outcomes) - 1]
            low, high = _ends(*case.args[:3], *case.args[4:])
            if low == high:
                message += " " + _STEP_SENTENCE.format(low=low)
        return status, message


def _rounding(ramp, d, base, length, fast, slow) -> str | None:
    """A sentence naming how the ramp's ends were rounded, when the ramp is YaRN's with the ends
    rounded otherwise than (floor, ceil); None when no rounding gives it."""
    ways = {math.floor: "down (floor)", math.ceil: "up (ceil)", round: "to the nearest integer"}
    found = [
        (low, high)
        for low in ways
        for high in ways
        if (low, high) != (math.floor, math.ceil)
        and _close(ramp, _ramp_variant(d, base, length, fast, slow, rounding=(low, high)))
    ]
    if not found:
        return None
    if len(found) == 1:  # the ends tell exactly how: name it
        low, high = found[0]
        said = [f"the low end i(beta_fast) {ways[low]}"] * (low is not math.floor) + [
            f"the high end i(beta_slow) {ways[high]}"
        ] * (high is not math.ceil)
        return f"you rounded {' and '.join(said)}; round the low end down (floor) and the high end up (ceil)."
    low_wrong = all(low is not math.floor for low, _ in found)
    high_wrong = all(high is not math.ceil for _, high in found)
    said = ["the low end i(beta_fast) down (floor)"] * low_wrong + [
        "the high end i(beta_slow) up (ceil)"
    ] * high_wrong
    return f"your ramp's ends are rounded the wrong way: round {' and '.join(said)}."


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    return got.shape == want.shape and bool(((got - want).abs() <= 1e-6).all())


# -- q3: which pairs turn a full circle within L ----------------------------------------------------


def _turn_variant(d, base, length, *, limit_offset=-1, circle=2 * math.pi, power=2.0):
    theta = base ** (-power * torch.arange(d // 2, dtype=F64) / d)  # (P,)
    waves = circle / theta
    return [i for i, w in enumerate(waves.tolist()) if w <= length + limit_offset]


class FullTurnPairs(Question):
    name, function, points, notebook = "q3", "full_turn_pairs", 2, NOTEBOOK
    returns, references = INDEX_LIST, ("posenc_lib.analysis.ch07_scaling.full_turn_pairs",)
    title = "Which RoPE pairs turn a full circle within the training length?"
    hints = (
        "theta_i = base ** (-2i / D) for i = 0 .. D/2 - 1; the wavelength of pair i is 2 pi / theta_i, "
        "the distance over which it turns once.",
        "In a window of L tokens, how far can a key be from its query? Over that largest distance, "
        "has pair i turned a whole circle?",
        "The largest distance is L - 1: pair i qualifies when (L - 1) * theta_i >= 2 pi, i.e. "
        "wavelength <= L - 1. Return the pair indices i (not dims), increasing; it may be empty.",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(32, 10000.0, 64), (32, 10000.0, 63), (128, 10000.0, 4096), (16, 500000.0, 4),
                     (8, 10000.0, 7), (64, 500000.0, 8192), (16, 100.0, 400)]  # fmt: skip
        else:
            generator = _generator(seed, 3)
            specs = []
            for _ in range(3):
                d = _pick([16, 32, 64, 96, 128, 256], generator)
                base = _pick([100.0, 10000.0, 500000.0, 1e6], generator)
                length = int(torch.randint(8, 40000, (1,), generator=generator))
                specs.append((d, base, length))
            # and, in every draw, one on the edge: L - 1 just below a wavelength, L itself just
            # above it; one where every pair turns (even the last, with a base other than 10000);
            # and one where none does (L - 1 < 2 pi, the wavelength of pair 0)
            d, base = 32, 10000.0
            wave = float(wavelengths(d, base)[1 + seed % 3])
            specs.append((d, base, math.ceil(wave)))
            d, base = _pick([8, 16, 24], generator), _pick([100.0, 300.0, 1000.0], generator)
            slowest = float(wavelengths(d, base)[-1])
            specs.append((d, base, math.ceil(slowest) + int(torch.randint(2, 60, (1,), generator=generator))))  # fmt: skip
            specs.append((_pick([16, 64, 128], generator), _pick([100.0, 500000.0], generator),
                          int(torch.randint(2, 7, (1,), generator=generator))))  # fmt: skip
        return [Case(s, f"head_dim = {s[0]}, base = {s[1]:g}, train_len = {s[2]}") for s in specs]

    def diagnose(self, case, value):
        d, base, length = case.args
        got, problem = as_index_list(value, "Your answer")
        if problem:
            return problem
        want = full_turn_pairs(d, base, length)
        if got == want:
            return None
        if any(i < 0 or i >= d for i in got):
            return f"Pair indices run from 0 to D/2 - 1 = {d // 2 - 1}; some of yours are outside that range."
        complement = [i for i in range(d // 2) if i not in want]
        mistakes = [
            (sorted(set(want) | {0}), "pair 0 does not always qualify: its wavelength is 2 pi (about 6.3 positions), so with L - 1 below that not even pair 0 turns a full circle."),
            (_turn_variant(d, base, length, limit_offset=0), "your limit is off by one: in a window of L tokens the largest query-key distance is L - 1, so a pair turns a full circle when its wavelength is at most L - 1."),
            (complement, "you returned the pairs that do *not* turn a full circle; the question asks for those that do (short wavelengths)."),
            (_turn_variant(d, base, length, circle=1.0), "you compared 1 / theta_i with L - 1; the wavelength is 2 pi / theta_i, the distance of one full turn."),
            (_turn_variant(d, base, length, power=1.0), "your frequencies are base ** (-i / D); RoPE's are base ** (-2i / D), i = 0 .. D/2 - 1."),
            ([i + 1 for i in want], "your indices start at 1; pairs count from 0."),
            (sorted(want + [i + d // 2 for i in want]), "you listed dims (i and i + D/2); list each pair once, by its index i."),
            (sorted([2 * i for i in want] + [2 * i + 1 for i in want]), "you listed dims (2i and 2i + 1); list each pair once, by its index i."),
            ([i for i, t in enumerate(frequencies(d, base).tolist()) if t <= length - 1], "you compared the frequency theta_i with L - 1; compare the wavelength 2 pi / theta_i."),
            ([i for i in want if i < d // 2 - 1], "you never looked at the last pair, D/2 - 1: check every pair, i = 0 .. D/2 - 1."),
            (full_turn_pairs(d, 10000.0, length) if base != 10000.0 else None, "you used base 10000 instead of the `base` given."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if got == wrong:
                return "Close, but " + sentence
        extra, missing = len(set(got) - set(want)), len(set(want) - set(got))
        if extra:
            return f"{extra} of your pairs {'does' if extra == 1 else 'do'} not turn a full circle within L - 1 positions."
        return f"You left out {missing} {'pair that turns' if missing == 1 else 'pairs that turn'} a full circle within L - 1 positions."


# -- q4: which pairs meet new scores past L (the measurement) --------------------------------------


def _synthetic_curves(n_heads, d, base, length, n_distances, generator):
    """Position-only score curves Re(z e^(i delta theta)) for random z: (H, P, N) float64."""
    theta = base ** (-2 * torch.arange(d // 2, dtype=F64) / d)  # (P,)
    z = torch.complex(
        torch.randn(n_heads, d // 2, generator=generator, dtype=F64),
        torch.randn(n_heads, d // 2, generator=generator, dtype=F64),
    )  # (H, P)
    delta = torch.arange(n_distances, dtype=F64)
    turn = torch.polar(torch.ones(d // 2, n_distances, dtype=F64), theta[:, None] * delta)
    return (z[..., None] * turn).real  # (H, P, N)


def _edge_curves():
    """A hand-made case, L = 6, tol = 0.25, where each usual mistake gives its own list: (2, 16, 14).

    No curve is zero everywhere (the excess is always a defined share). Pair by pair:
    0 swings between the same two values throughout;
    1 reaches a new high only at distance L itself (share 0.5);
    2 makes new lows only (share 1.25);
    3 makes a new low, -0.9, whose |value| stays below the largest seen, 1 (share 0.7);
    4 leaves its range in head 0 only, by share 0.4 (mean over the heads 0.2);
    5 leaves its range in head 0 only, by share 0.9 (mean 0.45);
    6 goes 0.3 past a range of +-1 (share 0.3 / 1.3 = 0.23: not new; 0.3 of max |seen| would be);
    7 goes 2 past a range of +-10 (share 0.17, but 2 in absolute terms);
    8 goes 0.04 past a narrow range 0.9 .. 1 (share 0.04, but 0.4 of the range seen);
    9 reaches its highest value at distance L - 1, the last one seen, and never again (not new);
    10 goes past its range by a share of exactly tol, 0.25 (not above tol: not new);
    11 goes 0.15 past its range on both sides (share 0.15 each: not new; their sum, 0.3, would be);
    12 leaves its range only at the last distance, 13, past 2L (share 1/3);
    13 leaves its range only at distance 2L = 12, not the last one (share 1/3);
    14 goes 0.5 past its seen high of 1, but its largest |value|, 4, lies before L (share 0.125:
       not new; 0.5 of the largest |value| past L, 1.5, would be 0.33);
    15 goes past its range by a share of 0.254, just above tol (new; rounded to 0.25 it is not).
    """
    swing = torch.tensor([1.0, -1.0] * 7, dtype=F64)  # (14,)
    curves = swing.repeat(2, 16, 1)  # (2, 16, 14): every curve starts as the swing of pair 0
    curves[:, 1] = torch.tensor([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 1.0] + [0.25] * 7)
    curves[:, 2] = torch.tensor([0.5] * 6 + [0.5, 0.0, -0.5, -1.0, -1.5, -2.0, -2.0, -2.0])
    curves[:, 3] = torch.tensor([1.0, -0.2] * 3 + [1.0, -0.9] * 4)
    curves[0, 4, 9] = 5 / 3  # share (5/3 - 1) / (5/3) = 0.4
    curves[0, 5, 9] = 10.0  # share 0.9
    curves[:, 6, 9] = 1.3
    curves[:, 7] = 10 * swing
    curves[:, 7, 9] = 12.0
    curves[:, 8] = torch.tensor([0.9, 1.0] * 7)
    curves[:, 8, 9] = 1.04
    curves[:, 9] = torch.tensor([0.0, 0.1, 0.2, 0.3, 0.4, 1.0] + [0.5] * 8)
    curves[:, 10] = torch.tensor([0.75, -0.5] * 3 + [1.0, -0.5] * 4)  # 0.25 / 1.0, exact in binary
    curves[:, 11] = torch.tensor([0.85, -0.85] * 3 + [1.0, -1.0] * 4)
    curves[:, 12, 13] = 1.5  # share 0.5 / 1.5
    curves[:, 13, 12] = 1.5
    curves[:, 14] = torch.tensor([-4.0, 1.0, -1.0, 1.0, -1.0, 1.0] + [1.5, -1.0] * 4)
    curves[:, 15] = torch.tensor([0.746, -1.0] * 3 + [1.0, -1.0] * 4)  # share 0.254 of size 1
    return curves


def _partial_excess(curves, length, stop):
    """The excess (H, P) when only distances L .. stop - 1 are taken as new."""
    seen, new = curves[..., :length], curves[..., length:stop]
    above = (new.amax(-1) - seen.amax(-1)).clamp_min(0)
    below = (seen.amin(-1) - new.amin(-1)).clamp_min(0)
    return torch.maximum(above, below)


class NewScorePairs(Question):
    name, function, points, notebook = "q4", "new_score_pairs", 3, NOTEBOOK
    returns = INDEX_LIST
    references = (
        "posenc_lib.analysis.ch07_extrapolation.new_score_pairs",
        "posenc_lib.analysis.ch07_extrapolation.score_excess",
    )
    title = "Which pairs' score curves reach values past L that they never reached in training"
    hints = (
        "curves[h, i, delta] is head h's position-only score for pair i at distance delta. The "
        "training distances are 0 .. L - 1: curves[..., :L]; the new ones are curves[..., L:].",
        "For each head and pair: excess = the larger of (max over new - max over seen) and "
        "(min over seen - min over new), clamped at 0, divided by the largest |value| of the whole "
        "curve (seen and new distances together). Compare values, not |values|: a new low counts.",
        "A pair counts if its excess is above tol in at least one head (.any over the heads). "
        "Return the pair indices in increasing order.",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(4, 32, 10000.0, 64, 512, 0.01), (2, 16, 100.0, 16, 64, 0.05),
                     (3, 64, 10000.0, 128, 1024, 0.01)]  # fmt: skip
        else:
            generator = _generator(seed, 4)
            specs = []
            for _ in range(3):
                d = _pick([16, 32, 64, 128], generator)
                length = _pick([32, 64, 128], generator)
                specs.append(
                    (
                        int(torch.randint(2, 7, (1,), generator=generator)),
                        d,
                        _pick([100.0, 10000.0, 500000.0], generator),
                        length,
                        length * _pick([4, 8], generator),
                        _pick([0.01, 0.02, 0.05], generator),
                    )
                )
        generator = _generator(seed, 14)
        # The hand-made case first: on it every usual mistake gives a list of its own.
        cases = [Case((_edge_curves(), 6, 0.25), HAND_MADE)]
        for heads, d, base, length, n, tol in specs:
            curves = _synthetic_curves(heads, d, base, length, n, generator)
            cases.append(
                Case(
                    (curves, length, tol),
                    f"curves of shape {(heads, d // 2, n)} (head_dim {d}, base {base:g}), "
                    f"train_len = {length}, tol = {tol:g}",
                )
            )
        return cases

    def diagnose(self, case, value):
        curves, length, tol = case.args
        n_heads, n_pairs, _ = curves.shape
        got, problem = as_index_list(value, "Your answer")
        if problem:
            return problem
        want = new_score_pairs(curves, length, tol)
        if got == want:
            return None
        if any(i < 0 or i >= n_pairs for i in got):
            if all(0 <= i < n_heads for i in got):
                return "Return pair indices (the second axis of curves), not heads."
            return (
                f"Pair indices run from 0 to {n_pairs - 1}; some of yours are outside that range."
            )
        seen, new = curves[..., :length], curves[..., length:]
        tiny = 1e-300  # no case has a curve that is zero everywhere; this only avoids 0/0
        size = curves.abs().amax(-1).clamp_min(tiny)
        above = (new.amax(-1) - seen.amax(-1)).clamp_min(0)
        below = (seen.amin(-1) - new.amin(-1)).clamp_min(0)
        outward = (new.abs().amax(-1) - seen.abs().amax(-1)).clamp_min(0)

        def pairs(mask):  # (H, P) bool -> pairs where any head is True
            return [int(i) for i in torch.nonzero(mask.any(0)).flatten()]

        excess = torch.maximum(above, below)
        mean_share = (excess / size).mean(0)  # (P,)
        mistakes = [
            (new_score_pairs(curves, length + 1, tol), "your training distances are off by one: they are 0 .. L - 1 (curves[..., :L]); distance L is already new."),
            (pairs(above / size > tol), "you looked only for new highs; a score below the lowest one seen in training is new too."),
            (pairs(below / size > tol), "you looked only for new lows; a score above the highest one seen in training is new too."),
            (pairs(excess > tol), "you compared the excess itself with tol; divide it by the curve's largest |value| first, so that tol is a share."),
            (pairs(excess / (seen.amax(-1) - seen.amin(-1)).clamp_min(1e-300) > tol), "you divided by the range seen in training; divide by the curve's largest |value| over all distances."),
            ([int(i) for i in torch.nonzero((score_excess(curves, length) > tol).all(0)).flatten()], "you kept the pairs that leave their range in every head; one head is enough (.any over the heads)."),
            ([int(i) for i in torch.nonzero(mean_share > tol).flatten()], "you averaged the excess over the heads; a pair counts if its excess is above tol in at least one head (.any, or .amax over the heads)."),
            (pairs(outward / size > tol), "you compared |values|: a new low such as -0.9 is new when the lowest score seen was -0.2, even if some seen score, 1.0, is larger in size. Compare the highs and the lows themselves."),
            (pairs(excess / seen.abs().amax(-1).clamp_min(tiny) > tol), "you divided by the largest |value| seen in training; divide by the largest |value| of the whole curve, the new distances included."),
            (pairs(excess / new.abs().amax(-1).clamp_min(tiny) > tol), "you divided by the largest |value| past L; divide by the largest |value| of the whole curve, the training distances included (a curve's largest value may lie before L)."),
            (pairs((excess / size).round(decimals=2) > tol), "you rounded the excess before comparing it with tol; an excess of 0.254 is above 0.25: compare the exact share."),
            ([i for i in range(n_pairs) if i not in want], "you returned the pairs that stay inside their training range; the question asks for those that leave it."),
            ([int(h) for h in torch.nonzero((excess / size > tol).any(1)).flatten()], "you returned the heads that have a pair leaving its range; return the pairs (the second axis of curves)."),
            (new_score_pairs(curves, length - 1, tol), "your training distances stop at L - 2: they are 0 .. L - 1 (curves[..., :L]), so distance L - 1 was seen in training and is not new."),
            (pairs(excess / size >= tol), "a pair whose excess equals tol exactly does not count: the excess must be above tol (>, not >=)."),
            (pairs((above + below) / size > tol), "you added the excess above and the excess below; the excess is the larger of the two."),
            (pairs(_partial_excess(curves, length, 2 * length) / size > tol), "you looked only at the distances L .. 2L - 1; the new distances run from L to the last one, curves[..., L:]."),
            (pairs(_partial_excess(curves, length, curves.shape[-1] - 1) / size > tol), "you left out the last distance; the new distances run from L to the last one, curves[..., L:]."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if got == wrong:
                return "Close, but " + sentence
        extra, missing = len(set(got) - set(want)), len(set(want) - set(got))
        if extra:
            return f"{extra} of your pairs {'stays' if extra == 1 else 'stay'} within tol of the range seen in training in every head."
        return f"You left out {missing} {'pair that leaves' if missing == 1 else 'pairs that leave'} the training range by more than tol in some head."


q1, q2, q3, q4 = NtkBase(), YarnRampScale(), FullTurnPairs(), NewScorePairs()
QUESTIONS = (q1, q2, q3, q4)
