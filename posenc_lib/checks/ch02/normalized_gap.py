"""Chapter 2's exercises: q3, the normalized code's length dependence."""

from __future__ import annotations

import numbers

import torch

from posenc_lib.checks import draws
from posenc_lib.checks.answers import TENSOR, as_tensor, close
from posenc_lib.checks.ch02.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.checks.run import TooMany
from posenc_lib.i18n import N_, _, tr

# -- q3: the normalized code's length dependence ---------------------------------------------------


def _gaps(i, j, lengths, divide_by=lambda n: n - 1, signed=False):
    """|i - j| / divide_by(T) for each T, float64 (len(lengths),); j - i if signed."""
    n = torch.tensor(lengths, dtype=torch.float64)  # (L,)
    offset = float(j - i) if signed else float(abs(i - j))
    return offset / divide_by(n)


class NormalizedGap(Question):
    name, function, points, notebook = "q3", "normalized_gap", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "abs(i - j) / (",
        "|i - j| / (T - 1)",
        "abs(i - j) / (n - 1)",
        "divides by T - 1",
    )
    returns, references = TENSOR, ()  # one division: the library has nothing closer than that
    title = N_("The same two tokens, sentences of different lengths")
    hints = (
        N_(
            "Write down the codes of token i and token j in a sequence of T tokens, then subtract one "
            "from the other. By hand first: tokens 2 and 3 of a 5-token sentence have codes 0.5 and "
            "0.75, a gap of 0.25."
        ),
        N_(
            "The two codes share their denominator, so their difference is a single fraction. A gap is "
            "a distance: it must not depend on which of the two tokens comes first."
        ),
        N_(
            "Make a float tensor of the lengths, torch.tensor(lengths, dtype=torch.float32), shape "
            "(len(lengths),), and divide abs(i - j) by that tensor minus 1: one gap per length."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            # The first case tells every usual mistake apart: i, j, |i - j| and |i - j| + 1 all
            # differ (in (2, 3), the count |i - j| + 1 = 2 would look like the code of token i).
            # The third: the shortest length that holds both tokens (8 for token 7), lengths out
            # of order and one repeated; the fourth: a single length.
            triples = [
                (6, 2, [8, 20, 100]),
                (2, 3, [5, 500]),
                (0, 7, [64, 8, 1024, 16, 64]),
                (13, 4, [2000]),
            ]
        else:
            generator = draws.seeded(seed, 3)
            triples = []
            for _draw in range(3):
                i = j = 0
                while len({i, j, abs(i - j), abs(i - j) + 1}) < 4:  # mistakes told apart, i != j
                    i, j = draws.randint(1, 30, generator), draws.randint(1, 30, generator)
                smallest = max(i, j) + 1
                lengths = sorted({smallest + draws.randint(0, 5000, generator) for _ in range(4)})
                triples.append((i, j, lengths))
            triples[0] = (max(triples[0][:2]), min(triples[0][:2]), triples[0][2])  # one i > j
            # One case holds the shortest length that fits both tokens, with the lengths out of
            # order and one of them twice; one case has a single length.
            i, j, lengths = triples[1]
            lengths = [max(i, j) + 1, *lengths[::-1], lengths[-1]]
            triples[1] = (
                i,
                j,
                [lengths[k] for k in torch.randperm(len(lengths), generator=generator)],
            )
            i, j, _lengths = triples[2]
            triples.append((j, i, [max(i, j) + 1 + draws.randint(20, 5000, generator)]))
        return [Case(c, f"i = {c[0]}, j = {c[1]}, lengths = {c[2]}") for c in triples]

    def diagnose(self, case, value):
        i, j, lengths = case.args
        if isinstance(value, TooMany):
            return _("Return a tensor of gaps; your function returned an endless iterator.")
        if isinstance(value, numbers.Real) or (
            isinstance(value, torch.Tensor) and value.dim() == 0
        ):
            return tr(
                "Return one gap per length, a tensor of shape ({n},), not a single number.",
                n=len(lengths),
            )
        if isinstance(value, torch.Tensor) and value.dtype in (torch.float16, torch.bfloat16):
            return tr(
                "Your gaps are {dtype}, which keeps only about {digits} significant digits: too coarse for sequences of thousands of tokens, where dividing by T instead of T - 1 changes a gap in its fourth digit. Return float32 or float64, as the question asks.",
                dtype=value.dtype,
                digits=3 if value.dtype == torch.float16 else 2,
            )
        if (
            isinstance(value, torch.Tensor)
            and value.dim() == 1
            and len(lengths) != len(set(lengths)) == value.numel()
        ):
            return _(
                "You returned one gap per distinct length; `lengths` may hold a length twice, and each entry of `lengths` gets its own gap, in the same order."
            )
        got, problem = as_tensor(value, N_("The gaps"), (len(lengths),))
        if problem:
            return problem
        # Tight: with T in the thousands, dividing by T instead of T - 1 changes a gap by 1 / T.
        want = _gaps(i, j, lengths)
        if close(got, want, rtol=1e-5, atol=1e-9):
            return None
        n = torch.tensor(lengths, dtype=torch.float64)
        mistakes = [
            (_gaps(i, j, lengths, lambda n: n), N_("you divide by T; then the last token, T - 1, does not land exactly on 1 as in the normalized code: re-read the question's formula.")),
            (_gaps(i, j, lengths, lambda n: n + 1), N_("you divide by T + 1; then the last token, T - 1, does not land exactly on 1 as in the normalized code: re-read the question's formula.")),
            (_gaps(i, j, lengths, signed=True), N_("a gap is a distance: it must not depend on which token comes first, so take the absolute value (here i > j).")),
            (_gaps(i, j, lengths, lambda n: torch.ones_like(n)), N_("you did not normalize: your gaps are counts of tokens, the same for every length, while the codes (and so their gap) are fractions of each sequence.")),
            (j / (n - 1), N_("you returned the code of token j alone; the gap is the difference between the codes of tokens i and j.")),
            (i / (n - 1), N_("you returned the code of token i alone; the gap is the difference between the codes of tokens i and j.")),
            ((abs(i - j) + 1) / (n - 1), N_("you counted the tokens from i to j including both ends, one too many; the gap is the difference between the two codes.")),
            (abs(i - j) / n - 1, N_("division comes before subtraction, so `x / lengths - 1` means `(x / lengths) - 1`: put the denominator in parentheses.")),
            ((n - 1) / max(abs(i - j), 1), N_("your ratio is upside down: the gap between two codes in [0, 1] is at most 1.")),
            (torch.full_like(n, abs(i - j) / (lengths[0] - 1)), N_("your gap is the same for every length: compute it with each T in `lengths`.")),
            (_gaps(i, j, sorted(lengths)), N_("your gaps are in another order than `lengths`: entry m is the gap for lengths[m], and `lengths` need not be sorted.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong, rtol=1e-5, atol=1e-9))
        if named:
            return named
        if bool((got < 0).any()):
            return _("A gap is a distance: it cannot be negative.")
        return _(
            "Your gaps differ from the difference between the codes of tokens i and j, one per length T: work out both codes for one length by hand and compare."
        )
