"""Chapter 4's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer)."""

import math
from pathlib import Path

import pytest
import torch
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib import RelativePositionBias, t5_relative_position_bucket
from posenc_lib.analysis.ch04_encdec import cross_attention
from posenc_lib.analysis.ch04_relative import offset_matrix, scorer
from posenc_lib.attention import self_attention
from posenc_lib.checks import FAIL, PASS
from posenc_lib.checks.ch04 import (
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
SOLUTIONS = answer_functions(ROOT / "solutions" / "04_relative_bias.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "04_relative_bias.ipynb")


# q1: wrong ways to measure the spread along diagonals.
def _spread(m, offsets=None, key="j - i", reduce=lambda v: v.max() - v.min()):
    n_q, n_k = m.shape
    if key == "i + j":  # anti-diagonals: flip the columns, then diagonals
        m, key = m.flip(-1), "j - i"
    offsets = range(-(n_q - 1), n_k) if offsets is None else offsets(n_q, n_k)
    spreads = [float(reduce(m.diagonal(d))) for d in offsets if m.diagonal(d).numel()]
    return max(spreads)


# q2: Shaw's logits with one slip each.
def _shaw(q, k, table, clip, sign=1, shift=True, scale=None, content=True, to_query=False):
    n, d = q.shape
    offsets = sign * (torch.arange(n)[None, :] - torch.arange(n)[:, None])
    a = table[offsets.clamp(-clip, clip) + (clip if shift else 0)]  # (T, T, d)
    if to_query:
        scores = ((q[:, None, :] + a) * k[None, :, :]).sum(-1)
    else:
        scores = (q[:, None, :] * a).sum(-1) + (q @ k.T if content else 0)
    return scores / (math.sqrt(d) if scale is None else scale(d))


def _shaw_parts(q, k, table, clip, content=lambda q, k: q @ k.T, scale_content=True,
                scale_position=True):  # fmt: skip
    n, d = q.shape
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    position = (q[:, None, :] * table[offsets.clamp(-clip, clip) + clip]).sum(-1)  # (T, T)
    content = content(q, k) / (math.sqrt(d) if scale_content else 1.0)
    return content + position / (math.sqrt(d) if scale_position else 1.0)


# q3: T5's buckets with one slip each.
def _buckets(rel, bidirectional, n, max_distance, flip=False, zero_up=False, halve=True,
             upper=None, cap=True, rnd=False, log_max=False, as_float=False, times_exact=False,
             causal_abs=False):  # fmt: skip
    rel = -rel if flip else rel
    if bidirectional:
        per = n // 2 if halve else n
        side = ((rel >= 0) if zero_up else (rel > 0)).long() * (upper or per)
        dist = rel.abs()
    else:
        per, side, dist = n, 0, (rel.abs() if causal_abs else (-rel).clamp(min=0))
    exact = per // 2
    denominator = math.log(max_distance) if log_max else math.log(max_distance / exact)
    log_buckets = exact if times_exact else per - exact
    raw = exact + (dist.clamp(min=exact).float() / exact).log() / denominator * log_buckets
    log_bucket = raw.round().long() if rnd else raw.long()
    log_bucket = log_bucket.clamp(max=per - 1) if cap else log_bucket
    out = side + torch.where(dist < exact, dist, log_bucket)
    return out.float() if as_float else out


# q4: the bias matrix with one slip each.
def _bias(table, fn, q_len, k_len, cached=True, sign=1, heads_last=False, head0=False,
          reshape=False):  # fmt: skip
    i = torch.arange(q_len)[:, None] + (k_len - q_len if cached else 0)
    j = torch.arange(k_len)[None, :]
    values = (table[:, :1].expand_as(table) if head0 else table)[fn(sign * (j - i))]
    if reshape:
        return values.reshape(table.shape[1], q_len, k_len)
    return values if heads_last else values.permute(2, 0, 1)


def _unclipped(q, k, table, clip):
    """Right within +-clip; beyond it, the wrong rows (wrapped around the table)."""
    n, d = q.shape
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    a = table[(offsets + clip) % (2 * clip + 1)]  # (T, T, d)
    return ((q[:, None, :] * a).sum(-1) + q @ k.T) / math.sqrt(d)


def _pairs(q, k, table, clip):
    n = q.shape[0]
    offsets = torch.arange(n)[None, :] - torch.arange(n)[:, None]
    return k[None, :, :] + table[offsets.clamp(-clip, clip) + clip]  # (T, T, d): forgot q_i .


# q5: cross-attention with one slip each.
def _cross(dec, enc, w_q, w_k, w_v, scale=None, dim=-1, causal=False, weights_only=False,
           from_encoder=False, values=None):  # fmt: skip
    if from_encoder:  # queries from the encoder, keys and values from the decoder
        dec, enc = enc, dec
    q, k = dec @ w_q, enc @ w_k
    v = enc @ (w_v if values is None else values)
    logits = q @ k.T / (math.sqrt(q.shape[-1]) if scale is None else scale(q, dec))
    if causal:
        logits = logits.masked_fill(torch.ones_like(logits).triu(1).bool(), float("-inf"))
    weights = torch.softmax(logits, dim=dim)
    return weights if weights_only else weights @ v


WRONG = {
    "q1": [
        (lambda m: _spread(m, key="i + j"), "anti-diagonals"),
        (lambda m: _spread(m, offsets=lambda a, b: [0]), "only the main diagonal"),
        (lambda m: float(m.max() - m.min()), "over the whole matrix"),
        (lambda m: float((m.amax(1) - m.amin(1)).max()), "along each row"),
        (lambda m: float((m.amax(0) - m.amin(0)).max()), "or each column"),
        (lambda m: _spread(m, offsets=lambda a, b: range(0, b)), "below the main one"),
        (lambda m: _spread(m, offsets=lambda a, b: range(-(a - 1), a)), "assumed a square matrix"),
        (lambda m: _spread(m, offsets=lambda a, b: range(-(b - 1), b)), "set by the rows"),
        (lambda m: _spread(m, reduce=lambda v: v.std(unbiased=False)), "standard deviation"),
        (lambda m: _spread(m, reduce=lambda v: (v - v[0]).abs().max()), "reference value"),
        (lambda m: _spread(m, reduce=lambda v: (v - v.mean()).abs().max()), "reference value"),
        (lambda m: torch.tensor([_spread(m), 0.0]), "one number"),
        (lambda m: -_spread(m) - 1, "cannot be negative"),
        (lambda m: 1.05 * _spread(m) + 0.1, "check which entries"),
        (lambda m: _spread(m, reduce=lambda v: v.diff().abs().max() if v.numel() > 1 else 0), "side by side"),
        (lambda m: _spread(m, offsets=lambda a, b: range(-(a - 1), 1)), "above the main one"),
    ],
    "q2": [
        (lambda q, k, t, c: _shaw(q, k, t, c, sign=-1), "the other way round (query minus key)"),
        (lambda q, k, t, c: _shaw(q, k, t, c, shift=False), "forgot to add clip"),
        (lambda q, k, t, c: _shaw(q, k, t, c, sign=-1, shift=False), "two slips"),
        (lambda q, k, t, c: _shaw(q, k, t, c, scale=lambda d: 1.0), "not scaled"),
        (lambda q, k, t, c: _shaw(q, k, t, c, scale=lambda d: d), "divided by d itself"),
        (lambda q, k, t, c: _shaw(q, k, t, c, content=False), "left out the content score"),
        (lambda q, k, t, c: _shaw(q, k, t, c, to_query=True), "added a_ij to the query"),
        (lambda q, k, t, c: _shaw(q, k, t, c).T, "rows are queries"),
        (lambda q, k, t, c: _shaw_parts(q, k, t, c, content=lambda q, k: k @ q.T), "k @ q.T"),
        (lambda q, k, t, c: _shaw_parts(q, k, t, c, scale_content=False), "only the position"),
        (lambda q, k, t, c: _shaw_parts(q, k, t, c, scale_position=False), "only the content"),
        (_unclipped, "wrong beyond"),
        (_pairs, "(T, T, d)"),
        (lambda q, k, t, c: _shaw(q, k, t, c).tolist(), "torch tensor"),
    ],
    "q3": [
        (lambda r, b, n, m: _buckets(r, b, n, m, flip=True), "query - key"),
        (lambda r, b, n, m: _buckets(r, not b, n, m), "your buckets are those of a causal"),
        (lambda r, b, n, m: _buckets(r, b, n, m, zero_up=True), "offset 0"),
        (lambda r, b, n, m: _buckets(r, b, n, m, halve=False), "num_buckets // 2 buckets"),
        (lambda r, b, n, m: _buckets(r, b, n, m, upper=n), "not num_buckets"),
        (lambda r, b, n, m: _buckets(r, b, n, m, cap=False), "ran past the last bucket"),
        (lambda r, b, n, m: _buckets(r, b, n, m, rnd=True), "you rounded"),
        (lambda r, b, n, m: _buckets(r, b, n, m, log_max=True), "divides by log(max_distance)"),
        (lambda r, b, n, m: _buckets(r, b, n, m, times_exact=True), "scaled by e = n // 2, the number of exact buckets"),
        (lambda r, b, n, m: _buckets(r, b, n, m, causal_abs=True), "has distance 0, bucket 0"),
        (lambda r, b, n, m: _buckets(r, b, n, m, as_float=True), "tensor of integers"),
        (lambda r, b, n, m: _buckets(r, b, n, m) > 3, "True/False"),
        (lambda r, b, n, m: _buckets(r, b, n, m).clamp(max=n - 2), "log buckets differ"),
        (lambda r, b, n, m: torch.where(r.abs() == 2, 0, _buckets(r, b, n, m)), "near offsets"),
        (lambda r, b, n, m: _buckets(r, b, n, m) + n, "must lie in 0..num_buckets - 1"),
        (lambda r, b, n, m: _buckets(r.reshape(-1), b, n, m), "should have shape"),  # flattened
    ],
    "q4": [
        (lambda t, f, q, k: _bias(t, f, q, k, cached=False), "positions 0..q_len - 1"),
        (lambda t, f, q, k: _bias(t, f, q, k, sign=-1), "you looked up i - j"),
        (lambda t, f, q, k: _bias(t, f, q, k, cached=False, sign=-1), "two slips"),
        (lambda t, f, q, k: _bias(t, f, q, k, heads_last=True), "asks for the heads first"),
        (lambda t, f, q, k: _bias(t, f, q, k).transpose(-2, -1), "(H, k_len, q_len)"),
        (lambda t, f, q, k: _bias(t, f, q, k, head0=True), "head 0's bias"),
        (lambda t, f, q, k: _bias(t, f, q, k, reshape=True), "the head axis has to move"),
        (lambda t, f, q, k: _bias(t, f, q, k) + 0.01, "right shape but not the right values"),
        (lambda t, f, q, k: (_bias(t, f, q, k), None), "tuple"),
        (lambda t, f, q, k: _bias(t, f, q, k).squeeze(), "should have shape"),  # q_len = 1 lost
        (lambda t, f, q, k: _bias(t, lambda o: _buckets(o, False, t.shape[0], 128), q, k), "use the `bucket_fn` you are given"),
    ],
    "q5": [
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, scale=lambda q, x: 1.0), "into the softmax unscaled"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, scale=lambda q, x: q.shape[-1]), "by d_k itself"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, scale=lambda q, x: math.sqrt(x.shape[-1])), "model width D"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, dim=0), "runs over the decoder tokens"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, causal=True), "causal mask"),
        (lambda d, e, q, k, v: _cross(d, e, k, q, v), "swapped w_q and w_k"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, from_encoder=True), "one row per encoder token"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, weights_only=True), "those are the attention weights"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, values=k), "not @ w_k"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v).T, "transposed"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v) + 0.01, "right shape but not the right values"),
        (lambda d, e, q, k, v: (_cross(d, e, q, k, v), None), "tuple"),
        (lambda d, e, q, k, v: _cross(d, e, q, k, v, scale=lambda q, x: 1.0, dim=0), "unscaled; and the softmax runs over the decoder tokens"),
        (lambda d, e, q, k, v: _cross(d, e, k, q, v, scale=lambda q, x: q.shape[-1]), "divided by d_k itself; and w_q and w_k are swapped"),
    ],
}  # fmt: skip


BY_NAME = {q.name: q for q in QUESTIONS}


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=10))


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("name", ["q2", "q3", "q4", "q5"])
def test_the_main_mistakes_are_named_on_hidden_inputs_too(name, seed):
    question = BY_NAME[name]
    cases = question.cases(seed)
    for fn, fragment in WRONG[name][:3]:
        verdict = question.judge(cases, question.run(fn, cases))
        assert verdict.status == FAIL and fragment in verdict.message, (seed, verdict.message)


def test_hidden_inputs_share_no_case_with_the_public_ones():
    for question in QUESTIONS:
        public = {c.describe for c in question.cases(0)}
        for seed in range(1, 6):
            assert not public & {c.describe for c in question.cases(seed)}, question.name


def test_cases_are_the_same_in_every_process():
    # A grader calls cases(seed) in the child and in the parent: the inputs must agree.
    for question in QUESTIONS:
        first, second = question.cases(4), question.cases(4)
        for a, b in zip(first, second, strict=True):
            assert a.describe == b.describe
            for x, y in zip(a.args, b.args, strict=True):
                if isinstance(x, torch.Tensor):
                    assert torch.equal(x, y)


def test_points_add_up_to_ten_and_sentences_never_show_the_answer(capsys):
    assert q1.points + q2.points + q3.points + q4.points + q5.points == 10
    verdict = q3.check(lambda r, b, n, m: _buckets(r, b, n, m).clamp(max=n - 2))
    assert "[" not in verdict.message  # no list of bucket ids


def test_float64_logs_pass_the_bucket_check(capsys):
    def in_float64(rel, bidirectional, n, max_distance):
        per = n // 2 if bidirectional else n
        exact = per // 2
        side = (rel > 0).long() * per if bidirectional else 0
        dist = rel.abs() if bidirectional else (-rel).clamp(min=0)
        ratio = dist.clamp(min=exact).double() / exact
        log_bucket = exact + (ratio.log() / math.log(max_distance / exact) * (per - exact)).long()
        return side + torch.where(dist < exact, dist, log_bucket.clamp(max=per - 1))

    assert q3.check(in_float64).status == PASS


def test_the_public_bias_cases_include_generating_one_token_after_a_prompt():
    table, fn, q_len, k_len = q4.cases(0)[1].args
    assert q_len == 1 and k_len > 1


def test_float32_rounding_is_not_a_mistake(capsys):
    assert q2.check(lambda q, k, t, c: _shaw(q, k, t, c) * (1 + 1e-6)).status == PASS
    assert q2.check(lambda q, k, t, c: _shaw(q, k, t, c) * 1.01).status == FAIL


def test_an_empty_diagonal_gets_a_tip_about_the_offsets(capsys):
    # The natural loop over too many offsets crashes on an empty diagonal before it can return a
    # wrong number: the check must say what the empty diagonal means, not only show torch's error.
    def columns_both_ways(m):
        n_k = m.shape[1]
        return max(float(m.diagonal(d).max() - m.diagonal(d).min()) for d in range(-(n_k - 1), n_k))

    def assumed_square(m):  # on the wide case (4, 7) it returns a number: the mistake is named
        n_q = m.shape[0]
        return max(float(m.diagonal(d).max() - m.diagonal(d).min()) for d in range(-(n_q - 1), n_q))

    verdict = q1.check(columns_both_ways)
    assert verdict.status == FAIL and "numel() == 0" in verdict.message
    assert "-(T_q - 1) to T_k - 1" in verdict.message, verdict.message
    square = q1.check(assumed_square).message
    # one message per failing case: the wide case's named mistake alone, not the tall case's
    # empty-diagonal tip as well
    assert "assumed a square matrix" in square and "empty diagonal" not in square, square


def test_an_odd_number_of_buckets_per_direction_is_public_and_hidden(capsys):
    # n // 2 log buckets instead of n - n // 2 agree when a direction has an even number of
    # buckets: a public case with an odd number (and every grader seed) must catch it.
    def times_exact(r, b, n, m):
        return _buckets(r, b, n, m, times_exact=True)

    assert any(b and (n // 2) % 2 for _, b, n, _ in (c.args for c in q3.cases(0)))
    assert "scaled by e = n // 2, the number of exact buckets" in q3.check(times_exact).message
    for seed in (1, 2, 3, 4, 5):
        cases = q3.cases(seed)
        verdict = q3.judge(cases, q3.run(times_exact, cases))
        assert (
            verdict.status == FAIL
            and "scaled by e = n // 2, the number of exact buckets" in verdict.message
        ), seed


def test_the_causal_slip_is_named_on_hidden_inputs(capsys):
    def causal_abs(r, b, n, m):
        return _buckets(r, b, n, m, causal_abs=True)

    for seed in (1, 2, 3):
        cases = q3.cases(seed)
        verdict = q3.judge(cases, q3.run(causal_abs, cases))
        assert verdict.status == FAIL and "has distance 0, bucket 0" in verdict.message, seed


def test_cross_attention_ignores_the_order_of_the_encoder_rows(capsys):
    # The lecture's point, on the question's own inputs: the right answer is a set function of
    # the encoder's rows, so a reversed encoder_x passes, and reversing the decoder's rows does not.
    dec, enc, w_q, w_k, w_v = q5.cases(0)[0].args
    right = _cross(dec, enc, w_q, w_k, w_v)
    assert torch.allclose(_cross(dec, enc.flip(0), w_q, w_k, w_v), right, atol=1e-12)
    assert not torch.allclose(_cross(dec.flip(0), enc, w_q, w_k, w_v), right)


def test_hidden_cross_attention_shapes_tell_every_slip_apart():
    # T_enc > T_dec, and d_v < d_k < D with T_dec > d_v: every shape slip shows as a shape, and
    # scaling by sqrt(D) differs from sqrt(d_k).
    for seed in range(1, 21):
        for case in q5.cases(seed):
            dec, enc, w_q, _, w_v = case.args
            n_dec, n_enc, d, d_k, d_v = (
                dec.shape[0],
                enc.shape[0],
                dec.shape[1],
                w_q.shape[1],
                w_v.shape[1],
            )
            assert n_enc > n_dec > d_v and d > d_k > d_v >= 1, case.describe


# Every pair of q5's slips that can occur together is named as two slips, each by its step.
_Q5_SLIPS = {
    "unscaled": {"scale": lambda q, x: 1.0},
    "by d_k itself": {"scale": lambda q, x: q.shape[-1]},
    "square root of the model width": {"scale": lambda q, x: math.sqrt(x.shape[-1])},
    "runs over the decoder tokens": {"dim": 0},
    "a causal mask": {"causal": True},
    "swapped": {"swap": True},
}
_SCALES = ("unscaled", "by d_k itself", "square root of the model width")


@pytest.mark.parametrize(
    "first, second",
    [
        (a, b)
        for i, a in enumerate(_Q5_SLIPS)
        for b in list(_Q5_SLIPS)[i + 1 :]
        if not (a in _SCALES and b in _SCALES)
        # a causal mask with a softmax down the columns gives NaN, which is named as such
        and (a, b) != ("runs over the decoder tokens", "a causal mask")
    ],
)
def test_two_cross_attention_slips_are_both_named(first, second, capsys):
    def answer(d, e, q, k, v):
        change = {**_Q5_SLIPS[first], **_Q5_SLIPS[second]}
        if change.pop("swap", False):
            q, k = k, q
        return _cross(d, e, q, k, v, **change)

    verdict = q5.check(answer)
    assert verdict.status == FAIL and "Two slips" in verdict.message, verdict.message
    assert first in verdict.message and second in verdict.message, verdict.message


# -- the concept questions: the exercises ask others than the lecture's quiz, each one applied ----


def _pairs(rule, n=12):
    offsets = offset_matrix(n)  # (T, T): j - i
    return int(rule(offsets).sum())


# (question, a known-wrong answer computed with the library, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, _pairs(lambda o: o == -8), "offset −8 exactly"),
    (c1, _pairs(lambda o: o < -8), "only the offsets beyond −8"),
    (c1, _pairs(lambda o: o == 0), "the diagonal"),
    (c1, _pairs(lambda o: o <= -7), "starts at offset −7"),
    (c1, _pairs(lambda o: (o <= -8) | (o >= 8)), "both end rows"),
    (c1, 17, "That is not the number"),
    (c2, "a", "not the terms themselves"),
    (c2, "b", "the word pairs at each offset are not"),
    (c2, "d", "compare counters of two"),
    (c3, "a", "query word's vector"),
    (c3, "b", "down a column"),
    (c3, "d", "DeBERTa's position terms"),
    (c4, "a", "layer 2's inputs are layer 1's outputs"),
    (c4, "c", "never by a token's own position"),
    (c4, "d", "max_distance bounds offsets, not places"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    right = {
        c1: _pairs(lambda o: o <= -8),
        c2: "c",
        c3: "c",
        c4: "b",
    }
    assert right[c1] == 4 + 3 + 2 + 1
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name


def test_what_c2_claims_holds_in_the_library():
    # an encoder whose only position signal is a (trained, here random) T5 bias: reversing its
    # input changes cross-attention's output; with no position signal at all, it does not
    generator = torch.Generator().manual_seed(7)
    d = 16
    words = torch.randn(3, d, generator=generator, dtype=torch.float64)  # 'dog bites man'
    queries = torch.randn(2, d, generator=generator, dtype=torch.float64)
    w_enc = torch.randn(3, d, d, generator=generator, dtype=torch.float64) / d**0.5
    w_cross = torch.randn(3, d, d, generator=generator, dtype=torch.float64) / d**0.5
    bias = RelativePositionBias(1).double().requires_grad_(False)
    torch.nn.init.normal_(bias.bias.weight, generator=generator)
    reverse = torch.arange(2, -1, -1)

    def output(x, with_bias):
        memory = x + self_attention(x, *w_enc, bias(3)[0] if with_bias else None)[0]
        return cross_attention(queries, memory, *w_cross)[0]

    assert (output(words, True) - output(words[reverse], True)).abs().max() > 1e-3
    assert (output(words, False) - output(words[reverse], False)).abs().max() < 1e-10
    # choice b's detail: an encoder's bias puts offsets -1 and +1 in different buckets
    one = torch.tensor([-1, 1])
    assert len(set(t5_relative_position_bucket(one, True).tolist())) == 2


def test_what_c3_and_c4_claim_holds_in_the_library():
    # c3: a T5 bias gives every pair at offset -1 one value per head, whatever the words
    position_only = scorer("T5 bias", 16)(torch.zeros(9, 16, dtype=torch.float64))  # (T, T)
    assert float(position_only.diagonal(-1).max() - position_only.diagonal(-1).min()) == 0.0
    # c4: with a T5 bias in two residual attention layers, the first layer's scores among a 4-word
    # sentence stay as it moves from start 0 to start 30; the second layer's do not, and only
    # their content term moves (each layer's bias is read by the same offsets at both places)
    generator = torch.Generator().manual_seed(6)
    d = 16
    context = torch.randn(64, d, generator=generator, dtype=torch.float64)
    sentence = torch.randn(4, d, generator=generator, dtype=torch.float64)
    layers = []
    for _ in range(2):
        w_q, w_k, w_v = torch.randn(3, d, d, generator=generator, dtype=torch.float64) / d**0.5
        t5 = RelativePositionBias(1, bidirectional=True).double().requires_grad_(False)
        torch.nn.init.normal_(t5.bias.weight, generator=generator)
        layers.append((w_q, w_k, w_v, t5(64)[0]))  # (T, T) bias
    blocks = []
    for start in (0, 30):
        x = context.clone()
        x[start : start + 4] = sentence
        scores = []
        for w_q, w_k, w_v, bias in layers:
            scores.append(
                ((x @ w_q) @ (x @ w_k).T / d**0.5 + bias)[start : start + 4, start : start + 4]
            )
            x = x + self_attention(x, w_q, w_k, w_v, bias)[0]  # the residual: layer 2's input
        blocks.append(scores)
    first = float((blocks[0][0] - blocks[1][0]).abs().max())
    second = float((blocks[0][1] - blocks[1][1]).abs().max())
    assert first < 1e-10 < 0.05 < second, (first, second)


globals().update(
    concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "04_relative_bias", CONCEPT_WRONG)
)
