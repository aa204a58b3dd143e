"""Chapter 5's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on numbers the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (number): the slope of head 18 of a 20-head model, from the rule for head counts that are not
  a power of two;
- c2 (choice): which heads of 8 still give a key 100 tokens back 1% of a neighbour's weight, and
  why (a ratio of two weights, a factor 100 rather than the window's 10);
- c3 (choice): which of two keys wins, given their content scores, their distances and the slope;
- c4 (number): the share of a head's attention beyond the training distance on a very long text.

The numeric answers and the named mistakes are computed with the library, not typed in.
"""

from __future__ import annotations

import math

from posenc_lib.alibi import alibi_slopes
from posenc_lib.analysis.ch05_alibi import far_mass
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

LONG_TEXT = 100_000  # c4: the text the model reads, far past its training length
TRAINED = 128  # c4: the training length; the keys further back than TRAINED - 1 were never seen


def _slope(head: int, heads: int) -> float:
    """The ALiBi slope of head ``head`` (1-based) of ``heads``, from the library."""
    return float(alibi_slopes(heads)[head - 1])


def _ladder(head: int, heads: int) -> float:
    """The paper's section 3 formula 2^(-8h/H), which the code follows only for powers of two."""
    return 2.0 ** (-8 * head / heads)


c1 = Numeric(
    "c1",
    prompt=N_(
        "An ALiBi model has 20 heads, with the slopes of the authors' code, BLOOM and MPT (and "
        "alibi_slopes). What is the slope m of head 18?"
    ),
    answer=lambda: float(alibi_slopes(20)[17]),  # head 18 of 20
    rel_tol=0.01,
    answer_keys=("2^(−0.75)", "2^(-0.75)", "2^-0.75", "2^(−1) · 2^0.25", "2^0.25"),
    why=N_(
        "20 is not a power of two, so heads 1–16 are the 16-head ladder, 2^(−h/2), and heads 17–20 "
        "sit half a ladder step, a factor 2^(4/16) = 2^0.25, above heads 1–4. Head 18 is extra head "
        "2: 2^(−1) · 2^0.25 = 2^(−0.75) ≈ 0.595 (section 2)."
    ),
    mistakes=(
        Mistake(
            _ladder(18, 20),
            N_(
                "that is the paper's formula 2^(−8h/H) with H = 20; the code, which the released "
                "models follow, treats a head count that is not a power of two differently "
                "(section 2)."
            ),
        ),
        Mistake(
            _slope(2, 16),
            N_(
                "that is ladder head 2 itself; an extra head does not repeat a ladder slope, it sits "
                "between two of them (section 2)."
            ),
        ),
        Mistake(
            _slope(2, 16) * 2 ** (-4 / 16),
            N_(
                "your extra head sits half a step below its ladder head; the extra heads sit above "
                "(section 2)."
            ),
        ),
        Mistake(
            _slope(17, 20),
            N_(
                "that is the slope of head 17, the first extra head (half a step above ladder "
                "head 1); head 18 is the second extra head (section 2)."
            ),
        ),
        Mistake(
            _ladder(18, 32),
            N_(
                "that is head 18 of a 32-head ladder; the code keeps the ladder of the largest power "
                "of two not above H (section 2)."
            ),
        ),
        Mistake(
            _ladder(18, 16),
            N_(
                "you continued the 16-head ladder past its end; the extra heads go back to its first "
                "heads (section 2)."
            ),
        ),
    ),
    section=N_("section 2 of this chapter"),
    hint=N_(
        "20 = 16 + 4: find which head of the 16-head ladder head 18 is paired with, and how big "
        "half a step of that ladder is."
    ),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "An 8-head ALiBi model (slopes 1/2, 1/4, …, 1/256), all content scores equal. Which heads "
        "still give a key 100 tokens back more than 1% of the weight they give the key 1 token "
        "back, and why not the others?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Heads 6–8: only their effective windows, ln(10)/m = 147, 295 and 589 tokens, "
                "reach past 100 tokens."
            ),
            why=N_(
                "The window marks a factor 10 in weight; the question asks for a factor 100, which "
                "a head reaches only at ln(100)/m, twice its window (section 3)."
            ),
        ),
        Choice(
            "b",
            N_(
                "All eight: softmax divides each e^score by a sum over every key, so the other "
                "keys, not the bias, set the ratio of two weights."
            ),
            why=N_(
                "Softmax divides both weights by the same sum, so their ratio is e raised to the "
                "difference of their scores, whatever the other keys; for head 1 (m = 1/2) that "
                "is e^(−49.5), about 10^(−22) (section 1)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Heads 5–8: the ratio of the two weights is e^(−99 m), above 0.01 only while "
                "m < ln(100)/99 ≈ 0.047."
            ),
            why=N_(
                "The two keys differ by 99 steps, so the far one gets e^(−99 m) times the near "
                "one's weight, whatever the other keys. That is above 0.01 while 99 m < ln 100 ≈ "
                "4.6: heads 5–8 (head 5 keeps 0.045); head 4 (m = 1/16) keeps e^(−6.2) ≈ 0.002 "
                "(sections 1 and 3)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Heads 7 and 8: only their penalty over the 99 extra steps, 99 m = 0.77 and "
                "0.39, stays below 1, and a penalty above 1 costs over 99% of the weight."
            ),
            why=N_(
                "A penalty of 1 costs a factor e ≈ 2.7, not 100: the weight falls below 1% only "
                "once the penalty passes ln 100 ≈ 4.6, and heads 5 and 6 (penalties 3.1 and 1.5) "
                "stay below that (section 1)."
            ),
        ),
    ),
    answer="c",
    section=N_("sections 1 and 3 of this chapter"),
    hint=N_(
        "two keys with equal content differ only in their bias: write the ratio of their weights "
        "as e to a power, then ask for which slopes it stays above 0.01."
    ),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "One head has slope m = 1/4. The last query's content scores are 1.0 for key A, 2 tokens "
        "back, and 2.5 for key B, 10 tokens back. With ALiBi's bias, which key gets more attention "
        "weight?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "B: its content score 2.5 beats A's 1.0 by 1.5, and softmax keeps the order of "
                "the scores."
            ),
            why=N_(
                "That is the order without ALiBi. The bias takes m·d from each score, and the two "
                "keys stand at different distances d (section 1)."
            ),
        ),
        Choice(
            "b",
            N_(
                "A: after the bias A scores 1.0 − 0.5 = 0.5 and B 2.5 − 2.5 = 0, so A gets "
                "e^0.5 ≈ 1.6 times B's weight."
            ),
            why=N_(
                "Scores after the bias: A 1.0 − 2/4 = 0.5, B 2.5 − 10/4 = 0. The weights are "
                "proportional to e^score, so A gets e^0.5 ≈ 1.65 times B's weight, whatever the "
                "other keys (section 1)."
            ),
        ),
        Choice(
            "c",
            N_(
                "B, by more than its content alone: the bias adds m·d, so B scores 2.5 + 2.5 = "
                "5.0 against A's 1.0 + 0.5 = 1.5."
            ),
            why=N_(
                "The sign is flipped: ALiBi subtracts m·d, so a key further back is penalised more, "
                "never rewarded (section 1)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Neither can be told: softmax divides each e^score by the sum over all keys, and "
                "the other keys' scores are not given."
            ),
            why=N_(
                "Softmax divides every weight by the same sum, so the ratio of two weights is e "
                "raised to the difference of their biased scores, whatever the other keys are "
                "(section 1)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 1 of this chapter"),
    hint=N_(
        "take m·d off each key's content score, then compare the two results: the ratio of two "
        "softmax weights is e to their difference."
    ),
)

c4 = Numeric(
    "c4",
    prompt=N_(
        "A 16-head ALiBi model trained on 128-token texts reads a text of 100,000 tokens. With "
        "equal content scores, what share of head 13's attention (from the last query) goes to keys "
        "more than 127 tokens back? Give a number between 0 and 1, to three decimals."
    ),
    answer=lambda: float(far_mass(alibi_slopes(16)[12], 100_000, 127)[0]),  # head 13 of 16
    rel_tol=0.005,
    decimals=3,
    answer_keys=("e^(−128 m)", "e^(-128 m)", "e^(−128·m)", "exp(-128 m)", "e^(−1.41)", "e^(-1.41)"),
    why=N_(
        "Head 13 of 16 has m = 2^(−6.5) ≈ 0.0110. With equal content the weights fall as e^(−m·d), "
        "and on a text this long the share past distance 127 is the geometric tail e^(−128 m) = "
        "e^(−1.41) ≈ 0.243 (section 5)."
    ),
    mistakes=(
        Mistake(
            1 - float(far_mass(_slope(13, 16), LONG_TEXT, TRAINED - 1)[0]),
            N_(
                "that is the share within 127 tokens (distances 0 to 127); the question asks for "
                "the share further back (section 5)."
            ),
        ),
        Mistake(
            (LONG_TEXT - TRAINED) / LONG_TEXT,
            N_(
                "that is the share of the keys, as if every key weighed the same: you left out the "
                "bias, under which the weights fall with the distance (section 5)."
            ),
        ),
        Mistake(
            10 ** (-TRAINED * _slope(13, 16)),
            N_("softmax weights are powers of e, not of 10 (section 3)."),
        ),
        Mistake(
            float(far_mass(_ladder(13, 8), LONG_TEXT, TRAINED - 1)[0]),
            N_(
                "that is head 13 with the 8-head formula, m = 2^(−8·13/8) = 2^(−13); this model "
                "has 16 heads, so its ladder steps by 2^(−8/16) (section 2)."
            ),
        ),
        Mistake(
            math.exp(-(TRAINED - 1) * _slope(13, 16)),
            N_(
                'that is the share past distance 126: "more than 127 tokens back" starts at '
                "distance 128, one step further (section 5)."
            ),
        ),
        Mistake(
            TRAINED * _slope(13, 16),
            N_(
                "that is m·128, the bias at the training distance, not a share of the attention "
                "(section 5)."
            ),
        ),
    ),
    section=N_("section 5 of this chapter"),
    hint=N_(
        "with equal content the weight at distance d is proportional to e^(−m·d), a geometric "
        "series; on 100,000 tokens, what share of such a series lies past its first 128 terms?"
    ),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
