"""Chapter 2's exercises: q4, where does a learned table's similarity fade"""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis import learned_table
from posenc_lib.checks import draws
from posenc_lib.checks.answers import INT, as_int
from posenc_lib.checks.ch02.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import CLOSE_BUT
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, get_language, tr

# -- q4: where does a learned table's similarity fade? ------------------------------------------------


def _first(curve: torch.Tensor, below) -> int:
    """The first offset k >= 1 where below(curve[k]) holds, else len(curve). curve: (T,)."""
    hits = below(curve[1:]).nonzero()  # offsets k - 1
    return int(hits[0]) + 1 if hits.numel() else int(curve.shape[0])


def _diagonals(matrix: torch.Tensor, reduce) -> torch.Tensor:
    """reduce(diagonal k) for k = 0 .. T-1 of a (T, T) matrix: (T,)."""
    return torch.stack([reduce(matrix.diagonal(k)) for k in range(matrix.shape[0])])


_ONE_TOO_LARGE = N_(
    "your offset is one too large: return the first k whose mean is below the threshold itself, not the k after it (a loop that adds 1 after the test, or an index counted from 1 into a list that already starts at k = 1)."
)
_FROM_ZERO = N_(
    "your offset is one too small: offsets count from 1 (the first pair of neighbours is k = 1), so return k itself, not its index in a list that starts at k = 1."
)
_WRAPPED = N_(
    "you averaged over all T starts, pairing rows that wrap from the end of the table to the start (as torch.roll does): P_T-1 with P_k-1 is not a pair k apart; the pairs at offset k stop at t = T-1-k."
)
_AT_THRESHOLD = N_(
    "you stopped at an offset whose mean equals the threshold exactly (the sliding-windows table has one); the question asks for the first mean strictly below it (<, not <=)."
)


def _offset_mistakes(table: torch.Tensor, threshold: float) -> dict[str, int]:
    """The usual wrong answers for one (T, D) float64 table: the sentence naming each -> its answer.

    The order is the order in which ``diagnose_all`` tries them.
    """
    n = table.shape[0]
    cosines = learned_table.cosine_matrix(table)  # (T, T)
    dots = table @ table.T  # (T, T): <P_s, P_t>
    lengths = table.norm(dim=-1)  # (T,)
    mean_dots = _diagonals(dots, torch.mean)  # (T,)
    curve = _diagonals(cosines, torch.mean)  # (T,)
    right = _first(curve, lambda c: c < threshold)
    at_or_above = (curve[1:] >= threshold).nonzero()  # offsets k - 1
    last = int(at_or_above[-1]) + 1 if at_or_above.numel() else 0
    distances = _diagonals(torch.cdist(table, table), torch.mean)  # (T,)
    by_t = torch.stack([cosines.diagonal(k).sum() / n for k in range(n)])  # (T,)
    centred = learned_table.cosine_matrix(table - table.mean(0))  # (T, T)
    wrapped = torch.stack(  # mean over all T starts of cos(P_t, P_(t+k) mod T): (T,)
        [(cosines.diagonal(k).sum() + cosines.diagonal(k - n).sum()) / n for k in range(n)]
    )
    return {
        _FROM_ZERO: right - 1,
        _ONE_TOO_LARGE: right + 1,
        _AT_THRESHOLD: _first(curve, lambda c: c <= threshold),
        _WRAPPED: _first(wrapped, lambda c: c < threshold),
        N_("you returned the last offset whose mean is still at or above the threshold. The curve dips below the threshold and comes back above it; the question asks for the first offset below."): last,
        N_("you returned the offset from which the curve stays below the threshold for good; it first dips below earlier. Return the first offset whose mean is below."): last + 1,
        N_("you took the largest cosine at each offset (max over t); the curve is the mean over t of cos(P_t, P_t+k)."): _first(_diagonals(cosines, torch.max), lambda c: c < threshold),
        N_("you stopped at the first offset where any single pair drops below (min over t); average the T - k cosines at each offset first, then compare the mean."): _first(_diagonals(cosines, torch.min), lambda c: c < threshold),
        N_("you took the median of the cosines at each offset; the curve is their mean over t."): _first(_diagonals(cosines, torch.median), lambda c: c < threshold),
        N_("you averaged |cos(P_t, P_t+k)|; keep the sign: a negative cosine (the rows point apart) must pull the mean down."): _first(_diagonals(cosines.abs(), torch.mean), lambda c: c < threshold),
        N_("you averaged raw dot products <P_t, P_t+k>; divide each by ||P_t|| ||P_t+k|| to get the cosine, which does not depend on the rows' lengths."): _first(mean_dots, lambda c: c < threshold),
        N_("you divided the dot products by the mean squared row length, one number for the whole table; divide each <P_t, P_t+k> by ||P_t|| ||P_t+k||, that pair's own lengths."): _first(mean_dots / lengths.pow(2).mean(), lambda c: c < threshold),
        N_("you divided the mean dot product by the mean of ||P_t|| ||P_t+k|| (a ratio of means); take each pair's cosine first, then the mean of the cosines."): _first(mean_dots / _diagonals(torch.outer(lengths, lengths), torch.mean), lambda c: c < threshold),
        N_("you compared every position with position 0 only; the curve averages cos(P_t, P_t+k) over every start t = 0 .. T-1-k."): _first(cosines[0], lambda c: c < threshold),
        N_("you measured the distance ||P_t - P_t+k|| (and waited for it to pass the threshold), not the cosine similarity cos(P_t, P_t+k)."): _first(distances, lambda d: d > threshold),
        N_("you subtracted the mean row before taking cosines; measure the rows as they are, with no centring."): _first(_diagonals(centred, torch.mean), lambda c: c < threshold),
        N_("you divided each offset's sum by T; offset k has fewer pairs than that (t = 0 .. T-1-k): re-read what the question averages over."): _first(by_t, lambda c: c < threshold),
        N_("you compared with 0.5 whatever the threshold; use the threshold the function is given."): _first(curve, lambda c: c < 0.5),
    }  # fmt: skip


def _smooth_table(n_pos: int, dim: int, generator: torch.Generator) -> torch.Tensor:
    """A (T, D) float32 table like a trained one. float32.

    Three rotations (a fast one, whose weight grows along the table, makes the similarity curve
    ripple and differ from row 0's; a middle one; a slow drift), a shared offset (so centring
    matters), rows whose lengths swell and shrink (so raw dot products differ from cosines), a
    little noise (so the max and min over t differ from the mean), a few odd rows, three times
    longer and pointing the other way (like MiniLM's row 0: they pull the mean of the cosines down
    but not their median, and weigh more in a ratio of means), scaled to a mean squared row
    length between 1 and 1.6 (so distances and dot products cross the threshold elsewhere).
    """
    t = torch.arange(n_pos, dtype=torch.float64)[:, None]  # (T, 1)

    def uniform(low, high):
        return low + (high - low) * float(torch.rand(1, generator=generator, dtype=torch.float64))

    periods = torch.tensor(
        [uniform(4.5, 8.5), uniform(12, 30), n_pos * uniform(3, 8)], dtype=torch.float64
    )  # (3,)
    weights = torch.tensor([uniform(0.5, 0.9), uniform(0.6, 1.0), 1.0], dtype=torch.float64)
    growth = torch.ones(n_pos, 3, dtype=torch.float64)  # (T, 3)
    growth[:, 0] = 0.2 + 0.8 * t[:, 0] / n_pos  # the fast rotation grows along the table
    angles = 2 * math.pi * (t / periods + torch.rand(3, generator=generator, dtype=torch.float64))
    waves = weights * growth  # (T, 3) radii
    waves = torch.cat([waves * angles.cos(), waves * angles.sin()], dim=1)  # (T, 6)
    basis, _r = torch.linalg.qr(torch.randn(dim, 7, generator=generator, dtype=torch.float64))
    table = waves @ basis[:, :6].T + uniform(0.3, 0.9) * basis[:, 6]  # (T, D)
    table = table + 0.04 * torch.randn(n_pos, dim, generator=generator, dtype=torch.float64)
    table = table * (1 + 0.4 * torch.sin(2 * math.pi * t / uniform(8, 38) + uniform(0, 6)))
    odd = torch.randperm(n_pos - 1, generator=generator)[: max(2, n_pos // 12)] + 1  # not row 0
    table[odd] *= -3.0
    scale = math.sqrt(uniform(1.0, 1.6) / float(table.pow(2).sum(-1).mean()))
    return (table * scale).float()


def _window_table(n_pos: int, dim: int, generator: torch.Generator) -> torch.Tensor:
    """A (T, D) float32 table of +-1 signs (times 1, 2 or 4): row t is +1 on a window of D/2 dims
    that slides one dim per position, so cos(P_t, P_t+k) = 1 - 4k / D exactly for 4k <= 2D, and
    the mean at k = D/8 equals 0.5 exactly, in float32 too. D: a square number, for exact norms."""
    j = torch.arange(dim)[None, :]  # (1, D)
    t = torch.arange(n_pos)[:, None]  # (T, 1)
    signs = torch.where((j - t) % dim < dim // 2, 1.0, -1.0)  # (T, D)
    return signs * 2.0 ** torch.randint(0, 3, (n_pos, 1), generator=generator)  # (T, D)


def _turning_table(n_pos: int, period: float) -> torch.Tensor:
    """(T, 2) float32: one point turning round a circle, a full turn every `period` positions."""
    angle = 2 * math.pi * torch.arange(n_pos, dtype=torch.float64) / period  # (T,)
    return torch.stack([angle.cos(), angle.sin()], dim=1).float()  # (T, 2)


def _ripple_table(n_pos: int, slow_period: float) -> tuple[torch.Tensor, float]:
    """(T, 4) float32 and a threshold: a fast turn (period 6, half the weight) on a slow one, so
    the curve, (0.5 cos(2 pi k / 6) + cos(2 pi k / slow)) / 1.5, dips at k = 3, rises again, and
    first drops below the threshold at the next dip: a search that stops once the curve rises
    misses it. The threshold lies halfway between the two dips."""
    angle = 2 * math.pi * torch.arange(n_pos, dtype=torch.float64)  # (T,)
    fast, slow = angle / 6, angle / slow_period  # (T,), (T,)
    w = math.sqrt(0.5)
    table = torch.stack([w * fast.cos(), w * fast.sin(), slow.cos(), slow.sin()], dim=1)  # (T, 4)

    def curve(k):
        return (0.5 * math.cos(2 * math.pi * k / 6) + math.cos(2 * math.pi * k / slow_period)) / 1.5

    return table.float(), round((curve(3) + curve(9)) / 2, 3)


def _last_offset_turn(n_pos: int, generator: torch.Generator) -> tuple[int, float, float]:
    """(T, period, threshold) of a turning table whose curve, cos(2 pi k / period), first drops
    below the threshold at the last offset, k = T - 1: an answer past the middle of the table and
    past 20, which a search that stops early (k < 10, k < T // 2, k < T - 1) misses. The threshold
    lies halfway between the curve at T - 2 and at T - 1, far from both in float32."""
    angle = 1.0 + 0.4 * float(torch.rand(1, generator=generator, dtype=torch.float64))
    period = float(round(2 * math.pi * (n_pos - 1) / angle))  # turned by about `angle` at T - 1
    ends = [math.cos(2 * math.pi * k / period) for k in (n_pos - 2, n_pos - 1)]
    return n_pos, period, round(sum(ends) / 2, 4)


_KNOWN: dict[tuple, tuple[int, dict[str, int]]] = {}  # a case's answers, computed once
_DRAWN: dict[tuple[int, str], list[Case]] = {}  # q4's inputs, by seed and language


def _case_answers(table: torch.Tensor, threshold: float) -> tuple[int, dict[str, int]]:
    """The right answer and each usual mistake's answer for one case, cached (MiniLM's table
    takes a third of a second, and every check of the same inputs asks again)."""
    table = table.double()
    key = (tuple(table.shape), threshold, float(table.sum()), float(table.pow(2).sum()))
    if key not in _KNOWN:
        if len(_KNOWN) > 1024:
            _KNOWN.clear()
        right = learned_table.first_offset_below(table, threshold)
        _KNOWN[key] = right, _offset_mistakes(table, threshold)
    return _KNOWN[key]


def _answers(cases) -> tuple[list[int], dict[str, list[int]]]:
    """The right answer for each case, and each usual mistake's answer for each case."""
    rights, wrongs = [], {}
    for case in cases:
        right, mistakes = _case_answers(*case.args)
        rights.append(right)
        for sentence, value in mistakes.items():
            wrongs.setdefault(sentence, []).append(value)
    return rights, wrongs


def _told_apart(cases, known=None) -> bool:
    """Every usual mistake fails on some case, and no two give the same answers on every case.

    known: ``_answers`` of more cases, already computed, that count as well.
    """
    rights, wrongs = _answers(cases)
    if known is not None:
        rights = rights + known[0]
        wrongs = {sentence: answers + known[1][sentence] for sentence, answers in wrongs.items()}
    patterns = [tuple(rights)] + [tuple(v) for v in wrongs.values()]
    return len(set(patterns)) == len(patterns)


def _explains_misses(wrongs: dict[str, list[int]], got: list[int], wrong_at: list[int]) -> str:
    """The one mistake that explains at least two of the learner's wrong answers, or "".

    One matching whole number is often a coincidence (a stray k + 1 can equal the max-over-t
    answer on one table), so a mistake is named only on two independent cases or more, and only
    when no other mistake explains as many, and more than half of the wrong answers.
    """
    counts = {  # wrap-around pairs are named only when they explain every answer
        s: sum(answers[i] == got[i] for i in wrong_at)
        for s, answers in wrongs.items()
        if s != _WRAPPED
    }
    best = max(counts.values(), default=0)
    winners = [s for s, c in counts.items() if c == best]
    return winners[0] if best >= 2 and 2 * best > len(wrong_at) and len(winners) == 1 else ""


class FirstOffsetBelow(Question):
    name, function, points, notebook = "q4", "first_offset_below", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "unit @ unit.T",
        "cosines.diagonal(k).mean()",
        ".diagonal(k).mean()",
        "divide by T - k",
    )
    returns = INT
    references = (
        "posenc_lib.analysis.learned_table.first_offset_below",
        "posenc_lib.analysis.learned_table.cosine_by_offset",
    )
    slow_hint = N_(
        "MiniLM's table has about 130,000 pairs (t, t + k); one matrix product gives all their "
        "cosines at once."
    )
    title = N_("Where does a learned table's similarity fade?")
    timeout = 10.0  # per call: a correct answer with a Python loop over pairs takes 2-5 s
    hints = (
        N_(
            "The curve at offset k is the mean, over every start t = 0 .. T-1-k, of cos(P_t, P_t+k). "
            "Start with the cosine of every pair: scale each row to length 1, then one matrix product."
        ),
        N_(
            "In the (T, T) matrix of cosines, the pairs k apart are the k-th diagonal: "
            "matrix.diagonal(k) has T - k entries. Its .mean() is the curve at offset k."
        ),
        N_(
            "Walk k = 1, 2, ..., T - 1 and return the first k whose mean is below the threshold "
            "(strictly: <). If none is, return T, the table's length."
        ),
    )

    def cases(self, seed=0):
        # A draw takes a third of a second (MiniLM's table, the search for a smooth table), and
        # every check of the same seed asks again: keep the last few (the inputs are never
        # changed: the learner's function gets copies).
        # The inputs' descriptions are sentences: keep one draw per language shown.
        key = (seed, get_language())
        if key not in _DRAWN:
            if len(_DRAWN) >= 32:
                _DRAWN.clear()
            _DRAWN[key] = self._draw(seed)
        return list(_DRAWN[key])

    def _draw(self, seed):
        from posenc_lib.models import minilm  # the real table, from the installed package (once)

        generator = draws.seeded(seed, 4)
        if seed == 0:
            smooth, smooth_threshold, window, turning = (48, 24), 0.6, (40, 64), (30, 200.0, 0.2)
            real_threshold, swinging = 0.5, (40, 25.0, -0.5)
            last = (24, 100.0, 0.15)
        else:
            smooth = (draws.randint(60, 120, generator), draws.randint(24, 48, generator))
            smooth_threshold = [0.45, 0.55, 0.6, 0.65][draws.randint(0, 4, generator)]
            window = (draws.randint(60, 120, generator), 256)
            turning = (
                draws.randint(40, 90, generator),
                1000.0 * draws.randint(2, 6, generator),
                0.3,
            )
            real_threshold = [0.3, 0.35, 0.4, 0.45][draws.randint(0, 4, generator)]
            swinging = (
                draws.randint(40, 90, generator),
                20.0 + draws.randint(0, 12, generator) + 0.5,
                -0.45,
            )
            last = _last_offset_turn(draws.randint(40, 90, generator), generator)
        real = minilm.position_weight()  # (512, 384) float32
        name = _("MiniLM's position table")
        if seed == 0:  # its curve dips at k = 3 and rises again before dropping below 0.3 at k = 8
            rising = Case(
                (real, 0.3),
                tr(
                    "table = {name}, shape {shape}, threshold = 0.3",
                    name=name,
                    shape=tuple(real.shape),
                ),
            )
        else:  # the same shape of curve, on a made table
            slow = 50.0 + draws.randint(0, 31, generator)
            ripple, ripple_threshold = _ripple_table(draws.randint(40, 90, generator), slow)
            rising = Case(
                (ripple, ripple_threshold),
                tr(
                    "table = a fast turn on a slow one, {n} positions, periods 6 and {slow:g}, threshold = {threshold} (the curve rises before it drops below)",
                    n=len(ripple),
                    slow=slow,
                    threshold=ripple_threshold,
                ),
            )
        if seed:  # its first rows (with row 0, unlike the others): new, and quicker to check
            n_rows = draws.randint(160, 321, generator)
            real = real[:n_rows]  # (n_rows, 384)
            name = tr("the first {n_rows} rows of MiniLM's position table", n_rows=n_rows)
        shape = tuple(real.shape)
        others = [
            Case((_window_table(*window, generator), 0.5), tr("table = sliding +-1 windows, shape {shape}, threshold = 0.5", shape=window)),
            Case((real, real_threshold), tr("table = {name}, shape {shape}, threshold = {threshold}", name=name, shape=shape, threshold=real_threshold)),
            Case((_turning_table(*turning[:2]), turning[2]), tr("table = one slow turn, {n} positions, period {period:g}, threshold = {threshold}", n=turning[0], period=turning[1], threshold=turning[2])),
            Case((_turning_table(*swinging[:2]), swinging[2]), tr("table = a fast turn, {n} positions, period {period:g}, threshold = {threshold} (the cosine swings below 0)", n=swinging[0], period=swinging[1], threshold=swinging[2])),
            Case((_turning_table(*last[:2]), last[2]), tr("table = a quarter turn, {n} positions, period {period:g}, threshold = {threshold}", n=last[0], period=last[1], threshold=last[2])),
            rising,
        ]  # fmt: skip
        known = _answers(others)  # the fixed cases, computed once
        while True:  # a smooth table on which the usual mistakes are told apart
            table = _smooth_table(*smooth, generator)
            first = Case(
                (table, smooth_threshold),
                tr(
                    "table = a smooth table, shape {shape}, threshold = {threshold}",
                    shape=tuple(table.shape),
                    threshold=smooth_threshold,
                ),
            )
            right = learned_table.first_offset_below(table.double(), smooth_threshold)
            if 3 <= right < smooth[0] // 3 and _told_apart([first], known):
                return [first, *others]

    def none_note(self, case):
        # A None where no offset drops below: likely no `return` in that branch of the function.
        right, _mistakes = _case_answers(*case.args)
        if right != case.args[0].shape[0]:
            return ""
        return _(
            " (No offset of this table drops below the threshold: the question asks you "
            "to return T, the table's length, in that case.)"
        )

    def diagnose(self, case, value):
        table, _threshold = case.args
        n = table.shape[0]
        if isinstance(value, torch.Tensor) and value.numel() in (n, n - 1):
            return _(
                "You returned the whole similarity curve; return one offset, the first k where it drops below the threshold."
            )
        if isinstance(value, float):  # a whole 3.0 got the type policy's sentence already
            return _("Return an offset, a whole number of positions (an int), not a mean cosine.")
        _offset, problem = as_int(value, N_("The offset"))
        return problem  # the ints are judged together, in diagnose_all

    def diagnose_all(self, cases, values):
        got = [int(round(float(v))) for v in values]
        rights, wrongs = _answers(cases)
        wrong_at = [i for i, (a, b) in enumerate(zip(got, rights, strict=True)) if a != b]
        if not wrong_at:
            return None
        described = cases[wrong_at[0]].describe

        def where(problem: str) -> str:
            return tr("{problem} (Input: {case}.)", problem=problem, case=described)

        for sentence, answers in wrongs.items():  # a mistake that explains every answer
            if answers == got:
                return where(_(CLOSE_BUT) + _(sentence))
        n_rows = [case.args[0].shape[0] for case in cases]
        if all(got[i] == n_rows[i] > rights[i] for i in wrong_at):
            return where(
                _(
                    "Your function found no offset below the threshold, but one drops below it: search every offset k = 1 .. T - 1, up to the last (k = T - 1 has a single pair, P_0 and P_T-1), past the first few or the first half of the table, and past a place where the curve rises again."
                )
            )
        if all(rights[i] == n_rows[i] for i in wrong_at):
            i = wrong_at[0]
            return where(
                tr(
                    "No offset of this table drops below the threshold; the question asks you to return T, the table's length, in that case, not {got}.",
                    got=got[i],
                )
            )
        i = wrong_at[0]
        named = _explains_misses(wrongs, got, wrong_at)
        if named:
            return where(_(CLOSE_BUT) + _(named))
        if not 1 <= got[i] <= n_rows[i]:
            return where(
                tr(
                    "An offset between two positions of a {n}-row table is 1 .. {last} (or {n} when none drops below).",
                    n=n_rows[i],
                    last=n_rows[i] - 1,
                )
            )
        return where(
            _(
                "Your offset is not the first k whose mean cosine over t = 0 .. T-1-k drops below the threshold: print your curve at offsets 1 to 10 for this input and work one of them out by hand, the mean of cos(P_t, P_t+k) over its T - k pairs (on MiniLM's table, the lecture's section 5 prints offsets 1 to 8)."
            )
        )
