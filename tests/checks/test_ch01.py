"""Chapter 1's exercise checks: right answers pass, stubs are "not attempted", and every known
wrong answer fails with a sentence that names the mistake (never a traceback, never the answer)."""

import itertools
import math
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from chapter_checks import answer_functions, concept_tests, standard_tests

from posenc_lib import self_attention
from posenc_lib.analysis.ch01_order import (
    permutation_matrix,
    reorder_experiment,
    toy_projections,
    word_vectors,
)
from posenc_lib.checks import FAIL, PASS
from posenc_lib.checks.ch01 import (
    CONCEPTS,
    EXERCISE_CONCEPTS,
    QUESTIONS,
    _gap,
    _random_order,
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
SOLUTIONS = answer_functions(ROOT / "solutions" / "01_order_blindness.ipynb")
STUBS = answer_functions(ROOT / "exercises" / "01_order_blindness.ipynb")


def _attention(x, w_q, w_k, w_v, scale=None, axis=-1, transpose=False, softmax=True, values=True):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = (k @ q.T if transpose else q @ k.T) / (scale or math.sqrt(w_k.shape[1]))
    weights = torch.softmax(scores, dim=axis) if softmax else scores
    return weights @ v if values else weights


def _permutation(order):
    p = torch.zeros(len(order), len(order))
    p[range(len(order)), order] = 1.0
    return p


def _swapped_gap(f, x, order, out_order=None, reduce=lambda d: d.abs().max()):
    out = f(x)[order if out_order is None else out_order(order)]
    return float(reduce(f(x[order]) - out))


def _inverse(order):
    return sorted(range(len(order)), key=order.__getitem__)


def _rows(T, i, j):
    return [t for t in range(T) if t < min(i, j) or t > max(i, j) or i == j]


def _positions(x):
    """Sinusoidal position vectors, (T, D), written here (the library's are off during a check)."""
    t = torch.arange(x.shape[0], dtype=torch.float32)[:, None]  # (T, 1)
    angles = t / 10000 ** (torch.arange(0, x.shape[1], 2) / x.shape[1])  # (T, D/2)
    return torch.stack((angles.sin(), angles.cos()), dim=-1).reshape(x.shape)  # (T, D)


def _causal_attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = (q @ k.T / math.sqrt(w_k.shape[1])).masked_fill(
        torch.ones(len(x), len(x), dtype=torch.bool).triu(1), float("-inf")
    )
    return torch.softmax(scores, dim=-1) @ v


def _softmax_over_everything(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    scores = q @ k.T / math.sqrt(w_k.shape[1])
    return torch.softmax(scores.flatten(), dim=0).view(len(x), len(x)) @ v


WRONG = {
    "q1": [
        (lambda x, a, b, c: _attention(x, a, b, c, scale=1.0), "into the softmax unscaled"),
        (lambda x, a, b, c: _attention(x, a, b, c, scale=b.shape[1]), "by d_k"),
        (lambda x, a, b, c: _attention(x, a, b, c, scale=math.sqrt(x.shape[1])), "size of x's rows"),
        (lambda x, a, b, c: _attention(x, a, b, c, axis=0), "each column"),
        (lambda x, a, b, c: _attention(x, a, b, c, transpose=True), "transposed"),
        (lambda x, a, b, c: _attention(x, a, b, c, softmax=False), "not normalised"),
        (lambda x, a, b, c: _attention(x, a, b, c, values=False), "weight matrix"),
        (lambda x, a, b, c: _attention(x, a, b, c, values=False) @ x, "multiplied the weights by x"),
        (lambda x, a, b, c: _attention(x, a, b, c, values=False) @ (x @ a), "Multiply the (T, T)"),
        (lambda x, a, b, c: (_attention(x, a, b, c), None), "tuple"),
        (lambda x, a, b, c: _attention(x, a, b, c).tolist(), "torch tensor"),
        (lambda x, a, b, c: _attention(x, a, b, c) + 0.01, "right shape but not the right values"),
        (lambda x, a, b, c: _attention(x, a, b, c, scale=math.sqrt(c.shape[1])), "uses d_v"),
        (lambda x, a, b, c: _attention(x, a, b, c, scale=math.sqrt(x.shape[0])), "uses T"),
        (lambda x, a, b, c: _attention(x, a, b, c, scale=math.sqrt(2)), "right shape but not"),
        (_causal_attention, "causal mask"),
        (_softmax_over_everything, "whole score matrix"),
        (lambda x, a, b, c: F.scaled_dot_product_attention(x @ a, x @ b, x @ c), "scaled_dot_product_attention"),
        (lambda x, a, b, c: torch.nn.functional.scaled_dot_product_attention(x @ a, x @ b, x @ c), "yourself"),
    ],
    "q2": [
        (lambda order: _permutation(order).T, "transpose"),
        (lambda order: torch.eye(len(order)), "identity"),
        (lambda order: 2 * _permutation(order), "0 or 1"),
        (lambda order: torch.zeros(len(order), len(order) + 1), "shape"),
        (lambda order: _permutation(order).tolist(), "torch tensor"),
        (lambda order: _permutation(order).long(), "tensor of floats"),
        (lambda order: _permutation(order).numpy(), "NumPy array"),
        (lambda order: _permutation(order).bool(), "tensor of floats"),
        (lambda order: torch.ones(len(order), len(order)).triu(), "exactly one 1"),
        (lambda order: _permutation(order).squeeze(), "shape (1, 1)"),
    ],
    "q3": [
        (lambda f, x, o: _swapped_gap(f, x, o, out_order=lambda o: list(range(len(o)))), "P f(X)"),
        (lambda f, x, o: _swapped_gap(f, x, o, out_order=_inverse), "inverse permutation"),
        (lambda f, x, o: _swapped_gap(f, x, o, reduce=lambda d: d.abs().mean()), "not the mean"),
        (lambda f, x, o: _swapped_gap(f, x, o, reduce=lambda d: d.max()), "absolute value"),
        (lambda f, x, o: 0.0, "differs from the largest"),
        (lambda f, x, o: f(x[o]) - f(x)[o], "one number"),
        (lambda f, x, o: -_swapped_gap(f, x, o), "cannot be negative"),
        (lambda f, x, o: _swapped_gap(f, x, o, reduce=lambda d: d.norm()), "not the norm"),
        (lambda f, x, o: _swapped_gap(f, x, o, reduce=lambda d: d.norm(dim=-1).max()), "row norm"),
        (lambda f, x, o: _swapped_gap(f, x, o, reduce=lambda d: (-d).max()), "whichever side"),
        (lambda f, x, o: _swapped_gap(f, x, _inverse(o)), "both sides with the inverse"),
        (lambda f, x, o: float((f(x[o]) - f(x)[:, o]).abs().max()), "shapes do not line up"),  # columns
    ],
    "q4": [
        (lambda x: x, "unchanged"),
        (lambda x: x + 1.0, "same vector at every position"),
        (lambda x: x + x.mean(0), "changes when the words change"),  # one vector, read from x
        (lambda x: x + torch.randn(x.shape[1]), "changes when the words change"),  # one random vector
        (lambda x: 2 * x, "scales x"),
        (lambda x: x * (1 + 0.1 * torch.arange(x.shape[0])[:, None]), "scales x"),
        (lambda x: x + x**2, "differs between two inputs"),
        (lambda x: x + torch.randn_like(x), "differs between two inputs"),
        (lambda x: x + 1e-9 * torch.arange(x.shape[0])[:, None], "at least 1e-4"),
        (lambda x: x + 1e-5 * (torch.arange(x.shape[0]) % 2)[:, None], "at least 1e-4"),
        (lambda x: x[:, :2] + 1, "shape"),
        (lambda x: x + _positions(x) * float("nan"), "NaN"),
        (lambda x: _positions(x), "differs between two inputs"),  # forgot to add x
        (lambda x: x + 0.1 * torch.arange(x.shape[1]), "same vector at every position"),  # by column
        (lambda x: x + 0.1 * torch.arange(5.0)[:, None][: len(x)], "shapes do not line up"),  # 5 rows
    ],
    "q5": [
        (lambda T, i, j: [t for t in range(T) if t not in (i, j)], "between the two swapped"),
        (lambda T, i, j: list(range(min(i, j))), "after both swapped words"),
        (lambda T, i, j: list(range(T)), "between the two swapped"),
        (lambda T, i, j: [], "after both swapped words"),
        (lambda T, i, j: [t for t in range(T) if t < min(i, j) or t >= max(i, j)], "rows of the two swapped"),
        (lambda T, i, j: sorted(_rows(T, i, j) + ([min(i, j) + 1] if abs(i - j) > 2 else [])), "1 of your rows does change"),
        (lambda T, i, j: [t for t in range(T) if t < i or t > j or i == j], "between the two swapped"),  # i < j
        (lambda T, i, j: [] if i == j else _rows(T, i, j), "nothing is swapped"),
        (lambda T, i, j: [t for t in _rows(T, i, j) if t > 0], "left out"),  # range(1, T)
        (lambda T, i, j: [t for t in _rows(T, i, j) if t < T - 1], "after both swapped words"),  # range(T - 1)
        (lambda T, i, j: [t for t in _rows(T, i, j) if t < 20], "after both swapped words"),  # range(20)
        (lambda T, i, j: [t for t in range(T) if t > max(i, j)], "left out"),
        (lambda T, i, j: [T], "run from 0"),
        (lambda T, i, j: "0, 4", "should be a list of ints"),
        (lambda T, i, j: [0.0], "list of floats"),
        (lambda T, i, j: [t for t in range(T) if t < min(i, j) or t > max(i, j)], "nothing is swapped"),
    ],
}  # fmt: skip


globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=12))


def test_hidden_inputs_differ_from_the_public_ones():
    for question in QUESTIONS:
        public = [c.describe for c in question.cases(0)]
        assert public != [c.describe for c in question.cases(12345)], question.name


def test_checks_never_show_the_answer():
    # q5's sentences describe rows, they never list the right ones.
    verdict = q5.check(lambda T, i, j: [])
    assert "[0]" not in verdict.message and "{0}" not in verdict.message
    assert q1.points + q2.points + q3.points + q4.points + q5.points == 12


def test_a_gap_5_percent_off_is_wrong(capsys):
    assert q3.check(lambda f, x, o: 1.05 * _gap(f, x, o)).status == FAIL


def test_a_tensor_subclass_cannot_lie_to_the_judge(capsys):
    class Liar(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            if func is torch.allclose:
                return True
            return super().__torch_function__(func, types, args, kwargs or {})

    verdict = q2.check(lambda order: torch.zeros(len(order), len(order)).as_subclass(Liar))
    assert verdict.status == FAIL


def test_hidden_inputs_share_no_case_with_the_public_ones():
    # Except a boundary that has one form only: the order of a single word.
    for question in QUESTIONS:
        public = {c.describe for c in question.cases(0)}
        for seed in range(1, 6):
            shared = public & {c.describe for c in question.cases(seed)}
            assert shared <= {"order = [0]"}, question.name


@pytest.mark.parametrize("seed", range(21))
def test_every_draw_holds_every_clause_of_the_questions(seed):
    # q1: T, D, d_k and d_v all differ, so each wrong scale or shape is caught.
    for case in q1.cases(seed):
        x, w_q, w_k, w_v = case.args
        assert len({x.shape[0], x.shape[1], w_k.shape[1], w_v.shape[1]}) == 4
    assert len({case.args[2].shape[1] for case in q1.cases(seed)}) == len(q1.cases(seed))
    # q2: a one-word order, and orders that differ from their inverse.
    orders = [case.args[0] for case in q2.cases(seed)]
    assert [0] in orders and any(o != _inverse(o) for o in orders)
    # q3: a layer whose width changes (D' != D); a signed max fails one way and the other.
    plain, positions, causal = q3.cases(seed)
    f, x, o = causal.args
    assert f(x).shape[1] not in (x.shape[1], x.shape[0])
    for case, sign in ((positions, 1), (causal, -1)):
        f, x, o = case.args
        diff = sign * (f(x[o]) - f(x)[o])
        assert -diff.min() > 1.1 * diff.max() > 0
    # q4: two inputs of each shape; a table longer than 12 rows.
    shapes = [tuple(case.args[0].shape) for case in q4.cases(seed)]
    assert all(shapes.count(s) == 2 for s in shapes) and max(s[0] for s in shapes) >= 12
    # q5: i < j and i > j with rows before, between and after; i == j; a pair at 0, one at T - 1;
    # a sentence past 20 words.
    triples = [case.args for case in q5.cases(seed)]
    full = [(T, i, j) for T, i, j in triples if 0 < min(i, j) < max(i, j) - 1 < T - 2]
    assert any(i < j for _, i, j in full) and any(i > j for _, i, j in full)
    assert any(i == j for _, i, j in triples)
    assert any(min(i, j) == 0 and i != j for _, i, j in triples)
    assert any(max(i, j) == T - 1 and i != j for T, i, j in triples)
    assert any(max(_rows(T, i, j), default=0) >= 20 for T, i, j in triples)


@pytest.mark.parametrize("seed", range(5))
def test_random_orders_move_every_row_and_differ_from_their_inverse(seed):
    generator = torch.Generator().manual_seed(seed)
    for n in range(3, 10):
        order = _random_order(n, generator)
        inverse = sorted(range(n), key=order.__getitem__)
        assert sorted(order) == list(range(n))
        assert all(o != i and o != v for i, (o, v) in enumerate(zip(order, inverse, strict=True)))


def test_fused_attention_is_refused_however_it_is_imported():
    # A name bound in the learner's module (a from-import) is switched off too, and put back after.
    from torch.nn.functional import scaled_dot_product_attention

    def attention(x, w_q, w_k, w_v):
        return scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)

    def caught(x, w_q, w_k, w_v):  # catching the refusal does not help
        try:
            return F.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)
        except RuntimeError:
            return SOLUTIONS["attention"](x, w_q, w_k, w_v)

    for fn in (attention, caught):
        verdict = q1.judge(q1.cases(0), q1.run(fn, q1.cases(0)))
        assert verdict.status == FAIL and "yourself" in verdict.message, verdict.message
    assert F.scaled_dot_product_attention is scaled_dot_product_attention  # put back
    assert torch._C._nn.scaled_dot_product_attention is scaled_dot_product_attention


def test_the_smallest_signal_q4_accepts_is_the_one_its_feedback_names():
    # The feedback says "at least 1e-4": a signal of 1e-4 per position passes, 3e-5 does not.
    def signal(size):
        return lambda x: x + size * torch.arange(x.shape[0])[:, None]

    assert q4.judge(q4.cases(0), q4.run(signal(1e-4), q4.cases(0))).status != FAIL
    verdict = q4.judge(q4.cases(0), q4.run(signal(3e-5), q4.cases(0)))
    assert verdict.status == FAIL and "1e-4" in verdict.message


def test_q5_has_a_third_hint(capsys):
    q5._next_hint = 0
    for _call in range(3):
        q5.hint()
    shown = capsys.readouterr().out
    assert "3 of 3" in shown and "four groups" in shown
    q5._next_hint = 0


# -- the concept questions: the exercises ask others than the lecture quiz, each one applied ----


def test_the_right_answers_are_not_all_the_same_letter():
    assert len({q.answer for q in EXERCISE_CONCEPTS if hasattr(q, "choices")}) > 1


def test_the_choices_claims_hold_when_measured_with_the_library():
    words = ["the", "dog", "bites", "man"]
    x = word_vectors(words)  # (4, D)
    # c1: f(X) = X + mean(X) is equivariant, not invariant
    f = lambda x: x + x.mean(0)  # noqa: E731
    p = permutation_matrix([2, 0, 3, 1])
    assert float((f(p @ x) - p @ f(x)).abs().max()) < 1e-5
    assert float((f(p @ x) - f(x)).abs().max()) > 0.1
    # c2: with a causal mask, swapping the middle words keeps "the" and "man" only
    drift = reorder_experiment(words, [0, 2, 1, 3], causal=True).drift
    assert drift[0] < 1e-5 and drift[3] < 1e-5 and min(drift[1], drift[2]) > 0.1
    # c3: a table of rows u, w, u, w: swapping slots 0 and 2 only moves the outputs; 0 and 1 does not
    u, w = torch.randn(2, x.shape[1], generator=torch.Generator().manual_seed(0))
    pe = torch.stack([u, w, u, w])  # (4, D)
    w_q, w_k, w_v = toy_projections()
    before, _ = self_attention(x + pe, w_q, w_k, w_v)
    for order, changes in (([2, 1, 0, 3], False), ([1, 0, 2, 3], True)):
        p = permutation_matrix(order)
        after, _ = self_attention(p @ x + pe, w_q, w_k, w_v)
        drift = (after - p @ before).norm(dim=-1)  # (4,)
        assert bool((drift > 0.1).all()) if changes else float(drift.max()) < 1e-5, order


def test_c4_reading_slot_0_keeps_the_orders_with_the_same_first_word():
    # equivariance: slot 0's output is its word's, whatever the order of the other four; no other
    # first word gives it (a clear gap above rounding), so the count is 4! of the 5! orders
    words = "the cat saw a dog".split()
    x, weights = word_vectors(words), toy_projections()
    first = self_attention(x, *weights)[0][0]
    gaps = {
        order: float((self_attention(x[list(order)], *weights)[0][0] - first).abs().max())
        for order in itertools.permutations(range(5))
    }
    assert all((gap < 1e-5) == (order[0] == 0) for order, gap in gaps.items())
    assert min(g for order, g in gaps.items() if order[0] != 0) > 0.05
    assert c4.evaluate(math.factorial(4)).status == PASS


def test_each_concept_question_has_its_own_hint_not_the_generic_pointer():
    for question in EXERCISE_CONCEPTS:
        assert question.nudge and question.hints == (question.nudge,), question.name
        assert "re-read" not in question.hints[0], question.name
    # the right option no longer carries its whole proof: no option's text is much longer
    lengths = [len(choice.text) for choice in c1.choices]
    assert max(lengths) < 1.3 * min(lengths), lengths


# (question, a known-wrong answer, a fragment of the sentence it gets)
CONCEPT_WRONG = [
    (c1, "a", "Only the mean forgets"),
    (c1, "b", "also makes every output row"),
    (c1, "d", "Both would need"),
    (c2, "a", "not on their order"),
    (c2, "b", "it is not alone"),
    (c2, "c", "two that change"),
    (c3, "a", "only where the words land"),
    (c3, "c", "every word sees every word"),
    (c3, "d", "only when its input is a reordering"),
    (c4, math.factorial(5), "that holds for the mean"),
    (c4, 1, "not only the original"),
    (c4, 5, "different vectors slot 0 can hold"),
    (c4, math.factorial(5) - math.factorial(4), "give a different vector"),
    (c4, math.factorial(3), "keeps two words in place"),
    (c4, 4, "not their orders"),
    (c4, 30, "That is not the number"),
]


def test_the_concept_questions_pass_their_answer_computed_with_the_library():
    right = {c1: "c", c2: "d", c3: "b", c4: math.factorial(4)}
    for question, answer in right.items():
        assert question.evaluate(answer).status == PASS, question.name


globals().update(
    concept_tests(QUESTIONS, CONCEPTS, EXERCISE_CONCEPTS, "01_order_blindness", CONCEPT_WRONG)
)


def test_c4_reads_no_string_and_its_prompt_says_so():
    assert "is not read" in c4.prompt
    for text in ("4!", "24"):
        verdict = c4.evaluate(text)
        assert verdict.status == FAIL and "string" in verdict.message
    assert c4.evaluate(4 * 3 * 2 * 1).status == PASS
