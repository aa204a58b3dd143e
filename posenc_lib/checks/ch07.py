"""Chapter 7's exercises: the NTK-aware base, YaRN's ramp and temperature, which RoPE pairs turn a
full circle within the training length, and which pairs a trained model sees new scores on.

    from posenc_lib.checks.ch07 import q1, q2, q3, q4
    q1.check(ntk_base); q1.hint(); q1.solution()

The references are the library's (``scaling_demo.ntk_base``, ``yarn_ramp``, ``yarn_temperature``,
``full_turn_pairs``; ``extrapolation_demo.new_score_pairs``); each usual mistake is recomputed
and, when the learner's answer matches it, named.
"""

from __future__ import annotations

import math
import numbers

import numpy as np
import torch

from ..extrapolation_demo import new_score_pairs, score_excess
from ..scaling_demo import (
    frequencies,
    full_turn_pairs,
    ntk_base,
    wavelengths,
    yarn_ramp,
    yarn_temperature,
)
from . import Case, Question, TooMany, as_number, as_tensor

NOTEBOOK = "07_extrapolation.ipynb"
F64 = torch.float64


def _generator(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 7919 + salt)


def _pick(options, generator):
    return options[int(torch.randint(0, len(options), (1,), generator=generator))]


def _same(got: float, want: float, rtol: float = 1e-9) -> bool:
    return abs(got - want) <= rtol * max(1.0, abs(want))


def _index_list(value, what: str):
    """(sorted list of ints, None) or (None, a sentence) for a returned collection of indices."""
    if isinstance(value, TooMany):
        return None, f"Return a list of {what}; your function returned an endless iterator."
    if isinstance(value, (torch.Tensor, np.ndarray)):
        value = value.flatten().tolist()
    if isinstance(value, bool) or isinstance(value, numbers.Number):
        return None, (
            f"Return the list of {what} themselves (e.g. [0, 1, 2]), not one number such as how "
            "many there are."
        )
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        return None, f"Return a list of {what} (ints), not {type(value).__name__}."
    got = list(value)
    if got and all(isinstance(v, bool) for v in got):
        return None, (
            f"You returned a True/False mask; return the {what} themselves, e.g. "
            "[i for i in range(P) if ...]."
        )
    if not all(isinstance(v, numbers.Integral) for v in got):
        return None, f"Every entry should be one of the {what}: a plain int."
    if len(set(got)) != len(got):
        return None, f"Some {what} appear twice in your list; list each once."
    return sorted(int(v) for v in got), None


# -- q1: the NTK-aware base ---------------------------------------------------------------------------


class NtkBase(Question):
    name, function, points, notebook = "q1", "ntk_base", 2, NOTEBOOK
    title = "The NTK-aware base for a scale factor"
    hints = (
        "NTK-aware scaling changes only the base: base' = base * s ** (D / (D - 2)), D = head_dim.",
        "Check: with base', pair 0 keeps theta_0 = 1 and the last pair (i = D/2 - 1) is divided by "
        "exactly s. Return one float.",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(10000.0, 4.0, 32), (10000.0, 8.0, 128), (500000.0, 2.0, 64), (100.0, 1.0, 16)]
        else:
            generator = _generator(seed, 1)
            specs = [
                (
                    _pick([500.0, 50000.0, 1e6, 5e6], generator),  # none of the public bases
                    _pick([2.0, 3.0, 4.0, 8.0, 16.0, 32.0], generator),
                    _pick([16, 48, 64, 96, 128, 256], generator),
                )
                for _ in range(5)
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
            (base * s, "you multiplied the base by s alone. The exponent D / (D - 2) is what makes the slowest pair's frequency fall by exactly s: base * s ** (D / (D - 2))."),
            (base * s ** ((d - 2) / d), "your exponent is upside down: (D - 2) / D instead of D / (D - 2)."),
            (base * s ** ((d / 2) / (d / 2 - 2)) if d > 4 else math.nan, "you used the number of pairs D/2 in the exponent; it is D / (D - 2) with D = head_dim."),
            (s ** (d / (d - 2)), "you returned s ** (D / (D - 2)), the factor the base is multiplied by; return the new base itself."),
            (base / s ** (d / (d - 2)), "you divided the base; NTK-aware scaling raises it, so that the frequencies fall."),
            (base ** (d / (d - 2)) * s, "the exponent D / (D - 2) belongs on s, not on the base."),
            (base * s ** (d / (d - 2)) ** 0.5, "you took a square root somewhere: base' = base * s ** (D / (D - 2))."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if math.isfinite(wrong) and _same(got, wrong):
                return "Close, but " + sentence
        return "Your base differs from base * s ** (D / (D - 2)); check that the lowest pair's frequency falls by exactly s."


# -- q2: YaRN's ramp and temperature ----------------------------------------------------------------


def _ramp_variant(d, base, length, fast, slow, *, truncate=True, turns=False, reverse=False,
                  two_pi=True, pairs_for_d=False, swap=False):  # fmt: skip
    """YaRN's ramp (P,) float64, or one of its usual wrong variants."""
    if swap:
        fast, slow = slow, fast
    if turns:  # the paper's eq. 18: linear in r = L / lambda, gamma = (r - alpha) / (beta - alpha)
        r = length / wavelengths(d, base)  # (P,)
        keep = ((r - slow) / (fast - slow)).clamp(0.0, 1.0) if fast != slow else (r > fast) * 1.0
        return (1 - keep if reverse else keep).to(F64)
    size = d / 2 if pairs_for_d else d
    circle = 2 * math.pi if two_pi else 1.0

    def pair_index(n_turns):
        return size * math.log(length / (n_turns * circle)) / (2 * math.log(base))

    low, high = pair_index(fast), pair_index(slow)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001
    pair = torch.arange(d // 2, dtype=F64)
    ramp = 1 - ((pair - low) / (high - low)).clamp(0.0, 1.0)
    return 1 - ramp if reverse else ramp


class YarnRampTemperature(Question):
    name, function, points, notebook = "q2", "yarn_ramp_temperature", 3, NOTEBOOK
    title = "YaRN's ramp and its attention temperature"
    hints = (
        "Turns over the training length: r = L * theta_i / (2 pi). Solve r = beta for the pair index: "
        "i(beta) = D * ln(L / (2 pi beta)) / (2 ln base).",
        "low = floor(i(beta_fast)), high = ceil(i(beta_slow)), then low = max(low, 0) and "
        "high = min(high, D - 1); if low == high add 0.001 to high. "
        "ramp_i = 1 - clamp((i - low) / (high - low), 0, 1) for i = 0 .. D/2 - 1: 1 keeps, 0 divides by s.",
        "The temperature is a plain float: 0.1 * ln(s) + 1 for s > 1 (math.log is ln), and 1 for "
        "s <= 1. Return (ramp, temperature).",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [
                (32, 10000.0, 64, 4.0, 32.0, 1.0),
                (128, 10000.0, 4096, 16.0, 32.0, 1.0),
                (64, 500000.0, 8192, 8.0, 32.0, 1.0),
                (128, 10000.0, 2048, 2.0, 16.0, 2.0),
            ]
        else:
            generator = _generator(seed, 2)
            specs = []
            for _ in range(5):
                d = _pick([32, 64, 96, 128, 256], generator)
                base = _pick([10000.0, 100000.0, 500000.0], generator)
                length = _pick([256, 1024, 2048, 4096, 8192, 32768], generator)
                factor = _pick([2.0, 4.0, 8.0, 16.0, 32.0], generator)
                fast = _pick([16.0, 32.0, 64.0], generator)
                specs.append((d, base, length, factor, fast, _pick([1.0, 2.0], generator)))
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
            return "Return two things, (ramp, temperature): the (D/2,) ramp and one float."
        if len(value) != 2:
            return f"Return exactly two things, (ramp, temperature); yours has {len(value)}."
        ramp_value, temp_value = value
        if isinstance(ramp_value, numbers.Number) and isinstance(temp_value, torch.Tensor):
            return "You returned (temperature, ramp); the order is (ramp, temperature)."
        if isinstance(ramp_value, torch.Tensor) and ramp_value.numel() == d:
            return f"Your ramp has {d} values, one per dim; give one per pair: D/2 = {d // 2}."
        ramp, problem = as_tensor(ramp_value, "The ramp", (d // 2,))
        if problem:
            return problem
        temperature, problem = as_number(temp_value, "The temperature")
        if problem:
            return problem
        want_t = yarn_temperature(s)
        if not _same(temperature, want_t, 1e-7):
            ln = math.log(s)
            mistakes = [
                (ln, "your temperature is ln(s); YaRN's is 0.1 ln(s) + 1."),
                (0.1 * ln, "your temperature is 0.1 ln(s): add 1, so that s = 1 gives 1 (no change)."),
                ((0.1 * ln + 1) ** 2, "(0.1 ln s + 1)^2 is what the logits end up multiplied by, since q and k are both scaled; return the scale of one vector, 0.1 ln(s) + 1."),
                (math.sqrt(0.1 * ln + 1), "you took the square root: 0.1 ln(s) + 1 is already sqrt(1/t), the scale of q and of k."),
                (1 / (0.1 * ln + 1), "you returned the inverse: the scale is 0.1 ln(s) + 1, above 1, which sharpens attention."),
                (0.1 * math.log2(s) + 1, "you used log base 2; YaRN's 0.1 ln(s) + 1 uses the natural log (math.log)."),
                (0.1 * math.log10(s) + 1, "you used log base 10; YaRN's 0.1 ln(s) + 1 uses the natural log (math.log)."),
                (0.1 * math.log(1 / s) + 1, "you used ln(1/s); with s > 1 the temperature should be above 1: 0.1 ln(s) + 1."),
            ]  # fmt: skip
            for wrong, sentence in mistakes:
                if _same(temperature, wrong, 1e-7):
                    return "The ramp may be fine, but " + sentence
            return "Your temperature differs from YaRN's 0.1 ln(s) + 1."
        want = yarn_ramp(d, base, length, fast, slow)
        if _close(ramp, want):
            return None
        variants = [
            (dict(reverse=True), "your ramp is reversed: 1 must mean keep (the fast pairs, low index, which turn more than beta_fast times) and 0 divide by s (the slow pairs)."),
            (dict(swap=True), "you swapped beta_fast and beta_slow: the low end comes from beta_fast (many turns), the high end from beta_slow."),
            (dict(turns=True), "your ramp is linear in the number of turns r (the YaRN paper's eq. 18); the authors' code and transformers make it linear in the pair index between i(beta_fast) and i(beta_slow). Use that form here."),
            (dict(turns=True, reverse=True), "your ramp is linear in the number of turns r, and reversed; use the pair-index form, with 1 for the fast pairs."),
            (dict(truncate=False), "the ramp's ends are not rounded: floor the low end i(beta_fast) and ceil the high end i(beta_slow), as the reference code does."),
            (dict(two_pi=False), "you counted turns as L * theta_i, leaving out the 2 pi: a pair turns r = L * theta_i / (2 pi) times over L."),
            (dict(pairs_for_d=True), "your pair index of a number of turns uses D/2 where D belongs: i(beta) = D * ln(L / (2 pi beta)) / (2 ln base)."),
            (dict(reverse=True, truncate=False), "your ramp is reversed and its ends are not rounded."),
        ]  # fmt: skip
        for options, sentence in variants:
            if _close(ramp, _ramp_variant(d, base, length, fast, slow, **options)):
                return "The temperature is right, but " + sentence
        return "The temperature is right, but the ramp differs: check the pair indices of beta_fast and beta_slow and the direction (1 = keep)."


def _close(got: torch.Tensor, want: torch.Tensor) -> bool:
    return got.shape == want.shape and bool(((got - want).abs() <= 1e-6).all())


# -- q3: which pairs turn a full circle within L ----------------------------------------------------


def _turn_variant(d, base, length, *, limit_offset=-1, circle=2 * math.pi, power=2.0):
    theta = base ** (-power * torch.arange(d // 2, dtype=F64) / d)  # (P,)
    waves = circle / theta
    return [i for i, w in enumerate(waves.tolist()) if w <= length + limit_offset]


class FullTurnPairs(Question):
    name, function, points, notebook = "q3", "full_turn_pairs", 2, NOTEBOOK
    title = "Which RoPE pairs turn a full circle within the training length?"
    hints = (
        "theta_i = base ** (-2i / D) for i = 0 .. D/2 - 1; the wavelength of pair i is 2 pi / theta_i.",
        "In a window of L tokens, the farthest a key can be from its query is L - 1 positions. "
        "Pair i has turned a full circle when (L - 1) * theta_i >= 2 pi.",
        "Return the list of pair indices i (not dims), in increasing order; it may be empty.",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(32, 10000.0, 64), (32, 10000.0, 63), (128, 10000.0, 4096), (8, 10000.0, 7),
                     (64, 500000.0, 8192)]  # fmt: skip
        else:
            generator = _generator(seed, 3)
            specs = []
            for _ in range(5):
                d = _pick([16, 32, 64, 96, 128, 256], generator)
                base = _pick([100.0, 10000.0, 500000.0, 1e6], generator)
                length = int(torch.randint(8, 40000, (1,), generator=generator))
                specs.append((d, base, length))
            # and one on the edge: L - 1 just below a wavelength, L itself just above it
            d, base = 32, 10000.0
            wave = float(wavelengths(d, base)[1 + seed % 3])
            specs.append((d, base, math.ceil(wave)))
        return [Case(s, f"head_dim = {s[0]}, base = {s[1]:g}, train_len = {s[2]}") for s in specs]

    def diagnose(self, case, value):
        d, base, length = case.args
        got, problem = _index_list(value, "pair indices")
        if problem:
            return problem
        want = full_turn_pairs(d, base, length)
        if got == want:
            return None
        if any(i < 0 or i >= d for i in got):
            return f"Pair indices run from 0 to D/2 - 1 = {d // 2 - 1}; some of yours are outside that range."
        complement = [i for i in range(d // 2) if i not in want]
        mistakes = [
            (_turn_variant(d, base, length, limit_offset=0), "your limit is off by one: in a window of L tokens the largest query-key distance is L - 1, so a pair turns a full circle when its wavelength is at most L - 1."),
            (complement, "you returned the pairs that do *not* turn a full circle; the question asks for those that do (short wavelengths)."),
            (_turn_variant(d, base, length, circle=1.0), "you compared 1 / theta_i with L - 1; the wavelength is 2 pi / theta_i, the distance of one full turn."),
            (_turn_variant(d, base, length, power=1.0), "your frequencies are base ** (-i / D); RoPE's are base ** (-2i / D), i = 0 .. D/2 - 1."),
            ([i + 1 for i in want], "your indices start at 1; pairs count from 0."),
            (sorted(want + [i + d // 2 for i in want]), "you listed dims (i and i + D/2); list each pair once, by its index i."),
            (sorted([2 * i for i in want] + [2 * i + 1 for i in want]), "you listed dims (2i and 2i + 1); list each pair once, by its index i."),
            ([i for i, t in enumerate(frequencies(d, base).tolist()) if t <= length - 1], "you compared the frequency theta_i with L - 1; compare the wavelength 2 pi / theta_i."),
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
    """A hand-made case, L = 6: pair 1 leaves its range only at distance L, pair 2 only downwards,
    pair 3 by a little (under tol as a share, over it in absolute terms), pair 4 in head 0 only.
    (2, 5, 12)."""
    curves = torch.zeros(2, 5, 12, dtype=F64)
    curves[:, 0] = torch.tensor([1.0, -1.0] * 6)  # swings between the same values throughout
    curves[:, 1, :6] = torch.linspace(0, 0.5, 6)
    curves[:, 1, 6] = 0.9  # a new high at distance L = 6, then back
    curves[:, 2, :6] = 0.5
    curves[:, 2, 6:] = torch.linspace(0.5, -2.0, 6)  # new lows only
    curves[1, 3] = 30.0 + 0.2 * torch.tensor([0.0, 1, 0, 1, 0, 1, 0, 1.5, 0, 1, 0, 1])
    curves[0, 4] = torch.tensor([0.0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 5, 6])  # head 0 only
    return curves


class NewScorePairs(Question):
    name, function, points, notebook = "q4", "new_score_pairs", 3, NOTEBOOK
    title = "Measure which pairs reach scores past L that they never reached in training"
    hints = (
        "curves[h, i, delta] is head h's position-only score for pair i at distance delta. The "
        "training distances are 0 .. L - 1: curves[..., :L]; the new ones are curves[..., L:].",
        "For each head and pair: excess = the larger of (max over new - max over seen) and "
        "(min over seen - min over new), clamped at 0, divided by the largest |value| of the whole "
        "curve.",
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
                length = _pick([32, 64, 128, 256], generator)
                specs.append(
                    (
                        int(torch.randint(2, 9, (1,), generator=generator)),
                        d,
                        _pick([100.0, 10000.0, 500000.0], generator),
                        length,
                        length * _pick([4, 8, 16], generator),
                        _pick([0.01, 0.02, 0.05], generator),
                    )
                )
        generator = _generator(seed, 14)
        cases = []
        for heads, d, base, length, n, tol in specs:
            curves = _synthetic_curves(heads, d, base, length, n, generator)
            cases.append(
                Case(
                    (curves, length, tol),
                    f"curves of shape {(heads, d // 2, n)} (head_dim {d}, base {base:g}), "
                    f"train_len = {length}, tol = {tol:g}",
                )
            )
        cases.append(Case((_edge_curves(), 6, 0.05), "a hand-made (2, 5, 12) curves, train_len = 6, tol = 0.05"))  # fmt: skip
        return cases

    def diagnose(self, case, value):
        curves, length, tol = case.args
        n_heads, n_pairs, _ = curves.shape
        got, problem = _index_list(value, "pair indices")
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
        size = curves.abs().amax(-1).clamp_min(1e-300)
        above = (new.amax(-1) - seen.amax(-1)).clamp_min(0)
        below = (seen.amin(-1) - new.amin(-1)).clamp_min(0)

        def pairs(mask):  # (H, P) bool -> pairs where any head is True
            return [int(i) for i in torch.nonzero(mask.any(0)).flatten()]

        excess = torch.maximum(above, below)
        mistakes = [
            (new_score_pairs(curves, length + 1, tol), "your training distances are off by one: they are 0 .. L - 1 (curves[..., :L]); distance L is already new."),
            (pairs(above / size > tol), "you looked only for new highs; a score below the lowest one seen in training is new too."),
            (pairs(below / size > tol), "you looked only for new lows; a score above the highest one seen in training is new too."),
            (pairs(excess > tol), "you compared the excess itself with tol; divide it by the curve's largest |value| first, so that tol is a share."),
            (pairs(excess / (seen.amax(-1) - seen.amin(-1)).clamp_min(1e-300) > tol), "you divided by the range seen in training; divide by the curve's largest |value| over all distances."),
            ([int(i) for i in torch.nonzero((score_excess(curves, length) > tol).all(0)).flatten()], "you kept the pairs that leave their range in every head; one head is enough (.any over the heads)."),
            ([i for i in range(n_pairs) if i not in want], "you returned the pairs that stay inside their training range; the question asks for those that leave it."),
            ([int(h) for h in torch.nonzero((excess / size > tol).any(1)).flatten()], "you returned the heads that have a pair leaving its range; return the pairs (the second axis of curves)."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if got == wrong:
                return "Close, but " + sentence
        extra, missing = len(set(got) - set(want)), len(set(want) - set(got))
        if extra:
            return f"{extra} of your pairs {'stays' if extra == 1 else 'stay'} within tol of the range seen in training in every head."
        return f"You left out {missing} {'pair that leaves' if missing == 1 else 'pairs that leave'} the training range by more than tol in some head."


q1, q2, q3, q4 = NtkBase(), YarnRampTemperature(), FullTurnPairs(), NewScorePairs()
QUESTIONS = (q1, q2, q3, q4)
