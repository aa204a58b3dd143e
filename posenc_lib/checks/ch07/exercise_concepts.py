"""Chapter 7's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on a case or numbers the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks what the chapter's runs showed.

- c1 (choice): what a learned table with more rows than the training length looks up past L;
- c2 (choice): which pairs NTK-aware scaling (s = 16, D = 64) changes most, and why pair 0 keeps
  its frequency;
- c3 (number): how many positions pair 0 takes to turn once after PI with s = 4 (D = 32), with
  the rounded wavelength the lecture prints named as a mistake;
- c4 (choice): which extra run tells the scaling's effect from the fine-tuning's.

The numeric answers and the named mistakes are computed with the library, not typed in.
"""

from __future__ import annotations

import math

from posenc_lib.analysis import ch07_scaling
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

BASE = 10000.0
L = 64  # the chapter's training length


def _wavelength(pair: int, method: str | None, factor: float, head_dim: int = 32) -> float:
    """Pair ``pair``'s wavelength 2 pi / theta'_i under a scaling of ``ch07_scaling.METHODS``."""
    theta = float(ch07_scaling.frequencies(head_dim, BASE)[pair])
    if method is not None:
        theta *= float(ch07_scaling.frequency_ratio(method, factor, head_dim, BASE, L)[pair])
    return 2 * math.pi / theta


c1 = MultipleChoice(
    "c1",
    prompt=N_(
        "A model with a learned position table of 128 rows (more rows than it needs) is trained "
        "only on windows of L = 64 tokens, then reads a text of 200 tokens. At position 100, what "
        "does it look up, and what happens to its loss there?"
    ),
    choices=(
        Choice(
            "a",
            N_("Nothing: it raises an error, as a learned table cannot run past L."),
            why=N_(
                "The chapter's learned model raises because its table has only L = 64 rows. This "
                "one has 128, so row 100 exists and is looked up like any other (section 3a)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Row 100, which no training window ever reached: the loss never changed it, so "
                "the model meets a vector training never tuned it for, and its loss should rise."
            ),
            why=N_(
                "Training windows hold positions 0 to 63, so no gradient ever reached rows 64 to "
                "127 (weight decay only shrank their initial values). Like the sinusoidal model past "
                "position 63, it meets a vector it never learned to read; the rise is expected, not "
                "measured (section 3a; summary: a parameter a long text reaches must be trained)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Row 100, a vector defined like every other row, so the loss stays at its level "
                "inside L."
            ),
            why=N_(
                "Defined is not learned: the sinusoidal table is defined at every position too, "
                "and its model's loss jumps from 1.20 to 6.36 nats just past position 63 "
                "(section 3a)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Row 36 (100 − 64): the table wraps around, so position 100 reads like position 36."
            ),
            why=N_(
                "A table lookup takes the row of the position itself; nothing wraps it back into "
                "the trained rows (section 3a)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 3a of this chapter"),
    hint=N_(
        "training windows hold positions 0 to 63: which rows of the table did a gradient ever "
        "reach, and what does that leave in row 100?"
    ),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "NTK-aware scaling with s = 16 is applied to a RoPE head of D = 64 (base 10000). Which "
        "statement about the new frequencies is right, reason included?"
    ),
    choices=(
        Choice(
            "a",
            N_("Every pair is divided by 16: the base grows by the same factor for all of them."),
            why=N_(
                "That is Position Interpolation. A new base changes pair i's frequency by "
                "(base'/base)^(−2i/D), a power that depends on i: for i = 0 it is 1 (section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Pair 0 keeps its frequency, as θ_0 = base⁰ = 1 for any base; the slower a pair, the "
                "more it is divided, up to exactly 16 for the last pair."
            ),
            why=N_(
                "θ'_i/θ_i = (base'/base)^(−2i/D): 1 for pair 0, 1/16 for pair 31 (the base is chosen "
                "for that), about 1/4.2 for pair 16 halfway. Only pair 0 stays as trained (pair 4 is already at 0.70); "
                "the slow pairs, which meet new angles past L, are slowed most (sections 3c and 4)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The fastest pairs are divided most: they turn most, so they leave the trained angles first."
            ),
            why=N_(
                "Reversed: a pair that turns a full circle within L has already been all round its "
                "circle; the slow pairs meet new angles past L, and NTK-aware scaling divides them "
                "most (section 3c)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Every pair that turns a full circle within L keeps its frequency; each slower pair "
                "is divided by exactly 16."
            ),
            why=N_(
                "That is the two ends of YaRN's ramp, keep or divide by s. A new base changes every "
                "pair but pair 0, by a power of s that grows with the pair index (section 4)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 4 of this chapter"),
    hint=N_(
        "pair i's frequency is base^(−2i/D): a new base b' multiplies it by (b'/base)^(−2i/D). "
        "Which pair does that leave alone, and which does it change most?"
    ),
)

c3 = Numeric(
    "c3",
    prompt=N_(
        "Position Interpolation with s = 4 on the chapter's RoPE heads (D = 32, base 10000): how "
        "many positions does pair 0, the fastest, now take to turn once?"
    ),
    answer=lambda: _wavelength(0, "PI", 4.0),  # 2 pi / (1 / 4) = 8 pi
    rel_tol=0.02,
    unit=N_("positions"),
    answer_keys=("8π", "8 pi", "8*pi", "2π · 4", "2π·4", "2 pi * 4"),
    why=N_(
        "PI divides every frequency by s, pair 0's too: θ_0 = 1 becomes 1/4, so a turn takes "
        "2π · 4 = 8π ≈ 25.1 positions, not 6.3. Pair 0 had turned 10 times within L and needed "
        "no help; now neighbours are 1/4 radian apart, not 1, a speed never trained on: PI "
        "hurts even at L (sections 3c and 4)."
    ),
    mistakes=(
        Mistake(
            _wavelength(0, None, 1.0),
            N_(
                "that is pair 0's wavelength before any scaling (or under NTK-aware scaling or "
                "YaRN, which leave pair 0 alone); PI changes every pair (section 4)."
            ),
        ),
        Mistake(
            2 * math.pi / 4,
            N_(
                "your pair 0 turns faster than before: PI divides the frequencies by s, so the "
                "wavelengths grow (section 4)."
            ),
        ),
        Mistake(
            L / _wavelength(0, "PI", 4.0),
            N_(
                "that is how many turns pair 0 makes within L = 64; the question asks for the "
                "positions one turn takes (section 3c)."
            ),
        ),
        Mistake(
            L / _wavelength(0, None, 1.0),
            N_(
                "that is how many turns pair 0 made within L = 64 before scaling; the question asks "
                "for the positions one turn takes after PI (sections 3c and 4)."
            ),
        ),
        Mistake(
            _wavelength(15, "PI", 4.0),
            N_("that is the slowest pair, pair 15; pair 0 is the fastest, θ_0 = 1 (section 3c)."),
        ),
        Mistake(
            4 * round(_wavelength(0, None, 1.0)),
            N_(
                "that is 4 times the 6 that section 3c prints for pair 0, a wavelength rounded to "
                "whole positions; work from pair 0's frequency itself (section 3c)."
            ),
        ),
    ),
    section=N_("section 4 of this chapter"),
    hint=N_(
        "pair 0 turns θ_0 = 1 radian per position; what does PI make of that frequency, and how "
        "many positions does one turn of 2π radians then take?"
    ),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "A team fine-tunes its RoPE model, trained at L, for 500 steps on windows of 4L with YaRN "
        "(s = 4), and the model now reads 4L well. To tell whether YaRN or the fine-tuning did "
        "the work, which one extra run do they need?"
    ),
    choices=(
        Choice(
            "a",
            N_("YaRN with s = 4 and no fine-tuning, evaluated at 4L."),
            why=N_(
                "That measures YaRN alone, without training; it cannot say whether the fine-tuned "
                "model needed YaRN at all: 500 steps on 4L windows might teach the plain model the "
                "new angles by themselves (section 4, with fine-tuning)."
            ),
        ),
        Choice(
            "b",
            N_("The same fine-tuning with YaRN again, from another seed."),
            why=N_(
                "More seeds measure the spread of the same recipe, not what each of its two parts "
                "contributes: every seed still has both the scaling and the fine-tuning "
                "(sections 1 and 4)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The same fine-tuning (500 steps, the same 4L windows) with no scaling at all, "
                "compared seed by seed."
            ),
            why=N_(
                "That is the control: it has the fine-tuning and not the scaling, so any "
                "difference from the YaRN run is YaRN's. In the chapter's own runs the unscaled "
                "control was lower than both PI and YaRN in every seed (section 4, with "
                "fine-tuning)."
            ),
        ),
        Choice(
            "d",
            N_("YaRN with s = 8, fine-tuned the same way."),
            why=N_(
                "Both runs have the fine-tuning and a scaling, so it compares two factors; it "
                "cannot tell the scaling's share from the fine-tuning's (section 4)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 4 of this chapter (with fine-tuning)"),
    hint=N_(
        "the run changed two things at once, the scaling and the fine-tuning; which run keeps "
        "one of them and drops the other?"
    ),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
