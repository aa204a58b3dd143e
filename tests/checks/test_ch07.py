"""Chapter 7's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer)."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib.analysis import ch07_scaling
from posenc_lib.analysis.ch07_scaling import yarn_ramp
from posenc_lib.checks import FAIL, PASS
from posenc_lib.checks.ch07 import (
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
    q4,
)

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = answer_functions(ROOT / "solutions" / "07_extrapolation.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "07_extrapolation.ipynb")
F64 = torch.float64


def _theta(d, base, power=2.0):
    return base ** (-power * torch.arange(d // 2, dtype=F64) / d)


def _pairs(d, base, length, circle=2 * math.pi, limit=-1, power=2.0):
    return [
        i for i, w in enumerate((circle / _theta(d, base, power)).tolist()) if w <= length + limit
    ]


def _scale(s):
    """YaRN's attention scale sqrt(1/t), written here (the library's is switched off in a check)."""
    return 0.1 * math.log(s) + 1 if s > 1 else 1.0


def _yarn(d, base, length, s, fast=32.0, slow=1.0, *, temp=None, reverse=False, truncate=True,
          two_pi=True, swap=False, turns=False, clamp_pairs=False, bump=True, rounding=None,
          cap_low=True, cap_high=True, clamp=True, first_pair=0):  # fmt: skip
    if swap:
        fast, slow = slow, fast
    if turns:  # the paper's ramp (section 3.2), linear in r = L theta / (2 pi)
        r = length * _theta(d, base) / (2 * math.pi)
        ramp = ((r - slow) / (fast - slow)).clamp(0, 1)
    else:
        circle = 2 * math.pi if two_pi else 1.0

        def index(n):
            return d * math.log(length / (n * circle)) / (2 * math.log(base))

        low, high = index(fast), index(slow)
        if truncate:
            round_low, round_high = rounding or (math.floor, math.ceil)
            low, high = round_low(low), round_high(high)
        low = max(low, 0) if cap_low else low
        high = min(high, d // 2 - 1 if clamp_pairs else d - 1) if cap_high else high
        high += 0.001 if low == high and bump else 0
        ratio = (torch.arange(first_pair, first_pair + d // 2, dtype=F64) - low) / (high - low)
        ramp = 1 - (ratio.clamp(0, 1) if clamp else ratio)
    ramp = 1 - ramp if reverse else ramp
    return ramp, _scale(s) if temp is None else temp(s)


def _yarn_low_bumped(d, base, length, s, fast=32.0, slow=1.0):
    """YaRN's ramp, but when low == high the 0.001 is taken off low instead of added to high."""
    ramp, scale = _yarn(d, base, length, s, fast, slow)
    sc = d / (2 * math.log(base))  # the ends, floored and ceiled and capped, as in _yarn
    low = max(math.floor(sc * math.log(length / (2 * math.pi * fast))), 0)
    high = min(math.ceil(sc * math.log(length / (2 * math.pi * slow))), d - 1)
    if low == high:
        ramp = 1 - ((torch.arange(d // 2, dtype=F64) - (low - 0.001)) / 0.001).clamp(0, 1)
    return ramp, scale


def _yarn_floats(d, base, length, s, fast=32.0, slow=1.0):
    """YaRN's ramp in plain floats, without the "low == high: add 0.001" rule: ZeroDivisionError."""
    low = math.floor(d * math.log(length / (2 * math.pi * fast)) / (2 * math.log(base)))
    high = math.ceil(d * math.log(length / (2 * math.pi * slow)) / (2 * math.log(base)))
    low, high = max(low, 0), min(high, d - 1)
    ramp = [1 - min(max((i - low) / (high - low), 0.0), 1.0) for i in range(d // 2)]
    return torch.tensor(ramp, dtype=F64), _scale(s)


def _share(curves, length, stop=None):
    """(H, P): each curve's excess past L (distances L .. stop - 1) as a share of its size."""
    seen, new = curves[..., :length], curves[..., length:stop]
    above = (new.amax(-1) - seen.amax(-1)).clamp(min=0)
    below = (seen.amin(-1) - new.amin(-1)).clamp(min=0)
    return torch.maximum(above, below) / curves.abs().amax(-1)


def _excess_pairs(curves, length, tol, *, offset=0, side="both", divide="size", heads="any",
                  inclusive=False):  # fmt: skip
    seen, new = curves[..., : length + offset], curves[..., length + offset :]
    above = (new.amax(-1) - seen.amax(-1)).clamp(min=0)
    below = (seen.amin(-1) - new.amin(-1)).clamp(min=0)
    outward = (new.abs().amax(-1) - seen.abs().amax(-1)).clamp(min=0)  # |values| compared
    excess = {"both": torch.maximum(above, below), "above": above, "below": below,
              "sum": above + below}.get(side, outward)  # fmt: skip
    if divide == "size":
        excess = excess / curves.abs().amax(-1)  # no case has an all-zero curve
    elif divide == "seen":
        excess = excess / (seen.amax(-1) - seen.amin(-1))
    elif divide == "seen |value|":
        excess = excess / seen.abs().amax(-1)
    elif divide == "new |value|":
        excess = excess / new.abs().amax(-1)
    elif divide == "rounded":
        excess = (excess / curves.abs().amax(-1)).round(decimals=2)
    over = excess >= tol if inclusive else excess > tol
    flags = {"any": over.any(0), "all": over.all(0)}.get(heads)
    if heads == "mean":
        flags = excess.mean(0) > tol
    return [int(i) for i in torch.nonzero(flags).flatten()]


def _complement(curves, length, tol):
    right = set(_right_pairs(curves, length, tol))
    return [i for i in range(curves.shape[1]) if i not in right]


def _right_pairs(curves, length, tol):
    return _excess_pairs(curves, length, tol)


def _right_pairs_amax(curves, length, tol):
    """Right, in another style: the worst head per pair, then one comparison (no 1e-300 guard)."""
    seen, new = curves[..., :length], curves[..., length:]
    above = (new.amax(-1) - seen.amax(-1)).clamp(min=0)
    below = (seen.amin(-1) - new.amin(-1)).clamp(min=0)
    excess = torch.maximum(above, below) / curves.abs().amax(-1)  # (H, P)
    return torch.nonzero(excess.amax(0) > tol).flatten().tolist()


def _right_pairs_loop(curves, length, tol):
    """Right, with plain Python loops and floats: a division by zero would raise here."""
    out = []
    for i in range(curves.shape[1]):
        for h in range(curves.shape[0]):
            values = curves[h, i].tolist()
            seen, new = values[:length], values[length:]
            excess = max(max(new) - max(seen), min(seen) - min(new), 0.0)
            if excess / max(abs(v) for v in values) > tol:
                out.append(i)
                break
    return out


RIGHT = {  # right answers in other forms than the worked solution's: each must pass
    "q1": [
        lambda b, s, d: float(torch.tensor(b) * s ** (d / (d - 2))),  # float32 arithmetic
        lambda b, s, d: float(np.float32(b * s ** (d / (d - 2)))),
        lambda b, s, d: math.exp(math.log(b) + d / (d - 2) * math.log(s)),
    ],
    "q2": [
        lambda d, b, n, s, f, w: (_yarn(d, b, n, s, f, w)[0].float(), _scale(s)),
        lambda d, b, n, s, f, w: (_yarn(d, b, n, s, f, w)[0], 0.1 * math.log(s) + 1 if s >= 1 else 1.0),
    ],
    "q4": [_right_pairs_amax, _right_pairs_loop],
}  # fmt: skip


WRONG = {
    "q1": [
        (lambda b, s, d: b * s, "multiplied the base by s alone"),
        (lambda b, s, d: b * s ** ((d - 2) / d), "upside down"),
        (lambda b, s, d: s ** (d / (d - 2)), "return the new base itself"),
        (lambda b, s, d: b / s ** (d / (d - 2)), "divided the base"),
        (lambda b, s, d: b * s ** ((d / 2) / (d / 2 - 2)), "number of pairs"),
        (lambda b, s, d: b ** (d / (d - 2)) * s, "belongs on s"),
        (lambda b, s, d: torch.tensor([b * s, b]), "one number"),
        (lambda b, s, d: b * s ** (d / (d - 2)) * 1.01, "not the one asked for"),
        (lambda b, s, d: b * s ** (d / (d - 2)) * (1 + 1e-5), "not the one asked for"),  # 10x RTOL
        (lambda b, s, d: str(b * s ** (d / (d - 2))), "should be a number"),
        (lambda b, s, d: b * s ** (d // (d - 2)), "multiplied the base by s alone"),  # integer division
        (lambda b, s, d: 10000.0 * s ** (d / (d - 2)), "base 10000 instead"),
        (lambda b, s, d: b * s ** (128 / 126), "head_dim 128 instead"),
    ],
    "q2": [
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, reverse=True), "reversed"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, swap=True), "swapped beta_fast"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, turns=True), "linear in the number of turns"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, truncate=False), "not whole pair numbers"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, two_pi=False), "leaving out the 2 pi"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, clamp_pairs=True), "capped the high end at the last pair"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, bump=False), "if low == high, add 0.001 to high"),
        (_yarn_floats, "raised ZeroDivisionError"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, temp=math.log), "is ln(s)"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, temp=lambda s: 0.1 * math.log(s)), "add 1"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, temp=lambda s: (0.1 * math.log(s) + 1) ** 2), "logits end up"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, temp=lambda s: 1 / (0.1 * math.log(s) + 1)), "inverse"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, temp=lambda s: 1 / (0.1 * math.log(s) + 1) ** 2), "temperature t itself"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, temp=lambda s: 0.1 * math.log2(s) + 1), "log base 2"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w)[0], "Return two things"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w)[::-1], "(scale, ramp)"),
        (lambda d, b, n, s, f, w: (_yarn(d, b, n, s, f, w)[0].repeat(2), 1.0), "one per pair"),
        (lambda d, b, n, s, f, w: (*_yarn(d, b, n, s, f, w), 0), "exactly two"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, temp=lambda s: 0.1 * math.log(s) + 1), "applies only when s > 1"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, cap_high=False), "did not cap the high end"),
        (_yarn_low_bumped, "does not subtract it from low"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, cap_low=False), "did not cap the low end"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, rounding=(round, round)), "the high end i(beta_slow) up (ceil)"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, rounding=(math.floor, math.floor)), "the high end i(beta_slow) up (ceil)"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, rounding=(math.ceil, math.ceil)), "the low end i(beta_fast) down (floor)"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, clamp=False), "clamp (i - low)"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, f, w, first_pair=1), "start at 1"),
        (lambda d, b, n, s, f, w: _yarn(d, b, n, s, 32.0, 1.0), "beta_fast = 32 and beta_slow = 1"),
    ],
    "q3": [
        (lambda d, b, n: _pairs(d, b, n, limit=0), "off by one"),
        (lambda d, b, n: [i for i in range(d // 2) if i not in _pairs(d, b, n)], "do *not* turn"),
        (lambda d, b, n: _pairs(d, b, n, circle=1.0), "1 / theta_i"),
        (lambda d, b, n: _pairs(d, b, n, power=1.0), "base ** (-i / D)"),
        (lambda d, b, n: [i + 1 for i in _pairs(d, b, n)], "start at 1"),
        (lambda d, b, n: sorted(_pairs(d, b, n) + [i + d // 2 for i in _pairs(d, b, n)]), "listed dims (i and i + D/2)"),
        (lambda d, b, n: len(_pairs(d, b, n)), "not one number"),
        (lambda d, b, n: [i in _pairs(d, b, n) for i in range(d // 2)], "True/False mask"),
        (lambda d, b, n: [i for i, t in enumerate(_theta(d, b).tolist()) if t <= n - 1], "compared the frequency"),
        (lambda d, b, n: _pairs(d, b, n) + _pairs(d, b, n)[:1], "more than once"),
        (lambda d, b, n: [float(i) for i in _pairs(d, b, n)] or [0.5], "a list of floats"),
        (lambda d, b, n: _pairs(d, b, n)[::-1], "not in increasing order"),
        (lambda d, b, n: [i for i in _pairs(d, b, n) if i < d // 2 - 1], "never looked at the last pair"),
        (lambda d, b, n: sorted(set(_pairs(d, b, n)) | {0}), "pair 0 does not always qualify"),
        (lambda d, b, n: _pairs(d, 10000.0, n), "base 10000 instead"),
    ],
    "q4": [
        (lambda c, n, t: _excess_pairs(c, n, t, offset=1), "off by one"),
        (lambda c, n, t: _excess_pairs(c, n, t, side="above"), "only for new highs"),
        (lambda c, n, t: _excess_pairs(c, n, t, side="below"), "only for new lows"),
        (lambda c, n, t: _excess_pairs(c, n, t, divide=None), "compared the excess itself"),
        (lambda c, n, t: _excess_pairs(c, n, t, divide="seen"), "range seen in training"),
        (lambda c, n, t: _excess_pairs(c, n, t, heads="all"), "every head"),
        (lambda c, n, t: _excess_pairs(c, n, t, heads="mean"), "averaged the excess over the heads"),
        (lambda c, n, t: _excess_pairs(c, n, t, side="|values|"), "you compared |values|"),
        (lambda c, n, t: _excess_pairs(c, n, t, divide="seen |value|"), "largest |value| seen in training"),
        (lambda c, n, t: _excess_pairs(c, n, t, divide="new |value|"), "largest |value| past L"),
        (lambda c, n, t: _excess_pairs(c, n, t, divide="rounded"), "rounded the excess"),
        (_complement, "stay inside"),
        (lambda c, n, t: [int(h) for h in torch.nonzero((_share(c, n) > t).any(1)).flatten()], "heads"),
        (lambda c, n, t: _excess_pairs(c, n, t, offset=-1), "stop at L - 2"),
        (lambda c, n, t: _excess_pairs(c, n, t, inclusive=True), "(>, not >=)"),
        (lambda c, n, t: _excess_pairs(c, n, t, side="sum"), "added the excess above and the excess below"),
        (lambda c, n, t: torch.nonzero((_share(c, n, 2 * n) > t).any(0)).flatten().tolist(), "only at the distances L .. 2L - 1"),
        (lambda c, n, t: torch.nonzero((_share(c, n, -1) > t).any(0)).flatten().tolist(), "left out the last distance"),
        (lambda c, n, t: _right_pairs(c, n, t)[::-1], "not in increasing order"),
        (lambda c, n, t: (_share(c, n) > t).any(0), "returned a tensor"),
        (lambda c, n, t: len(_right_pairs(c, n, t)), "not one number"),
    ],
}  # fmt: skip

BY_NAME = {q.name: q for q in QUESTIONS}


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=10))


@pytest.mark.parametrize(
    "name, index", [(name, i) for name, fns in RIGHT.items() for i in range(len(fns))]
)
def test_right_answers_in_other_forms_pass_too(name, index):
    # float32 arithmetic (q1, q2), the scale's rule written with s >= 1 (q2: equal at s = 1), and q4
    # written with .amax over the heads or with plain loops and floats (which would raise
    # ZeroDivisionError on a curve that is zero everywhere)
    question, fn = BY_NAME[name], RIGHT[name][index]
    for seed in range(6):
        cases = question.cases(seed)
        verdict = question.judge(cases, question.run(fn, cases))
        assert verdict.status == PASS, (seed, verdict.message)


def test_hidden_inputs_share_no_case_with_the_public_ones():
    hand_made = {q4.cases(0)[0].describe}  # q4's edge case is the same for everyone
    for question in QUESTIONS:
        public = {c.describe for c in question.cases(0)} - hand_made
        for seed in range(1, 6):
            assert not public & {c.describe for c in question.cases(seed)}, question.name


def _differs(cases, **options):
    """Whether some case's YaRN ramp changes when the ramp is computed with these options."""
    return any(not torch.allclose(_yarn(*c.args)[0], _yarn(*c.args, **options)[0]) for c in cases)


def test_the_public_cases_hold_the_edges_the_mistakes_need():
    # q3: L = 63 sits between L - 1 = 62 and pair 4's wavelength 62.8: the off-by-one shows.
    assert q3.cases(0)[1].args == (32, 10000.0, 63)
    # q3: every set has a case on the edge, one where every pair turns and one where none does.
    for seed in range(21):
        cases = q3.cases(seed)
        answers = [_pairs(*c.args) for c in cases]
        assert [] in answers, seed
        assert any(a == list(range(c.args[0] // 2)) for a, c in zip(answers, cases, strict=True))
        assert any(a != _pairs(*c.args, limit=0) for a, c in zip(answers, cases, strict=True))
    # q2: the high end lands past the last pair (capping it at D - 1 or at D/2 - 1 differ), and
    # past D - 1 (capping it or not differ); the low end needs max(low, 0); rounding to the
    # nearest, flooring or ceiling both ends each move an end; s < 1 (scale 1) and s = 1 are there.
    for seed in range(21):
        cases = q2.cases(seed)
        for options in ({"clamp_pairs": True}, {"cap_high": False}, {"cap_low": False},
                        {"rounding": (round, round)}, {"rounding": (math.floor, math.floor)},
                        {"rounding": (math.ceil, math.ceil)}):  # fmt: skip
            assert _differs(cases, **options), (seed, options)
        assert any(c.args[3] < 1 for c in cases) and any(c.args[3] == 1 for c in cases[1:])
        # q2: both ends on pair 0 (low == high), so the "add 0.001" rule is needed.
        steps = [c for c in cases if not torch.isfinite(_yarn(*c.args, bump=False)[0]).all()]
        assert steps, seed
        assert torch.equal(_yarn(*steps[0].args)[0][:2], torch.tensor([1.0, 0.0], dtype=F64))
    assert q2.cases(0)[-2].args == (32, 10000.0, 6, 4.0, 32.0, 1.0)
    # q4's hand-made case comes first, and every usual mistake gives a list of its own on it.
    curves, length, tol = q4.cases(0)[0].args
    assert bool((curves.abs().amax(-1) > 0).all())  # no all-zero curve: the share is defined
    assert float(_share(curves, length)[:, 10].max()) == tol  # a tie at the tolerance, exactly
    answers = [fn(curves, length, tol) for fn, _ in WRONG["q4"]]
    lists = [_right_pairs(curves, length, tol)] + [
        a
        for a in answers
        if isinstance(a, list) and a == sorted(set(a))  # not the type slips
    ]
    assert lists[0] == [1, 2, 3, 4, 5, 12, 13, 15]
    assert len({tuple(x) for x in lists}) == len(lists), lists


def test_the_step_sentence_names_the_rule_both_for_nan_and_for_a_division_error(capsys):
    for fn in (lambda *a: _yarn(*a, bump=False), _yarn_floats):
        verdict = q2.check(fn)
        assert verdict.status == FAIL, verdict.message
        assert "low == high" in verdict.message and "train_len = 6" in verdict.message
    # the float version without the rule is right wherever low != high: only the step case fails
    right = lambda *a: _yarn(*a)  # noqa: E731
    assert q2.check(right).status == PASS


def test_checks_never_show_the_answer(capsys):
    verdict = q3.check(lambda d, b, n: [])
    assert "[0, 1" not in verdict.message and "0, 1, 2" not in verdict.message
    verdict = q1.check(lambda b, s, d: 1.0)
    assert "43872" not in verdict.message


def test_the_first_yarn_case_is_the_chapters_model_and_its_ramp_spans_five_pairs():
    d, base, length, s, fast, slow = q2.cases(0)[0].args
    assert (d, base, length) == (32, 10000.0, 64)  # head_dim, base and L of the RoPE model
    ramp = yarn_ramp(d, base, length, fast, slow)
    assert torch.allclose(ramp[:6], torch.tensor([1.0, 0.8, 0.6, 0.4, 0.2, 0.0], dtype=F64))


# -- the concept questions: the exercises ask others than the lecture's quiz, each one applied ----


def _wave(pair, method=None, s=4.0):
    """Pair ``pair``'s wavelength at D = 32, base 10000, L = 64, under a scaling or none."""
    theta = float(ch07_scaling.frequencies(32, 10000.0)[pair])
    if method:
        theta *= float(ch07_scaling.frequency_ratio(method, s, 32, 10000.0, 64)[pair])
    return 2 * math.pi / theta


# (question, a known-wrong answer computed with the library, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, "a", "only L = 64 rows"),
    (c1, "c", "Defined is not learned"),
    (c1, "d", "nothing wraps it"),
    (c2, "a", "That is Position Interpolation"),
    (c2, "c", "Reversed"),
    (c2, "d", "YaRN's ramp"),
    (c3, _wave(0), "before any scaling"),
    (c3, 2 * math.pi / 4, "turns faster than before"),
    (c3, 64 / _wave(0, "PI"), "how many turns pair 0 makes"),
    (c3, 64 / _wave(0), "before scaling"),
    (c3, _wave(15, "PI"), "the slowest pair"),
    (c3, 4 * round(_wave(0)), "the 6 that section 3c prints"),  # 4 x the rounded wavelength
    (c3, 12.6, "That is not the number"),
    (c4, "a", "measures YaRN alone"),
    (c4, "b", "More seeds"),
    (c4, "d", "compares two factors"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    right = {
        c1: "b",
        c2: "b",
        c3: _wave(0, "PI"),
        c4: "c",
    }
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name
    assert c3.evaluate(8 * math.pi).status == PASS and c3.evaluate(25.1).status == PASS


globals().update(
    concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "07_extrapolation", CONCEPT_WRONG)
)


def test_c2s_ratios_and_c3s_rounded_wavelength_are_the_librarys():
    """c2's right option and its why quote NTK-aware's ratios for s = 16 at D = 64; c3's named
    mistake is 4 times the wavelength section 3c prints for pair 0, rounded to 6."""
    ratio = ch07_scaling.frequency_ratio("NTK", 16.0, 64, 10000.0, 64)  # (32,)
    assert ratio[0] == 1.0 and abs(1 / float(ratio[-1]) - 16) < 1e-9
    assert f"{1 / float(ratio[16]):.1f}" == "4.2" and "1/4.2 for pair 16" in c2.right.why
    assert bool((ratio[1:] < ratio[:-1]).all())  # the slower the pair, the more it is divided
    assert f"{_wave(0):.0f}" == "6" and 4 * round(_wave(0)) == 24
    assert c3.evaluate(24.0).status == FAIL and c3.evaluate(8 * math.pi).status == PASS


def test_every_exercise_concept_question_has_its_own_hint():
    """A nudge toward this question's idea, not the generic "re-read section N"."""
    for question in EXERCISE_CONCEPTS:
        assert question.nudge and not question.nudge.startswith("re-read"), question.name


def test_the_quiz_asks_what_the_tutorial_base_leaves_without_handing_over_exercise_1():
    """The lecture's c2: base · s leaves the slowest pair 4^(−30/32) of its frequency; its named
    mistakes fail; neither the core nor the quiz's prompt and hint state the exponent D/(D−2) that
    exercise 1 derives, and no hint of exercise 1 hands over the solution."""
    quiz_c2 = next(q for q in CONCEPTS if q.name == "c2")
    theta = ch07_scaling.frequencies
    kept = float(theta(32, 40000.0)[15] / theta(32, 10000.0)[15])
    assert abs(kept - 4 ** (-30 / 32)) < 1e-12
    assert quiz_c2.evaluate(kept).status == PASS and quiz_c2.evaluate(0.273).status == PASS
    for wrong, fragment in ((0.25, "0.25 assumes"), (1.0, "pair 0's ratio"),
                            (4 ** (30 / 32), "how many times")):  # fmt: skip
        verdict = quiz_c2.evaluate(wrong)
        assert verdict.status == FAIL and fragment in verdict.message, verdict.message
    core = (ROOT / "notebooks" / "07_extrapolation.ipynb").read_text(encoding="utf-8")
    for text in (core, quiz_c2.prompt, quiz_c2.nudge, *q1.hints):
        assert "D/(D-2)" not in text and "D / (D - 2)" not in text and "D/(D−2)" not in text
    assert not any("return" in hint for hint in q1.hints)
