"""Chapter 6's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer)."""

import math
from pathlib import Path

import pytest
import torch
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib import apply_rope, rope_cos_sin, rope_inv_freq
from posenc_lib.analysis import ch06_beyond, ch06_rope
from posenc_lib.checks import PASS, Concept
from posenc_lib.checks.ch06 import (
    CONCEPTS,
    EXERCISE_CONCEPTS,
    QUESTIONS,
    c1,
    c2,
    c3,
    c4,
    q1,
    q3,
    q4,
    q5,
)

ROOT = Path(__file__).resolve().parents[2]
CODING = [q for q in QUESTIONS if not isinstance(q, Concept)]  # concept ones: test_concepts.py
SOLUTIONS = answer_functions(ROOT / "solutions" / "06_rope.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "06_rope.ipynb")
F64 = torch.float64
OTHER = {"half": "interleaved", "interleaved": "half"}


# -- q1: written independently of the check's own helpers ------------------------------------------


def _rope(x, positions, style, base, *, pairs=None, table=None, sign=1, power=2, order=None):
    """RoPE in float64, or a usual mistake: which dims pair, how cos/sin repeat, the turn's
    direction, the frequency exponent, and the layout the result is written back in."""
    pairs, table, order = pairs or style, table or style, order or pairs or style
    x = x.double()
    n, d = x.shape
    theta = base ** (-power * torch.arange(d // 2, dtype=F64) / d)  # (D/2,)
    angles = sign * torch.tensor(positions, dtype=F64)[:, None] * theta  # (T, D/2)
    if pairs == "half":
        x1, x2 = x[:, : d // 2], x[:, d // 2 :]
    else:
        x1, x2 = x[:, 0::2], x[:, 1::2]
    if table == pairs:
        cos, sin = angles.cos(), angles.sin()
    else:  # a table repeated for the other layout, read with this layout's pairs
        full = (
            torch.cat((angles, angles), -1) if table == "half" else angles.repeat_interleave(2, -1)
        )
        first = full[:, : d // 2] if pairs == "half" else full[:, 0::2]
        second = full[:, d // 2 :] if pairs == "half" else full[:, 1::2]
        y1 = x1 * first.cos() - x2 * first.sin()
        y2 = x1 * second.sin() + x2 * second.cos()
        return _write(y1, y2, order)
    return _write(x1 * cos - x2 * sin, x1 * sin + x2 * cos, order)


def _write(y1, y2, order):
    if order == "half":
        return torch.cat((y1, y2), -1)
    return torch.stack((y1, y2), -1).reshape(y1.shape[0], -1)


def _cos_only(x, positions, style, base):
    d = x.shape[1]
    theta = base ** (-2 * torch.arange(d // 2, dtype=F64) / d)
    angles = torch.tensor(positions, dtype=F64)[:, None] * theta
    table = torch.cat((angles, angles), -1) if style == "half" else angles.repeat_interleave(2, -1)
    return x.double() * table.cos()


# -- q2, q3, q4 --------------------------------------------------------------------------------------


def _scores(rotate, q, k, offset, positions, *, rotate_k=True, same=False, key=False):
    out = []
    for p in positions:
        m, n = (p, p + offset) if key else (p + offset, p)
        if same:
            m = n = p
        out.append(float(rotate(q, m) @ (rotate(k, n) if rotate_k else k)))
    return out


def _spread(scores):
    return max(scores) - min(scores)


def _bound(distance, d, base, *, power=2, divide=None, reduce="mean", shift=False, first=0):
    theta = base ** (-power * torch.arange(first, first + d // 2, dtype=F64) / d)
    phases = distance * theta
    real, imag = phases.cos().cumsum(0), phases.sin().cumsum(0)
    sizes = (real**2 + imag**2).sqrt()
    if shift:
        sizes = torch.cat((torch.zeros(1, dtype=F64), sizes[:-1]))
    if reduce == "real":
        sizes = real
    if reduce == "per j":  # |S_j| / j: the mean of the first j phases, not their sum
        sizes = sizes / torch.arange(1, d // 2 + 1, dtype=F64)
    if reduce == "last":
        return float(sizes[-1])
    if reduce == "modulus of the sum":
        return float(torch.complex(real.sum(), imag.sum()).abs() / (d // 2))
    if reduce == "cos":
        return float(phases.cos().mean())
    return float(sizes.sum() / (d // 2 if divide is None else divide))


def _order(d, target):
    to_half = torch.cat((torch.arange(0, d, 2), torch.arange(1, d, 2)))
    return to_half if target == "half" else torch.argsort(to_half)


def _columns(w, heads, target, *, inverse=False, whole=False):
    if whole:
        return w[:, _order(w.shape[1], target)]
    d = w.shape[1] // heads
    order = _order(d, OTHER[target] if inverse else target)
    return w[:, torch.cat([h * d + order for h in range(heads)])]


def _reversed(w, heads):
    d = w.shape[1] // heads
    return w[:, torch.cat([h * d + torch.arange(d - 1, -1, -1) for h in range(heads)])]


def _strided(w, heads, target):
    """Each head taken as the columns h, h + H, h + 2H, ... (a wrong split), reordered within."""
    d = w.shape[1] // heads
    order = _order(d, target)
    out = w.clone()
    for h in range(heads):
        columns = torch.arange(h, w.shape[1], heads)  # (D_h,)
        out[:, columns] = w[:, columns[order]]
    return out


WRONG = {
    "q1": [
        (lambda x, p, s, b: x, "returns x unchanged"),
        (lambda x, p, s, b: _rope(x, p, OTHER[s], b), "paired the dims as in the"),
        (lambda x, p, s, b: _rope(x, p, s, b, sign=-1), "turn clockwise"),
        (lambda x, p, s, b: _rope(x, p, s, b, order=OTHER[s]), "wrote the result back"),
        (lambda x, p, s, b: _rope(x, p, s, b, table=OTHER[s]), "laid out for"),
        (lambda x, p, s, b: _rope(x, p, s, b, power=1), "base ** (-i / D)"),
        (lambda x, p, s, b: _rope(x, p, s, b, power=-2), "grow with the pair index"),
        (lambda x, p, s, b: _rope(x, [t + 1 for t in p], s, b), "off by one"),
        (lambda x, p, s, b: _rope(x, list(range(len(p))), s, b), "instead of the `positions` given"),
        (lambda x, p, s, b: _rope(x, p, s, 10000.0), "base 10000 instead"),
        (lambda x, p, s, b: _cos_only(x, p, s, b), "left out the partner"),
        (lambda x, p, s, b: _rope(x, p, s, b).tolist(), "torch tensor"),
        (lambda x, p, s, b: _rope(x, p, s, b)[:, :2], "shape"),
        (lambda x, p, s, b: _rope(x, p, s, b) + 0.01, "right shape but not the right values"),
        (lambda x, p, s, b: _rope(x, p, "half", b), "paired the dims as in the 'half' layout"),  # style ignored
        (lambda x, p, s, b: _rope(x, sorted(p), s, b), "sorted the positions"),
    ],
    "q2": [
        (lambda r, q, k, o, p: _spread(_scores(r, q, k, o, p, rotate_k=False)), "not the key"),
        (lambda r, q, k, o, p: _spread(_scores(r, q, k, o, p, same=True)), "same position"),
        (lambda r, q, k, o, p: _spread(_scores(r, q, k, o, p, key=True)), "moved the key"),
        (lambda r, q, k, o, p: max(map(abs, _scores(r, q, k, o, p))), "largest |score|"),
        # The spread of |score|: equal to the spread wherever the scores share a sign.
        (lambda r, q, k, o, p: _spread([abs(s) for s in _scores(r, q, k, o, p)]), "spread of |score|"),
        (lambda r, q, k, o, p: torch.tensor(_scores(r, q, k, o, p)).std().item(), "standard deviation"),
        (lambda r, q, k, o, p: _spread(_scores(r, q, k, o, range(len(p)))), "instead of the `positions`"),
        (lambda r, q, k, o, p: _scores(r, q, k, o, p), "not the list of scores"),
        (lambda r, q, k, o, p: 0.0, "differs from max - min"),
        (lambda r, q, k, o, p: -_spread(_scores(r, q, k, o, p)) - 1, "cannot be negative"),
        (lambda r, q, k, o, p: _spread(_scores(r, q, k, o, p[:-1])), "left out the last position"),
        (lambda r, q, k, o, p: _spread(_scores(r, q, k, o, p[1:])), "left out the first position"),
        (lambda r, q, k, o, p: abs(_scores(r, q, k, o, p)[-1] - _scores(r, q, k, o, p)[0]), "last score minus the first"),
        (lambda r, q, k, o, p: _spread(_scores(r, k, q, o, p)), "or swapped q and k"),
        (lambda r, q, k, o, p: _spread(_scores(r, q, k, abs(o), p)), "used |offset|"),
    ],
    "q3": [
        (lambda t, d, b: _bound(t, d, b, divide=1), "sum of the |S_j|"),
        (lambda t, d, b: _bound(t, d, b, divide=d), "divided by D"),
        (lambda t, d, b: _bound(t, d, b, reduce="last"), "last partial sum only"),
        (lambda t, d, b: _bound(t, d, b, reduce="last") / (d // 2), "|S_{D/2}| / (D/2)"),
        (lambda t, d, b: _bound(t, d, b, reduce="real"), "real parts"),
        (lambda t, d, b: _bound(t, d, b, shift=True), "off by one"),
        (lambda t, d, b: _bound(t, d, b, power=1), "base ** (-i / D)"),
        (lambda t, d, b: _bound(t, d, b, reduce="cos"), "expected score"),
        (lambda t, d, b: (d // 2 + 1) / 2, "does not change with the distance"),
        (lambda t, d, b: torch.ones(d // 2), "one number"),
        (lambda t, d, b: _bound(t, d, b) * 1.01, "differs from (1 / (D/2))"),
        (lambda t, d, b: _bound(t, d, 10000.0), "base 10000 instead"),
        (lambda t, d, b: _bound(t, d, b, divide=d // 2 + 1), "S_0 = 0 included"),
        (lambda t, d, b: _bound(t, d, b, reduce="per j"), "divided each |S_j| by j"),
        (lambda t, d, b: _bound(t, d, b, first=1), "your pairs run i = 1 .. D/2"),  # the paper's i
        (lambda t, d, b: _bound(t, d, b, reduce="modulus of the sum"), "modulus of the sum"),
    ],
    "q4": [
        (lambda wq, wk, h, t: (wq, wk), "as they came"),
        (lambda wq, wk, h, t: (_columns(wq, h, "half"), _columns(wk, h, "half")), "target = 'interleaved'"),  # the direction for 'half' always
        (lambda wq, wk, h, t: (_columns(wq, h, t, inverse=True), _columns(wk, h, t, inverse=True)), "opposite direction"),
        (lambda wq, wk, h, t: (_columns(wq, h, t), wk), "fixed w_q and not w_k"),
        (lambda wq, wk, h, t: (wq, _columns(wk, h, t)), "fixed w_k and not w_q"),
        (lambda wq, wk, h, t: (_columns(wq, h, t, whole=True), _columns(wk, h, t, whole=True)), "as if they were one head"),
        (lambda wq, wk, h, t: (wq[_order(wq.shape[0], t)], wk[_order(wk.shape[0], t)]), "rows (input features)"),
        (lambda wq, wk, h, t: (_columns(wk, h, t), _columns(wq, h, t)), "two matrices in the wrong order"),
        (lambda wq, wk, h, t: (wk, wq), "swapped order"),
        (lambda wq, wk, h, t: _columns(wq, h, t), "pair of tensors"),
        (lambda wq, wk, h, t: (_reversed(wq, h), _reversed(wk, h)), "with itself are right"),
        (lambda wq, wk, h, t: (2 * _columns(wq, h, t), _columns(wk, h, t)), "even on the diagonal"),
        (lambda wq, wk, h, t: (_columns(wq, h, t)[:, :-1], _columns(wk, h, t)), "shape"),
        (lambda wq, wk, h, t: (_strided(wq, h, t), _strided(wk, h, t)), "h, h + H, h + 2H"),
    ],
    "q5": [
        (lambda length, d: float(length), "the rule \"base > context\""),
        (lambda length, d: _base(length, d, circle=1.0), "left out the 2 pi"),
        (lambda length, d: _base(length, d, circle=1 / (2 * math.pi)), "multiplied by 2 pi"),
        (lambda length, d: _base(length, d, circle=math.pi), "you used pi"),
        (lambda length, d: length / (2 * math.pi), "a pair i = D/2 that does not exist"),
        (lambda length, d: _base(length, d, power=(d - 2) / d), "exponent is upside down"),
        (lambda length, d: _base(length, d, power=d / 2), "you used pair 1"),
        (lambda length, d: _base(length, d, power=(d // 2) / (d // 2 - 2)), "D/2 where D belongs"),
        (lambda length, d: 2 * math.pi * length ** ((d - 2) / d), "slowest wavelength of base = L"),
        (lambda length, d: _base(length, d) * 1.001, "turns exactly once"),
        (lambda length, d: 10 * float(length), "larger than the context length"),
        (lambda length, d: [_base(length, d)], "one number"),
    ],
}  # fmt: skip


def _base(length, d, *, circle=2 * math.pi, power=None):
    """(L / circle) ** power, power D / (D - 2) unless given: the answer or a usual mistake."""
    return (length / circle) ** (d / (d - 2) if power is None else power)


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=10))


@pytest.mark.parametrize("question", CODING, ids=lambda q: q.name)
def test_the_library_agrees_with_the_worked_solutions(question):
    # The check's reference is the library; the solutions notebook is written without it.
    from posenc_lib.analysis import ch06_beyond, ch06_rope

    for case in question.cases(3):
        got = SOLUTIONS[question.function](*case.args)
        if question is q1:
            x, positions, style, base = case.args
            assert torch.allclose(
                got.double(), ch06_rope.rotate(x, positions, base, style), atol=1e-5
            )
        elif question is q3:
            assert got == pytest.approx(
                float(ch06_rope.decay_bound([case.args[0]], *case.args[1:])[0])
            )
        elif question is q5:
            assert got == pytest.approx(ch06_beyond.smallest_base(*case.args), rel=1e-12)
        elif question is q4:
            w_q, w_k, heads, target = case.args
            fixed = ch06_rope.convert_projection(w_q, heads, OTHER[target], target)
            assert torch.equal(got[0], fixed)


def test_hidden_inputs_differ_from_the_public_ones_and_share_no_case():
    for question in CODING:
        public = {c.describe for c in question.cases(0)}
        for seed in range(1, 6):
            hidden = {c.describe for c in question.cases(seed)}
            assert hidden and not public & hidden, question.name


def test_cases_are_deterministic_from_the_seed():
    # A grader builds the cases in two processes: they must agree.
    for question in QUESTIONS:
        first, second = question.cases(4), question.cases(4)
        assert [c.describe for c in first] == [c.describe for c in second]
        for a, b in zip(first, second, strict=True):
            for x, y in zip(a.args, b.args, strict=True):
                if isinstance(x, torch.Tensor):
                    assert torch.equal(x, y)


def test_points_add_up_to_ten_and_checks_never_show_the_answer(capsys):
    assert sum(q.points for q in CODING) == 10  # the concept questions add 1 point each
    verdict = q3.check(lambda t, d, b: 0.0)
    assert "16.5" not in verdict.message  # the bound at distance 0 is never given away


def test_q1_accepts_float32_work_and_float64_work(capsys):
    solution = SOLUTIONS["apply_rope"]
    assert q1.check(lambda x, p, s, b: solution(x.double(), p, s, b)).status == PASS
    assert q1.check(lambda x, p, s, b: solution(x, p, s, b).float()).status == PASS


def test_q4_accepts_any_fix_that_gives_the_same_logits(capsys):
    # Negating both matrices changes no logit (each is a product of a q and a k entry).
    solution = SOLUTIONS["fix_layout"]

    def negated(w_q, w_k, heads, target):
        fixed_q, fixed_k = solution(w_q, w_k, heads, target)
        return -fixed_q, -fixed_k

    assert q4.check(negated).status == PASS


def _bound_float32(distance, head_dim, base=10000.0):
    # The question's recipe done in float32 throughout, as a learner who skips the dtype would.
    theta = base ** (-torch.arange(0, head_dim, 2) / head_dim)  # (D/2,) float32
    phases = distance * theta
    real, imag = phases.cos().cumsum(0), phases.sin().cumsum(0)
    return float(torch.sqrt(real**2 + imag**2).mean())


def test_q3_accepts_float32_work_on_public_and_hidden_inputs(capsys):
    # float32 is 2.6e-6 off on the public case (1000, 32, 500) and up to ~9e-4 * (1 + b) on
    # graders' cases; the tolerance used to be 1e-6 and rejected it everywhere.
    assert q3.check(_bound_float32).status == PASS
    for seed in range(1, 40):
        cases = q3.cases(seed)
        verdict = q3.judge(cases, q3.run(_bound_float32, cases))
        assert verdict.status == PASS, (seed, verdict.message)


def test_q3_names_each_mistake_before_the_distance_0_case(capsys):
    # At distance 0 the mean of cos and |S_{D/2}| / (D/2) are both 1: the distance-0 case is last,
    # so an earlier case tells them apart.
    assert q3.cases(0)[-1].args[0] == 0
    message = q3.check(lambda t, d, b: _bound(t, d, b, reduce="cos")).message
    assert "expected score" in message and "|S_{D/2}| / (D/2)" not in message


def test_q4_wrong_direction_message_names_the_target_it_failed_on(capsys):
    # Always applying (0, 2, 4, ..., 1, 3, 5, ...) is right for 'half' and wrong for 'interleaved':
    # the sentence names the mistake and the input it failed on, and never prints a permutation
    # (the fix, which the hints hold).
    message = q4.check(
        lambda wq, wk, h, t: (_columns(wq, h, "half"), _columns(wk, h, "half"))
    ).message
    assert "opposite direction" in message and "target = 'interleaved'" in message
    assert "(0, D/2" not in message and "(0, 2, 4" not in message


def test_q1_messages_and_hints_read_cleanly():
    # One "but" per sentence, and the first hint's code works on the list the question promises.
    wrong = q1.evaluate(lambda x, p, s, b: _rope(x, p, s, b, order=OTHER[s])).message
    assert wrong.count(" but ") == 1, wrong
    assert "positions[:, None]" not in q1.hints[1]
    assert "torch.tensor(positions, dtype=torch.float64)[:, None]" in q1.hints[1]


def test_q1_first_hint_is_a_nudge_and_no_hint_holds_the_turn():
    # Hint 1 names the idea, no code; no hint spells out the rotation's key line (solution() does).
    assert "torch" not in q1.hints[0] and "base **" not in q1.hints[0]
    for hint in q1.hints:
        assert "x1 cos - x2 sin" not in hint and "x1 * cos" not in hint


def test_q4_a_value_change_is_told_to_stay_within_each_head():
    message = q4.check(lambda wq, wk, h, t: (2 * _columns(wq, h, t), _columns(wk, h, t))).message
    assert "within each head" in message and "do not change their values" not in message


def test_no_concept_sentence_says_nothing_turns_at_m_equals_n_or_calls_the_floor_necessary():
    # At m = n > 0 both the query and the key turn; their turns cancel. And the wavelength floor
    # is a heuristic: nothing shows a model needs it (Men et al. 2024 derive another bound).
    for question in (*CONCEPTS, *EXERCISE_CONCEPTS):
        texts = [question.prompt, *(getattr(question, "why", ""),)]
        texts += [
            t for choice in getattr(question, "choices", ()) for t in (choice.text, choice.why)
        ]
        for text in texts:
            assert "nothing turns" not in text and "necessary" not in text, (question.name, text)


# -- the concept questions: the exercises ask others than the lecture's quiz, each one applied ----


def test_the_right_answers_are_not_all_the_same_letter():
    assert len({q.answer for q in (c2, c3, c4)}) == 3  # the right letter moves


def _wavelengths(head_dim=128, base=500_000.0):
    return 2 * math.pi / rope_inv_freq(head_dim, base, dtype=F64)[0]  # (D/2,) positions per turn


def _slow(turn=2 * math.pi, power=2):
    theta = 500_000.0 ** (-power * torch.arange(64, dtype=F64) / 128)  # (D/2,) Llama 3
    return int((131_072 * theta < turn).sum())


# (question, a known-wrong answer computed with the library, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, int((_wavelengths() <= 131_072).sum()), "at least once"),
    (c1, _slow(turn=1.0), "one radian"),
    (c1, 64, "not every pair is slow"),
    (c1, _slow(power=1), "fall too slowly"),
    (c1, 1, "not the only one"),
    (c1, _slow() - 1, "fencepost"),
    (c1, _slow() + 1, "one pair too many"),
    (c1, 45, "That is not the number"),
    (c2, "a", "both sides turn"),
    (c2, "b", "the side the bug leaves alone"),
    (c2, "d", "fixed form"),
    (c3, "a", "not the same pairs"),
    (c3, "b", "Speeds belong to pair indices"),
    (c3, "c", "nothing crashes"),
    (c4, "a", "only moves the exponent"),
    (c4, "c", "The other way round"),
    (c4, "d", "rule of thumb"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    right = {c1: int((_wavelengths() > 131_072).sum()), c2: "c", c3: "d", c4: "b"}
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name
    assert c1.evaluate(15).status == PASS and c1.evaluate(15.0).status == PASS


globals().update(concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "06_rope", CONCEPT_WRONG))


def test_the_numbers_the_concept_sentences_quote_are_the_librarys():
    waves = _wavelengths()
    assert f"{waves[49]:,.0f}" == "145,029" and f"{waves[48]:,.0f}" == "118,143"
    assert f"{waves[49]:,.0f}" in c1.why and f"{waves[48]:,.0f}" in c1.why
    # c2: with only the keys turned, the score follows n alone
    q, k = ch06_rope.random_query_key(64, seed=3)
    theta = rope_inv_freq(64, dtype=F64)[0]

    def bug(m, n):
        cos, sin = rope_cos_sin(torch.tensor([float(n)], dtype=F64), theta)  # (1, D) each
        return float(q @ apply_rope(k[None], cos, sin)[0])  # the query left unturned

    assert abs(bug(7, 3) - bug(100, 3)) < 1e-12
    assert min(abs(bug(7, 3) - bug(8, 4)), abs(bug(7, 3) - bug(7, 100))) > 1e-3
    # c3: interleaved code puts dim 64 in pair 32 with dim 65, at 10,000^(-1/2) = 0.01 rad/position
    order = ch06_rope.layout_permutation(128, "interleaved", "half")  # half position -> dim
    assert (order[32], order[96]) == (64, 65)  # interleaved dims 64, 65 = pair 32 (of D/2 = 64)
    assert abs(float(rope_inv_freq(128, dtype=F64)[0][32]) - 0.01) < 1e-15
    # c4: the wavelengths and the floor its sentences quote
    shown = {
        "58,470": ch06_beyond.slowest_wavelength(256, 10_000.0),
        "107,650": ch06_beyond.slowest_wavelength(128, 20_000.0),
        "27,500": ch06_beyond.slowest_wavelength(128, 5_000.0),
        "18,560": ch06_beyond.smallest_base(100_000, 128),
    }
    for text, value in shown.items():
        assert f"{round(value, -1):,.0f}" == text, (text, value)
    assert round(ch06_beyond.slowest_wavelength(128, 10_000.0)) == 54_410
    assert f"{100_000 / ch06_beyond.smallest_base(100_000, 128):.1f}" == "5.4"
    whys = " ".join(choice.why for choice in c4.choices)
    assert all(text in whys for text in shown)


def test_c1_context_sits_far_from_a_pair_boundary():
    # A learner who rounds 2π (to 6 or 6.3) or a wavelength by a few percent still counts 15 pairs:
    # the boundary pairs' wavelengths are more than 8% from the context on either side.
    waves = _wavelengths()
    assert waves[48] < 131_072 / 1.08 and waves[49] > 131_072 * 1.08
    for circle in (6.0, 6.3, 2 * math.pi * 1.05, 2 * math.pi * 0.95):
        theta = rope_inv_freq(128, 500_000.0, dtype=F64)[0]
        assert int((131_072 * theta < circle).sum()) == 15


def test_each_exercise_concept_question_has_its_own_hint():
    # A nudge toward this question's idea, not the generic "re-read section N".
    for question in EXERCISE_CONCEPTS:
        assert question.nudge and "re-read" not in question.nudge, question.name
        assert question.hints == (question.nudge,)
    assert len({q.nudge for q in EXERCISE_CONCEPTS}) == len(EXERCISE_CONCEPTS)


def test_every_c4_option_gives_a_reason():
    # No option stands out by lacking the justification the others give after a colon.
    assert all(":" in choice.text for choice in c4.choices)


def test_the_decay_bound_feedback_points_to_the_lecture_not_the_deep_dive():
    message = q3.check(lambda t, dim, b: float(_bound(t, dim, b, divide=dim))).message
    assert "divided by D" in message and "section 4 of the lecture" in message
    assert "deep dive" not in message
