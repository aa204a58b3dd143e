"""Chapter 3's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on numbers or a case the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (number): the first pair of a D = 64 table whose wavelength is longer than a 512-token text;
- c2 (choice): whether a table of (sin, −sin) pairs has a matrix that moves it k steps;
- c3 (choice): the smallest base whose raw dot products still measure offsets of 2,000 to 4,000;
- c4 (number): the width that makes the mean |cos(word, position)| three times smaller.

The numeric answers and the named mistakes are computed with the library, not typed in.
"""

from __future__ import annotations

import math

from posenc_lib.analysis.ch03_add_concat import random_abs_cosine
from posenc_lib.analysis.ch03_sinusoid import wavelengths
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

TEXT, WIDTH = 512, 64  # c1: the text's length and the table's width (base 10000)
NARROW, SHRINK = 256, 3  # c4: the width we start from, and how much smaller |cos| should get


def _first_pair_longer(text: int, d_model: int, scale: float = 1.0, step: int = 2) -> int:
    """The first pair i whose wavelength (times ``scale``) exceeds ``text``; ``step`` = 1 reads the
    exponent as i/D instead of 2i/D, as if the frequencies were base^(-i/D)."""
    lam = wavelengths(d_model * 2 // step) * scale  # (D/2,) or (D,): 2 pi base^(step i / D)
    return int((lam > text).nonzero()[0, 0])


c1 = Numeric(
    "c1",
    prompt=N_(
        "A sinusoidal table with D = 64 and base 10000 encodes a text of 512 tokens. Which is the "
        "first pair i (counted from 0: columns 2i and 2i + 1) whose wavelength is longer than the "
        "text, so that it, and every slower pair, never completes a full turn within it?"
    ),
    answer=lambda: int((wavelengths(64) > 512).nonzero()[0, 0]),  # pairs i = 0, 1, ...
    rel_tol=0.01,
    answer_keys=("2π · 100", "2π · 10000^(32/64)", "i > 15.3", "628"),
    why=N_(
        "λ_i = 2π · 10000^(2i/64) > 512 means 10000^(i/32) > 512 / 2π ≈ 81.5, so i > 32 · "
        "log₁₀(81.5) / 4 ≈ 15.3: pair 16, whose wavelength is 2π · 100 ≈ 628 (pair 15's is 471; "
        "section 1)."
    ),
    mistakes=(
        Mistake(
            _first_pair_longer(TEXT, WIDTH) - 1,
            N_(
                "that pair's wavelength is still shorter than the text: it completes a full turn "
                "within it. Compare each wavelength with 512 (section 1)."
            ),
        ),
        Mistake(
            _first_pair_longer(TEXT, WIDTH) + 1,
            N_(
                "you counted the pairs from 1; the question counts them from 0, pair 0 being "
                "columns 0 and 1 (section 1)."
            ),
        ),
        Mistake(
            _first_pair_longer(TEXT, WIDTH, scale=1 / (2 * math.pi)),
            N_(
                "you compared base^(2i/D) = 1/ω_i with the text, leaving out the 2π: a full turn "
                "is 2π radians, so the wavelength is 2π/ω_i (section 1)."
            ),
        ),
        Mistake(
            _first_pair_longer(TEXT, WIDTH, step=1),
            N_(
                "you read the frequencies as base^(−i/D); pair i turns at base^(−2i/D), the "
                "exponent counting columns, two per pair (section 1)."
            ),
        ),
        Mistake(
            2 * _first_pair_longer(TEXT, WIDTH),
            N_(
                "that is the pair's first column, 2i; the question asks for the pair's number i "
                "(section 1)."
            ),
        ),
    ),
    section=N_("section 1 of this chapter (from bits to waves: frequencies and wavelengths)"),
    hint=N_(
        "Write pair i's wavelength as a function of i, set it equal to the text's length, and "
        "solve for i; the answer is the first whole i past that point."
    ),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "A tutorial fills each pair of its table with sin(t ω_i) and −sin(t ω_i), instead of "
        "sin(t ω_i) and cos(t ω_i), with the same frequencies. Is there a matrix M_k with "
        "F_t+k = M_k F_t for every position t of that table F?"
    ),
    choices=(
        Choice(
            "a",
            N_("Yes: each pair still has two columns, so a 2 × 2 block per pair can turn it."),
            why=N_(
                "Two columns are not enough: here the second is −1 times the first, so a pair "
                "holds one number, sin(t ω), and no 2 × 2 block can make sin(t ω + k ω) from it "
                "(section 2)."
            ),
        ),
        Choice(
            "b",
            N_(
                "No: a pair holds only sin(t ω), and sin(t ω + k ω) also needs cos(t ω), which no "
                "matrix can make from sin(t ω) alone."
            ),
            why=N_(
                "sin(a + b) = sin a cos b + cos a sin b needs cos a, and the pair (sin a, −sin a) "
                "does not hold it. It is a sine-only table: fitted as in section 2, its best "
                "linear shift (D = 64) misses by 28% to 47% of the signal at k = 1, 5 and 50 (our "
                "computation; section 2's sine-only table misses by 27% to 45%)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Yes: −sin(a) = sin(−a), so the second column turns the other way, and two "
                "opposite turns do what a sine and a cosine do."
            ),
            why=N_(
                "sin(−a) is still a sine of the same angle, just flipped: it holds no cos a, and "
                "the angle-addition formula needs cos a to move the pair (section 2)."
            ),
        ),
        Choice(
            "d",
            N_(
                "It cannot be told without fitting one, as section 2 fits the best linear shift "
                "by least squares."
            ),
            why=N_(
                "The angle-addition formula settles it without a fit: sin(a + b) needs cos a, and a "
                "pair that holds sin a twice does not hold it (section 2)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 2 of this chapter (why sin and cos: moving k steps is a rotation)"),
    hint=N_(
        "Write sin(a + b) with the angle-addition formula and list what it needs from position t; "
        "then ask whether a pair (sin a, −sin a) holds each of those numbers."
    ),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "In a D = 256 table, offsets of 2,000 to 4,000 tokens should get a mean similarity "
        "⟨PE_t, PE_t+k⟩ / (D/2) of at least 0.15, as offsets of a few hundred tokens do at base "
        "10000. The ruler's mean is about 1 − log_base k, less 0.10 to 0.125 (section 3). Which is "
        "the smallest of the bases 1000, 10000, 100000 and 1,000,000 that does it?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "1000: its longest wavelength, about 2π · 1000 ≈ 6,283 tokens, is longer than "
                "4,000 tokens."
            ),
            why=N_(
                "That is the popular wavelength argument. The ruler runs out long before one "
                "wavelength, and before the base itself: base 1000's mean is below 0.03 from "
                "k ≈ 434 on (section 3)."
            ),
        ),
        Choice(
            "b",
            N_(
                "10000: every offset is below the base, and the similarity falls with log k all "
                "the way to k ≈ base."
            ),
            why=N_(
                "The ruler runs out well before k ≈ base: base 10000's mean is below 0.03 from "
                "about 3,600 on, and its decade [1000, 10⁴) averages 0.013 (section 3). Over "
                "2,000 to 4,000 at D = 256 it keeps 0.07, short of 0.15."
            ),
        ),
        Choice(
            "c",
            N_("100000: the offsets are then base/50 to base/25."),
            why=N_(
                "log_base k is 0.66 to 0.72 for these offsets, so the pair count 1 − log_base k "
                "gives 0.28 to 0.34, less the 0.10 to 0.125 by which it overestimates: about 0.2. The "
                "measured mean at D = 256 is 0.25; base 10000 keeps only 0.07 (section 3)."
            ),
        ),
        Choice(
            "d",
            N_(
                "1,000,000: a mean of 0.15 needs the offsets below base/100, so the base must be "
                "at least a hundred times 4,000."
            ),
            why=N_(
                "That asks too much: base 1,000,000 does it (0.38 at D = 256), but so does a "
                "smaller one. Put these offsets into the pair count, 1 − log_base k less about "
                "0.1, for each base in turn (section 3)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 3 of this chapter (why base 10000?)"),
    hint=N_(
        "Don't compare the offsets with the wavelength: compare log k with log base. The ruler's "
        "mean is about 1 − log_base k less an overestimate, so for each base work out log_base k "
        "at k = 2,000 and 4,000."
    ),
)

c4 = Numeric(
    "c4",
    prompt=N_(
        "At width D = 256, a random word vector and a sinusoidal position vector have a mean "
        "|cos(word, position)| of about 0.050, as two random directions do. Which width D would "
        "make that mean three times smaller?"
    ),
    answer=lambda: next(
        d for d in range(256, 10**4) if random_abs_cosine(d) <= random_abs_cosine(256) / 3
    ),
    rel_tol=0.02,
    answer_keys=("256 · 9", "256 · 3²", "9 · 256", "3² · 256"),
    why=N_(
        "The mean |cos| of random directions falls like 1/√D (about √(2/(πD))), so a factor 3 "
        "smaller needs a factor 3² = 9 wider: D ≈ 9 · 256 = 2304, or 2301 with the exact formula "
        "(section 4, 'Add or concatenate?')."
    ),
    mistakes=(
        Mistake(
            float(SHRINK * NARROW),
            N_(
                "you made D three times wider, as if the mean |cos| fell like 1/D; it falls like "
                "1/√D (section 4's table: ×√D stays near 0.80)."
            ),
        ),
        Mistake(
            NARROW / SHRINK**2,
            N_(
                "your width is smaller than 256: a narrower table makes random directions less "
                "orthogonal, not more (section 4's table)."
            ),
        ),
        Mistake(
            NARROW * math.sqrt(SHRINK),
            N_(
                "you grew D by √3, as if the mean |cos| fell like 1/D²; it falls like 1/√D "
                "(section 4's table)."
            ),
        ),
        Mistake(
            float(SHRINK**2),
            N_("that is the factor by which D grows; the question asks for the width itself."),
        ),
    ),
    section=N_(
        "section 4 of this chapter (adding positions to token embeddings; add or concatenate?)"
    ),
    hint=N_(
        "How does the mean |cos| of two random directions depend on D? Invert that power law: "
        "what factor in D gives a factor 3 in |cos|?"
    ),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
