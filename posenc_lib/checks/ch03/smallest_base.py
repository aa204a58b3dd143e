"""Chapter 3's exercises: q4, the smallest base."""

from __future__ import annotations

import math
import numbers

import torch

from posenc_lib.analysis.ch03_sinusoid import confusion
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, as_number
from posenc_lib.checks.ch03.setting import F64, NOTEBOOK, _memo
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.checks.verdicts import FAIL, PASS
from posenc_lib.i18n import N_, _, tr

# -- q4: the smallest base -------------------------------------------------------------------------------


def _ratios(d: int, bases: tuple, last: int) -> torch.Tensor:
    """dist(k)^2 / dist(1)^2 for k = 2 .. last, a row per base: (B, last - 1) float64.

    The same formulas as ``sinusoid.confusion``: dist(k)^2 = D - 2 sum_i cos(k w_i), and
    dist(1)^2 = 4 sum_i sin(w_i / 2)^2.
    """
    b = torch.tensor(bases, dtype=F64)[:, None]  # (B, 1)
    omega = b ** (-torch.arange(0, d, 2, dtype=F64) / d)  # (B, D/2)
    step_sq = 4 * (omega / 2).sin().pow(2).sum(-1, keepdim=True)  # (B, 1)
    k = torch.arange(2, last + 1, dtype=F64)  # (K,)
    dist_sq = d - 2 * (k[None, :, None] * omega[:, None, :]).cos().sum(-1)  # (B, K)
    return dist_sq / step_sq


def _first_of(row: torch.Tensor) -> int | None:
    """The first offset k (row[0] is k = 2) with dist(k) <= dist(1), or None."""
    bad = (row <= 1).nonzero()
    return int(bad[0, 0]) + 2 if bad.numel() else None


@_memo
def _first_offset(d: int, base: float, limit: int) -> int | None:
    """The first offset k in 2 .. limit with dist(k) <= dist(1) for this base, or None."""
    return _first_of(_ratios(d, (base,), limit)[0])


def _unambiguous(n, d, base, exponent="2i/d", last=None):
    """True if dist(k) > dist(1) for every 2 <= k <= last (default n - 1), for the given exponent."""
    last = n - 1 if last is None else last
    if exponent == "i/d":  # base ** (-i / d) is the right table of base sqrt(base)
        base = math.sqrt(base)
    first = _first_offset(d, base, -(-(last + 1) // 1024) * 1024)  # n - 2, n - 1, n: one scan
    return first is None or first > last


_TIE = 3e-3  # dist(k)^2 / dist(1)^2 this close to 1 is a tie a float32 table could get wrong


def _sharp_firsts(d: int, bases: tuple, last: int) -> list[tuple[float, float]]:
    """The bases (of ``bases``) whose dist(k) crosses dist(1) clearly, with their first offset.

    (base, first offset in 2 .. last or inf), for each base far from a tie over k = 2 .. last:
    every ratio before the first offset above 1 + _TIE, the one at it below 1 - _TIE.
    """
    found = []
    for base, row in zip(bases, _ratios(d, bases, last), strict=True):
        first = _first_of(row)
        before = row if first is None else row[: first - 2]
        if (before.numel() == 0 or float(before.min()) > 1 + _TIE) and (
            first is None or float(row[first - 2]) < 1 - _TIE
        ):
            found.append((base, math.inf if first is None else float(first)))
    return found


def _base_list(kind, n, b0, d, sharp, generator):
    """One hidden q4 input (n, d, candidates) built from ``sharp`` (see _hidden_base_lists), or None.

    kind 0: b0 is first confused at offset n - 1; kind 1: at offset n; kind 2: no b0.
    """
    works = [b for b, f in sharp if f >= n]
    fails = [b for b, f in sharp if f < n]
    if kind == 0:
        answer = next((b for b in works if b > b0), None)
        f0 = n - 1
        below = [b for b, f in sharp if b < b0 and f < f0]  # they fail for n - 2 too
    else:
        answer = b0 if kind == 1 else next(iter(works), None)
        below = [b for b in fails if answer is not None and b < answer]
    if answer is None or not below:
        return None
    trap = [b for b in fails if b > answer and sum(w > b for w in works) >= 2]
    if not trap:
        return None
    c = trap[draws.randint(0, len(trap), generator)]
    p1, p2 = [b for b in works if b > c][:2]
    picks = torch.randperm(len(below), generator=generator)[:2].tolist()
    chosen = [below[j] for j in picks] + ([b0] if kind == 0 else []) + [answer, c, p1, p2]
    chosen = list(dict.fromkeys([*chosen, 1000.0]))
    for _attempt in range(20):  # an order whose first working candidate is p2
        order = torch.randperm(len(chosen), generator=generator).tolist()
        listed = tuple(chosen[j] for j in order)
        if next(b for b in listed if b in works or b == 1000.0) == p2:
            break
    else:
        return None
    # the i/d table's pick must differ from the answer, and no base sits at its own index
    half = next((b for b in sorted(listed) if _unambiguous(n, d, b, exponent="i/d")), None)
    if half == answer or any(float(i) == b for i, b in enumerate(listed)):
        return None
    return n, d, listed


@_memo
def _hidden_base_lists(seed: int) -> tuple:
    """q4's hidden inputs: ((n, d, candidates), ...), three of them, for ``seed``.

    Every draw holds a case whose n puts a candidate's first confusion exactly at the last offset
    n - 1 (stopping one offset short takes it), one whose answer's first confusion is at offset n
    (one offset too many rejects it), and one with n drawn freely. In each: smaller candidates that
    fail, a failing candidate above the answer and two passing ones above that (the first of them
    is where "a larger base is always safer" stops), 1000 (the 2 pi * base rule's pick), in an order
    whose first working candidate is neither the answer nor the monotone pick nor 1000.
    """
    generator = draws.seeded(seed, 4)
    cases = []
    while len(cases) < 3:
        d = draws.pick([16, 20], generator)
        drawn = sorted(
            {round(1.6 + 6.4 * float(u), 3) for u in torch.rand(30, generator=generator)}
        )
        sharp = _sharp_firsts(d, (*drawn, 1000.0), 6001)
        if (1000.0, math.inf) not in sharp:
            continue
        sharp = sharp[:-1]  # 1000 goes in every list
        while len(cases) < 3:  # as many cases as this draw gives
            kind = len(cases)  # 0: confused at n - 1, 1: at n, 2: n drawn freely
            if kind < 2:
                starts = [(int(f) + 1 - kind, b) for b, f in sharp if 1500 <= f <= 5999]
            else:
                starts = [(draws.randint(1500, 6001, generator), None)]
            order = torch.randperm(len(starts), generator=generator).tolist()
            made = next(
                (c for j in order if (c := _base_list(kind, *starts[j], d, sharp, generator))),
                None,
            )
            if made is None:
                break  # draw again
            cases.append(made)
    return tuple(cases)


_SAME_BASE = 1e-6  # relative: a candidate read back from float32 (error 6e-8) is still itself


def _first(candidates, test):
    return next((b for b in candidates if test(b)), None)


class SmallestBase(Question):
    name, function, points, notebook = "q4", "smallest_base", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "(distance[2:] > distance[1]).all()",
        "for base in sorted(candidates)",
    )
    returns, references = FLOAT, ("posenc_lib.analysis.ch03_sinusoid.smallest_unambiguous_base",)
    title = N_("Find the smallest base that keeps every position unambiguous")
    timeout = 15.0  # a correct answer that builds a table per candidate needs a few seconds
    hints = (
        N_(
            "Positions are unambiguous when dist(k) = ||PE_(t+k) - PE_t|| is larger than dist(1) for every "
            "offset k = 2 .. n_positions - 1. dist does not depend on t, so compare row 0 with every row."
        ),
        N_(
            "For one base: build the table (your q1), distance = (table - table[0]).norm(dim=-1), then "
            "test (distance[2:] > distance[1]).all(). No (T, T) matrix needed."
        ),
        N_(
            "Sort the candidates (the lists come in any order), try them from the smallest up and return "
            "the first that passes. Do not stop at the first failure after a pass, and do not bisect: a "
            "larger base is not always safer."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            triples = [
                (4096, 64, (1.2, 1.4, 1.6, 1.8, 2.5, 10.0, 100.0, 700.0, 1000.0, 10000.0, 1e5)),
                (1000, 16, (2.5, 1.8, 1.5, 5.0, 1.7, 1.6)),  # unsorted: the list order misleads
                (1891, 16, (1.2, 1.5, 2.0, 3.0, 5.0, 100.0)),
                (1892, 16, (1.5, 2.0, 3.0, 5.0, 100.0)),
            ]
        else:
            triples = _hidden_base_lists(seed)
        return [
            Case(
                (n, d, list(c)),
                f"n_positions = {n}, d_model = {d}, candidates = {[f'{b:g}' for b in c]}",
            )
            for n, d, c in triples
        ]

    def _judge(self, cases, outcomes):
        status, message = super()._judge(cases, outcomes)
        # Decided on the outcomes, not on the message's words (the message may be in Chinese):
        # the verdict is "returned None" when the first None comes after cases that all passed.
        first_none = next(
            (i for i, o in enumerate(outcomes) if o.kind == "returned" and o.value is None), None
        )
        if (
            status == FAIL
            and first_none is not None
            and (
                first_none == 0
                or super()._judge(cases[:first_none], outcomes[:first_none])[0] == PASS
            )
        ):
            message += _(
                " (If no candidate passed your test: every list here holds one that works. Start the "
                "offsets at k = 2, so that no position is compared with itself or its neighbour.)"
            )
        return status, message

    def diagnose(self, case, value):
        n, d, candidates = case.args
        if isinstance(value, numbers.Integral) and not isinstance(value, bool):
            if value not in candidates and 0 <= value < len(candidates):
                return _(
                    "You returned a position in the list; return the base itself (an element of candidates)."
                )
        got, problem = as_number(value, N_("The base"))
        if problem:
            return problem
        # float32 rounding (torch.tensor(candidates)) moves 1.6 to 1.600000023841858: still 1.6
        match = [b for b in candidates if math.isclose(got, b, rel_tol=_SAME_BASE)]
        if not match:
            return tr("Return one of the candidates; {got:g} is not in the list.", got=got)
        got = match[0]
        ordered = sorted(candidates)
        want = _first(ordered, lambda b: _unambiguous(n, d, b))
        if got == want:
            return None
        passing = [b for b in ordered if _unambiguous(n, d, b)]
        last_fail = max((b for b in ordered if b not in passing), default=None)
        monotone = _first(ordered, lambda b: last_fail is None or b > last_fail)
        mistakes = [
            (_first(ordered, lambda b: 2 * math.pi * b >= n), N_("you used the popular wavelength rule, 2 pi * base >= n_positions. The lecture measured it: the longest wavelength is not a uniqueness bound. Test the criterion itself, dist(k) > dist(1) for k = 2 .. n_positions - 1.")),
            (_first(ordered, lambda b: 2 * math.pi * b ** ((d - 2) / d) >= n), N_("you asked for the longest wavelength, 2 pi * base ** ((d-2)/d), to cover n_positions. The lecture measured that this is not a uniqueness bound: test dist(k) > dist(1) for k = 2 .. n_positions - 1.")),
            (_first(ordered, lambda b: b >= n), N_("you used the rule 'the base must exceed the context length'; the lecture shows it is not needed for unambiguous positions. Test dist(k) > dist(1) for k = 2 .. n_positions - 1.")),
            # checked early: a learner whose q1 passed has the right table, so an answer that is
            # the first working candidate in list order most likely skipped the sort
            (_first(candidates, lambda b: _unambiguous(n, d, b)), N_("you returned the first candidate that works in the list's order; this list is not sorted, and a smaller candidate further on works too. Sort the candidates first (or keep the smallest that works).")),
            (_first(ordered, lambda b: _unambiguous(n + 1, d, b)), N_("you tested one offset too many: positions run 0 .. n_positions - 1, so the offsets run up to n_positions - 1, not n_positions.")),
            (_first(ordered, lambda b: _unambiguous(n, d, b, last=n - 2)), tr("your search stopped before the last offset: with your base, the only offset as close as neighbours is k = n_positions - 1 = {last} (positions 0 and {last}), and the offsets run up to it, included.", last=n - 1)),
            (monotone, N_("you assumed that once a base works every larger one does, and returned the first candidate after the last failure. A larger base is not always safer: a smaller candidate already keeps every position unambiguous.")),
            (_first(ordered, lambda b: _unambiguous(n, d, b, exponent="i/d")), N_("your table's frequencies use base ** (-i / d_model); pair i turns at base ** (-2i / d_model) (q1).")),
            (ordered[-1], N_("you returned the largest candidate; the question asks for the smallest one that keeps every position unambiguous.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: wrong is not None and got == wrong)
        if named:
            return named
        if not _unambiguous(n, d, got):
            k = confusion(n, d, got).first_offset
            return tr(
                "With base {got:g}, positions {k} steps apart are at least as close as neighbours (dist({k}) <= dist(1)), so this base does not keep every position unambiguous.",
                got=got,
                k=k,
            )
        return _(
            "Your base keeps every position unambiguous, but a smaller candidate does too: return the smallest."
        )
