"""Chapter 3's concept questions, one point each:

c1, after how many positions the fastest pair comes back to its start (base 10000, D = 64);
c2, why each pair holds a sine and a cosine;
c3, what the base 10000 buys, and what it does not;
c4, what adding a position to a word does, compared with concatenating them.

The numeric answer and its named mistakes are computed with ``ch03_sinusoid.wavelengths``; each
``why`` names the section that teaches it.
"""

from __future__ import annotations

import math

from posenc_lib.analysis.ch03_sinusoid import wavelengths
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

c1 = Numeric(
    "c1",
    prompt=(
        N_(
            "In the sinusoidal table with base 10000 and D = 64, pair 0 (columns 0 and 1) holds "
            "sin(t ω₀) and cos(t ω₀). Roughly how many positions does it take to come back to where "
            "it started?"
        )
    ),
    answer=lambda: float(wavelengths(64)[0]),  # pair 0's wavelength, 2 pi / omega_0
    rel_tol=0.05,
    why=(
        N_(
            "Pair i turns at ω_i = base^(−2i/D), so pair 0 turns at ω₀ = 1 radian per position, "
            "whatever the base, and a full turn takes 2π ≈ 6.28 positions, its wavelength. The "
            "wavelengths then grow geometrically, to 47,117 for the slowest pair (section 1 of this "
            "chapter)."
        )
    ),
    mistakes=(
        Mistake(
            10000.0,
            N_(
                "10000 is the base. It sets the slowest pair's frequency, not pair 0's: pair 0 turns "
                "at ω₀ = base⁰ = 1 radian per position (section 1 of this chapter)."
            ),
        ),
        Mistake(
            float(wavelengths(64)[-1]),
            N_(
                "47,117 is the wavelength of the slowest pair, pair 31. Pair 0 is the fastest: it "
                "turns at ω₀ = base⁰ (section 1 of this chapter)."
            ),
        ),
        Mistake(
            2 * math.pi * 10000,
            N_(
                "62,832 is the popular guess at the slowest pair's wavelength (it is 47,117 at "
                "D = 64), and pair 0 is the fastest pair anyway (section 1 of this chapter)."
            ),
        ),
        Mistake(
            1.0,
            N_(
                "ω₀ = 1 is the angle pair 0 turns at each step, in radians, not the number of steps "
                "it takes to come back (section 1 of this chapter)."
            ),
        ),
        Mistake(
            2.0,
            N_(
                "2 is the period of bit 0 of the binary code, which flips every position. The "
                "sinusoidal table's fastest pair turns 1 radian per position, far less than half a "
                "turn (section 1 of this chapter)."
            ),
        ),
        Mistake(
            math.pi,
            N_(
                "π is half a turn's worth: there pair 0 points the opposite way, not back where it "
                "started (section 1 of this chapter)."
            ),
        ),
    ),
    answer_keys=("2π ≈ 6.28", "2π positions"),
    section=N_("section 1 of this chapter (from bits to waves: frequencies and wavelengths)"),
    unit=N_("positions"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "Why does each pair of the sinusoidal table hold both sin(t ω) and cos(t ω), not a sine alone?"
    ),
    choices=(
        Choice(
            "a",
            N_("So that every value stays bounded between −1 and 1, at any position however far."),
            why=(
                N_(
                    "A sine alone stays between −1 and 1 too, so boundedness cannot be what the "
                    "cosine adds (section 2 of this chapter)."
                )
            ),
        ),
        Choice(
            "b",
            N_("So that ⟨PE_t, PE_t+k⟩ can tell a position k steps ahead from one k steps behind."),
            why=(
                N_(
                    "It cannot: ⟨PE_t, PE_t+k⟩ = Σ cos(k ω_i), the same for +k and −k (largest gap "
                    "below 1e-10 in section 2 of this chapter). A direction needs a learned "
                    "projection in front of the dot product."
                )
            ),
        ),
        Choice(
            "c",
            N_(
                "So that moving k steps is one matrix M_k for every position t: each pair turns by k ω_i."
            ),
            why=(
                N_(
                    "The angle-addition formulas need both sin a and cos a. With both, "
                    "PE_t+k = M_k PE_t holds at every t, M_k a rotation per pair; with sines alone "
                    "the best linear shift still misses by 27% to 45% of the signal (section 2 of "
                    "this chapter)."
                )
            ),
        ),
        Choice(
            "d",
            N_(
                "So that the table has rows past the training length, which sines alone would lack."
            ),
            why=(
                N_(
                    "A sine alone is a formula too, defined at every position, so rows past the "
                    "training length exist either way (section 2 of this chapter)."
                )
            ),
        ),
    ),
    answer="c",
    section=N_("section 2 of this chapter (why sin and cos: moving k steps is a rotation)"),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_("What does the base 10000 of the sinusoidal encoding, ω_i = base^(−2i/D), buy?"),
    choices=(
        Choice(
            "a",
            N_(
                "Reach: ⟨PE_t, PE_t+k⟩ keeps falling with log k, so the raw dot product tells "
                "offsets apart up to a fraction of the base (about a third of it for 10000)."
            ),
            why=(
                N_(
                    "That is what the chapter measures: each decade of offsets is less similar than "
                    "the last, and the mean first drops below 0.03 at base/1.7 to base/2.8 (at about "
                    "3,600 = base/2.8 for base 10000, D = 64). The paper gives no reason for 10000; "
                    "that this reach is what the base is for is our reading (section 3 of this "
                    "chapter)."
                )
            ),
        ),
        Choice(
            "b",
            N_(
                "Distinct positions: with a base below the context length, far positions would collide "
                "with near ones."
            ),
            why=(
                N_(
                    "Positions stay distinct far below that: at D = 64 and 512, none of the bases "
                    "tried, 10 to 10000, confuses any of 50,000 positions (section 3 of this "
                    "chapter); with base 1000, tokens 100 and 6383 are 5.4 neighbour steps apart "
                    "at D = 512 (deep dive 'Base and uniqueness')."
                )
            ),
        ),
        Choice(
            "c",
            N_(
                "A longest wavelength of exactly 2π · 10000 ≈ 62,832 positions, set by the base alone."
            ),
            why=(
                N_(
                    "The slowest pair is i = D/2 − 1, so the longest wavelength is "
                    "2π · base^((D − 2)/D): 47,117 at D = 64, not 62,832 (section 1 of this "
                    "chapter). Only tensor2tensor's other spacing of the frequencies reaches "
                    "exactly 2π · base (deep dive 'Variants and MiniLM's pairs')."
                )
            ),
        ),
        Choice(
            "d",
            N_("Safety: a larger base always keeps positions farther apart, so 10000 beats 1000."),
            why=(
                N_(
                    "Not always: at D = 8, base 10000 confuses t with t + 6, while base 1000 holds "
                    "out to k = 993; at D = 16 the confusing bases are scattered (section 3 of this "
                    "chapter)."
                )
            ),
        ),
    ),
    answer="a",
    section=N_("section 3 of this chapter (why base 10000?)"),
)

c4 = MultipleChoice(
    "c4",
    prompt=(
        N_(
            "The Transformer adds the position to the word vector, x + PE, rather than concatenating "
            "them, [x; PE]. Which statement is true?"
        )
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Concatenating keeps word and position apart in every attention score, which adding "
                "cannot do."
            ),
            why=(
                N_(
                    "Attention projects first: W [w; p] = W_word w + W_pos p is a sum again, and the "
                    "cross terms come back in every projected score (section 4 of this chapter, "
                    "'Add or concatenate?')."
                )
            ),
        ),
        Choice(
            "b",
            N_(
                "Adding is always a small nudge: the position changes the word's vector only a little."
            ),
            why=(
                N_(
                    "It depends on the word vectors' scale: the same table is a 5° turn, a 35° turn "
                    "or 99.9% of the input's variance under the three conventions that the deep "
                    "dive 'Adding in practice' measures."
                )
            ),
        ),
        Choice(
            "c",
            N_(
                "The cross terms w · p′ and p · w′ are small next to the word · word term, at any width."
            ),
            why=(
                N_(
                    "For random words at D = 64 their root mean square (5.55) is about 0.7 of "
                    "word · word's (7.90), not small. What shrinks as D grows is their size relative to the "
                    "vectors' lengths, a cosine (section 4 of this chapter)."
                )
            ),
        ),
        Choice(
            "d",
            N_(
                "Adding costs no width, and in many dimensions a word and a position are nearly "
                "orthogonal."
            ),
            why=(
                N_(
                    "Concatenating a code as wide as the words doubles the query and key weights that "
                    "read it. Mean |cos(word, position)| falls like 1/√D (0.100 at D = 64), and so "
                    "does the gap between adding and concatenating (0.131 at D = 16, 0.016 at 1024; "
                    "section 4 of this chapter)."
                )
            ),
        ),
    ),
    answer="d",
    section=N_(
        "section 4 of this chapter (adding positions to token embeddings; add or concatenate?)"
    ),
)

CONCEPTS = (c1, c2, c3, c4)
