"""Chapter 2's concept questions, one point each:

c1, what goes wrong when integer positions are added to word vectors;
c2, how many times larger the same one-token gap is in a short text than in a long one (normalized);
c3, how uneven the neighbour steps of a 10-bit binary code are;
c4, what a learned position table can and cannot do.

The numeric answers are computed with the library's own tables (``normalized_encoding``,
``binary_encoding``, ``ch02_naive.unevenness``); each ``why`` names the section that teaches it.
"""

from __future__ import annotations

import math

import torch

from posenc_lib import binary_encoding, normalized_encoding
from posenc_lib.analysis.ch02_naive import unevenness
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_


def _gap(n_tokens: int) -> float:
    """The distance between the normalized codes of tokens 2 and 3 in a text of n_tokens."""
    codes = normalized_encoding(n_tokens, 1, dtype=torch.float64)[:, 0]  # (T,): t / (T - 1)
    return float(codes[3] - codes[2])


c1 = MultipleChoice(
    "c1",
    prompt=N_(
        "Integer positions put the number t in every column of row t. You add them to word "
        "vectors of length about 1, in a 1000-token text with D = 64. What goes wrong?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Nothing serious: the softmax divides by the sum of its exponentials, so the inputs' "
                "scale cancels out."
            ),
            why=N_(
                "The softmax normalizes the weights, not the scores' scale: inputs 1000 times "
                "larger make scores about a million times larger, and the softmax then puts "
                "nearly all its weight on one key (97.6% on average from 100 tokens on). "
                "Section 2 of this chapter."
            ),
        ),
        Choice(
            "b",
            N_(
                "Position 999's vector dwarfs its word, and the keys each query favours stop depending "
                "on the words."
            ),
            why=N_(
                "The input is almost all position: x + PE points along PE to six decimals, and "
                "when every word of a 1000-token text changes, 999 of the 1000 favourite keys stay "
                "put, at one end of the text (section 2 of this chapter)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Nothing serious: LayerNorm rescales each input, bringing the position back to the "
                "word's size and keeping both."
            ),
            why=N_(
                "LayerNorm subtracts each row's mean, so the constant row (t, ..., t) vanishes "
                "entirely; with t in one column instead, every input heads for the same vector "
                "(word a at positions 100 and 999: cosine 0.99996, in the LayerNorm deep dive beside "
                "this chapter). Section 2 of this chapter."
            ),
        ),
        Choice(
            "d",
            N_(
                "Two positions can end up with the same vector once t is large, so the code is no "
                "longer unique."
            ),
            why=N_(
                "Every integer row is different, and the yardstick's uniqueness row passes "
                "(narrowly, 0.0017 against 0.001). What fails is boundedness: the largest value "
                "grows with the text (sections 2 and 7 of this chapter)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 2 of this chapter (integer positions)"),
)

c2 = Numeric(
    "c2",
    prompt=N_(
        "Normalized positions give token t of a T-token text the code t / (T − 1). How many "
        "times larger is the gap between the codes of tokens 2 and 3 in a 5-token sentence than "
        "in a 401-token one?"
    ),
    answer=lambda: _gap(5) / _gap(401),
    rel_tol=0.01,
    why=N_(
        "Neighbours are 1 / (T − 1) apart: 1/4 in the 5-token sentence, 1/400 in the 401-token "
        "one, so the same one-token gap is 100 times larger in the short sentence. The distance "
        "is not consistent across lengths (section 3 of this chapter)."
    ),
    mistakes=(
        Mistake(
            401 / 5,
            N_(
                "you divided by T instead of T − 1 (401 / 5): the last token of a T-token text gets "
                "(T − 1)/(T − 1) = 1, so neighbours are 1 / (T − 1) apart (section 3 of this "
                "chapter)."
            ),
        ),
        Mistake(
            4 / 400,
            N_(
                "that is the ratio upside down: the short sentence's gap, 1/4, is the larger one "
                "(section 3 of this chapter)."
            ),
        ),
        Mistake(
            1.0,
            N_(
                "one token apart is not the same distance in every text: normalized codes squeeze the "
                "whole text into [0, 1], so neighbours crowd together as it grows (section 3 of this "
                "chapter)."
            ),
        ),
    ),
    answer_keys=("100 times",),
    section=N_("section 3 of this chapter (normalized positions)"),
)

c3 = Numeric(
    "c3",
    prompt=N_(
        "The binary code of positions 0 to 1023 uses 10 bits, one per column, each 0 or 1. "
        "Divide the longest Euclidean step between neighbouring positions by the shortest: what "
        "ratio do you get?"
    ),
    answer=lambda: unevenness(binary_encoding(1024, 10)),
    rel_tol=0.02,
    why=N_(
        "A step from t to t + 1 flips the trailing ones of t and the zero above them, and its "
        "length is the square root of the number of bits flipped: 1 bit at the shortest, all 10 "
        "from 511 to 512, so √10 ≈ 3.16 (section 4 of this chapter found √8 ≈ 2.83 for 8 bits)."
    ),
    mistakes=(
        Mistake(
            10.0,
            N_(
                "that is the ratio of bits flipped (10 against 1), the Hamming distance; the "
                "question asks for Euclidean lengths (section 4 of this chapter)."
            ),
        ),
        Mistake(
            math.sqrt(8),
            N_(
                "√8 ≈ 2.83 is section 4's ratio for 8 bits and 256 positions; this code has 10 bits "
                "and 1024 positions: find its own longest step."
            ),
        ),
        Mistake(
            1.0,
            N_(
                "binary steps are not even: 0 to 1 flips one bit, 511 to 512 flips ten. Only the "
                "smoothed waves paired with their shifted copies make every step equal (section 4 of "
                "this chapter)."
            ),
        ),
    ),
    answer_keys=("√10", "sqrt(10)", "all 10 bits"),
    section=N_("section 4 of this chapter (binary codes)"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "BERT-base learns its position table: 512 rows of 768 numbers, trained with the rest of "
        "the model. Which statement is true?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "It extrapolates like a formula: rows past 511 are derived from the trained ones when "
                "needed."
            ),
            why=N_(
                "No formula gives row 512: a learned table is a lookup with max_len rows, and "
                "asking for more positions fails (section 5 of this chapter: `emb(129)` raises). "
                "A row added later would start as untrained noise."
            ),
        ),
        Choice(
            "b",
            N_(
                "It takes a large share of BERT-base's parameters, which is the main cost of learning "
                "positions."
            ),
            why=N_(
                "It is 393,216 numbers, 0.36% of BERT-base's 110 M parameters; all four models in "
                "section 5 of this chapter spend under 1% on their tables. In parameters a learned "
                "table is cheap; where it falls short is past max_len."
            ),
        ),
        Choice(
            "c",
            N_(
                "Right after initialisation its neighbouring rows are already alike, so training "
                "only fine-tunes them."
            ),
            why=N_(
                "Each entry is drawn on its own from N(0, 0.02²), so neighbouring rows are as "
                "unrelated as random vectors (a mean cosine of about 0.00 at offset 1 for the untrained "
                "table of section 5 of this chapter). Only training makes neighbours alike, position by position."
            ),
        ),
        Choice(
            "d",
            N_(
                "It has no row for position 512 or beyond, and whatever order its rows show, "
                "training put there."
            ),
            why=N_(
                "Untrained rows are unrelated (neighbour cosine about 0); a trained table such as "
                "MiniLM's has neighbours alike (0.851 at offset 1, section 5 of this chapter) and "
                "pairs of directions that turn like a sine and a cosine (deep dive: what training "
                "learns), but still no row 512: a model with it cannot read a 513th token."
            ),
        ),
    ),
    answer="d",
    section=N_("section 5 of this chapter (learned tables)"),
)

CONCEPTS = (c1, c2, c3, c4)
