"""Chapter 5's exercises: q1, ALiBi's slopes for any head count; q2, the causal bias."""

from __future__ import annotations

import math

import torch

from posenc_lib.alibi import alibi_slopes as library_slopes
from posenc_lib.analysis.ch05_alibi import ladder_size
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOATS, TENSOR, as_floats, as_tensor, close
from posenc_lib.checks.ch05.setting import NOTEBOOK, _loose_slopes, _shown
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

MASKED = -1e4  # at or below this, an entry was meant as masked: -inf, or a stand-in (refused)


def _ladder(n: int) -> list[float]:
    return [2.0 ** (-8.0 * h / n) for h in range(1, n + 1)]


# -- q1: the slopes ---------------------------------------------------------------------------------


class Slopes(Question):
    name, function, points, notebook = "q1", "alibi_slopes", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "longer[0::2]",
        "[0::2][: num_heads - low]",
        "from the odd places of the ladder",
        "fill the other",
        "2 ** math.floor(math.log2(num_heads))",
    )
    returns = FLOATS
    references = (
        "posenc_lib.alibi.alibi_slopes",
        "transformers.models.bloom.modeling_bloom.build_alibi_tensor",
    )
    title = N_("ALiBi slopes for any number of heads")
    hints = (
        N_(
            "For H a power of two the slopes are 2 ** (-8 * h / H) for h = 1, ..., H: head 1 gets "
            "the steepest slope 2 ** (-8 / H), head H the gentlest, 2 ** -8."
        ),
        N_(
            "For other H, let H' be the largest power of two <= H. Heads 1..H' get the ladder of H' "
            "heads; the remaining H - H' heads get slopes from the ladder of 2 H' heads."
        ),
        N_(
            "The ladder of 2 H' heads holds the ladder of H' heads at its even places (2nd, 4th, ...); "
            "the new slopes are the ones at the odd places (1st, 3rd, ...), taken in order: each sits "
            "half a ladder step above head 1, 2, 3, ... of the shorter ladder."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            heads = [8, 12, 4, 6, 1]
        else:
            # Every draw: a power of two; one head more than a power of two (one extra head); a
            # count in the upper half of an octave, H > sqrt(2) * 2^k (where rounding log2(H)
            # instead of flooring it picks the power above); and one more drawn freely.
            generator = draws.seeded(seed, 1)
            power = 2 ** draws.randint(4, 7, generator)  # 16, 32 or 64
            above = 2 ** draws.randint(4, 7, generator) + 1  # 17, 33 or 65
            octave = 2 ** draws.randint(4, 7, generator)
            low = math.floor(octave * math.sqrt(2)) + 1
            upper = draws.randint(low, 2 * octave, generator)
            heads = [power, above, upper]
            while len(heads) < 4:
                n = draws.randint(13, 101, generator)
                if n & (n - 1) and n not in heads:
                    heads.append(n)
            heads.append(1)  # H = 1 in every draw: a single head, slope 2 ** -8
        single = _(" (a single head)") if seed else ""  # the public draw has H = 1 too
        return [Case((h,), f"num_heads = {h}" + (single if h == 1 else "")) for h in heads]

    def diagnose(self, case, value):
        (n,) = case.args
        got, problem = as_floats(value, N_("The slopes"))
        if problem:
            return problem
        low = ladder_size(n)
        above = 2 * low if low != n else n
        if got.numel() != n:
            if got.numel() == above and above != n:
                return tr(
                    "You returned {above} slopes, the ladder for {above} heads; a model with {n} heads needs exactly {n}, one per head.",
                    above=above,
                    n=n,
                )
            if got.numel() == low:
                return tr(
                    "You returned only the {low} slopes of the largest power of two; the other {rest} heads need slopes too.",
                    low=low,
                    rest=n - low,
                )
            return tr(
                "There should be one slope per head: {n} numbers, but you returned {count}.",
                n=n,
                count=got.numel(),
            )
        want = library_slopes(n, dtype=torch.float64)  # (H,)
        if close(got, want, rtol=1e-5, atol=0):
            return None
        for low_precision in (torch.float16, torch.bfloat16):  # right, but rounded to 3 digits
            if torch.equal(got, got.to(low_precision).double()) and close(got, want, rtol=4e-3):
                return _(
                    "Your slopes are right but rounded: they hold too few digits, as float16 (about 3 significant digits) or bfloat16 (about 2) do. Use float32 or float64."
                )
        if low != n and close(
            got, torch.as_tensor(_ladder(n), dtype=torch.float64), rtol=1e-5, atol=0
        ):
            return tr(
                "These are the slopes of the paper's formula (the paper's section 3: the geometric sequence starting at 2 ** (-8 / {n})), another rule than this question's: for H = {n}, which is not a power of two, the authors' code (and BLOOM's), which this question follows, does not use it. Re-read the question's rule for a head count that is not a power of two.",
                n=n,
            )
        extras = _ladder(2 * low)[0::2][: n - low]
        mistakes = [
            (want.flip(0), N_("your slopes run from the gentlest to the steepest; head 1 has the steepest slope, 2 ** (-8 / H).")),
            (_ladder(n // 2) + _ladder(n)[0::2][: n - n // 2] if low == n > 1 else [], tr("{n} is a power of two, so the largest power of two <= H is H itself: the slopes are the ladder 2 ** (-8 h / {n}), with no extra heads.", n=n)),
            (_ladder(above)[:n], tr("you cut the ladder of {above} heads down to {n}; the first heads keep a shorter ladder: re-read the question's rule for a head count that is not a power of two.", above=above, n=n, low=low, double=2 * low)),
            ([1.0] if n == 1 else [], N_("for a single head (H = 1) the ladder is 2 ** (-8 h / H) with h = 1: one slope, 2 ** -8, not 1.")),
            ([2.0 ** (-8.0 * h / n) for h in range(n)], N_("your first slope is 1 because h starts at 0; h counts from 1, so head 1's slope is 2 ** (-8 / H).")),
            ([2.0**-h for h in range(1, n + 1)], N_("you used 2 ** -h, the slopes for 8 heads, whatever H; the ratio between neighbouring heads is 2 ** (-8 / H).")),
            (sorted(_ladder(low) + extras, reverse=True), N_("your slopes are in the wrong order: the paper's code (and BLOOM's) keeps the first heads on the ladder of the largest power of two, and puts the extra heads after them.")),
            (_ladder(low) + _ladder(2 * low)[1::2][: n - low], N_("your extra heads repeat slopes the first heads already have; the question's extra heads get slopes the shorter ladder lacks.")),
            (_ladder(low) + _ladder(2 * low)[0::2][::-1][: n - low], N_("the extra heads take the odd places of the longer ladder from its steep end, in order: extra head k sits half a step above head k.")),
        ]  # fmt: skip
        named = named_mistake(
            mistakes,
            lambda wrong: close(
                got, torch.as_tensor(wrong, dtype=torch.float64), rtol=1e-5, atol=0
            ),
        )
        if named:
            return named
        if bool((got <= 0).any()):
            return _(
                "Slopes are positive numbers: the minus sign belongs in the bias, -m * (i - j), not in m."
            )
        if bool((got >= 1).any()):
            return _("Every slope is below 1: the exponent in 2 ** (-8 h / H) is negative.")
        return _(
            "These are not the paper's slopes. For H a power of two they are 2 ** (-8 h / H), h = 1..H; check your exponent and where your ladder starts."
        )


# -- q2: the causal bias ----------------------------------------------------------------------------


def _bias(slopes: torch.Tensor, n: int, form: str = "paper") -> torch.Tensor:
    """The bias of the given (H,) slopes for T = n, float64, in the right form or a wrong one."""
    m = slopes.double()[:, None, None]  # (H, 1, 1)
    i = torch.arange(n, dtype=torch.float64)[:, None]  # (T, 1): query positions
    j = torch.arange(n, dtype=torch.float64)[None, :]  # (1, T): key positions
    values = {
        "paper": -m * (i - j),
        "flipped": m * (i - j),
        "bloom": m * j + 0 * i,
        "mpt": m * (j - (n - 1)) + 0 * i,
        "no slope": -(i - j) + 0 * m,
        "from one": -m * (i - j + 1),
        "symmetric": -m * (i - j).abs(),
    }[form]  # (H, T, T)
    return values.masked_fill((j > i).expand_as(values), -math.inf)


class CausalBias(Question):
    name, function, points, notebook = "q2", "causal_alibi_bias", 3, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        'masked_fill(j > i, float("-inf"))',
        "-slopes[:, None, None] * distance",
    )
    returns, references = TENSOR, ("posenc_lib.alibi.alibi_bias",)
    title = N_("Build ALiBi's causal bias")
    hints = (
        N_(
            "Make the positions i (queries, a column) and j (keys, a row) with torch.arange; i - j is "
            "then a (T, T) matrix by broadcasting, positive below the diagonal."
        ),
        N_(
            "Multiply by -slopes[:, None, None] to get one (T, T) matrix per head: shape (H, T, T)."
        ),
        N_(
            "Keys after the query (j > i) must be unreachable: set those entries to float('-inf') with "
            "masked_fill (multiplying by a mask that holds inf would turn 0 * inf into NaN)."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            # the second case's slopes are no ladder and not in order: "use these, whatever they are"
            given = torch.tensor([0.3, 0.8, 0.05])
            pairs = [(library_slopes(4), 5), (given, 6), (library_slopes(8), 4)]
        else:
            generator = draws.seeded(seed, 2)
            pairs = []
            while len(pairs) < 3:
                heads = draws.randint(3, 9, generator)
                n = draws.randint(6, 13, generator)
                if heads != n:  # so a bias with its axes swapped has another shape
                    raw = _loose_slopes(heads, generator)
                    ordered = raw.sort(descending=True).values
                    if len(pairs) != 1:
                        pairs.append((ordered, n))
                    elif not (torch.equal(raw, ordered) or torch.equal(raw, ordered.flip(0))):
                        pairs.append((raw, n))  # the middle case: in no order
        return [Case((s, n), f"{_shown(s)}, n = {n}") for s, n in pairs]

    def diagnose(self, case, value):
        slopes, n = case.args
        heads = slopes.numel()
        if not isinstance(value, torch.Tensor) or value.is_complex():
            return as_tensor(value, N_("The bias"))[1]  # a sentence on what was returned instead
        shape = tuple(value.shape)
        if shape == (n, n):
            return tr(
                "You returned one (T, T) matrix; ALiBi gives each of the {heads} heads its own, so return shape (H, T, T) = {want}.",
                heads=heads,
                want=(heads, n, n),
            )
        if shape == (n, n, heads) and heads != n:
            return tr(
                "Your bias has the heads last, shape {shape}; put them first: (H, T, T) = {want}.",
                shape=shape,
                want=(heads, n, n),
            )
        value = value.detach().to("cpu", torch.float64)
        if bool(torch.isnan(value).any()):
            return _(
                "Your bias contains NaN. A usual cause: multiplying -inf by 0 (a slope times a mask of infinities); fill the masked entries with masked_fill instead."
            )
        if bool(torch.isposinf(value).any()):
            return _(
                "Your bias contains +inf: that would give a key all of the weight. Masked keys get -inf."
            )
        masked = value <= MASKED  # (H, T, T): -inf, or a large negative stand-in for it
        got, problem = as_tensor(value.masked_fill(masked, 0.0), N_("The bias"), (heads, n, n))
        if problem:
            return problem
        i = torch.arange(n)[:, None]
        j = torch.arange(n)[None, :]
        future = (j > i).expand(heads, n, n)  # (H, T, T)
        visible = ~future
        if torch.equal(masked, future):
            want = _bias(slopes, n)
            if close(got[visible], want[visible]):
                if not bool(torch.isneginf(value[future]).all()):
                    return _(
                        "Close, but your masked entries hold a large negative number, not float('-inf'): -1e9 works in a softmax, while the question asks for float('-inf'), which masks exactly whatever the logits."
                    )
                return None
            mistakes = [
                (_bias(slopes, n, "flipped"), N_("your sign is flipped: +m (i - j) rewards keys for being far away. The bias is -m (i - j), a penalty that grows with distance.")),
                (_bias(slopes, n, "bloom"), N_("this is +m j, the form of the paper's own code (and of BLOOM, which copied it). It gives the same attention weights (per query row it differs from -m (i - j) by the constant m i, which softmax ignores); this question asks for the paper's equation, -m (i - j), which is 0 on the diagonal.")),
                (_bias(slopes, n, "mpt"), N_("this is MPT's form, m (j - T + 1). It gives the same attention weights (per query row it differs from -m (i - j) by the constant m (T - 1 - i), which softmax ignores); this question asks for the paper's equation, -m (i - j), which is 0 on the diagonal.")),
                (_bias(slopes.flip(0), n), N_("head h should use slopes[h]; yours use the slopes in reverse order.")),
                (_bias(library_slopes(heads), n), N_("you computed your own slopes; use the `slopes` you are given (a model may have been trained with others).")),
                (_bias(slopes.sort(descending=True).values, n), N_("you sorted the slopes; head h uses slopes[h], in the order they are given.")),
                (_bias(slopes, n, "no slope"), N_("every head has the same bias: multiply the distance by each head's slope.")),
                (_bias(slopes, n, "from one"), N_("the diagonal should be 0: a query's own key is at distance 0 and pays nothing. Your distances are one too large.")),
            ]  # fmt: skip
            named = named_mistake(mistakes, lambda wrong: close(got[visible], wrong[visible]))
            if named:
                return named
            return _(
                "The -inf entries are in the right place, but the other values are not -m (i - j) for each head's slope m."
            )
        if not bool(masked.any()):
            upper = got[future]  # the entries that should have been masked
            ahead = (slopes.double()[:, None, None] * (j - i)).expand(heads, n, n)[
                future
            ]  # m (j - i)
            below = got[visible]  # the keys a causal query sees, j <= i
            if close(upper, -ahead) and close(below, _bias(slopes, n, "flipped")[visible]):
                return _(
                    "Your bias has its sign flipped, +m (i - j), and no mask: it rewards far keys instead of penalising them (section 4 of the lecture: which sign is right?), and keys after the query (j > i) are visible."
                )
            if close(upper, -ahead):
                return _(
                    "Your bias is the symmetric -m |i - j| with no mask: that is the bidirectional form for an encoder. A causal model must not see keys after the query (j > i): re-read the question's mask."
                )
            if close(upper, ahead):
                return _(
                    "Keys after the query (j > i) are not masked, and there -m (i - j) is +m (j - i): a reward for looking into the future. Re-read the question's mask."
                )
            if bool((upper == 0).all()):
                return _(
                    "Masked entries must be -inf (float('-inf')), not 0: a bias of 0 lets the query see the future at full weight."
                )
            return _(
                "Keys after the query (j > i) must be masked with -inf: your bias has no -inf entries."
            )
        if torch.equal(masked, (j >= i).expand(heads, n, n)):
            return _(
                "You masked the diagonal too: a query may attend to its own position (j = i). Only keys with j > i get -inf."
            )
        if torch.equal(masked, (j < i).expand(heads, n, n)):
            return _(
                "You masked the past instead of the future: the -inf entries belong above the diagonal, where the key j comes after the query i."
            )
        return _(
            "The -inf entries should be exactly the keys after each query (j > i), above the diagonal."
        )
