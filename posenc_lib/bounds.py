"""Printing a difference that should be rounding, so that every CPU prints the same line.

Two computations of the same thing in floating point (by hand and by a library, in two orders, on
two layouts) differ by rounding: about 1e-7 of the values' size in float32, 1e-16 in float64. The
digits of that difference depend on the processor, the BLAS build and the thread count (the width
of a SIMD sum changes the order of its additions), so a notebook that prints them passes its checks
on one laptop and fails on the next. The course prints such a difference as a bound instead:

    bound(gap)                  # "below 1e-5"  (float32 work)
    bound(gap, FLOAT64)         # "below 1e-10" (float64 work)

A difference at or above the bound is a real one: it is printed with its digits, so the claim the
bound makes visibly fails (and nbval, comparing the printed line, fails the test too).
``tests/test_printed_numbers.py`` keeps checked cells from printing rounding-level digits.
"""

from __future__ import annotations

import math

from posenc_lib.i18n import _, tr

# Bounds far above rounding and far below any real effect the course measures. float32 keeps 24
# bits (epsilon 1.2e-7); a sum of a few hundred terms can lose a few more, so 1e-5 leaves a margin
# of about 100 over the largest rounding seen (1.3e-6, chapter 5's attention weights). float64's
# epsilon is 2.2e-16; its largest rounding in the course is 2e-12 (chapter 2's LayerNorm of
# x + 999), so 1e-10 leaves the same margin.
FLOAT32 = 1e-5
FLOAT64 = 1e-10


def bound(value: float, floor: float = FLOAT32, *, prefix: str | None = None) -> str:
    """``value`` as printed: "below 1e-5" when |value| < floor, else its digits ("3.2e-04").

    value: a difference (a float or a one-element tensor); floor: a power of ten.
    prefix: the words before the power ("< " in a table); by default "below " in a sentence, in
    the language in use (posenc_lib.i18n).
    """
    if prefix is None:
        prefix = _("below ")
    value = float(value)
    exponent = round(math.log10(floor))
    if not math.isclose(floor, 10.0**exponent):
        raise ValueError(
            tr("floor should be a power of ten such as 1e-5, got {floor!r}.", floor=floor)
        )
    if math.isnan(value):
        return "nan"
    return f"{prefix}1e{exponent}" if abs(value) < floor else f"{value:.1e}"
