"""Chapter 4's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on numbers or a case the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (number): how many (query, key) pairs of a 12-token text read row 0 of Shaw's table, C = 8;
- c2 (number): from which distance a bidirectional T5 bias with 22 buckets and max_distance 64
  puts every earlier key in its last bucket (settings no notebook prints);
- c3 (choice): which score term gives two pairs of different words at the same offset one value;
- c4 (choice): whether a second layer's scores among a moved sentence's words stay, with T5's
  bias in both layers (the lecture measures the first layer only).

The numeric answers and the named mistakes are computed with the library (``shaw_index``,
``t5_relative_position_bucket`` and the bucket variants of q3's check), not typed in.
"""

from __future__ import annotations

import torch

from posenc_lib.analysis.ch04_relative import offset_matrix, shaw_index
from posenc_lib.checks.ch04.t5_buckets import _buckets
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_
from posenc_lib.relative import t5_relative_position_bucket

TOKENS, CLIP = 12, 8  # c1: the text's length and Shaw's clipping distance C
BUCKETS, REACH = 22, 64  # c2: num_buckets and max_distance of a bidirectional T5 bias


def _pairs(rule) -> int:
    """How many (query i, key j) pairs of a TOKENS-token text satisfy ``rule(offsets, rows)``."""
    offsets = offset_matrix(TOKENS)  # (T, T): j - i
    return int(rule(offsets, shaw_index(offsets, CLIP)).sum())


def _last_bucket_start(bidirectional: bool = True, **variant) -> int:
    """The smallest distance of a key before the query that lands in the last bucket: with T5's
    own buckets, or with one of the usual slips of q3 (``_buckets``' keywords)."""
    distances = torch.arange(0, 20 * REACH)  # (1000,): keys 0..999 positions before the query
    if variant or not bidirectional:
        buckets = _buckets(-distances, bidirectional, BUCKETS, REACH, **variant)
    else:
        buckets = t5_relative_position_bucket(-distances, True, BUCKETS, REACH)
    return int(distances[buckets == buckets.max()].min())


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

c2 = Numeric(
    "c2",
    prompt=N_(
        "A bidirectional T5 bias (an encoder's) has 22 buckets and max_distance = 64. From which "
        "distance on do all keys before the query share its last bucket?"
    ),
    answer=lambda: min(
        r for r in range(1000) if t5_relative_position_bucket(torch.tensor(-r), True, 22, 64) == 10
    ),
    rel_tol=0.0015,
    answer_keys=("12.8^(5/6)", "5 · 12.8^(5/6)", "41.8"),
    why=N_(
        "11 buckets a side, e = 5 exact ones and n − e = 6 log ones. The last bucket is 10: "
        "5 + ⌊log(r/5) / log(64/5) · 6⌋ ≥ 10 needs r ≥ 5 · 12.8^(5/6) ≈ 41.8, so the last bucket "
        "starts at the whole distance 42, well before max_distance (section 5)."
    ),
    hint=N_(
        "Work on one side: 11 buckets, of which e = 5 are exact. Write the log formula for a "
        "distance r, ask when its floor first reaches the last bucket, 10, and solve for r."
    ),
    mistakes=(
        Mistake(
            _last_bucket_start(times_exact=True),
            N_(
                "64 is max_distance, where the formula would pass the last bucket (or what you get "
                "when the log buckets are scaled by e instead of n − e): the floor reaches the last "
                "bucket earlier (section 5)."
            ),
        ),
        Mistake(
            _last_bucket_start(bidirectional=False),
            N_(
                "that is where a causal bias with 22 buckets (all on one side) starts its last "
                "bucket; a bidirectional one has half the buckets a side (section 5)."
            ),
        ),
        Mistake(
            _last_bucket_start(rounding="round"),
            N_(
                "you rounded the log bucket to the nearest whole number; T5 takes its floor "
                "(section 5)."
            ),
        ),
        Mistake(
            _last_bucket_start(denominator="log"),
            N_(
                "you divided log(r/e) by log(max_distance); the formula divides by "
                "log(max_distance / e) (section 5)."
            ),
        ),
        Mistake(
            _last_bucket_start() - 1,
            N_(
                "one too few: that distance still lands in the bucket before the last. Solve the "
                "inequality, then take the first whole distance that satisfies it (section 5)."
            ),
        ),
        Mistake(
            5 * (REACH / 5) ** (5 / 6),
            N_(
                "that is the bound the inequality gives, not a distance: distances are whole "
                "numbers, and the floor reaches the last bucket at the first one past it (section 5)."
            ),
        ),
        Mistake(
            5,
            N_(
                "5 is e, where the exact buckets end and the log buckets begin; those widen up to "
                "the last bucket (section 5)."
            ),
        ),
        Mistake(
            11,
            N_("11 is the number of buckets on each side, not a distance (section 5)."),
        ),
        Mistake(
            10,
            N_(
                "10 is the last bucket's number; the question asks from which distance (section 5)."
            ),
        ),
    ),
    section=N_("section 5 of this chapter (T5: one number per bucket)"),
    unit=N_("positions"),
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
                "different q_i, so one row scores differently (section 3; section 2's table)."
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
                "pairs get b_h[bucket(−1)], whatever the words (section 5; section 2's table)."
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
