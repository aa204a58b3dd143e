"""Chapter 7's exercises: q3, which pairs turn a full circle within L; q4, which pairs meet new scores past L (the measurement)."""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch07_extrapolation import new_score_pairs, score_excess
from posenc_lib.analysis.ch07_scaling import (
    frequencies,
    full_turn_pairs,
    wavelengths,
)
from posenc_lib.checks import draws
from posenc_lib.checks.answers import INDEX_LIST, as_index_list
from posenc_lib.checks.ch07.setting import F64, HAND_MADE, NOTEBOOK
from posenc_lib.checks.diagnosis import extra_or_missing, named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr
from posenc_lib.rope_scaling import default_inv_freq


class _PairList(Question):
    """A question whose answer is a list of RoPE pair indices: read it, compare it with the right
    list, name the usual mistake it matches, or else count the pairs too many or left out.

    A subclass gives ``expected(case)`` (the right list, and how many indices it accepts before
    ``outside(case, indices)`` names the ones past them), ``mistakes(case, want)`` (the usual wrong
    lists, each with its sentence), and ``extra(n)`` / ``missing(n)``, the counting sentences.
    """

    returns = INDEX_LIST

    def diagnose(self, case, value):
        want, size = self.expected(case)
        got, problem = as_index_list(
            value, N_("Your answer"), size, lambda indices: self.outside(case, indices)
        )
        if problem:
            return problem
        if got == want:
            return None
        named = named_mistake(self.mistakes(case, want), lambda wrong: got == wrong)
        return named or extra_or_missing(got, want, self.extra, self.missing)


# -- q3: which pairs turn a full circle within L ----------------------------------------------------


def _turn_variant(d, base, length, *, limit_offset=-1, circle=2 * math.pi, power=2.0):
    theta = base ** (-power * torch.arange(d // 2, dtype=F64) / d)  # (P,)
    waves = circle / theta
    return [i for i, w in enumerate(waves.tolist()) if w <= length + limit_offset]


class FullTurnPairs(_PairList):
    name, function, points, notebook = "q3", "full_turn_pairs", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "wavelength <= L - 1",
        "w <= train_len - 1",
        "at most L - 1",
    )
    returns, references = INDEX_LIST, ("posenc_lib.analysis.ch07_scaling.full_turn_pairs",)
    title = N_("Which RoPE pairs turn a full circle within the training length?")
    hints = (
        N_(
            "theta_i = base ** (-2i / D) for i = 0 .. D/2 - 1; the wavelength of pair i is 2 pi / theta_i, "
            "the distance over which it turns once."
        ),
        N_(
            "In a window of L tokens, how far can a key be from its query? Over that largest distance, "
            "has pair i turned a whole circle?"
        ),
        N_(
            "The largest distance is L - 1: pair i qualifies when (L - 1) * theta_i >= 2 pi, i.e. "
            "wavelength <= L - 1. Return the pair indices i (not dims), increasing; it may be empty."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(32, 10000.0, 64), (32, 10000.0, 63), (128, 10000.0, 4096), (16, 500000.0, 4),
                     (8, 10000.0, 7), (64, 500000.0, 8192), (16, 100.0, 400)]  # fmt: skip
        else:
            generator = draws.seeded(seed, 3)
            specs = []
            for _draw in range(3):
                d = draws.pick([16, 32, 64, 96, 128, 256], generator)
                base = draws.pick([100.0, 10000.0, 500000.0, 1e6], generator)
                length = draws.randint(8, 40000, generator)
                specs.append((d, base, length))
            # and, in every draw, one on the edge: L - 1 just below a wavelength, L itself just
            # above it; one where every pair turns (even the last, with a base other than 10000);
            # and one where none does (L - 1 < 2 pi, the wavelength of pair 0)
            d, base = 32, 10000.0
            wave = float(wavelengths(d, base)[1 + seed % 3])
            specs.append((d, base, math.ceil(wave)))
            d, base = (
                draws.pick([8, 16, 24], generator),
                draws.pick([100.0, 300.0, 1000.0], generator),
            )
            slowest = float(wavelengths(d, base)[-1])
            specs.append((d, base, math.ceil(slowest) + draws.randint(2, 60, generator)))  # fmt: skip
            specs.append((draws.pick([16, 64, 128], generator), draws.pick([100.0, 500000.0], generator),
                          draws.randint(2, 7, generator)))  # fmt: skip
        return [Case(s, f"head_dim = {s[0]}, base = {s[1]:g}, train_len = {s[2]}") for s in specs]

    def expected(self, case):
        d, base, length = case.args
        # Indices up to D - 1 pass on, so that an answer listing dims is named as such below.
        return full_turn_pairs(d, base, length), d

    def outside(self, case, indices):
        d = case.args[0]
        return tr(
            "Pair indices run from 0 to D/2 - 1 = {last}; some of yours are outside that range.",
            last=d // 2 - 1,
        )

    def mistakes(self, case, want):
        d, base, length = case.args
        complement = [i for i in range(d // 2) if i not in want]
        mistakes = [
            (sorted(set(want) | {0}), N_("pair 0 does not always qualify: its wavelength is 2 pi (about 6.3 positions), so with L - 1 below that not even pair 0 turns a full circle.")),
            (_turn_variant(d, base, length, limit_offset=0), N_("your limit is off by one: what is the largest query-key distance in a window of L tokens?")),
            (complement, N_("you returned the pairs that do *not* turn a full circle; the question asks for those that do (short wavelengths).")),
            (_turn_variant(d, base, length, circle=1.0), N_("you compared 1 / theta_i with L - 1; the wavelength is 2 pi / theta_i, the distance of one full turn.")),
            (_turn_variant(d, base, length, power=1.0), N_("your frequencies are base ** (-i / D); RoPE's are base ** (-2i / D), i = 0 .. D/2 - 1.")),
            ([i + 1 for i in want], N_("your indices start at 1; pairs count from 0.")),
            (sorted(want + [i + d // 2 for i in want]), N_("you listed dims (i and i + D/2); list each pair once, by its index i.")),
            (sorted([2 * i for i in want] + [2 * i + 1 for i in want]), N_("you listed dims (2i and 2i + 1); list each pair once, by its index i.")),
            ([i for i, t in enumerate(frequencies(d, base).tolist()) if t <= length - 1], N_("you compared the frequency theta_i with L - 1; compare the wavelength 2 pi / theta_i.")),
            ([i for i in want if i < d // 2 - 1], N_("you never looked at the last pair, D/2 - 1: check every pair, i = 0 .. D/2 - 1.")),
            (full_turn_pairs(d, 10000.0, length) if base != 10000.0 else None, N_("you used base 10000 instead of the `base` given.")),
        ]  # fmt: skip
        return mistakes

    def extra(self, n):
        if n == 1:
            return tr("{n} of your pairs does not turn a full circle within L - 1 positions.", n=n)
        return tr("{n} of your pairs do not turn a full circle within L - 1 positions.", n=n)

    def missing(self, n):
        if n == 1:
            return tr("You left out {n} pair that turns a full circle within L - 1 positions.", n=n)
        return tr("You left out {n} pairs that turn a full circle within L - 1 positions.", n=n)


# -- q4: which pairs meet new scores past L (the measurement) --------------------------------------


def _synthetic_curves(n_heads, d, base, length, n_distances, generator):
    """Position-only score curves Re(z e^(i delta theta)) for random z: (H, P, N) float64."""
    theta = default_inv_freq(d, base, F64)  # (P,)
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


class NewScorePairs(_PairList):
    name, function, points, notebook = "q4", "new_score_pairs", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "torch.maximum(above, below) / size",
        "(excess[:, i] > tol).any()",
        "largest |value| of the whole curve",
        "Compare the highs and the lows",
        "curve's largest |value|",
    )
    returns = INDEX_LIST
    references = (
        "posenc_lib.analysis.ch07_extrapolation.new_score_pairs",
        "posenc_lib.analysis.ch07_extrapolation.score_excess",
    )
    title = N_("Which pairs' score curves reach values past L that they never reached in training")
    hints = (
        N_(
            "curves[h, i, delta] is head h's position-only score for pair i at distance delta. The "
            "training distances are 0 .. L - 1: curves[..., :L]; the new ones are curves[..., L:]."
        ),
        N_(
            "For each head and pair: excess = the larger of (max over new - max over seen) and "
            "(min over seen - min over new), clamped at 0, divided by the largest |value| of the whole "
            "curve (seen and new distances together). Compare values, not |values|: a new low counts."
        ),
        N_(
            "A pair counts if its excess is above tol in at least one head (.any over the heads). "
            "Return the pair indices in increasing order."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(4, 32, 10000.0, 64, 512, 0.01), (2, 16, 100.0, 16, 64, 0.05),
                     (3, 64, 10000.0, 128, 1024, 0.01)]  # fmt: skip
        else:
            generator = draws.seeded(seed, 4)
            specs = []
            for _draw in range(3):
                d = draws.pick([16, 32, 64, 128], generator)
                length = draws.pick([32, 64, 128], generator)
                specs.append(
                    (
                        draws.randint(2, 7, generator),
                        d,
                        draws.pick([100.0, 10000.0, 500000.0], generator),
                        length,
                        length * draws.pick([4, 8], generator),
                        draws.pick([0.01, 0.02, 0.05], generator),
                    )
                )
        generator = draws.seeded(seed, 14)
        # The hand-made case first: on it every usual mistake gives a list of its own.
        cases = [Case((_edge_curves(), 6, 0.25), _(HAND_MADE))]
        for heads, d, base, length, n, tol in specs:
            curves = _synthetic_curves(heads, d, base, length, n, generator)
            cases.append(
                Case(
                    (curves, length, tol),
                    tr(
                        "curves of shape {shape} (head_dim {d}, base {base:g}), "
                        "train_len = {length}, tol = {tol:g}",
                        shape=(heads, d // 2, n),
                        d=d,
                        base=base,
                        length=length,
                        tol=tol,
                    ),
                )
            )
        return cases

    def expected(self, case):
        curves, length, tol = case.args
        return new_score_pairs(curves, length, tol), curves.shape[1]

    def outside(self, case, indices):
        n_heads, n_pairs, _distances = case.args[0].shape
        if all(0 <= i < n_heads for i in indices):
            return _("Return pair indices (the second axis of curves), not heads.")
        return tr(
            "Pair indices run from 0 to {last}; some of yours are outside that range.",
            last=n_pairs - 1,
        )

    def mistakes(self, case, want):
        curves, length, tol = case.args
        n_pairs = curves.shape[1]
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
            (new_score_pairs(curves, length + 1, tol), N_("your training distances are off by one: they are 0 .. L - 1 (curves[..., :L]); distance L is already new.")),
            (pairs(above / size > tol), N_("you looked only for new highs; a score below the lowest one seen in training is new too.")),
            (pairs(below / size > tol), N_("you looked only for new lows; a score above the highest one seen in training is new too.")),
            (pairs(excess > tol), N_("you compared the excess itself with tol, which is a share: re-read how the question scales the excess.")),
            (pairs(excess / (seen.amax(-1) - seen.amin(-1)).clamp_min(1e-300) > tol), N_("you divided by the range seen in training: re-read which values set the question's scale.")),
            ([int(i) for i in torch.nonzero((score_excess(curves, length) > tol).all(0)).flatten()], N_("you kept the pairs that leave their range in every head; one head is enough (.any over the heads).")),
            ([int(i) for i in torch.nonzero(mean_share > tol).flatten()], N_("you averaged the excess over the heads; a pair counts if its excess is above tol in at least one head (.any, or .amax over the heads).")),
            (pairs(outward / size > tol), N_("you compared |values|: a new low such as -0.9 is new when the lowest score seen was -0.2, even if some seen score, 1.0, is larger in size.")),
            (pairs(excess / seen.abs().amax(-1).clamp_min(tiny) > tol), N_("you divided by the largest |value| seen in training, leaving out the new distances: re-read which values set the question's scale.")),
            (pairs(excess / new.abs().amax(-1).clamp_min(tiny) > tol), N_("you divided by the largest |value| past L, leaving out the training distances (a curve's largest value may lie before L): re-read which values set the question's scale.")),
            (pairs((excess / size).round(decimals=2) > tol), N_("you rounded the excess before comparing it with tol; an excess of 0.254 is above 0.25: compare the exact share.")),
            ([i for i in range(n_pairs) if i not in want], N_("you returned the pairs that stay inside their training range; the question asks for those that leave it.")),
            ([int(h) for h in torch.nonzero((excess / size > tol).any(1)).flatten()], N_("you returned the heads that have a pair leaving its range; return the pairs (the second axis of curves).")),
            (new_score_pairs(curves, length - 1, tol), N_("your training distances stop at L - 2: they are 0 .. L - 1 (curves[..., :L]), so distance L - 1 was seen in training and is not new.")),
            (pairs(excess / size >= tol), N_("a pair whose excess equals tol exactly does not count: the excess must be above tol (>, not >=).")),
            (pairs((above + below) / size > tol), N_("you added the excess above and the excess below; the excess is the larger of the two.")),
            (pairs(_partial_excess(curves, length, 2 * length) / size > tol), N_("you looked only at the distances L .. 2L - 1; the new distances run from L to the last one, curves[..., L:].")),
            (pairs(_partial_excess(curves, length, curves.shape[-1] - 1) / size > tol), N_("you left out the last distance; the new distances run from L to the last one, curves[..., L:].")),
        ]  # fmt: skip
        return mistakes

    def extra(self, n):
        if n == 1:
            return tr(
                "{n} of your pairs stays within tol of the range seen in training in every head.",
                n=n,
            )
        return tr(
            "{n} of your pairs stay within tol of the range seen in training in every head.", n=n
        )

    def missing(self, n):
        if n == 1:
            return tr(
                "You left out {n} pair that leaves the training range by more than tol in some head.",
                n=n,
            )
        return tr(
            "You left out {n} pairs that leave the training range by more than tol in some head.",
            n=n,
        )
