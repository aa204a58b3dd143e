"""Chapter 2's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer)."""

from pathlib import Path

import pytest
import torch
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib import (
    LearnedPositionalEmbedding,
    binary_encoding,
    integer_encoding,
    normalized_encoding,
)
from posenc_lib.analysis.ch02_naive import neighbour_distances
from posenc_lib.checks import FAIL, PASS
from posenc_lib.checks.ch02 import (
    CONCEPTS,
    EXERCISE_CONCEPTS,
    QUESTIONS,
    _answers,
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
SOLUTIONS = answer_functions(ROOT / "solutions" / "02_naive_encodings.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "02_naive_encodings.ipynb")


def _bits(n, b, shift=0, msb_first=False, bit_offset=0):
    """Bits of t + shift, column j = bit j + bit_offset, as a float (n, b) table."""
    t = torch.arange(n)[:, None] + shift  # (n, 1)
    j = torch.arange(b)[None, :] + bit_offset  # (1, b)
    table = ((t >> j) & 1).float()
    return table.flip(-1) if msb_first else table


def _steps(table, norm=2):
    diff = table[1:] - table[:-1]  # (T-1, D)
    if norm == "hamming":
        return (diff != 0).sum(-1).float()
    return diff.norm(p=norm, dim=-1)


def _ratio(steps):
    return float(steps.max() / steps.min())


def _gaps(i, j, lengths, divide=lambda n: n - 1):
    n = torch.tensor(lengths, dtype=torch.float32)
    return abs(i - j) / divide(n)


def _by_offset(matrix, reduce=torch.mean, by_t=False):
    """reduce(matrix.diagonal(k)) for k = 0 .. T-1 at once, (T,): mean, max, min or median.

    One gather instead of T Python calls (MiniLM's table has 512 diagonals, and the known-wrong
    answers run on it for every hidden seed). by_t: each diagonal's sum divided by T.
    """
    n = len(matrix)
    t = torch.arange(n)
    cols = t[None, :] + t[:, None]  # (T, T): row k, column t -> t + k
    valid = cols < n  # (T, T): the T - k pairs of offset k
    pairs = matrix[t[None, :].expand(n, n), cols.clamp(max=n - 1)]  # (T, T): matrix[t, t + k]
    if by_t or reduce is torch.mean:
        total = pairs.where(valid, 0.0).sum(1)  # (T,)
        return total / n if by_t else total / valid.sum(1)
    if reduce is torch.max:
        return pairs.where(valid, -torch.inf).amax(1)
    if reduce is torch.min:
        return pairs.where(valid, torch.inf).amin(1)
    return pairs.where(valid, torch.nan).nanmedian(1).values  # the lower middle, as torch.median


def _curve(table, reduce=torch.mean, centre=False, raw=False, by_t=False, absolute=False):
    """A learner's similarity-by-offset curve, (T,), with one of the usual slips switched on."""
    table = table - table.mean(0) if centre else table
    unit = table if raw else table / table.norm(dim=-1, keepdim=True)  # (T, D)
    cosines = unit @ unit.T  # (T, T)
    cosines = cosines.abs() if absolute else cosines
    return _by_offset(cosines, reduce, by_t)


def _mean_norm_curve(table):
    """Mean dot product at each offset over the mean squared row length of the whole table."""
    dots = table @ table.T  # (T, T)
    return _by_offset(dots) / table.pow(2).sum(-1).mean()


def _ratio_of_means(table):
    """Mean dot product at each offset over the mean of ||P_t|| ||P_t+k|| at that offset."""
    dots, lengths = table @ table.T, table.norm(dim=-1)  # (T, T), (T,)
    return _by_offset(dots) / _by_offset(lengths[:, None] * lengths[None, :])


def _rolled_curve(table, thr):
    """A loop over k with torch.roll: every t pairs with (t + k) mod T, so pairs wrap around."""
    unit = table / table.norm(dim=-1, keepdim=True)  # (T, D)
    for k in range(1, len(table)):
        if (unit * torch.roll(unit, -k, dims=0)).sum(-1).mean() < thr:
            return k
    return len(table)


def _cosines_along_dim_0(table, thr):
    """cosine_similarity with dim=0: one number per column, not per pair of rows."""
    for k in range(1, len(table)):
        if torch.cosine_similarity(table[:-k], table[k:], dim=0).mean() < thr:
            return k
    return len(table)


def _one_minus_cos_above(table, thr):
    """Waits for the cosine distance 1 - cos to pass the threshold."""
    return _first_below(-(1 - _curve(table)), -thr)


def _normalised_along_positions(table, thr):
    """Scales each column, not each row, to length 1."""
    unit = table / table.norm(dim=0, keepdim=True)  # (T, D)
    cosines = unit @ unit.T
    return _first_below(_by_offset(cosines), thr)


def _per_pair_loop(table, thr):
    """Right, but one torch call per pair: slow on MiniLM's 130,000 pairs."""
    n = len(table)
    curve = [1.0]  # the whole curve first, then the search
    for k in range(1, n):
        total = 0.0
        for t in range(n - k):
            a, b = table[t], table[t + k]
            total += float(torch.dot(a, b) / (a.norm() * b.norm()))
        curve.append(total / (n - k))
    return _first_below(torch.tensor(curve), thr)


def _row_0(table):
    """cos(P_0, P_k) for k = 0 .. T-1: only the first row's similarities, (T,)."""
    return torch.cosine_similarity(table[:1], table, dim=-1)


def _first_below(curve, threshold, strict=True, none=None):
    below = (curve[1:] < threshold) if strict else (curve[1:] <= threshold)  # offsets k - 1
    hits = below.nonzero()
    return int(hits[0]) + 1 if len(hits) else (len(curve) if none is None else none)


def _search_up_to(table, threshold, limit):
    """Right, but searches only the offsets k < limit; returns T when none of those drops below."""
    curve = _curve(table)
    return next((k for k in range(1, min(limit, len(table))) if curve[k] < threshold), len(table))


def _stop_once_it_rises(table, threshold):
    """Assumes a falling curve: gives up (returns T) at the first offset where the curve rises."""
    curve = _curve(table)
    for k in range(1, len(table)):
        if curve[k] < threshold:
            return k
        if curve[k] > curve[k - 1]:
            return len(table)
    return len(table)


def _capped_bits(n, b, cap=6):
    """Only the first `cap` bit columns computed, the rest left at 0."""
    table = torch.zeros(n, b)
    table[:, : min(b, cap)] = _bits(n, min(b, cap))
    return table


def _last_at_or_above(table, threshold):
    curve = _curve(table)
    return max((k for k in range(1, len(curve)) if curve[k] >= threshold), default=0)


def _distance_passes(table, threshold):
    dist = torch.cdist(table, table)  # (T, T)
    for k in range(1, len(table)):
        if dist.diagonal(k).mean() > threshold:
            return k
    return len(table)


WRONG = {
    "q1": [
        (lambda n, b: _bits(n, b, msb_first=True), "reverse order"),
        (lambda n, b: _bits(n, b, shift=1), "bits of t + 1"),
        (lambda n, b: _bits(n, b, shift=1, msb_first=True), "t + 1, and the bits are most"),
        (lambda n, b: _bits(n, b).bool(), "tensor of booleans"),
        (lambda n, b: _bits(n, b).long(), "tensor of integers"),
        (lambda n, b: 2 * _bits(n, b) - 1, "-1 and +1"),
        (lambda n, b: _bits(n, max(1, (n - 1).bit_length())), "only as many bits"),
        (lambda n, b: _bits(n, b + 1), "has 4 columns; it should have n_bits = 3"),
        (lambda n, b: _bits(n, b).T, "one row per bit"),
        (lambda n, b: _bits(n, b, bit_offset=1), "bit j + 1"),
        (lambda n, b: 1 - _bits(n, b), "inverted"),
        (lambda n, b: _bits(n, b).numpy(), "NumPy"),
        (lambda n, b: _bits(n, b).tolist(), "torch tensor"),
        (lambda n, b: 2 * _bits(n, b), "0.0 or 1.0"),
        (lambda n, b: _bits(n, b).roll(1, 0), "not the binary digits"),
        (lambda n, b: (torch.arange(n)[:, None] & 2 ** torch.arange(b)).float(), "place value"),
        (lambda n, b: _bits(n, n.bit_length()), "only as many bits"),  # bits of n, not of n - 1
        (lambda n, b: (torch.arange(n)[:, None] / 2 ** torch.arange(b)) % 2, "should be a bit"),
        (lambda n, b: _bits(n, b, shift=0) * 0 + _bits(16, b).repeat(n // 16 + 1, 1)[:n], "binary"),
        (_capped_bits, "binary digits"),
    ],
    "q2": [
        (lambda table: _ratio(_steps(table, "hamming")), "Hamming"),
        (lambda table: _ratio(_steps(table) ** 2), "squared"),
        (lambda table: _ratio(_steps(table, 1)), "(L1)"),
        (lambda table: 1 / _ratio(_steps(table)), "upside down"),
        (lambda table: float(_steps(table).max() - _steps(table).min()), "subtract"),
        (lambda table: _ratio(_steps(table)[:-1]), "left out the last pair"),
        (lambda table: _ratio(_steps(table)[1:]), "left out the first pair"),
        (lambda table: _ratio(_steps(torch.cat([table, table[:1]]))), "back to the first"),
        (lambda table: _ratio(_steps(table.T)), "between columns"),
        (lambda table: float(_steps(table).max() / _steps(table).mean()), "mean step"),
        (lambda table: _ratio(torch.pdist(table)), "all pairs"),
        (lambda table: _ratio((table[1:] - table[:-1]).norm(dim=0)), "norm over positions (dim=0)"),
        (lambda table: _ratio((table[1:] - table[:-1]).norm()), "whole (T-1, D) difference matrix"),
        (lambda table: 1.0, "pass dim=-1"),
        (lambda table: _steps(table), "T - 1 step lengths"),
        (lambda table: (_steps(table).max(), _steps(table).min()), "should be a number"),
        (lambda table: 1.01 * _ratio(_steps(table)), "differs from the longest"),
        (lambda table: 0.5, "cannot be below 1"),
        (lambda table: float(_steps(table)[-1] / _steps(table)[0]), "last step by the first"),
        (lambda table: float(_steps(table).max() / _steps(table)[0]), "differs from the longest"),
        (lambda table: _ratio(table.norm(dim=-1)), "differs from the longest"),  # rows, not steps
        (lambda table: _ratio(_steps(table)[:20]), "differs from the longest"),  # first 20 steps
    ],
    "q3": [
        (lambda i, j, lengths: _gaps(i, j, lengths, lambda n: n), "you divide by T;"),
        (lambda i, j, lengths: _gaps(i, j, lengths, lambda n: n + 1), "divide by T + 1"),
        (lambda i, j, lengths: (j - i) / (torch.tensor(lengths) - 1.0), "absolute value"),
        (lambda i, j, lengths: _gaps(i, j, lengths, torch.ones_like), "did not normalize"),
        (lambda i, j, lengths: j / (torch.tensor(lengths) - 1.0), "token j alone"),
        (lambda i, j, lengths: i / (torch.tensor(lengths) - 1.0), "token i alone"),
        (lambda i, j, lengths: 1 / _gaps(i, j, lengths), "upside down"),
        (lambda i, j, lengths: abs(i - j) // (torch.tensor(lengths) - 1), "tensor of integers"),
        (lambda i, j, lengths: _gaps(i, j, lengths[:1]).expand(len(lengths)), "same for every"),
        (lambda i, j, lengths: float(_gaps(i, j, lengths)[0]), "not a single number"),
        (lambda i, j, lengths: _gaps(i, j, lengths).tolist(), "torch tensor"),
        (lambda i, j, lengths: _gaps(i, j, lengths).numpy(), "NumPy"),
        (lambda i, j, lengths: _gaps(i, j, lengths)[None], "shape"),
        (lambda i, j, lengths: -2 * _gaps(i, j, lengths), "cannot be negative"),
        (lambda i, j, lengths: 1.01 * _gaps(i, j, lengths), "differ from the difference between"),
        (
            lambda i, j, lengths: _gaps(i, j, lengths).half(),
            "torch.float16, which keeps only about 3",
        ),
        (lambda i, j, lengths: _gaps(i, j, lengths).bfloat16(), "torch.bfloat16"),
        (lambda i, j, lengths: (abs(i - j) + 1) / (torch.tensor(lengths) - 1.0), "both ends"),
        (lambda i, j, lengths: abs(i - j) / torch.tensor(lengths) - 1, "in parentheses"),
        (lambda i, j, lengths: (abs(i - j) / (n - 1) for n in lengths), "returned a generator"),
        (lambda i, j, lengths: [abs(i - j) / (n - 1) for n in lengths], "returned a list"),
        (lambda i, j, lengths: _gaps(i, j, lengths).squeeze(), "not a single number"),
        (lambda i, j, lengths: _gaps(i, j, sorted(lengths)), "another order than `lengths`"),
        (lambda i, j, lengths: _gaps(i, j, sorted(set(lengths))), "one gap per distinct length"),
    ],
    "q4": [
        (lambda table, thr: _first_below(_curve(table), thr) - 1, "one too small"),
        (lambda table, thr: _first_below(_curve(table), thr) + 1, "one too large"),
        (lambda table, thr: _first_below(_curve(table, torch.median), thr), "the median"),
        (lambda table, thr: _first_below(_curve(table, absolute=True), thr), "keep the sign"),
        (lambda table, thr: _first_below(_mean_norm_curve(table), thr), "mean squared row"),
        (lambda table, thr: _first_below(_ratio_of_means(table), thr), "ratio of means"),
        (_rolled_curve, "wrap from the end of the table"),
        (_cosines_along_dim_0, "print your curve"),
        (_one_minus_cos_above, "print your curve"),
        (_normalised_along_positions, "print your curve"),
        (lambda table, thr: _first_below(_curve(table), thr, strict=False), "(<, not <=)"),
        (lambda table, thr: _last_at_or_above(table, thr), "last offset whose mean is still"),
        (lambda table, thr: _last_at_or_above(table, thr) + 1, "for good"),
        (lambda table, thr: _first_below(_curve(table, torch.max), thr), "(max over t)"),
        (lambda table, thr: _first_below(_curve(table, torch.min), thr), "(min over t)"),
        (lambda table, thr: _first_below(_curve(table, raw=True), thr), "raw dot products"),
        (lambda table, thr: _first_below(_row_0(table), thr), "position 0 only"),
        (lambda table, thr: _distance_passes(table, thr), "distance ||P_t - P_t+k||"),
        (lambda table, thr: _first_below(_curve(table, centre=True), thr), "no centring"),
        (
            lambda table, thr: _first_below(_curve(table, by_t=True), thr),
            "offset k has fewer pairs",
        ),
        (lambda table, thr: _first_below(_curve(table), 0.5), "whatever the threshold"),
        (lambda table, thr: _first_below(_curve(table), thr, none=-1), "return T, the table's"),
        (lambda table, thr: _first_below(_curve(table), thr, none=len(table) - 1), "not 29"),
        (lambda table, thr: _curve(table), "whole similarity curve"),
        (lambda table, thr: float(_curve(table)[1]), "not a mean cosine"),
        (lambda table, thr: _first_below(_curve(table), thr) + 2, "for this input and work"),
        (lambda table, thr: float(_first_below(_curve(table), thr) + 2), "Python int"),
        (lambda table, thr: 10**6, "1 .. 47"),
        (lambda table, thr: torch.tensor([1, 2]), "should be one number"),
        (lambda table, thr: _search_up_to(table, thr, 10), "search every offset"),
        (lambda table, thr: _search_up_to(table, thr, 21), "search every offset"),
        (lambda table, thr: _search_up_to(table, thr, len(table) // 2), "search every offset"),
        (lambda table, thr: _search_up_to(table, thr, len(table) - 1), "search every offset"),
        (_stop_once_it_rises, "curve rises again"),
    ],
}


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=11))


def test_hidden_inputs_are_new_and_longer_than_the_public_ones():
    for question in QUESTIONS:
        public = {c.describe for c in question.cases(0)}
        for seed in range(1, 6):
            assert not public & {c.describe for c in question.cases(seed)}, question.name
    assert max(c.args[0] for c in q1.cases(3)) > max(c.args[0] for c in q1.cases(0)) > 16
    assert len(q2.cases(3)[0].args[0]) > len(q2.cases(0)[0].args[0])
    assert min(min(c.args[2]) for c in q3.cases(3)) > 2


def test_the_random_walk_tells_every_unevenness_mistake_apart():
    # On the first (random-walk) table, each usual mistake gives its own value, so the sentence
    # that comes back names the mistake made, not a look-alike (on 0/1 tables, Hamming, squared
    # and L1 steps coincide).
    for seed in range(6):
        table = q2.cases(seed)[0].args[0]
        values = [_ratio(_steps(table))] + [
            f(table) for f, _ in WRONG["q2"][:13] if isinstance(f(table), float)
        ]
        assert len({round(v, 4) for v in values}) == len(values), seed


def test_checks_never_show_the_answer(capsys):
    verdict = q1.check(lambda n, b: _bits(n, b, msb_first=True))
    assert "[0., 1., 1.]" not in verdict.message and "tensor" not in verdict.message
    verdict = q3.check(lambda i, j, lengths: _gaps(i, j, lengths, lambda n: n))
    assert "0.25" not in verdict.message
    # Neither a fallback sentence nor any q3 message gives the formula asked for.
    verdict = q1.check(lambda n, b: _bits(n, b).roll(1, 0))
    assert ">> j" not in verdict.message and "% 2" not in verdict.message
    for fn, _ in WRONG["q3"]:
        assert "|i - j| / (T - 1)" not in q3.evaluate(fn).message


def test_the_first_public_gap_case_tells_the_look_alike_mistakes_apart():
    # A count of |i - j| + 1 tokens must not pass for the code of token i or j alone.
    i, j, _ = q3.cases(0)[0].args
    assert len({i, j, abs(i - j), abs(i - j) + 1}) == 4
    for seed in range(1, 6):
        for case in q3.cases(seed):
            i, j, _ = case.args
            assert len({i, j, abs(i - j), abs(i - j) + 1}) == 4, (seed, case.describe)


def test_the_random_walk_has_steps_that_move_different_numbers_of_coordinates():
    # Otherwise a Hamming count gives a ratio of exactly 1, the same as one .norm() over everything.
    for seed in range(6):
        table = q2.cases(seed)[0].args[0]
        assert _ratio(_steps(table, "hamming")) > 1.2, seed


def test_binary_reference_is_the_library_table():
    assert torch.equal(_bits(10, 5), binary_encoding(10, 5))


def test_every_offset_mistake_gives_its_own_answers_on_the_public_and_hidden_inputs():
    # A mistake is named by its answers on all four tables together, so no two may coincide.
    for seed in range(6):
        rights, wrongs = _answers(q4.cases(seed))
        patterns = [tuple(rights)] + [tuple(v) for v in wrongs.values()]
        assert len(set(patterns)) == len(patterns), seed


def test_an_int_passes(capsys):
    assert q4.check(lambda table, thr: int(_first_below(_curve(table), thr))).status == PASS


@pytest.mark.parametrize("convert", [float, torch.tensor, lambda k: torch.tensor(k).double()])
def test_an_offset_of_another_type_is_refused_with_the_conversion(convert):
    # The question asks for an int (the course's one type policy): 3.0 and a 0-d tensor are not.
    verdict = q4.evaluate(lambda table, thr: convert(_first_below(_curve(table), thr)))
    assert verdict.status == FAIL and "int" in verdict.message, verdict.message


def _none_when_never_below(table, thr):
    curve = _curve(table)
    hits = [k for k in range(1, len(curve)) if curve[k] < thr]
    return hits[0] if hits else None  # forgets the "none drops below" case


def test_a_none_where_no_offset_drops_below_is_told_what_that_case_returns():
    # The cold reader's finding: "did you forget the return?" alone does not say which case.
    verdict = q4.evaluate(_none_when_never_below)
    assert verdict.status == FAIL, verdict.message
    assert "return T, the table's length" in verdict.message, verdict.message
    # a None on every input is not that case: the generic sentence only
    verdict = q4.evaluate(lambda table, thr: None)
    assert "return T" not in verdict.message, verdict.message


def test_a_correct_but_slow_answer_is_told_it_does_too_much_work_in_python(monkeypatch):
    monkeypatch.setattr(q4, "timeout", 0.3)
    message = q4.evaluate(_per_pair_loop).message
    assert "one matrix product" in message, message
    assert q4.timeout == 0.3 and type(q4).timeout == 10.0


def test_the_public_offset_cases_are_the_ones_the_exercise_describes():
    smooth, window, real, turning, swinging, last, rising = q4.cases(0)
    assert real.args[0].shape == (512, 384) and real.args[1] == 0.5
    rights, _ = _answers(q4.cases(0))
    assert rights[2] == 3  # MiniLM's mean cosine drops below 0.5 first at offset 3
    assert rights[3] == len(turning.args[0])  # never below: the answer is T
    assert swinging.args[1] < 0 and rights[4] < len(swinging.args[0])  # below a negative cosine
    curve = _curve(window.args[0].double())
    assert curve[8] == 0.5 and rights[1] == 9  # exactly 0.5 at k = D/8: < and <= differ
    assert rights[5] == len(last.args[0]) - 1 > 20  # only the last offset drops below
    assert rising.args[1] == 0.3 and rights[6] == 8  # MiniLM's curve rises at k = 4 first


@pytest.mark.parametrize("seed", range(21))
def test_every_draw_holds_every_clause_of_the_questions(seed):
    # q1: a full table (n_positions = 2**n_bits), one with spare bits, one with just enough.
    sizes = [case.args for case in q1.cases(seed)]
    assert any(n == 2**b for n, b in sizes)
    assert any(b > (n - 1).bit_length() for n, b in sizes)
    assert any(b == (n - 1).bit_length() and n != 2**b for n, b in sizes)
    # q2: a walk whose first step is the shortest and last the longest, one whose extremes are
    # inside, a float64 table, a table of equal steps, a table of two rows.
    tables = [case.args[0] for case in q2.cases(seed)]
    steps = [_steps(t.double()) for t in tables]
    assert steps[0].argmin() == 0 and steps[0].argmax() == len(steps[0]) - 1
    assert any(0 < s.argmin() < len(s) - 1 and 0 < s.argmax() < len(s) - 1 for s in steps)
    assert any(t.dtype == torch.float64 for t in tables) and any(len(t) == 2 for t in tables)
    assert any(len(s) > 2 and float(s.max() - s.min()) < 1e-5 for s in steps)
    # q3: i > j; the shortest length that fits both tokens; lengths out of order, one repeated;
    # a single length.
    triples = [case.args for case in q3.cases(seed)]
    assert any(i > j for i, j, _ in triples)
    assert any(max(i, j) + 1 in lengths for i, j, lengths in triples)
    assert any(
        lengths != sorted(set(lengths)) and len(set(lengths)) < len(lengths)
        for *_, lengths in triples
    )
    assert any(len(lengths) == 1 for *_, lengths in triples)
    # q4: an answer of T (none below), one of T - 1 (past 20 and past T // 2), a tie at the
    # threshold, a negative threshold.
    cases = q4.cases(seed)
    rights, _ = _answers(cases)
    n_rows = [len(case.args[0]) for case in cases]
    assert any(r == n for r, n in zip(rights, n_rows, strict=True))
    assert any(r == n - 1 > 20 for r, n in zip(rights, n_rows, strict=True))
    assert any(case.args[1] < 0 for case in cases)


def test_no_threshold_sits_so_close_to_a_curve_value_that_float32_could_flip_it():
    for seed in range(6):
        for case in q4.cases(seed):
            table, threshold = case.args
            if "windows" in case.describe:
                continue  # exact by construction
            gap = (_curve(table.double())[1:] - threshold).abs().min()
            assert gap > 1e-5, (seed, case.describe, float(gap))


# -- the concept questions: the exercises ask others than the lecture quiz, each one applied ----


def test_the_concept_answers_are_what_the_library_measures():
    # c1: 8t first passes 100 at t = 13, the last position of a 14-token text
    lengths = integer_encoding(20, 64).norm(dim=-1)  # (20,)
    assert lengths[12] <= 100 < lengths[13] and c1.value == 14
    # c2: a code gap of 0.25 in a 201-token text spans 50 steps of 1/200
    codes = normalized_encoding(201, 1, dtype=torch.float64)[:, 0]
    assert abs(float(codes[50] - codes[0]) - 0.25) < 1e-12 and c2.value == 50
    # c3: 95 -> 96 flips 6 bits
    hamming = neighbour_distances(binary_encoding(1024, 10), "hamming")
    assert int(hamming[95]) == 6 and abs(c3.value - 6**0.5) < 1e-6
    # c4: a table of max_len rows has no row max_len
    with pytest.raises(ValueError):
        LearnedPositionalEmbedding(1024, 8)(1500)


# (question, a known-wrong answer, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, 13, "last token's position"),
    (c1, 12.5, "solves 8t = 100"),
    (c1, 101, "length to be t"),
    (c1, 3, "multiplied t by D"),
    (c1, 15, "That is not the number"),
    (c2, 1, "learned from 5-token texts"),
    (c2, 201 / 5, "ratio of the lengths"),
    (c2, 0.25 * 201, "instead of T − 1"),
    (c2, 4, "number of steps in a 5-token"),
    (c2, 200, "from the first token to the last"),
    (c2, 51, "both included"),
    (c2, 49, "That is not the number"),
    (c3, 6, "Hamming distance"),
    (c3, 1, "not one unit apart"),
    (c3, 5**0.5, "left out the zero"),
    (c3, 7**0.5, "one bit too many"),
    (c3, 10**0.5, "longest step"),
    (c3, 2.0, "That is not the number"),
    (c4, "a", "a lookup, not a formula"),
    (c4, "b", "does not wrap"),
    (c4, "d", "copies are all equal"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    right = {c1: 14, c2: 50, c3: 6**0.5, c4: "c"}
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name
    assert c3.evaluate(2.45).status == PASS and c2.evaluate(50.0).status == PASS


globals().update(
    concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "02_naive_encodings", CONCEPT_WRONG)
)
