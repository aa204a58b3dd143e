"""Chapter 3's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer)."""

import math
from pathlib import Path

import pytest
import torch
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib import sinusoidal_encoding
from posenc_lib.analysis.ch03_add_concat import random_abs_cosine
from posenc_lib.analysis.ch03_sinusoid import (
    confusion,
    dot_by_offset,
    similarity_by_decade,
    similarity_by_offset_range,
)
from posenc_lib.analysis.ch03_tables import best_linear_shift
from posenc_lib.checks import FAIL, PASS, Case, Concept
from posenc_lib.checks.ch03 import (
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
    q5,
)

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = answer_functions(ROOT / "solutions" / "03_sinusoidal.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "03_sinusoidal.ipynb")


# -- wrong answers, each written the way a learner would write it ---------------------------------------


def _pe(n, d, base=10000.0, power=None, start=0, swap=False, layout="interleaved"):
    t = torch.arange(start, start + n, dtype=torch.float64)[:, None]  # (T, 1)
    i = torch.arange(d // 2, dtype=torch.float64)
    angles = t / base ** ((2 * i / d) if power is None else power(i, d))  # (T, D/2)
    first, second = (angles.cos(), angles.sin()) if swap else (angles.sin(), angles.cos())
    if layout == "concatenated":
        return torch.cat((first, second), -1)
    return torch.stack((first, second), -1).reshape(n, d)


def _per_column(n, d, base=10000.0):
    angles = torch.arange(n, dtype=torch.float64)[:, None] / base ** (torch.arange(d) / d)
    table = angles.clone()
    table[:, 0::2], table[:, 1::2] = angles[:, 0::2].sin(), angles[:, 1::2].cos()
    return table


def _m(k, d, base=10000.0, sign=1, power=None, angle=None):
    i = torch.arange(d // 2, dtype=torch.float64)
    omega = base ** -((2 * i / d) if power is None else power(i, d))
    theta = sign * (k * omega if angle is None else angle(k, omega))
    m = torch.zeros(d, d, dtype=torch.float64)
    for j, a in enumerate(theta.tolist()):
        m[2 * j : 2 * j + 2, 2 * j : 2 * j + 2] = torch.tensor(
            [[math.cos(a), math.sin(a)], [-math.sin(a), math.cos(a)]]
        )
    return m


def _gram(table):
    return table.double() @ table.double().T


def _gap(table, ks=None, t_range=None, reduce=lambda d: d.abs().max()):
    g, n = _gram(table), table.shape[0]
    diffs = []
    for k in ks or range(1, (n - 1) // 2 + 1):
        ts = t_range(k, n) if t_range else range(k, n - k)
        diffs += [g[t, t + k] - g[t, t - k] for t in ts]
    return float(reduce(torch.stack(diffs)))


def _rolled_gap(table):
    g_rows = table.double()
    n = g_rows.shape[0]
    return max(
        float(((g_rows * g_rows.roll(-k, 0)).sum(-1) - (g_rows * g_rows.roll(k, 0)).sum(-1)).abs().max())
        for k in range(1, n)
    )  # fmt: skip


def _k_loop_gap(table, stop):
    """The gap with the offsets k = 1 .. stop(T) - 1, in a loop that starts from 0."""
    g, n = _gram(table), table.shape[0]
    worst = 0.0
    for k in range(1, stop(n)):
        t = torch.arange(k, n - k)
        worst = max(worst, float((g[t, t + k] - g[t, t - k]).abs().max()))
    return worst


def _wrapped_behind_gap(table):
    g, n = _gram(table), table.shape[0]
    return max(
        abs(float(g[t, t + k] - g[t, t - k]))
        for k in range(1, (n - 1) // 2 + 1)
        for t in range(n - k)
    )


def _translation_gap(table):
    g, n = _gram(table), table.shape[0]
    return max(float((g.diagonal(k) - g[0, k]).abs().max()) for k in range(1, n))


def _ok(n, d, base, last=None, power=None):
    """dist(k) > dist(1) for k = 2 .. last, from a table (the way the hint suggests)."""
    last = n - 1 if last is None else last
    table = _pe(last + 1, d, base, power=power)
    dist = (table - table[0]).norm(dim=-1)
    return bool((dist[2:] > dist[1]).all())


def _smallest(test):
    return lambda n, d, c: next((b for b in sorted(c) if test(n, d, b)), None)


def _monotone(n, d, c):
    failing = [b for b in sorted(c) if not _ok(n, d, b)]
    return next(b for b in sorted(c) if not failing or b > max(failing))


def _bisected(n, d, c):
    """A binary search over the sorted candidates, as if a larger base were always safer."""
    ordered, low, high = sorted(c), 0, len(c) - 1
    while low < high:
        middle = (low + high) // 2
        low, high = (low, middle) if _ok(n, d, ordered[middle]) else (middle + 1, high)
    return ordered[low]


def _in_list_order(n, d, c):
    """The first candidate that works, in the order the list comes in: no sorting."""
    return next(b for b in c if _ok(n, d, b))


def _float32_answer(n, d, c):
    """A right answer that reads the candidates through a float32 tensor: 1.6 -> 1.6000000238..."""
    for base in sorted(torch.tensor(c)):
        if _ok(n, d, float(base)):
            return float(base)


def _four(wq, pq, wk, pk, cross=None, dim=0):
    """The four terms word.word, word.pos, pos.word, pos.pos, with a learner's cross terms."""
    word_pos, pos_word = cross(wq, pq, wk, pk) if cross else (wq @ pk.T, pq @ wk.T)
    return torch.stack((wq @ wk.T, word_pos, pos_word, pq @ pk.T), dim=dim)


WRONG = {
    "q1": [
        (lambda n, d, b: _pe(n, d, b, swap=True), "swapped"),
        (lambda n, d, b: _pe(n, d, b, power=lambda i, d: i / d), "-i / d_model"),
        (lambda n, d, b: _per_column(n, d, b), "own index j"),
        (lambda n, d, b: _pe(n, d, b, start=1), "start at 1"),
        (lambda n, d, b: _pe(n, d, b, layout="concatenated"), "interleaved layout"),
        (lambda n, d, b: _pe(n, d, b, power=lambda i, d: i / (d // 2 - 1), layout="concatenated"), "tensor2tensor's variant"),
        (lambda n, d, b: _pe(n, d, b, power=lambda i, d: -2 * i / d), "grow with the pair index"),
        (lambda n, d, b: _pe(n, d, 10000.0), "whatever the argument"),
        (lambda n, d, b: _pe(n, d, b).T, "transposed"),
        (lambda n, d, b: _pe(n + 1, d, b), "one per position"),
        (lambda n, d, b: _pe(n, d, b).long(), "float dtype"),
        (lambda n, d, b: _pe(n, d, b).tolist(), "torch tensor"),
        (lambda n, d, b: _pe(n, d, b) * 1.01, "right shape but not the right values"),
        (lambda n, d, b: _pe(n, d, b).half(), "too coarse"),
        (lambda n, d, b: _pe(n, d, b).bfloat16(), "too coarse"),
    ],
    "q2": [
        (lambda k, d, b: _m(k, d, b).T, "wrong way"),
        (lambda k, d, b: _m(-k, d, b), "wrong way"),
        (lambda k, d, b: _m(abs(k), d, b), "wrong way"),  # right for k > 0 only
        (lambda k, d, b: _m(1, d, b), "whatever k is"),
        (lambda k, d, b: _m(k, d, b, power=lambda i, d: i / d), "-i / d_model"),
        (lambda k, d, b: _m(k, d, b, angle=lambda k, omega: k + 0 * omega), "turns by k radians"),
        (lambda k, d, b: _m(k, d, 10000.0), "whatever the argument"),
        (lambda k, d, b: torch.eye(d), "identity"),
        (lambda k, d, b: torch.ones(d, d), "mixes different pairs"),
        (lambda k, d, b: _m(k, d, b)[: d // 2], "shape"),
    ],
    "q3": [
        (lambda table: max(float((_gram(table) - _gram(table).T).abs().max()), 0.0), "does not care about the order"),
        (lambda table: _rolled_gap(table), "wrap around"),
        (_wrapped_behind_gap, "wrap around"),  # t from 0: table[t - k] counts from the end
        (lambda table: _gap(table, t_range=lambda k, n: range(k + 1, n - k)), "starts one late"),
        (lambda table: _k_loop_gap(table, lambda n: (n - 1) // 2), "offsets stop one short"),
        (lambda table: _k_loop_gap(table, lambda n: n // 2), "3-row table"),  # one short for odd T
        (lambda table: _k_loop_gap(table, lambda n: n // 2 + 1), "raised"),  # even T: an empty range
        (lambda table: _gap(table, reduce=lambda d: d.abs().mean()), "not the mean"),
        (lambda table: _gap(table, reduce=lambda d: d.max()), "absolute value"),
        (lambda table: _gap(table, ks=[1]), "only tried k = 1"),
        (lambda table: _translation_gap(table), "depends on t"),
        (lambda table: _gap(table / table.norm(dim=-1, keepdim=True)), "cosine similarity"),
        (lambda table: _gap(table, t_range=lambda k, n: range(k, n - k - 1)), "stops one short"),
        (lambda table: torch.tensor([_gap(table), 0.0]), "one number"),
        (lambda table: -_gap(table) - 1.0, "cannot be negative"),
    ],
    "q4": [
        (_smallest(lambda n, d, b: 2 * math.pi * b >= n), "2 pi * base >= n_positions"),
        (_smallest(lambda n, d, b: 2 * math.pi * b ** ((d - 2) / d) >= n), "2 pi * base ** ((d-2)/d)"),
        (_smallest(lambda n, d, b: b >= n), "exceed the context length"),
        (_smallest(lambda n, d, b: _ok(n + 1, d, b)), "one offset too many"),
        (_smallest(lambda n, d, b: _ok(n, d, b, last=n - 2)), "before the last offset"),
        (_smallest(lambda n, d, b: _ok(n, d, b, power=lambda i, d: i / d)), "-i / d_model"),
        (_monotone, "not always safer"),
        (lambda n, d, c: max(c), "largest candidate"),
        (lambda n, d, c: c.index(next(b for b in sorted(c) if _ok(n, d, b))), "base itself"),
        (_smallest(lambda n, d, b: False), "k = 2"),  # compared k = 1 with itself: nothing passes
        (lambda n, d, c: 3.14, "not in the list"),
        (lambda n, d, c: sorted(c)[0], "at least as close as neighbours"),
        (_in_list_order, "not sorted"),
        (_bisected, "not always safer"),
        (_smallest(lambda n, d, b: _ok(min(n, 1001), d, b)), "before the last offset"),  # k <= 1000
    ],
    "q5": [
        (lambda wq, pq, wk, pk: torch.stack((wq @ wk.T, wq @ pk.T, pq @ pk.T)), "forget a cross term"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk, lambda *a: (0 * (wq @ pk.T), 0 * (pq @ wk.T))), "concatenated vectors"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk, lambda *a: (wq @ pk.T, 0 * (pq @ wk.T))), "pos . word term is 0"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk, lambda *a: (pq @ wk.T, wq @ pk.T)), "in each other's place"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk, lambda *a: (wq @ pk.T, wq @ pk.T)), "the same one twice"),
        (lambda wq, pq, wk, pk: _four(wk, pk, wq, pq), "swapped the query and the key"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk).transpose(1, 2), "transposed"),
        (lambda wq, pq, wk, pk: torch.stack((wq @ wk, wq @ pk, pq @ wk, pq @ pk)), "without transposing"),
        (lambda wq, pq, wk, pk: torch.stack([(q * k).sum(-1) for q, k in ((wq, wk), (wq, pk), (pq, wk), (pq, pk))]), "row-wise product"),
        (lambda wq, pq, wk, pk: (wq + pq) @ (wk + pk).T, "whole score"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk, dim=-1), "last axis"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk) / wq.shape[1] ** 0.5, "divided by sqrt(D)"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk, lambda *a: (wq @ pq.T, pk @ wk.T)), "its own side"),
        (lambda wq, pq, wk, pk: tuple(_four(wq, pq, wk, pk)), "Return one tensor"),
        (lambda wq, pq, wk, pk: _four(wq, pq, wk, pk) + torch.eye(4)[3][:, None, None], "term 3 (pos . pos)"),
    ],
}  # fmt: skip


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=12))


def test_hidden_inputs_share_no_case_with_the_public_ones():
    for question in QUESTIONS:
        public = {c.describe for c in question.cases(0)}
        for seed in range(1, 6):
            assert not public & {c.describe for c in question.cases(seed)}, question.name


def test_points_add_up_to_twelve():  # the coding questions; the concept ones add 1 point each
    assert sum(q.points for q in QUESTIONS if not isinstance(q, Concept)) == 12


def test_checks_never_show_the_answer(capsys):
    # q4's sentences name the mistake, never the right base: every wrong answer fails on a public
    # case whose answer is 1.6 or 2 or 5, and the sentence (before the echoed input) holds none.
    for fn, _ in WRONG["q4"]:
        sentence = q4.check(fn).message.split("(Input:")[0]
        # a base appears in a sentence only as "base X" or "X is not in the list"
        assert not any(f"base {b}," in sentence or f"{b} is" in sentence for b in ("1.6", "2", "5"))


@pytest.mark.parametrize("seed", range(6))
def test_q4_cases_are_far_from_ties_and_always_have_an_answer(seed):
    # A learner's float32 table must reach the same verdict as the float64 reference: no candidate
    # may sit near dist(k) = dist(1).
    for case in q4.cases(seed):
        n, d, candidates = case.args
        margins = [confusion(n, d, b).margin for b in candidates]
        assert all(abs(m - 1) > 1e-3 for m in margins) and max(margins) > 1


def test_the_public_q4_cases_tell_each_mistake_from_the_answer(capsys):
    # Off by one in either direction changes the answer of a public case, and so does the
    # monotone shortcut: the public inputs alone catch each of them.
    for fn, fragment in WRONG["q4"][3:7]:
        assert fragment in q4.check(fn).message


def test_q1_accepts_float32_and_float64_tables(capsys):
    assert q1.check(lambda n, d, b: _pe(n, d, b).float()).status == PASS
    assert q1.check(lambda n, d, b: _pe(n, d, b)).status == PASS


def test_q2_and_q3_take_the_types_they_ask_for(capsys):
    # The course's type policy: a NumPy array for a tensor, or a 0-d tensor for a float, is a near
    # miss that the check names (it was accepted before).
    assert q2.check(lambda k, d, b: _m(k, d, b)).status == PASS
    assert q2.check(lambda k, d, b: _m(k, d, b).numpy()).status == FAIL
    assert q3.check(lambda table: _gap(table)).status == PASS
    assert q3.check(lambda table: torch.tensor(_gap(table))).status == FAIL


def test_q1_names_a_half_precision_table_as_too_coarse(capsys):
    # A right table in float16 used to get "Row 0 is right ... check the frequencies".
    message = q1.check(lambda n, d, b: _pe(n, d, b).half()).message
    assert "too coarse" in message and "frequencies" not in message


def test_q2_identity_is_not_called_close(capsys):
    message = q2.check(lambda k, d, b: torch.eye(d)).message
    assert message.startswith("Your M is the identity") and "Close" not in message


def test_q4_accepts_a_right_answer_read_through_float32(capsys):
    # torch.tensor(candidates) is float32: float(1.6 as float32) = 1.600000023841858 is still 1.6.
    assert float(torch.tensor(1.6)) != 1.6
    assert q4.check(_float32_answer).status == PASS
    for seed in range(1, 4):
        cases = q4.cases(seed)
        assert q4.judge(cases, q4.run(_float32_answer, cases)).status == PASS


def test_q4_catches_an_answer_that_does_not_sort_on_public_and_hidden_inputs(capsys):
    case = q4.cases(0)[0]
    n, d, _ = case.args
    unsorted = Case((n, d, [10000.0, 1.6]), "n_positions = 4096, d_model = 64, [10000, 1.6]")
    assert q4.diagnose(unsorted, 10000.0) is not None  # was accepted: no list was unsorted
    assert q4.diagnose(unsorted, 1.6) is None
    unsorted = Case((n, d, [1.8, 1.6, 1.2]), "n_positions = 4096, d_model = 64, [1.8, 1.6, 1.2]")
    assert "not sorted" in q4.diagnose(unsorted, 1.8)
    assert "not sorted" in q4.check(_in_list_order).message  # public
    for seed in range(1, 6):  # hidden: every list is unsorted in a way that misleads
        cases = q4.cases(seed)
        verdict = q4.judge(cases, q4.run(_in_list_order, cases))
        assert verdict.status == FAIL and "not sorted" in verdict.message, (seed, verdict.message)
        for c in cases:
            n, d, candidates = c.args
            working = [b for b in candidates if confusion(n, d, b).first_offset is None]
            assert working[0] != min(working)


def test_q5_every_draw_has_a_square_case_with_t_equal_to_d_and_one_with_more_keys(capsys):
    # The square case (Tq = Tk = D, never 4, the number of terms) lets a missing transpose and a
    # row-wise product return a value the check names; the second case tells the rows from the
    # columns by shape; the third uses random positions and longer words.
    for seed in range(6):
        square, wide, random_positions = q5.cases(seed)
        tq, d = square.args[0].shape
        assert tq == square.args[2].shape[0] == d != 4
        assert wide.args[0].shape[0] < wide.args[2].shape[0]
        assert "random position vectors" in random_positions.describe


def test_q5_terms_add_up_to_the_score_of_the_sums(capsys):
    # The worked answer's four terms add up to (w + p) . (w' + p'), on public and hidden inputs.
    for seed in range(3):
        for case in q5.cases(seed):
            wq, pq, wk, pk = case.args
            terms = SOLUTIONS["score_terms"](*case.args)
            torch.testing.assert_close(terms.sum(0), (wq + pq) @ (wk + pk).T, rtol=1e-5, atol=1e-5)


# -- the concept questions: the exercises ask others than the lecture's quiz, each one applied ----


def _wavelength(i, d=64, base=10000.0):
    return 2 * math.pi * base ** (2 * i / d)


def _first(rule):
    return next(i for i in range(200) if rule(i))


def _mean_similarity(offsets, base, d=256):
    return float(dot_by_offset(offsets, d, base).mean()) / (d / 2)


FIRST = _first(lambda i: _wavelength(i) > 512)  # c1: the first pair longer than a 512-token text

# (question, a known-wrong answer computed with the library, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, FIRST - 1, "still shorter than the text"),
    (c1, FIRST + 1, "counted the pairs from 1"),
    (c1, _first(lambda i: _wavelength(i) / (2 * math.pi) > 512), "leaving out the 2π"),
    (c1, _first(lambda i: 2 * math.pi * 10000 ** (i / 64) > 512), "base^(−i/D)"),
    (c1, 2 * FIRST, "first column"),
    (c1, 40, "That is not the number"),
    (c2, "a", "Two columns are not enough"),
    (c2, "c", "still a sine"),
    (c2, "d", "without a fit"),
    (c3, "a", "popular wavelength argument"),
    (c3, "b", "runs out well before k ≈ base"),
    (c3, "d", "That asks too much"),
    (c4, 3 * 256, "three times wider"),
    (c4, 256 / 9, "smaller than 256"),
    (c4, 256 * math.sqrt(3), "grew D by √3"),
    (c4, 9, "the factor by which D grows"),
    (c4, 4096, "That is not the number"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    # c4: the mean |cos| falls like 1/sqrt(D), so three times smaller is about nine times wider
    assert random_abs_cosine(9 * 256) == pytest.approx(random_abs_cosine(256) / 3, rel=2e-3)
    right = {c1: FIRST, c2: "b", c3: "c", c4: 9 * 256}
    assert FIRST == 16 and _wavelength(15) < 512 < _wavelength(16)
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name


def test_the_numbers_the_concept_questions_quote_are_the_library_s():
    # c1: pair 15's and pair 16's wavelengths
    assert round(_wavelength(15)) == 471 and round(_wavelength(16)) == 628
    # c2: a (sin, -sin) table is a sine-only table: its best linear shift misses by 28% to 47%
    table = sinusoidal_encoding(512, 64, dtype=torch.float64)  # (512, 64)
    table[:, 1::2] = -table[:, 0::2]  # (sin, -sin) pairs
    misses = [best_linear_shift(table, k)[1] for k in (1, 5, 50)]
    assert round(min(misses), 2) == 0.28 and round(max(misses), 2) == 0.47
    # c3 at D = 256, offsets 2,000..4,000: base 100000 is the smallest of the four with a mean of
    # at least 0.15 (0.25); base 10000 keeps 0.07, base 1000 has run out, base 1,000,000 has 0.38
    near = torch.arange(2000, 4001)
    means = {base: _mean_similarity(near, base) for base in (1e3, 1e4, 1e5, 1e6)}
    assert abs(means[1e3]) < 0.03 and round(means[1e4], 2) == 0.07
    assert round(means[1e5], 2) == 0.25 and round(means[1e6], 2) == 0.38
    assert [b for b, m in means.items() if m >= 0.15][0] == 1e5
    # the pair count's log_base k and 1 - log_base k at the range's ends, as the answer's why says
    logs = [math.log(k, 1e5) for k in (2000, 4000)]
    assert [round(x, 2) for x in logs] == [0.66, 0.72] and [round(1 - x, 2) for x in logs] == [
        0.34,
        0.28,
    ]
    assert round(1e5 / 4000) == 25 and round(1e5 / 2000) == 50
    # the core's numbers the why sentences quote: base 1000 within 0.03 of zero from k = 434, the
    # pair count over the decade means by about 0.11
    centres, means_1000 = similarity_by_offset_range(64, 1000.0, 50_000)
    assert round(float(centres[(means_1000 < 0.03).nonzero()[0, 0]])) == 434
    counts = torch.tensor([1 - (j + 0.5) / 4 for j in range(4)])
    over = counts - similarity_by_decade(64, 10000.0, n_decades=4)
    assert 0.09 < float(over.min()) and float(over.max()) < 0.13
    # c4: the prompt's 0.050 at D = 256
    assert f"{random_abs_cosine(256):.3f}" == "0.050"


globals().update(
    concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "03_sinusoidal", CONCEPT_WRONG)
)


def test_each_exercise_concept_question_has_its_own_nudge_and_a_readable_working():
    from posenc_lib.checks.ch03 import EXERCISE_CONCEPTS, q2

    nudges = [question.nudge for question in EXERCISE_CONCEPTS]
    assert all(nudges) and len(set(nudges)) == len(nudges)
    for question in (c1, c4):  # "Computed as:" shows the library's names, no private helper
        assert question.working and "_first_pair" not in question.working
    # q2's first hint is a nudge: it hands over neither the block nor the assembly
    assert not any(key in q2.hints[0] for key in q2.answer_keys)
    assert "block_diag" not in q2.hints[0] and "cos b" not in q2.hints[0]
