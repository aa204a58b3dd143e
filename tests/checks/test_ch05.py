"""Chapter 5's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer)."""

import math
import types
from pathlib import Path

import pytest
import torch
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib import alibi_bias, alibi_slopes
from posenc_lib.analysis.ch05_alibi import effective_window, far_mass
from posenc_lib.checks import FAIL, PASS, ch05
from posenc_lib.checks.ch05 import (
    CONCEPTS,
    EXERCISE_CONCEPTS,
    QUESTIONS,
    _bias,
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
SOLUTIONS = answer_functions(ROOT / "solutions" / "05_alibi.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "05_alibi.ipynb")


def _ladder(n):
    return [2 ** (-8 * h / n) for h in range(1, n + 1)]


def _low(n):
    return 2 ** math.floor(math.log2(n))


def _right(n):
    low = _low(n)
    return _ladder(low) + _ladder(2 * low)[0::2][: n - low]


# The known-wrong answers stand for a learner's own code: while an answer runs, calling the check's
# ``_beyond`` is refused (the shortcut rule), so they use a function of their own built from its code.
original = ch05._beyond
_beyond = types.FunctionType(
    original.__code__, original.__globals__, "_beyond", original.__defaults__
)


def _slopes(h):
    """The standard slopes of h heads, a float32 tensor (as the library gives them)."""
    return torch.tensor(_right(h))


def _built(slopes, n, flip=False, mask="future", diagonal_distance=0, fill=-math.inf):
    """A causal bias with one thing changed: the sign, the masked side, the distance, the fill."""
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    sign = 1.0 if flip else -1.0
    bias = sign * slopes[:, None, None] * (i - j + diagonal_distance).to(slopes.dtype)
    where = {"future": j > i, "diagonal too": j >= i, "past": j < i, "none": None}[mask]
    return bias if where is None else bias.masked_fill(where, fill)


def _share(m, n, far, rule):
    d = torch.arange(n, dtype=torch.float64)
    weights = torch.softmax(-m * d, 0)
    return float(weights[rule(d, far)].sum())


def _rounded_power(h):
    low = 2 ** round(math.log2(h))  # the nearest power of two, not the largest below
    if low > h:
        return _ladder(h)
    return _ladder(low) + _ladder(2 * low)[0::2][: h - low]


def _strictly_below(h):
    low = 2 ** math.ceil(math.log2(h) - 1)  # the largest power of two strictly below H
    return _ladder(low) + _ladder(2 * low)[0::2][: h - low]


def _shifted(m, n, far):
    """Distances numbered 1..n_keys (the query's own key at 1), then d > distance: every key one
    step off, so the key at exactly `distance` is counted, as with d >= distance."""
    d = torch.arange(1, n + 1, dtype=torch.float64)
    return float(torch.softmax(-m * d, 0)[d > far].sum())


def _sliced_from_the_end(m, n, far):
    """Weights by position j (distance n - 1 - j), the far keys sliced as [:-distance]."""
    weights = torch.softmax(-m * torch.arange(n - 1, -1, -1, dtype=torch.float64), 0)
    return float(weights[:-far].sum()) if far else 0.0


WRONG = {
    "q1": [
        (lambda h: _ladder(h), "not a power of two"),
        (lambda h: _right(h)[::-1], "gentlest to the steepest"),
        (lambda h: [2 ** (-8 * k / h) for k in range(h)], "h starts at 0"),
        (lambda h: [2.0**-k for k in range(1, h + 1)], "2 ** -h"),
        (lambda h: _ladder(2 * _low(h))[:h] if h != _low(h) else _right(h), "cut the ladder"),
        (lambda h: sorted(_right(h), reverse=True), "in the wrong order"),
        (lambda h: _ladder(_low(h)) + _ladder(2 * _low(h))[1::2][: h - _low(h)], "repeat slopes"),
        (lambda h: [-s for s in _right(h)], "positive numbers"),
        (lambda h: [2 ** (8 * k / h) for k in range(1, h + 1)], "below 1"),
        (lambda h: _ladder(2 ** math.ceil(math.log2(h))), "the ladder for 16 heads"),
        (lambda h: _ladder(_low(h)), "only the 8 slopes"),
        (lambda h: torch.tensor(_right(h))[:, None], "one flat list"),
        (lambda h: [str(s) for s in _right(h)], "plain numbers"),
        (lambda h: [s * 1.01 for s in _right(h)], "not the paper's slopes"),
        (lambda h: torch.tensor(_right(h), dtype=torch.float16), "too few digits"),
        (lambda h: torch.tensor(_right(h), dtype=torch.bfloat16), "too few digits"),
        (lambda h: torch.tensor(_right(h), dtype=torch.bfloat16).tolist(), "too few digits"),
        (lambda h: _rounded_power(h), "rule for a head count that is not a power of two"),  # round(log2 H) for H' < H
        (lambda h: _strictly_below(h), "is H itself"),  # H' < H even when H is a power
        (lambda h: [1.0] if h == 1 else _right(h), "single head (H = 1)"),
    ],
    "q2": [
        (lambda s, n: _built(s, n, flip=True), "sign is flipped"),
        (lambda s, n: (s[:, None, None] * torch.arange(n)).expand(-1, n, -1).masked_fill(torch.ones(n, n).triu(1).bool(), -math.inf), "form of the paper's own code"),
        (lambda s, n: (s[:, None, None] * (torch.arange(n) - n + 1)).expand(-1, n, -1).masked_fill(torch.ones(n, n).triu(1).bool(), -math.inf), "MPT's form"),
        (lambda s, n: _built(s.flip(0), n), "reverse order"),
        (lambda s, n: _built(torch.ones_like(s), n), "every head has the same bias"),
        (lambda s, n: _built(s, n, diagonal_distance=1), "diagonal should be 0"),
        (lambda s, n: -s[:, None, None] * (torch.arange(n)[:, None] - torch.arange(n)).abs(), "symmetric"),
        (lambda s, n: _built(s, n, mask="none"), "looking into the future"),
        # +m (i - j) with no mask: above the diagonal it equals the symmetric -m |i - j|, below it
        # does not; named as what it is, the sign flipped.
        (lambda s, n: _built(s, n, flip=True, mask="none"), "sign flipped, +m (i - j), and no mask"),
        (lambda s, n: _built(s, n, fill=0.0), "not 0"),
        (lambda s, n: _built(s, n, mask="diagonal too"), "masked the diagonal"),
        (lambda s, n: _built(s, n, mask="past"), "masked the past"),
        (lambda s, n: _built(s, n, mask="none") + (torch.arange(n) > torch.arange(n)[:, None]) * -math.inf, "NaN"),  # 0 * inf
        (lambda s, n: _built(s, n)[0], "one (T, T) matrix"),
        (lambda s, n: _built(s, n).permute(1, 2, 0), "heads last"),
        (lambda s, n: _built(s, n).long(), "tensor of integers"),
        (lambda s, n: _built(s, n).tolist(), "torch tensor"),
        (lambda s, n: _built(s, n, fill=math.inf), "+inf"),
        (lambda s, n: _built(s, n) * 1.1, "not -m (i - j)"),
        (lambda s, n: _built(_slopes(s.numel()), n), "use the `slopes` you are given"),
        (lambda s, n: _built(s.sort(descending=True).values, n), "you sorted the slopes"),
        (lambda s, n: _built(s[0] ** torch.arange(1, s.numel() + 1), n), "not -m (i - j)"),  # a ladder from slopes[0]
        (lambda s, n: _built(s, n, fill=-1e9), "-1e9 works in a softmax"),
        (lambda s, n: _built(s, n, fill=torch.finfo(s.dtype).min), "asks for float('-inf')"),
        (lambda s, n: _built(s, n, mask="none").masked_fill(torch.ones(n, n).triu(2).bool(), -math.inf), "exactly the keys after"),  # sees one key ahead
    ],
    "q3": [
        (lambda s, f: math.log10(f) / s, "log base 10"),
        (lambda s, f: math.log2(f) / s, "log base 2"),
        (lambda s, f: f / s, "exponentially"),
        (lambda s, f: math.log(f) * s, "multiply and divide are swapped"),
        (lambda s, f: 1 / s, "factor e"),
        (lambda s, f: -math.log(f) / s, "a distance is not"),
        (lambda s, f: (math.log(f) / s).ceil(), "rounded up"),
        (lambda s, f: (math.log(f) / s).floor(), "rounded down"),
        (lambda s, f: math.log(f) / s[:-1], "one window per head"),
        (lambda s, f: (math.log(f) / s) * 1.02, "not the distances"),
        (lambda s, f: float(math.log(f) / s[0]), "torch tensor"),
        (lambda s, f: math.log(f) / torch.tensor(_right(s.numel())), "your own slopes"),
        (lambda s, f: math.log(10.0) / s, "factor 10"),
    ],
    "q4": [
        (lambda m, n, far: _share(m, n, far, lambda d, f: d >= f), "exactly `distance`"),
        (_shifted, "if your distances start at 1"),  # the same sum, read as a range mistake
        (lambda m, n, far: _beyond(m, n, far, "not normalised"), "divide by the sum"),
        (lambda m, n, far: _beyond(m, n, far, "flipped"), "penalised, not rewarded"),
        (lambda m, n, far: (n - 1 - far) / n, "left out the bias"),
        (lambda m, n, far: _share(m, n, far, lambda d, f: d <= f), "within `distance`"),
        (lambda m, n, far: math.exp(-m * (far + 1)), "endless row of keys"),
        (lambda m, n, far: _beyond(m, n, far, "n + 1 keys"), "one too many"),
        (lambda m, n, far: _share(m, n - 1, far, lambda d, f: d > f), "one too few"),
        (lambda m, n, far: _beyond(m, n, far, "base 2"), "not 2"),
        (lambda m, n, far: _beyond(m, n, far, "base 10"), "not 10"),
        (lambda m, n, far: 100 * _share(m, n, far, lambda d, f: d > f), "percentage"),
        (lambda m, n, far: 1.5, "between 0 and 1"),
        (lambda m, n, far: 0.3, "differs from the weight"),
        (lambda m, n, far: torch.softmax(-m * torch.arange(n, dtype=torch.float64), 0), "add up the weights"),
        (_sliced_from_the_end, "exactly `distance`"),  # [:-distance]: also empty at distance 0
    ],
}  # fmt: skip


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=10))


def test_hidden_inputs_differ_from_the_public_ones_and_are_larger():
    for question in QUESTIONS:
        public = {c.describe for c in question.cases(0)}
        for seed in range(1, 6):
            assert not public & {c.describe for c in question.cases(seed)}, question.name
    hidden_heads = [c.args[0] for c in q1.cases(3)]
    assert 1 in hidden_heads  # H = 1 in every draw, the others larger than any public count
    assert min(h for h in hidden_heads if h > 1) > max(c.args[0] for c in q1.cases(0))
    assert min(c.args[1] for c in q4.cases(3)) >= 20


def test_cases_are_the_same_in_every_process_that_asks():
    # A grader calls cases(seed) in the child and in the parent: they must agree.
    for question in QUESTIONS:
        for seed in (0, 7):
            first, second = question.cases(seed), question.cases(seed)
            assert [c.describe for c in first] == [c.describe for c in second]


def test_the_judges_reference_bias_is_the_librarys():
    for heads, n in ((1, 1), (3, 6), (8, 9), (12, 5)):
        want = _bias(alibi_slopes(heads), n).float()
        assert torch.equal(want, alibi_bias(heads, n))


def test_a_large_negative_stand_in_for_minus_infinity_is_refused(capsys):
    # The question asks for float('-inf'); -1e9 and finfo.min are in the WRONG list.
    for fill in (-1e9, torch.finfo(torch.float32).min):
        assert "float('-inf')" in q2.check(lambda s, n, f=fill: _built(s, n, fill=f)).message
    # the course's type policy: a NumPy array is a near miss of the tensor asked for
    assert q2.check(lambda s, n: _built(s, n).numpy()).status == FAIL


def test_own_slopes_are_named_on_public_and_hidden_inputs(capsys):
    # They passed in public when the public slopes were exactly the standard ones (issue 17).
    def own_slopes(slopes, n):
        return _built(_slopes(slopes.numel()), n)

    assert "use the `slopes` you are given" in q2.check(own_slopes).message
    for seed in (1, 2, 3):
        cases = q2.cases(seed)
        verdict = q2.judge(cases, q2.run(own_slopes, cases))
        assert verdict.status == FAIL and "use the `slopes` you are given" in verdict.message


def test_the_slopes_may_be_a_list_or_a_tensor_and_the_windows_a_tensor(capsys):
    # q1 asks for a list of floats (a 1-D tensor is fine too); q3 for a tensor of shape (H,).
    assert q1.check(lambda h: torch.tensor(_right(h))).status == PASS
    assert q1.check(lambda h: _right(h)).status == PASS
    assert q1.check(lambda h: tuple(_right(h))).status == FAIL
    assert q3.check(lambda s, f: [math.log(f) / m for m in s.tolist()]).status == FAIL


def test_checks_never_show_the_answer(capsys):
    # The 12-head slopes are never printed, only the rule.
    for fn, _ in WRONG["q1"]:
        message = q1.check(fn).message
        assert "0.707" not in message and "0.3535" not in message
    message = q4.check(lambda m, n, far: 0.3).message
    assert f"{_beyond(0.5, 16, 4):.3f}" not in message


def test_half_precision_slopes_were_rejected_as_wrong_and_are_now_named(capsys):
    # Right slopes in float16 were "not the paper's slopes"; now the message names the rounding,
    # while float32 still passes.
    message = q1.check(lambda h: torch.tensor(_right(h), dtype=torch.float16)).message
    assert "not the paper's slopes" not in message and "float32 or float64" in message
    assert q1.check(lambda h: torch.tensor(_right(h), dtype=torch.float32)).status == PASS


def test_the_mpt_form_is_named_not_answered_with_the_generic_sentence(capsys):
    def mpt(s, n):
        i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
        return (s[:, None, None] * (j - n + 1)).masked_fill(j > i, -math.inf)  # (H, T, T)

    message = q2.check(mpt).message
    assert "MPT's form" in message and "are not -m (i - j)" not in message


def test_the_window_hint_names_a_log_that_takes_a_python_float():
    assert "math.log(factor)" in q3.hints[1]
    with pytest.raises(TypeError):
        torch.log(10.0)  # the hint's old "or torch.log" would fail on the float `factor`


def test_the_public_far_case_uses_the_largest_distance_a_128_token_model_saw():
    assert (2.0**-8, 1024, 127) in [c.args for c in q4.cases(0)]


@pytest.mark.parametrize("seed", range(1, 21))
@pytest.mark.parametrize(
    "wrong",
    [
        lambda m, n, far: math.exp(-m * (far + 1)),  # the tail of an endless row of keys
        lambda m, n, far: _beyond(m, n, far, "n + 1 keys"),
        lambda m, n, far: _share(m, n - 1, far, lambda d, f: d > f),  # one key too few
    ],
    ids=["infinite", "n + 1 keys", "n - 1 keys"],
)
def test_the_hidden_far_cases_alone_catch_the_wrong_number_of_keys(seed, wrong):
    # These passed the hidden cases on 37 (endless tail) and 55 (one key more or less) of 100
    # seeds; a flat head whose sequence ends just past `distance` now catches them on every seed.
    cases = q4.cases(seed)
    assert q4.judge(cases, q4.run(wrong, cases)).status == FAIL


@pytest.mark.parametrize("seed", [0, *range(1, 11)])
def test_an_endless_tail_from_distance_itself_is_named(seed, capsys):
    # exp(-m distance), the answer a reader of "the tail is e^(-m d)" writes first, got only the
    # generic sentence. Where the row of keys is long it is also (nearly) the share that counts
    # the key at `distance`, and that mistake's sentence is as right; never the generic one.
    def endless(m, n, far):
        return math.exp(-m * far)

    cases = q4.cases(seed)
    verdict = q4.judge(cases, q4.run(endless, cases))
    named = ("exp(-m distance)", "one key too near")
    assert verdict.status == FAIL and any(n in verdict.message for n in named), verdict.message
    assert "Your share differs" not in verdict.message


# -- the concept questions: the exercises ask others than the lecture's quiz, each one applied ----


def _m(head, heads):
    return float(alibi_slopes(heads)[head - 1])


# (question, a known-wrong answer computed with the library, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, 2 ** (-8 * 18 / 20), "paper's formula"),
    (c1, _m(2, 16), "ladder head 2 itself"),
    (c1, _m(2, 16) * 2 ** (-4 / 16), "half a step below"),
    (c1, _m(17, 20), "first extra head"),
    (c1, 2 ** (-8 * 18 / 32), "32-head ladder"),
    (c1, 2 ** (-8 * 18 / 16), "past its end"),
    (c1, 0.3, "That is not the number"),
    (c2, "a", "factor 100"),
    (c2, "b", "same sum"),
    (c2, "d", "not 100"),
    (c3, "a", "without ALiBi"),
    (c3, "c", "sign is flipped"),
    (c3, "d", "same sum"),
    (c4, 1 - float(far_mass(_m(13, 16), 100_000, 127)[0]), "within 127 tokens"),
    (c4, (100_000 - 128) / 100_000, "left out the bias"),
    (c4, 10 ** (-128 * _m(13, 16)), "not of 10"),
    (c4, 128 * _m(13, 16), "not a share"),
    (c4, float(far_mass(2.0**-13, 100_000, 127)[0]), "8-head formula"),  # 0.984
    (c4, math.exp(-127 * _m(13, 16)), "one step further"),  # 0.246: off by one
    (c4, math.exp(-1.41), "precision the question asks for"),  # 0.244: e^(-1.41) rounded early
    (c4, 0.5, "That is not the number"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    right = {
        c1: _m(18, 20),
        c2: "c",
        c3: "b",
        c4: float(far_mass(_m(13, 16), 100_000, 127)[0]),
    }
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name
    assert c4.evaluate(math.exp(-128 * _m(13, 16))).status == PASS
    assert c4.evaluate(0.243).status == PASS


def test_c2s_numbers_are_the_librarys():
    # c2's choices quote numbers; they must be what the library computes for 8 heads.
    slopes = alibi_slopes(8)  # (8,)
    ratio = (-99 * slopes.double()).exp()  # (8,): far key (d = 100) over near key (d = 1)
    assert (ratio > 0.01).tolist() == [False] * 4 + [True] * 4  # heads 5-8, answer "c"
    assert round(ratio[4].item(), 3) == 0.045 and round(ratio[3].item(), 3) == 0.002
    assert round(math.log(100) / 99, 3) == 0.047
    windows = effective_window(slopes).round().long().tolist()  # (8,)
    assert windows[4:] == [74, 147, 295, 589]
    assert [round(99 * m, 1) for m in slopes[4:6].tolist()] == [3.1, 1.5]


globals().update(concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "05_alibi", CONCEPT_WRONG))


def test_the_papers_formula_is_named_as_another_rule_not_a_near_miss(capsys):
    # Cold read 5: the paper's formula for H not a power of two is a different rule, not "Close, but",
    # and its section 3 is the paper's, not the lecture's.
    message = q1.check(lambda h: _ladder(h)).message
    assert "Close, but" not in message and "the paper's section 3" in message


def test_concept_feedback_does_not_hand_over_the_right_option():
    # Cold read 5: c2 (a) quoted the right option's 0.045; c3 (a) stated that B loses five times as much.
    why = {(q.name, c.key): c.why for q in (c2, c3) for c in q.choices}
    assert "0.045" not in why[("c2", "a")] and "five times" not in why[("c3", "a")]
