"""Chapter 7's exercises: q1, the NTK-aware base; q2, YaRN's ramp and attention scale."""

from __future__ import annotations

import math
import numbers

import torch

from posenc_lib.analysis.ch07_scaling import (
    ntk_base,
    wavelengths,
    yarn_attention_scale,
    yarn_ramp,
)
from posenc_lib.checks import draws
from posenc_lib.checks.answers import (
    FLOAT,
    TENSOR,
    as_number,
    as_tensor,
    close,
    not_finite,
    same_number,
)
from posenc_lib.checks.ch07.setting import F64, NOTEBOOK, RTOL
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.checks.run import RAISED
from posenc_lib.i18n import N_, _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable
from posenc_lib.rope_scaling import yarn_correction_range

# -- q1: the NTK-aware base ---------------------------------------------------------------------------


class NtkBase(Question):
    name, function, points, notebook = "q1", "ntk_base", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "base * s ** (D / (D - 2))",
        "x = D / (D - 2)",
        "factor ** (head_dim / (head_dim - 2))",
        "s ** (-(D - 2) x / D) = 1 / s",
        "D / (D - 2)",
    )
    returns, references = FLOAT, ("posenc_lib.analysis.ch07_scaling.ntk_base",)
    title = N_("The NTK-aware base for a scale factor")
    hints = (
        N_(
            "Write base' = base * s ** x. Then theta'_i = base' ** (-2i / D) = theta_i * s ** (-2 i x / D): "
            "pair 0 keeps its frequency whatever x is."
        ),
        N_(
            "The last pair is i = D/2 - 1, so its frequency is multiplied by s ** (-(D - 2) x / D). "
            "Choose x so that this is exactly 1 / s."
        ),
        N_(
            "Both sides are powers of s, so their exponents must match: -(D - 2) x / D = -1. "
            "Solve that for x."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(10000.0, 4.0, 32), (10000.0, 8.0, 128), (500000.0, 2.0, 64), (100.0, 1.0, 16),
                     (10000.0, 2.5, 96)]  # fmt: skip
        else:
            # Every draw holds a small and a large head_dim, small and large factors, a factor that
            # is not a whole number, and the boundary s = 1; none of the public bases.
            generator = draws.seeded(seed, 1)
            slots = [([2.0, 3.0, 4.0], [16, 48]), ([8.0, 16.0, 32.0], [96, 128, 256]),
                     ([1.5, 2.5, 6.0], [64, 80]), ([1.0], [16, 48, 64, 96, 128, 256]),
                     ([2.0, 3.0, 4.0, 8.0, 16.0, 32.0], [16, 48, 64, 96, 128, 256])]  # fmt: skip
            specs = [
                (
                    draws.pick([500.0, 50000.0, 1e6, 5e6], generator),
                    draws.pick(factors, generator),
                    draws.pick(dims, generator),
                )
                for factors, dims in slots
            ]
        return [Case(s, f"base = {s[0]:g}, factor = {s[1]:g}, head_dim = {s[2]}") for s in specs]

    def diagnose(self, case, value):
        base, s, d = case.args
        got, problem = as_number(value, N_("The new base"))
        if problem:
            return problem
        want = ntk_base(base, s, d)
        if same_number(got, want, rtol=RTOL, atol=0.0, floor=1.0):
            return None
        mistakes = [
            (base * s, N_("you multiplied the base by s alone: then the slowest pair's frequency falls by s ** ((D - 2) / D), a little less than s. Raise s to the power that makes it exactly s.")),
            (base * s ** ((d - 2) / d), N_("your exponent is upside down: with s ** ((D - 2) / D) the slowest pair falls by s ** ((D - 2)**2 / D**2), not s. Redo the step that makes the slowest pair fall by exactly s (the question's derivation).")),
            (base * s ** ((d / 2) / (d / 2 - 2)) if d > 4 else math.nan, N_("you used the number of pairs D/2 in the exponent where the head dimension D belongs (theta_i = base ** (-2i / D), D = head_dim).")),
            (s ** (d / (d - 2)), N_("you returned the factor the base is multiplied by; return the new base itself (base times that factor).")),
            (base / s ** (d / (d - 2)), N_("you divided the base; NTK-aware scaling raises it, so that the frequencies fall.")),
            (base ** (d / (d - 2)) * s, N_("the exponent belongs on s, not on the base: base' = base * s ** x.")),
            (base * s ** (d / (d - 2)) ** 0.5, N_("you took a square root somewhere: with your base the slowest pair falls by sqrt(s), not s.")),
            (10000.0 * s ** (d / (d - 2)) if base != 10000.0 else math.nan, N_("you used base 10000 instead of the `base` given.")),
            (base * s ** (128 / 126) if d != 128 else math.nan, N_("you used head_dim 128 instead of the `head_dim` given: the exponent depends on it.")),
        ]  # fmt: skip
        named = named_mistake(
            mistakes,
            lambda wrong: (
                math.isfinite(wrong) and same_number(got, wrong, rtol=RTOL, atol=0.0, floor=1.0)
            ),
        )
        if named:
            return named
        return _(
            "Your base is not the one asked for: with it, check that pair 0 keeps theta_0 = 1 and that the slowest pair's frequency falls by exactly s."
        )


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
    low, high = yarn_correction_range(d, base, length, fast, slow)
    return int(low), int(high)


def _step_case(generator) -> tuple:
    """A YaRN case where low == high (= 0): L is at most 2 pi beta_slow, so even pair 0 turns fewer
    than beta_slow times, i(beta_slow) lies in (-1, 0] and both ends land on pair 0. Only the rule
    "if low == high, add 0.001 to high" keeps (i - low) / (high - low) from dividing by zero."""
    d = draws.pick([16, 64, 128], generator)
    base = draws.pick([1000.0, 500000.0], generator)
    slow = draws.pick([2.0, 3.0], generator)
    return (d, base, math.floor(2 * math.pi * slow), draws.pick([2.0, 4.0], generator), 32.0, slow)


def _clamp_case(generator) -> tuple:
    """A YaRN case where the high end lands past the last pair, so that the cap at D - 1 (not
    D/2 - 1) shapes the ramp: L is a few turns of the slowest pair."""
    d = draws.pick([16, 32, 64], generator)
    base = draws.pick([50.0, 200.0, 1000.0], generator)
    slowest = float(wavelengths(d, base)[-1])
    turns = draws.pick(
        [2, 3, 4, 6], generator
    )  # < beta_fast = 32: the low end stays below the last pair
    return (d, base, math.ceil(turns * slowest), draws.pick([2.0, 4.0, 8.0], generator), 32.0, 1.0)


def _cap_case(generator) -> tuple:
    """A YaRN case where i(beta_slow) lies past D - 1, so that the cap high = min(high, D - 1)
    itself shapes the ramp, while the low end stays below the last pair. The two conditions leave a
    range of L exactly when beta_fast / beta_slow > base: ln L must lie between
    ln(2 pi beta_slow) + (D - 1) 2 ln(base) / D and ln(2 pi beta_fast) + (D/2 - 1) 2 ln(base) / D.
    The factor is 1 (the boundary of the scale's rule)."""
    d = draws.pick([8, 16, 32, 64], generator)
    base, fast = draws.pick([(10.0, 32.0), (8.0, 32.0), (20.0, 64.0), (16.0, 64.0)], generator)
    lowest = math.log(2 * math.pi) + (d - 1) * 2 * math.log(base) / d
    highest = math.log(2 * math.pi * fast) + (d / 2 - 1) * 2 * math.log(base) / d
    share = float(torch.rand(1, generator=generator)) * 0.5 + 0.25  # in the middle half
    return (d, base, round(math.exp(lowest + share * (highest - lowest))), 1.0, fast, 1.0)


def _rounding_case(generator) -> tuple:
    """A YaRN case whose ramp lies inside the pairs (1 <= low, high <= D/2 - 2), with
    i(beta_fast) = low + (more than a half) and i(beta_slow) = high - (more than a half): rounding
    both ends to the nearest integer, or flooring or ceiling both, moves an end. beta_fast and
    beta_slow are not the defaults, and the factor is below 1 (the scale is then 1)."""
    for _attempt in range(1000):
        d = draws.pick([64, 96, 128, 256], generator)
        base = draws.pick([10000.0, 500000.0], generator)
        fast, slow = draws.pick([(16.0, 2.0), (64.0, 2.0), (16.0, 0.5), (64.0, 4.0)], generator)
        per_unit = d / (2 * math.log(base))  # pair index per unit of ln L
        width = per_unit * math.log(fast / slow)  # i(beta_slow) - i(beta_fast)
        low = draws.randint(1, max(2, d // 2 - 3 - math.ceil(width)), generator)
        part = 0.55 + 0.4 * float(torch.rand(1, generator=generator))
        length = round(2 * math.pi * fast * math.exp((low + part) / per_unit))
        at_fast = per_unit * math.log(length / (2 * math.pi * fast))
        at_slow = per_unit * math.log(length / (2 * math.pi * slow))
        inside = 1 <= math.floor(at_fast) and math.ceil(at_slow) <= d // 2 - 2
        if inside and 0.55 < at_fast % 1 < 0.95 and 0.05 < at_slow % 1 < 0.45:
            return (d, base, length, draws.pick([0.25, 0.5, 0.8], generator), fast, slow)
    raise RuntimeError("no rounding case found")  # pragma: no cover - the search always succeeds


_STEP_SENTENCE = N_(
    "Here both ends of the ramp land on pair {low} (low == high), so (i - low) / (high - low) "
    "divides by zero. Follow the convention: if low == high, add 0.001 to high (the ramp becomes "
    "a step)."
)


class YarnRampScale(Question):
    name, function, points, notebook = "q2", "yarn_ramp_and_scale", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "D * ln(L / (2 pi beta)) / (2 ln base)",
        "0.1 * math.log(factor) + 1.0 if factor > 1",
        "1 - ((pair - low) / (high - low)).clamp(0.0, 1.0)",
        "D - 1",
        "floor the low end",
        "max(floor(i(beta_fast)), 0)",
    )
    returns = (TENSOR, FLOAT)
    references = (
        "posenc_lib.analysis.ch07_scaling.yarn_ramp",
        "posenc_lib.analysis.ch07_scaling.yarn_attention_scale",
    )
    title = N_("YaRN's ramp and its attention scale")
    hints = (
        N_(
            "Pair i turns r_i = L * theta_i / (2 pi) times over L, with theta_i = base ** (-2i / D). "
            "Set r_i = beta, take logs, and solve for i: i(beta) is a real number, not an integer."
        ),
        N_(
            "i(beta) = D * ln(L / (2 pi beta)) / (2 ln base). low = floor(i(beta_fast)), "
            "high = ceil(i(beta_slow)), then low = max(low, 0) and high = min(high, D - 1) (D - 1, as "
            "in the reference code); if low == high add 0.001 to high."
        ),
        N_(
            "ramp_i = 1 - clamp((i - low) / (high - low), 0, 1) for i = 0 .. D/2 - 1, and the scale is "
            "a plain float: 0.1 * ln(s) + 1 for s > 1 (math.log is ln), 1 for s <= 1. "
            "Return (ramp, scale)."
        ),
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
            generator = draws.seeded(seed, 2)
            specs = []
            for _draw in range(3):
                d = draws.pick([32, 64, 96, 128, 256], generator)
                base = draws.pick([10000.0, 100000.0, 500000.0], generator)
                length = draws.pick([256, 1024, 2048, 4096, 8192, 32768], generator)
                factor = draws.pick([2.0, 4.0, 8.0, 16.0, 32.0], generator)
                fast = draws.pick([16.0, 32.0, 64.0], generator)
                specs.append((d, base, length, factor, fast, draws.pick([1.0, 2.0], generator)))
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
            return _("Return two things, (ramp, scale): the (D/2,) ramp and one float.")
        if len(value) != 2:
            return tr("Return exactly two things, (ramp, scale); yours has {n}.", n=len(value))
        ramp_value, scale_value = value
        if isinstance(ramp_value, numbers.Number) and isinstance(scale_value, torch.Tensor):
            return _("You returned (scale, ramp); the order is (ramp, scale).")
        if isinstance(ramp_value, torch.Tensor) and ramp_value.numel() == d:
            return tr(
                "Your ramp has {d} values, one per dim; give one per pair: D/2 = {pairs}.",
                d=d,
                pairs=d // 2,
            )
        low, high = _ends(d, base, length, fast, slow)
        if low == high and not_finite(ramp_value):
            return tr(
                "Your ramp has NaN or infinite values. {step}",
                step=translate(_STEP_SENTENCE).format(low=low),
            )
        ramp, problem = as_tensor(ramp_value, N_("The ramp"), (d // 2,))
        if problem:
            return problem
        scale, problem = as_number(scale_value, N_("The attention scale"))
        if problem:
            return problem
        want_scale = yarn_attention_scale(s)
        if not same_number(scale, want_scale, rtol=RTOL, atol=0.0, floor=1.0):
            ln = math.log(s)
            if s < 1 and same_number(scale, 0.1 * ln + 1, rtol=RTOL, atol=0.0, floor=1.0):
                return _(
                    "The ramp may be fine, but here the factor is below 1: YaRN's attention scale "
                    "0.1 ln(s) + 1 applies only when s > 1; otherwise the scale is 1 (no sharpening)."
                )
            mistakes = [
                (ln, N_("your scale is ln(s); YaRN's attention scale sqrt(1/t) is 0.1 ln(s) + 1.")),
                (0.1 * ln, N_("your scale is 0.1 ln(s): add 1, so that s = 1 gives 1 (no change).")),
                ((0.1 * ln + 1) ** 2, N_("(0.1 ln s + 1)^2 = 1/t is what the logits end up multiplied by, since q and k are both scaled; return the scale of one vector, sqrt(1/t) = 0.1 ln(s) + 1.")),
                (math.sqrt(0.1 * ln + 1), N_("you took the square root: 0.1 ln(s) + 1 is already sqrt(1/t), the scale of q and of k.")),
                (1 / (0.1 * ln + 1), N_("you returned the inverse, sqrt(t): the scale is sqrt(1/t) = 0.1 ln(s) + 1, above 1 (t is below 1), which sharpens attention.")),
                (1 / (0.1 * ln + 1) ** 2, N_("you returned the temperature t itself; the question asks for the scale of q and k, sqrt(1/t) = 0.1 ln(s) + 1.")),
                (0.1 * math.log2(s) + 1, N_("you used log base 2; YaRN's 0.1 ln(s) + 1 uses the natural log (math.log).")),
                (0.1 * math.log10(s) + 1, N_("you used log base 10; YaRN's 0.1 ln(s) + 1 uses the natural log (math.log).")),
                (0.1 * math.log(1 / s) + 1, N_("you used ln(1/s); with s > 1 the scale should be above 1: 0.1 ln(s) + 1.")),
            ]  # fmt: skip
            named = named_mistake(
                mistakes,
                lambda wrong: same_number(scale, wrong, rtol=RTOL, atol=0.0, floor=1.0),
                lead=N_("The ramp may be fine, but "),
            )
            if named:
                return named
            return _("Your scale differs from YaRN's sqrt(1/t) = 0.1 ln(s) + 1.")
        want = yarn_ramp(d, base, length, fast, slow)
        if close(ramp, want, rtol=0.0, atol=1e-6):
            return None
        variants = [
            (dict(reverse=True), N_("your ramp is reversed: 1 must mean keep (the fast pairs, low index, which turn more than beta_fast times) and 0 divide by s (the slow pairs).")),
            (dict(swap=True), N_("you swapped beta_fast and beta_slow: the low end comes from beta_fast (many turns), the high end from beta_slow.")),
            (dict(turns=True), N_("your ramp is linear in the number of turns r (the YaRN paper's gamma, section 3.2); the authors' code and transformers make it linear in the pair index between i(beta_fast) and i(beta_slow). Use that form here.")),
            (dict(clamp_pairs=True), N_("you capped the high end at the last pair, D/2 - 1; the question's cap is the reference code's (and transformers'), not the last pair, and it makes the ramp shallower when even the slowest pair turns more than once over L: re-read the question's cap on the high end.")),
            (dict(turns=True, reverse=True), N_("your ramp is linear in the number of turns r, and reversed; use the pair-index form, with 1 for the fast pairs.")),
            (dict(truncate=False), N_("the ramp's ends are not whole pair numbers: re-read how the question (after the reference code) rounds the low end i(beta_fast) and the high end i(beta_slow).")),
            (dict(two_pi=False), N_("you counted turns as L * theta_i, leaving out the 2 pi: a pair turns r = L * theta_i / (2 pi) times over L.")),
            (dict(pairs_for_d=True), N_("your pair index of a number of turns uses D/2 where D belongs: redo the solving of r_i = beta for i with theta_i = base ** (-2i / D).")),
            (dict(reverse=True, truncate=False), N_("your ramp is reversed and its ends are not rounded.")),
            (dict(cap_high=False), N_("you did not cap the high end: here i(beta_slow) lies past the question's cap, so the cap changes the ramp.")),
            (dict(cap_low=False), N_("you did not cap the low end: here i(beta_fast) is negative (even pair 0 turns fewer than beta_fast times), and no ramp starts before pair 0.")),
            (dict(clamp=False), N_("your ramp has values above 1 or below 0: clamp (i - low) / (high - low) to [0, 1] before taking 1 minus it.")),
            (dict(first_pair=1), N_("your pair indices start at 1; pairs count from 0 (i = 0 .. D/2 - 1).")),
            (dict(fast=32.0, slow=1.0), N_("you used beta_fast = 32 and beta_slow = 1 instead of the `beta_fast` and `beta_slow` given.")),
        ]  # fmt: skip
        if low == high:  # the step case: the 0.001 moved to the wrong end
            pairs = torch.arange(d // 2, dtype=F64)  # (D/2,)
            low_bumped = 1 - ((pairs - (low - 0.001)) / 0.001).clamp(0, 1)  # (D/2,)
            if close(ramp, low_bumped, rtol=0.0, atol=1e-6):
                return tr(
                    "The scale is right, but your ramp is 0 at pair {low}, where low == high: the convention adds 0.001 to high (it does not subtract it from low), so pair {low} keeps 1 and the ramp steps down after it.",
                    low=low,
                )
        for options, sentence in variants:
            given = {"fast": fast, "slow": slow, **options}
            if close(ramp, _ramp_variant(d, base, length, **given), rtol=0.0, atol=1e-6):
                return tr("The scale is right, but {sentence}", sentence=translate(sentence))
        rounded = _rounding(ramp, d, base, length, fast, slow)
        if rounded:
            return tr("The scale is right, but {sentence}", sentence=rounded)
        return _(
            "The scale is right, but the ramp differs: check the pair indices of beta_fast and "
            "beta_slow and the direction (1 = keep)."
        )

    def _judge(self, cases, outcomes):
        status, message = super()._judge(cases, outcomes)
        last = outcomes[-1] if outcomes else None
        raised = last is not None and last.kind == RAISED and "ZeroDivisionError" in str(last.error)
        if raised:  # plain-float arithmetic on a case with low == high
            case = cases[len(outcomes) - 1]
            low, high = _ends(*case.args[:3], *case.args[4:])
            if low == high:
                message += " " + translate(_STEP_SENTENCE).format(low=low)
        return status, message


def _rounding(ramp, d, base, length, fast, slow) -> str | None:
    """A sentence naming how the ramp's ends were rounded, when the ramp is YaRN's with the ends
    rounded otherwise than (floor, ceil); None when no rounding gives it."""
    ways = {
        math.floor: N_("down (floor)"),
        math.ceil: N_("up (ceil)"),
        round: N_("to the nearest integer"),
    }
    found = [
        (low, high)
        for low in ways
        for high in ways
        if (low, high) != (math.floor, math.ceil)
        and close(
            ramp,
            _ramp_variant(d, base, length, fast, slow, rounding=(low, high)),
            rtol=0.0,
            atol=1e-6,
        )
    ]
    if not found:
        return None
    if len(found) == 1:  # the ends tell exactly how: name it
        low, high = found[0]
        said = [tr("the low end i(beta_fast) {way}", way=translate(ways[low]))] * (
            low is not math.floor
        ) + [tr("the high end i(beta_slow) {way}", way=translate(ways[high]))] * (
            high is not math.ceil
        )
        return tr(
            "you rounded {what}; round the low end down (floor) and the high end up (ceil).",
            what=_both(said),
        )
    low_wrong = all(low is not math.floor for low, _ in found)
    high_wrong = all(high is not math.ceil for _, high in found)
    said = [_("the low end i(beta_fast) down (floor)")] * low_wrong + [
        _("the high end i(beta_slow) up (ceil)")
    ] * high_wrong
    return tr("your ramp's ends are rounded the wrong way: round {what}.", what=_both(said))


def _both(parts: list[str]) -> str:
    """One part, or two joined by "and" in the language in use."""
    if len(parts) == 2:
        return tr("{first} and {second}", first=parts[0], second=parts[1])
    return " and ".join(parts)
