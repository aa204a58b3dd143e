"""Chapter 5's exercises: q3, how far back each head looks; q4, how much attention reaches past a
distance."""

from __future__ import annotations

import math

import numpy as np
import torch

from posenc_lib.alibi import alibi_slopes as library_slopes
from posenc_lib.analysis.ch05_alibi import effective_window as library_window
from posenc_lib.analysis.ch05_alibi import far_mass
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, TENSOR, as_number, as_tensor, close, same_number
from posenc_lib.checks.ch05.setting import NOTEBOOK, _loose_slopes, _shown
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q3: a head's window ----------------------------------------------------------------------------


class Window(Question):
    name, function, points, notebook = "q3", "effective_window", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "ln(factor) / m",
        "math.log(factor) / slopes",
        "log(factor) / m",
    )
    returns, references = TENSOR, ("posenc_lib.analysis.ch05_alibi.effective_window",)
    title = N_("How far back does each head look?")
    hints = (
        N_(
            "With equal content, the weight of the key at distance d is proportional to "
            "exp(-m * d): softmax exponentiates the bias."
        ),
        N_(
            "Solve exp(-m * d) = 1 / factor for d, with the natural logarithm: math.log(factor) "
            "(factor is a plain Python number, which torch.log does not take)."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            # the second case's slopes are not a ladder: the window comes from the slopes given
            pairs = [(6, 100.0), (torch.tensor([0.9, 0.02, 0.3]), 2.0), (8, 10.0)]  # log10(10) = 1
        else:
            # Every draw: a ladder with a large factor, slopes that are no ladder (and in no
            # order), and a factor between 1 and 2; never 10 or e, the factors of the lecture.
            generator = draws.seeded(seed, 3)
            pairs = []
            while len(pairs) < 3:
                h = draws.randint(9, 33, generator)
                u = float(torch.rand(1, generator=generator))
                factor = round(1.05 + 0.9 * u, 2) if len(pairs) == 2 else round(u * 998 + 2.5, 2)
                if factor == 10.0:
                    continue
                if len(pairs) == 1:
                    h = _loose_slopes(draws.randint(3, 9, generator), generator)
                pairs.append((h, factor))
        return [
            Case((library_slopes(h), f), f"slopes = alibi_slopes({h}), factor = {f:g}")
            if isinstance(h, int)
            else Case((h, f), f"{_shown(h)}, factor = {f:g}")
            for h, f in pairs
        ]

    def diagnose(self, case, value):
        slopes, factor = case.args
        got, problem = as_tensor(value, N_("The windows"))
        if problem:
            return problem
        if got.dim() != 1:
            return tr(
                "The windows should be one flat tensor of shape (H,), one per head, but yours has shape {shape}.",
                shape=tuple(got.shape),
            )
        if got.numel() != slopes.numel():
            return tr(
                "Return one window per head: {want} numbers, but you returned {count}.",
                want=slopes.numel(),
                count=got.numel(),
            )
        m = slopes.double()
        want = library_window(m, factor)
        if close(got, want, rtol=1e-5, atol=0):
            return None
        mistakes = [
            (math.log10(factor) / m, N_("you used log base 10, where softmax weights are powers of e (section 3 of the lecture).")),
            (math.log2(factor) / m, N_("you used log base 2, where softmax weights are powers of e (section 3 of the lecture).")),
            (factor / m, N_("your windows fall in proportion to the distance; the weight falls exponentially, as exp(-m d) (section 3 of the lecture).")),
            (math.log(factor) * m, N_("multiply and divide are swapped: your windows grow with the slope, whereas a steeper slope means a shorter window.")),
            (1 / m, N_("1 / m is where the weight has fallen by a factor e; the question asks where it has fallen by `factor`.")),
            (-want, N_("your windows are negative, and a distance is not: check the sign as you solve for d.")),
            (want.ceil(), N_("you rounded up to whole tokens; the question asks for the exact distance, a real number.")),
            (want.floor(), N_("you rounded down to whole tokens; the question asks for the exact distance, a real number.")),
            (library_window(library_slopes(m.numel(), dtype=torch.float64), factor), N_("you computed your own slopes for this many heads; use the `slopes` you are given (a model may have been trained with others).")),
            (math.log(10.0) / m, N_("you used factor 10, the lecture's, whatever the argument; use the `factor` passed in.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong, rtol=1e-5, atol=0))
        if named:
            return named
        return _("Your windows are not the distances d at which exp(-m d) equals 1 / factor.")


# -- q4: attention beyond a distance ------------------------------------------------------------------


def _beyond(m: float, n: int, far: int, form: str = "right") -> float:
    """The share of weight beyond ``far`` (and the usual wrong versions), float64."""
    count = {"n + 1 keys": n + 1, "n - 1 keys": n - 1}.get(form, n)
    d = torch.arange(count, dtype=torch.float64)  # (count,): the distances
    base = {"base 2": 2.0, "base 10": 10.0}.get(form, math.e)
    w = base ** (m * d if form == "flipped" else -m * d)  # (n,) unnormalised weights
    if form == "infinite":
        return math.exp(-m * (far + 1))
    if form == "infinite, at least":  # e^(-m distance): an endless tail from `distance` itself
        return math.exp(-m * far)
    if form == "uniform":
        return (n - 1 - far) / n
    if form == "not normalised":
        return float(w[far + 1 :].sum())
    share = w / w.sum()
    if form == "at least":
        return float(share[far:].sum())
    if form == "near":
        return float(share[: far + 1].sum())
    return float(share[far + 1 :].sum())


def _near_window(slope: float, generator: torch.Generator) -> int:
    """A distance between 0.2 and 2.5 times the head's window ln(10) / m, drawn: far enough that
    the share past it is not 1, near enough that it is not tiny."""
    stretch = float(torch.rand(1, generator=generator)) * 2.3 + 0.2
    return int(stretch * math.log(10) / slope)


class FarAttention(Question):
    name, function, points, notebook = "q4", "far_attention", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "weights[d > distance].sum()",
        "torch.softmax(-slope * d, dim=0)",
    )
    returns, references = FLOAT, ("posenc_lib.analysis.ch05_alibi.far_mass",)
    title = N_("How much attention reaches past a distance?")
    hints = (
        N_(
            "The last query is at position n_keys - 1; the key at position j is at distance "
            "d = n_keys - 1 - j, so the distances run from 0 to n_keys - 1."
        ),
        N_(
            "With equal content the weights are a softmax of the bias: exp(-m d) divided by the sum "
            "of exp(-m d') over all n_keys distances."
        ),
        N_("Add up the weights of the keys with d > distance (not d >= distance)."),
    )

    def cases(self, seed=0):
        if seed == 0:
            triples = [(0.5, 16, 4), (2.0**-8, 1024, 127), (0.125, 100, 10), (2**-0.5, 8, 0)]
        else:
            generator = draws.seeded(seed, 4)
            triples = []
            for _ in range(4):  # a distance near the head's window, so the share is not tiny
                slope = 2.0 ** (-draws.randint(1, 17, generator) / 2)
                far = _near_window(slope, generator)
                n = far + draws.randint(20, 2001, generator)
                triples.append((slope, n, far))
            # A flat head whose last keys sit just past `distance` (n_keys - distance far below
            # 1/m): the sequence's end matters, so an endless tail or one key more or less shows.
            slope = 2.0 ** (-draws.randint(12, 17, generator) / 2)
            far = _near_window(slope, generator)
            n = far + draws.randint(2, int(0.25 / slope) + 1, generator)
            triples.append((slope, n, far))
            # distance 0: the share beyond the query's own key
            slope = 2.0 ** (-draws.randint(1, 9, generator) / 2)
            triples.append((slope, draws.randint(20, 200, generator), 0))
        return [Case(t, f"slope = {t[0]:.6g}, n_keys = {t[1]}, distance = {t[2]}") for t in triples]

    def diagnose(self, case, value):
        m, n, far = case.args
        count = value.numel() if isinstance(value, torch.Tensor) else np.size(value)
        if isinstance(value, (torch.Tensor, np.ndarray)) and count != 1:
            return _(
                "The share should be one number: add up the weights of the keys further back than `distance` and return the sum as a float."
            )
        got, problem = as_number(value, N_("The share"))
        if problem:
            return problem
        want = float(far_mass(m, n, far)[0])

        def near(a, b):
            return same_number(a, b, atol=1e-9)

        if near(got, want):
            return None
        if near(got, 100 * want):
            return _("You returned a percentage; return the share as a number between 0 and 1.")
        mistakes = [
            ("at least", N_("your share counts one key too near the query: the key at exactly `distance`, which is not further back than it, or, if your distances start at 1, every key is one step off (the query's own key is at distance 0). Look at your comparison with `distance` and at where your distances start.")),
            ("not normalised", N_("the weights are a softmax: divide by the sum of exp(-m d) over all n_keys keys.")),
            ("flipped", N_("the bias is -m d: far keys are penalised, not rewarded.")),
            ("uniform", N_("you left out the bias: with equal content, ALiBi's weights fall as exp(-m d).")),
            ("near", N_("that is the share within `distance` (d <= distance); the question asks for the share beyond it.")),
            ("infinite", N_("that is the tail of an endless row of keys; there are only n_keys, at distances 0 to n_keys - 1.")),
            ("infinite, at least", N_("that is exp(-m distance), the tail of an endless row of keys counted from the key at exactly `distance`: there are only n_keys keys, and the key at `distance` is not further back than it.")),
            ("n + 1 keys", N_("there are n_keys keys, at distances 0 to n_keys - 1; you have one too many.")),
            ("n - 1 keys", N_("there are n_keys keys, at distances 0 to n_keys - 1 (the query's own key included); you have one too few.")),
            ("base 2", N_("softmax uses e, not 2: the weights are exp(-m d).")),
            ("base 10", N_("softmax uses e, not 10: the weights are exp(-m d).")),
        ]  # fmt: skip
        named = named_mistake(
            ((_beyond(m, n, far, form), sentence) for form, sentence in mistakes),
            lambda wrong: near(got, wrong),
        )
        if named:
            return named
        if got < 0 or got > 1:
            return _("A share of the attention lies between 0 and 1.")
        return _(
            "Your share differs from the weight the last query puts on keys further back than `distance`."
        )
