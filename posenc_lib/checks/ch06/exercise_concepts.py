"""Chapter 6's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on numbers or a case the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (number): how many of the 64 pairs of Llama 3's head (D = 128, base 500,000) turn less than
  once over 131,072 positions;
- c2 (choice): a bug turns the keys but not the queries: which positions the score then depends on;
- c3 (choice): a half-layout checkpoint run by interleaved code: what dim 64 turns with, how fast;
- c4 (choice): which single change lifts the slowest wavelength of D = 128, base 10,000 past
  100,000 tokens.

The numeric answer and the named mistakes are computed with the library's ``rope_inv_freq``, not
typed in; the numbers the sentences quote are checked against the library in
``tests/checks/test_ch06.py``.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_
from posenc_lib.rope_scaling import rope_inv_freq

# c1: Llama 3 8B's head dim and base, at a context (131,072) whose boundary pairs are ~10% away
# on either side (wavelengths 118,143 and 145,029), so a rough 2π does not tip the count.
HEAD_DIM, BASE, CONTEXT = 128, 500_000.0, 131_072


def _slow_pairs(theta: torch.Tensor, context: int = CONTEXT, turn: float = 2 * math.pi) -> int:
    """How many of the pairs turning ``theta`` (D/2,) radians per position turn less than once
    (``turn`` radians) over ``context`` positions."""
    return int((context * theta < turn).sum())


def _ladder(exponent_per_pair: float = 2.0) -> torch.Tensor:
    """Llama 3's frequencies base^(-k i / D), i = 0 .. D/2 - 1 (k = 2 is RoPE's ladder), float64."""
    i = torch.arange(HEAD_DIM // 2, dtype=torch.float64)
    return BASE ** (-exponent_per_pair * i / HEAD_DIM)


def _answer_c1() -> int:
    return _slow_pairs(rope_inv_freq(HEAD_DIM, BASE, dtype=torch.float64)[0])


c1 = Numeric(
    "c1",
    prompt=N_(
        "Llama 3 8B uses RoPE with head dimension D = 128 and base 500,000. Run with these "
        "frequencies unchanged over 131,072 positions, how many of each head's 64 pairs turn less "
        "than once?"
    ),
    answer=_answer_c1,
    rel_tol=0.01,
    unit=N_("pairs"),
    answer_keys=("49 to 63", "64 − 49", "64 - 49"),
    why=N_(
        "Pair i turns once every 2π / θ_i = 2π·500,000^(2i/128) positions. That passes 131,072 "
        "from pair 49 on (145,029 positions; pair 48: 118,143), so pairs 49 to 63 turn less than "
        "once: 15 pairs. The fast pairs wrap many times (sections 2 and 7)."
    ),
    mistakes=(
        Mistake(
            float(HEAD_DIM // 2 - _answer_c1()),
            N_(
                "that counts the pairs that turn at least once, the fast end of the ladder (it is "
                "also the index of the first pair that does not); the question counts the pairs "
                "that turn less than once (sections 2 and 7)."
            ),
        ),
        Mistake(
            float(_slow_pairs(rope_inv_freq(HEAD_DIM, BASE, dtype=torch.float64)[0], turn=1.0)),
            N_(
                "you compared 1/θ_i with the context: that counts the pairs turning less than one "
                "radian, not one turn; a full turn is 2π radians (section 7)."
            ),
        ),
        Mistake(
            float(HEAD_DIM // 2),
            N_(
                "not every pair is slow: a large base slows the slow end of the ladder, and pair 0 "
                "turns θ_0 = base^0 = 1 radian per position at any base (section 2)."
            ),
        ),
        Mistake(
            float(_slow_pairs(_ladder(1.0))),
            N_(
                "your frequencies fall too slowly: you used base^(−i/D); the ladder is "
                "base^(−2i/D), with i from 0 to D/2 − 1 (section 2)."
            ),
        ),
        Mistake(
            1.0,
            N_(
                "the slowest pair is not the only one: the pairs next to it turn almost as slowly; "
                "check each pair's wavelength against the context (sections 2 and 7)."
            ),
        ),
        Mistake(
            float(_answer_c1() - 1),
            N_(
                "one pair short: counting from one pair index to another with both ends included "
                "is a fencepost count (section 7)."
            ),
        ),
        Mistake(
            float(_answer_c1() + 1),
            N_(
                "one pair too many: look again at the pair at the boundary, the last one whose "
                "wavelength is still shorter than the context (section 7)."
            ),
        ),
    ),
    section=N_("section 7 of this chapter"),
    hint=N_(
        "Each pair has its own wavelength, 2π / θ_i positions per turn, and it grows with i. Find "
        "the first pair whose wavelength is longer than the context; every pair after it is "
        "slower still."
    ),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "A bug turns every key by its position n but leaves the queries unturned. A query at m = 7 "
        "meets a key at n = 3. Which other pair of positions (m, n) is certain to give the same "
        "score, whatever q and k?"
    ),
    choices=(
        Choice(
            "a",
            N_("(8, 4): it has the same offset m − n = 4."),
            why=N_(
                "That holds when both sides turn, as ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩. Here the "
                "query's angle is not there to cancel the key's, and a key at n = 4 is turned "
                "further than one at n = 3 (section 1)."
            ),
        ),
        Choice(
            "b",
            N_("(7, 100): the query sits at the same position."),
            why=N_(
                "You kept the position of the side the bug leaves alone. Write the score as in "
                "section 1, with what the bug applies to each side, and see whose position is "
                "still in it (section 1)."
            ),
        ),
        Choice(
            "c",
            N_("(100, 3): the key sits at the same position."),
            why=N_(
                "The score is ⟨q, R_n k⟩ = q^T R_n k: the query's position m never enters, so "
                "every pair with n = 3 gives the same score, whatever m. The offset is lost: a "
                "query far from its key scores like a near one (section 1)."
            ),
        ),
        Choice(
            "d",
            N_("None: with one side unturned, the score follows m and n in no fixed way."),
            why=N_(
                "The score still has a fixed form. Write ⟨R_m q, R_n k⟩ as in section 1, with "
                "what the bug applies to the query in place of R_m, and see which position is "
                "left (section 1)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 1 of this chapter"),
    hint=N_(
        "Write the score as section 1 does, ⟨R_m q, R_n k⟩, and drop the rotation the bug "
        "leaves out. Which of the two positions is still in the expression?"
    ),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "A Llama checkpoint (half layout, head dim D = 128, base 10,000) is run, unconverted, by "
        "code that turns interleaved pairs. Its W_q and W_k were trained so that dims 0 and 64 "
        "turn together, as pair 0, 1 radian per position. What does dim 64 do now?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "It still turns with dim 0, at 1 radian per position: both layouts use the same "
                "angles."
            ),
            why=N_(
                "Both use the same ladder of angles, not the same pairs: the code decides which "
                "dims turn together, and interleaved code pairs dims 2i and 2i + 1 (section 3)."
            ),
        ),
        Choice(
            "b",
            N_(
                "It turns with dim 65, still at 1 radian per position: a dim keeps the speed it "
                "was trained with."
            ),
            why=N_(
                "Speeds belong to pair indices, not to dims: the code turns pair i at "
                "θ_i = base^(−2i/D), and interleaved code gives dim 64 another pair index than "
                "pair 0 (section 3; the ladder: section 2)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Nothing: the dims no longer form the expected pairs, so the model stops with an error."
            ),
            why=N_(
                "Both layouts take the same (…, D) tensors, so nothing crashes: the model runs and "
                "reads distances wrong, which is why this bug survives (section 3)."
            ),
        ),
        Choice(
            "d",
            N_(
                "It turns with dim 65, as pair 32, at 10,000^(−1/2) = 0.01 radian per position; the "
                "scores at m = n stay exact."
            ),
            why=N_(
                "Interleaved code pairs dims (2i, 2i + 1): dim 64 joins dim 65 in pair 32, "
                "θ_32 = 10,000^(−64/128) = 0.01. At m = n the query and the key turn by the same "
                "angles, which cancel in either layout; at other "
                "distances the wrong dims turn at the wrong speeds, until W_q's and W_k's columns "
                "are reordered (section 3)."
            ),
        ),
    ),
    answer="d",
    section=N_("section 3 of this chapter"),
    hint=N_(
        "The code, not the weights, decides which dims form pair i, and pair i always turns "
        "θ_i = base^(−2i/D). In interleaved code, which pair holds dim 64?"
    ),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "A model has head dim D = 128 and base 10,000: its slowest pair turns once every 54,410 "
        "positions. Which single change makes that pair turn less than once over 100,000 tokens?"
    ),
    choices=(
        Choice(
            "a",
            N_("D = 256 (base 10,000): twice the dims, so the slowest pair turns twice as slowly."),
            why=N_(
                "The slowest wavelength is 2π·base^((D−2)/D): D only moves the exponent towards 1, "
                "so D = 256 gives 2π·10,000^(254/256) ≈ 58,470 positions, short of 100,000 "
                "(section 7)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Base 20,000 (D = 128): the slowest wavelength grows almost in proportion to the base."
            ),
            why=N_(
                "2π·20,000^(126/128) ≈ 107,650 positions, more than 100,000. The floor for "
                "100,000 tokens is a base of about 18,560, the context / 5.4: far below the "
                "context itself (section 7)."
            ),
        ),
        Choice(
            "c",
            N_("Base 5,000 (D = 128): a smaller base makes the pairs turn more slowly."),
            why=N_(
                "The other way round: θ_i = base^(−2i/D) shrinks as the base grows, so a smaller "
                "base turns the slow pairs faster; at 5,000 the slowest wavelength is ≈ 27,500 "
                "positions (section 7)."
            ),
        ),
        Choice(
            "d",
            N_("None of these: the base must be larger than the context, 100,000."),
            why=N_(
                "That is the rule of thumb section 7 finds loose: the wavelength "
                "2π·base^((D−2)/D) passes the context from a base far below the context itself "
                "(section 7)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 7 of this chapter"),
    hint=N_(
        "For each option, write the slowest pair's wavelength 2π·base^((D−2)/D) with its D and "
        "base, and compare it with 100,000."
    ),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
