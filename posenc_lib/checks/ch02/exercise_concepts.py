"""Chapter 2's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on numbers or a case the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (number): the shortest text whose last integer position vector is 100 times a word's length;
- c2 (number): how many tokens apart two codes 0.25 apart are in a 201-token text, when a code gap
  of 0.25 meant "the next token" in 5-token training texts (normalized positions);
- c3 (number): the Euclidean length of the binary code's step from position 95 to 96;
- c4 (choice): what a learned table of 1024 rows does with a 1,500-token text.

The numeric answers and the named mistakes are computed with the library's tables
(``integer_encoding``, ``normalized_encoding``, ``binary_encoding``, ``neighbour_distances``).
"""

from __future__ import annotations

import math

import torch

from posenc_lib import binary_encoding, integer_encoding, normalized_encoding
from posenc_lib.analysis.ch02_naive import neighbour_distances
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

D = 64  # c1: the model width, as in the lecture
TIMES = 100  # c1: how many times a word's length (about 1) the position vector must exceed
GAP, SHORT, LONG = 0.25, 5, 201  # c2: a code gap, the training length, the long text's length
STEP_FROM = 95  # c3: the step 95 -> 96 of the 10-bit code (1011111 -> 1100000)


def _shortest_text() -> int:
    """The fewest tokens T for which the integer vector of the last token, t = T - 1, is longer
    than TIMES (a word has length about 1)."""
    return next(T for T in range(2, 10_000) if float(integer_encoding(T, D)[-1].norm()) > TIMES)


def _tokens_apart(n_tokens: int) -> float:
    """How many tokens apart two normalized codes GAP apart are, in a text of n_tokens."""
    codes = normalized_encoding(n_tokens, 1, dtype=torch.float64)[:, 0]  # (T,): t / (T - 1)
    return GAP / float(codes[1] - codes[0])


def _binary_step(t: int) -> float:
    """The Euclidean length of the binary code's step from t to t + 1 (10 bits)."""
    return float(neighbour_distances(binary_encoding(1024, 10, dtype=torch.float64))[t])


c1 = Numeric(
    "c1",
    prompt=N_(
        "Integer positions put t in every column of row t, with D = 64; word vectors have length "
        "about 1. What is the shortest text, in tokens, whose last token's position vector is more "
        "than 100 times as long as a word?"
    ),
    answer=_shortest_text,
    rel_tol=0.01,
    unit=N_("tokens"),
    answer_keys=("13 · 8 = 104", "13·8 = 104", "104"),
    why=N_(
        "The row (t, ..., t) has length t·√D = 8t (section 2), which passes 100 first at t = 13 "
        "(8·12 = 96 is not enough, 8·13 = 104 is). Positions count from 0 (section 1), so a text "
        "whose last token is at position 13 has 14 tokens."
    ),
    mistakes=(
        Mistake(
            13,
            N_(
                "that is the last token's position; the question asks for the number of tokens, "
                "and positions count from 0 (section 1)."
            ),
        ),
        Mistake(
            TIMES / math.sqrt(D),
            N_(
                "that solves 8t = 100 for t: the text has a whole number of tokens, and the last "
                "one's vector must be longer than 100 times a word (section 2)."
            ),
        ),
        Mistake(
            TIMES + 1,
            N_(
                "you took the row's length to be t; the row holds t in each of its 64 columns, so "
                "its length is larger (section 2)."
            ),
        ),
        Mistake(
            3,
            N_(
                "you multiplied t by D = 64; a row of 64 equal entries t has length t times the "
                "square root of 64 (section 2)."
            ),
        ),
    ),
    section=N_("section 2 of this chapter (integer positions)"),
)

c2 = Numeric(
    "c2",
    prompt=N_(
        "A model trained only on 5-token texts with normalized codes t / (T − 1) has learned that "
        "a code gap of 0.25 means the next token. In a 201-token text, how many tokens apart are "
        "two tokens whose codes are 0.25 apart?"
    ),
    answer=lambda: _tokens_apart(LONG),
    rel_tol=0.002,
    unit=N_("tokens"),
    answer_keys=("0.25 · 200", "0.25·200", "200 / 4", "200/4"),
    why=N_(
        "In a T-token text neighbours are 1 / (T − 1) apart: 1/4 in the 5-token texts, 1/200 in "
        "the 201-token one. A gap of 0.25 there spans 0.25 · 200 = 50 tokens: the same code gap "
        "means another distance at another length (section 3)."
    ),
    mistakes=(
        Mistake(
            1,
            N_(
                "that is what the model learned from 5-token texts; a code gap does not mean the "
                "same number of tokens at every length (section 3)."
            ),
        ),
        Mistake(
            LONG / SHORT,
            N_(
                "you scaled by the ratio of the lengths, 201 / 5; the codes run from 0 to 1 over "
                "T − 1 steps, not T (section 3)."
            ),
        ),
        Mistake(
            GAP * LONG,
            N_(
                "you divided by T instead of T − 1: the last token of a 201-token text gets the "
                "code 1 (section 3)."
            ),
        ),
        Mistake(
            1 / GAP,
            N_(
                "that is the number of steps in a 5-token text; the question asks about the "
                "201-token one (section 3)."
            ),
        ),
        Mistake(
            LONG - 1,
            N_(
                "that is the distance from the first token to the last, a code gap of 1; the gap "
                "asked for is 0.25 (section 3)."
            ),
        ),
        Mistake(
            GAP * (LONG - 1) + 1,
            N_(
                "you counted the tokens from the first to the last, both included; tokens apart "
                "counts the steps between them, as positions 2 and 3 are one apart (section 3)."
            ),
        ),
    ),
    section=N_("section 3 of this chapter (normalized positions)"),
)

c3 = Numeric(
    "c3",
    prompt=N_(
        "The binary code of positions 0 to 1023 puts bit j of t in column j (10 columns, each 0 or "
        "1). What is the Euclidean length of the step from position 95 to position 96?"
    ),
    answer=lambda: _binary_step(STEP_FROM),
    rel_tol=0.01,
    answer_keys=("√6", "sqrt(6)", "6 bits"),
    why=N_(
        "95 is 1011111 in binary: five trailing ones. Adding 1 turns them to zeros and the zero "
        "above them to one, so 96 = 1100000 differs in 6 bits, and a step of k flipped bits has "
        "length √k: √6 ≈ 2.45 (section 4)."
    ),
    mistakes=(
        Mistake(
            6,
            N_(
                "that is the number of bits flipped, the Hamming distance; the question asks for "
                "the Euclidean length (section 4)."
            ),
        ),
        Mistake(
            1,
            N_(
                "one token apart is not one unit apart in the binary code: a step's length depends "
                "on how many bits it flips (section 4)."
            ),
        ),
        Mistake(
            math.sqrt(5),
            N_(
                "you counted the trailing ones that turn to zeros, and left out the zero above "
                "them that turns to one (section 4)."
            ),
        ),
        Mistake(
            math.sqrt(7),
            N_(
                "you counted one bit too many: write 95 and 96 in binary and compare them bit by "
                "bit (section 4)."
            ),
        ),
        Mistake(
            math.sqrt(10),
            N_(
                "that is the longest step of the 10-bit code (511 to 512, all ten bits); 95 to 96 "
                "flips fewer (section 4)."
            ),
        ),
    ),
    section=N_("section 4 of this chapter (binary codes)"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "A model's learned position table has 1024 rows (max_len = 1024, like GPT-2's), trained "
        "with the model. It is given a 1,500-token text. Which statement is true?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Positions 1024 to 1499 get rows extrapolated from the trained ones, so the model "
                "works, only less accurately."
            ),
            why=N_(
                "A learned table is a lookup, not a formula: nothing derives a new row from the "
                "trained ones (section 5: `emb(129)` on a 128-row table raises)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Positions past the end wrap around: position 1024 reuses row 0, 1025 row 1, and so on."
            ),
            why=N_(
                "A lookup past the last row does not wrap, it fails (section 5). And if it wrapped, "
                "positions 0 and 1024 would share a vector: the code would no longer be unique."
            ),
        ),
        Choice(
            "c",
            N_(
                "There is no row 1024: the lookup fails, so the text must be cut to 1024 tokens or "
                "the table grown and trained further."
            ),
            why=N_(
                "The table has rows for positions 0..1023 only, so asking for 1500 positions raises, "
                "as `emb(129)` did in section 5; a new row would start as untrained noise, so it "
                "needs training before it means anything."
            ),
        ),
        Choice(
            "d",
            N_(
                "Append copies of row 1023: neighbouring trained rows are alike (MiniLM: 0.851 at "
                "offset 1), so the copies are nearly right."
            ),
            why=N_(
                "The copies are all equal, so positions 1023 to 1499 share one vector and attention "
                "cannot tell their order (chapter 1); the uniqueness wish fails (sections 1 and 5)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 5 of this chapter (learned tables)"),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
