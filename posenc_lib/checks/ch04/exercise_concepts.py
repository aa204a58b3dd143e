"""Chapter 4's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on numbers or a case the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (number): how many (query, key) pairs of a 12-token text read row 0 of Shaw's table, C = 8;
- c2 (choice): whether cross-attention's output changes when an encoder whose only position
  signal is a T5 bias reads its input reversed (the lecture reverses an encoder without positions,
  or with an added table);
- c3 (choice): which score term gives two pairs of different words at the same offset one value;
- c4 (choice): whether a second layer's scores among a moved sentence's words stay, with T5's
  bias in both layers (the lecture measures the first layer only).

c1's answer and named mistakes are computed with the library (``shaw_index``), not typed in.
"""

from __future__ import annotations

from posenc_lib.analysis.ch04_relative import offset_matrix, shaw_index
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

TOKENS, CLIP = 12, 8  # c1: the text's length and Shaw's clipping distance C


def _pairs(rule) -> int:
    """How many (query i, key j) pairs of a TOKENS-token text satisfy ``rule(offsets, rows)``."""
    offsets = offset_matrix(TOKENS)  # (T, T): j - i
    return int(rule(offsets, shaw_index(offsets, CLIP)).sum())


c1 = Numeric(
    "c1",
    prompt=N_(
        "Shaw's table of relative keys with clipping distance C = 8 has 17 rows: row m serves the "
        "clipped offset m − 8. In a text of 12 tokens, how many of the 144 (query i, key j) pairs "
        "read row 0?"
    ),
    answer=lambda: _pairs(lambda offsets, rows: rows == 0),
    rel_tol=0.01,
    answer_keys=("j − i ≤ −8", "j - i <= -8", "4 + 3 + 2 + 1"),
    why=N_(
        "Row 0 serves the clipped offset −8, so every pair with j − i ≤ −8 reads it: 4 pairs at "
        "offset −8, then 3, 2 and 1 at −9, −10 and −11, in all 4 + 3 + 2 + 1 = 10 (section 3)."
    ),
    mistakes=(
        Mistake(
            _pairs(lambda offsets, rows: offsets == -CLIP),
            N_(
                "you counted only the pairs at offset −8 exactly; clipping sends every offset "
                "beyond −8 to the same end row (section 3)."
            ),
        ),
        Mistake(
            _pairs(lambda offsets, rows: offsets < -CLIP),
            N_(
                "you counted only the offsets beyond −8; offset −8 itself is clipped to −8 too, "
                "and row m serves offset m − 8 (section 3)."
            ),
        ),
        Mistake(
            _pairs(lambda offsets, rows: offsets == 0),
            N_(
                "those are the pairs at offset 0, the diagonal: row m serves offset m − 8, so "
                "offset 0 reads the middle row (section 3)."
            ),
        ),
        Mistake(
            _pairs(lambda offsets, rows: offsets <= -(CLIP - 1)),
            N_(
                "your count starts at offset −7, one step too near: the shift is + C, row m for "
                "offset m − 8 (section 3)."
            ),
        ),
        Mistake(
            _pairs(lambda offsets, rows: (rows == 0) | (rows == 2 * CLIP)),
            N_(
                "you counted both end rows, 'far before' and 'far after'; row 0 is the one for "
                "keys before the query (section 3)."
            ),
        ),
    ),
    section=N_("section 3 of this chapter (Shaw et al.)"),
    unit=N_("pairs"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "An encoder–decoder's encoder has a T5 bias in its self-attention as its only position "
        "signal; cross-attention has none. The encoder reads 'dog bites man', then 'man bites dog' "
        "(the same three word vectors, reversed); the decoder's queries are the same both times. "
        "Does cross-attention's output for a decoder token change?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "No: cross-attention has no position signal, and a weighted sum over the "
                "encoder's outputs does not depend on their order."
            ),
            why=N_(
                "A weighted sum ignores the order of its terms, not the terms themselves. With the "
                "bias, each encoder output depends on which words sit before and after it; "
                "reversing changes that, so the outputs are other vectors, not the same ones "
                "reordered (section 8)."
            ),
        ),
        Choice(
            "b",
            N_(
                "No: the bias reads only the offsets j − i, and the reversed sentence has the same "
                "offsets, from −2 to 2."
            ),
            why=N_(
                "The offsets are the same, but the word pairs at each offset are not: 'dog' is one "
                "before 'bites' in one sentence and one after it in the other, and an encoder's "
                "bias puts offsets −1 and +1 in different buckets (sections 5 and 8)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Yes: the bias makes each encoder output depend on which words sit before and "
                "after it, and cross-attention reads those outputs."
            ),
            why=N_(
                "Order reaches cross-attention through the encoder's outputs (section 8); a "
                "relative bias puts it there as an added position table does, and reversing the "
                "input changes it."
            ),
        ),
        Choice(
            "d",
            N_(
                "Yes: the encoder's T5 bias is also added to cross-attention's logits, at the "
                "offset between the decoder token and each encoder token."
            ),
            why=N_(
                "T5's cross-attention gets no bias (its code passes zeros, section 8): an offset "
                "between a decoder token and an encoder token would compare counters of two "
                "different sequences."
            ),
        ),
    ),
    answer="c",
    hint=N_(
        "Cross-attention's output is a weighted sum over the encoder's outputs: ask whether "
        "reversing the input only reorders those outputs, or changes them."
    ),
    section=N_("section 8 of this chapter (does cross-attention need positions?)"),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "In one head reading 'the cat sat on the mat', the pairs (query 'cat', key 'the') and "
        "(query 'on', key 'sat') have the same offset, j − i = −1. Which of these score terms is sure to give both pairs the same value, "
        "whatever the words' vectors?"
    ),
    choices=(
        Choice(
            "a",
            N_("Shaw's q_i · a_clip(j−i), since both pairs read the same row a_−1."),
            why=N_(
                "The row is the same, but q_i is the query word's vector: 'cat' and 'on' give "
                "different q_i, so one row scores differently (section 3; the table after section 6)."
            ),
        ),
        Choice(
            "b",
            N_("Transformer-XL's u · k_j, since u is one learned vector for every query."),
            why=N_(
                "u is shared, but k_j is the key word's vector, 'the' or 'sat': the term is the "
                "same down a column, not along a diagonal (section 4)."
            ),
        ),
        Choice(
            "c",
            N_("T5's b_h[bucket(j − i)], read from a table by the offset alone."),
            why=N_(
                "b_h is a table of numbers, one per bucket and head, read by the offset alone: both "
                "pairs get b_h[bucket(−1)], whatever the words (section 5; the table after section 6)."
            ),
        ),
        Choice(
            "d",
            N_("DeBERTa's q_i · K^r_δ(i,j), since both pairs have the same clipped distance δ."),
            why=N_(
                "δ is the same, but q_i is the query word's vector: DeBERTa's position terms are "
                "dot products with the words' vectors, so they change with the words (section 6)."
            ),
        ),
    ),
    answer="c",
    hint=N_(
        "For each term, list the vectors it reads: a term that reads q_i or k_j changes when the "
        "query or key word changes, even at the same offset."
    ),
    section=N_("section 2 of this chapter (where position enters a score; sections 3 to 6)"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "A 4-word sentence sits at start 0, then at start 30, of a 64-token context of other "
        "tokens, the same word vectors each time. A model of two attention layers (each adds its "
        "output to its input) has a T5 bias in each layer as its only position signal. Its first "
        "layer's scores among the sentence's 4 words are the same at both places. Its second "
        "layer's?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "The same too: every layer's bias reads j − i alone, and the offsets among the 4 "
                "words are the same at both places."
            ),
            why=N_(
                "The bias term stays, but the content term q_i · k_j reads the layer's inputs, and "
                "layer 2's inputs are layer 1's outputs: weighted sums over all 64 tokens, "
                "neighbours included, which differ at the two places (section 7)."
            ),
        ),
        Choice(
            "b",
            N_(
                "They change: layer 1's output for each of the 4 words mixes in the neighbours, "
                "which differ at the two places, and layer 2's content term reads those outputs."
            ),
            why=N_(
                "Scores stay put for the same inputs. Layer 1's weights change with the neighbours "
                "(section 7), so its outputs, layer 2's inputs, differ at the two places; layer "
                "2's bias term stays, its content term moves."
            ),
        ),
        Choice(
            "c",
            N_(
                "They change: the second layer reads T5's bias at each token's own position, so "
                "moving the sentence changes it."
            ),
            why=N_(
                "Every layer reads its bias by the offset j − i, never by a token's own position "
                "(section 5); the part that moves is the content term, through layer 2's inputs "
                "(section 7)."
            ),
        ),
        Choice(
            "d",
            N_(
                "The same, as long as the sentence stays within max_distance (128) of the "
                "context's start; farther on, its offsets would share the last bucket."
            ),
            why=N_(
                "The offsets among the 4 words run from −3 to 3 wherever the sentence sits: "
                "max_distance bounds offsets, not places. What moves is the content term, through "
                "layer 2's inputs (section 7)."
            ),
        ),
    ),
    answer="b",
    hint=N_(
        "Layer 2's score of two of the sentence's words has a content term q_i · k_j: which "
        "vectors does it read, and did any of the 64 tokens around the sentence go into them?"
    ),
    section=N_("section 7 of this chapter (move a sentence: do its scores move?)"),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
