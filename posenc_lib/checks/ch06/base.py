"""Chapter 6's exercise q5: the smallest base whose slowest pair does not wrap within a context."""

from __future__ import annotations

import math

from posenc_lib.analysis.ch06_beyond import smallest_base
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, as_number, same_number
from posenc_lib.checks.ch06.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _

# float64 work is exact to ~1e-15; float32 work ((L / 2 pi) in float32, then a power near 1) is
# off by ~1e-7 relative. Every named mistake is at least 1% away on every case drawn.
BASE_RTOL = 1e-5


def _base(length, d, *, circle=2 * math.pi, exponent=None):
    """(L / circle) ** exponent, exponent D / (D - 2) by default: the answer and its variants."""
    return (length / circle) ** (d / (d - 2) if exponent is None else exponent)


class SmallestBase(Question):
    name, function, points, notebook = "q5", "smallest_base", 1, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "(L / (2 pi)) ** (D / (D - 2))",
        "2 pi * base ** ((D - 2) / D) = L",
        "base ** ((D - 2) / D) = L / (2 pi)",
        "(context_length / (2 * math.pi))",
    )
    returns, references = FLOAT, ("posenc_lib.analysis.ch06_beyond.smallest_base",)
    title = N_("The smallest base whose slowest pair turns at most once over a context")
    hints = (
        N_(
            "Pair i turns theta_i = base ** (-2i / D) radians per position, so one turn takes "
            "2 pi / theta_i positions: its wavelength. The slowest pair is the last one, i = D/2 - 1."
        ),
        N_(
            "Set the slowest wavelength equal to the context: 2 pi * base ** ((D - 2) / D) = L, and "
            "solve for the base."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(4096, 64), (2048, 8), (100_000, 128), (1_000_000, 16)]
        else:
            # A small head_dim (where D / (D - 2) is far from 1), a large one, and contexts from
            # about a thousand to a few million positions, in an order that changes with the seed.
            generator = draws.seeded(seed, 5)
            specs = []
            for dims in ([8, 12], [32, 64], [96, 128, 256], [16, 48]):
                length = int(10 ** (3 + 3.5 * float(draws.randint(0, 1001, generator)) / 1000))
                specs.append((length, draws.pick(dims, generator)))
        return [Case(spec, f"context_length = {spec[0]}, head_dim = {spec[1]}") for spec in specs]

    def diagnose(self, case, value):
        length, d = case.args
        got, problem = as_number(value, N_("The base"))
        if problem:
            return problem
        want = smallest_base(length, d)
        if same_number(got, want, BASE_RTOL, 0.0):
            return None
        mistakes = [
            (float(length), N_("you returned the context length itself, the rule \"base > context\"; the slowest pair's wavelength reaches L at a smaller base (section 7 of the lecture).")),
            (_base(length, d, circle=1.0), N_("you left out the 2 pi: a wavelength is 2 pi / theta positions, not 1 / theta.")),
            (_base(length, d, circle=1 / (2 * math.pi)), N_("you multiplied by 2 pi where your equation divides by it: redo the step that moves the 2 pi to the other side.")),
            (_base(length, d, circle=math.pi), N_("you used pi; one full turn is 2 pi radians.")),
            (_base(length, d, exponent=1.0), N_("you took the slowest frequency as 1 / base, which belongs to a pair i = D/2 that does not exist: which pair is the last one?")),
            (_base(length, d, exponent=(d - 2) / d), N_("your exponent is upside down: check how you undid the power of the base when you solved for it.")),
            (_base(length, d, exponent=d / 2), N_("you used pair 1 (theta = base ** (-2 / D)), the second fastest; the slowest pair is the last, i = D/2 - 1.")),
            (_base(length, d, exponent=d / (d - 4)), N_("you used D/2 where D belongs: theta_i = base ** (-2i / D) with D = head_dim, not the number of pairs.")),
            (float(math.ceil(want)), N_("you rounded up to a whole number; return the exact value (the base can be any real number).")),
            (2 * math.pi * length ** ((d - 2) / d), N_("you returned the slowest wavelength of base = L; return the base whose slowest wavelength is L.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: same_number(got, wrong, BASE_RTOL, 0.0))
        if named:
            return named
        if got > length:
            return _(
                "Your base is larger than the context length; the slowest pair's wavelength reaches the context at a smaller base: write that wavelength and solve for the base (section 7)."
            )
        return _(
            "Your base differs from the one whose slowest pair (i = D/2 - 1) turns exactly once over the context."
        )
