"""Chapter 4's concept questions, one point each:

c1, how many vectors Shaw's clipped key table holds;
c2, from which distance T5's encoder puts every earlier key in its last bucket;
c3, which of T5 and DeBERTa adds a bias in the strict sense (section 6);
c4, what stays the same when a sentence moves through a text, with T5's bias.

The numeric answers are computed with the library's ``ch04_relative.shaw_index`` and
``relative.t5_relative_position_bucket``; each ``why`` names the section that teaches it.
"""

from __future__ import annotations

import torch

from posenc_lib import t5_relative_position_bucket
from posenc_lib.analysis.ch04_relative import shaw_index
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_


def _shaw_rows(n_tokens: int, clip: int) -> int:
    """How many rows of Shaw's table the offsets of an n_tokens text use."""
    offsets = torch.arange(-(n_tokens - 1), n_tokens)  # (2T - 1,): every offset j - i
    return int(shaw_index(offsets, clip).unique().numel())


def _last_bucket_start(bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """The smallest distance of a key before the query that T5 puts in its last bucket."""
    distances = torch.arange(0, 1001)  # (1001,): keys 0..1000 positions before the query
    buckets = t5_relative_position_bucket(-distances, bidirectional, num_buckets, max_distance)
    return int(distances[buckets == buckets.max()].min())


c1 = Numeric(
    "c1",
    prompt=N_(
        "Shaw et al. clip the offset j − i to [−C, C] and learn one vector per clipped offset. "
        "With C = 16, how many vectors does the table of relative keys hold, for a text of 2048 "
        "tokens?"
    ),
    answer=lambda: _shaw_rows(2048, clip=16),
    rel_tol=0.01,
    why=N_(
        "The clipped offsets are −16, ..., 0, ..., 16: 2C + 1 = 33 rows, whatever the text's "
        "length. Every offset beyond ±16 shares one of the two end rows, 'far before' or 'far "
        "after' (section 3 of this chapter)."
    ),
    mistakes=(
        Mistake(
            2 * 2048 - 1,
            N_(
                "2T − 1 = 4095 is one vector per offset, without clipping. Clipping sends every "
                "offset beyond ±C to an end row: count the rows that are left (section 3 of this "
                "chapter)."
            ),
        ),
        Mistake(
            2 * 16,
            N_(
                "2C leaves out offset 0, the key at the query's own position, which has a row of its "
                "own (section 3 of this chapter)."
            ),
        ),
        Mistake(
            16 + 1,
            N_(
                "C + 1 counts one side only: keys before and keys after the query have rows of their "
                "own, −C ... −1 and 1 ... C, besides 0 (section 3 of this chapter)."
            ),
        ),
    ),
    answer_keys=("2C + 1", "33 rows"),
    section=N_("section 3 of this chapter (Shaw et al.)"),
    unit=N_("vectors"),
)

c2 = Numeric(
    "c2",
    prompt=N_(
        "T5's encoder sorts offsets into 32 buckets, 16 for keys before the query, with "
        "max_distance = 128. From which distance on do all keys before the query share the last "
        "bucket (one learned number per head)?"
    ),
    answer=lambda: _last_bucket_start(bidirectional=True, num_buckets=32, max_distance=128),
    rel_tol=0.01,
    why=N_(
        "Distances 0 to 7 get a bucket each; a distance r ≥ 8 goes to "
        "8 + ⌊log(r/8) / log(128/8) · 8⌋, capped at 15. The floor first reaches 15 at r = 91, "
        "not at max_distance: from 91 on, every distance shares one number (section 5 of this "
        "chapter)."
    ),
    mistakes=(
        Mistake(
            128,
            N_(
                "max_distance is where the formula would pass the last bucket; its floor reaches the "
                "last bucket earlier (section 5 of this chapter)."
            ),
        ),
        Mistake(
            _last_bucket_start(bidirectional=False, num_buckets=32, max_distance=128),
            N_(
                "113 is the decoder's: causal buckets give all 32 to keys at or before the query, so "
                "its last bucket starts later. The encoder has 16 buckets a side (section 5 of this "
                "chapter)."
            ),
        ),
        Mistake(
            8,
            N_(
                "8 is where the exact buckets end and the logarithmic ones begin; those widen up to "
                "the last bucket (section 5 of this chapter)."
            ),
        ),
        Mistake(
            16,
            N_(
                "16 is the number of buckets on each side, not a distance. Read the bucket ranges in "
                "section 5 of this chapter."
            ),
        ),
    ),
    section=N_("section 5 of this chapter (T5: one number per bucket)"),
    unit=N_("positions"),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "Some tutorials and blog posts list T5 and DeBERTa as the models that use a 'relative "
        "position bias', a term B[i, j] that depends on i − j. Which is right?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Both add one learned number per offset, the same whatever the words; they differ only "
                "in how they group the offsets."
            ),
            why=N_(
                "True of T5 only. DeBERTa's position terms are dot products of the words' vectors "
                "with relative embeddings: with other words they change by up to 3.65 (measured in "
                "the deep dive 'T5 and DeBERTa in code', section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "T5 adds a learned number per bucket, whatever the words; DeBERTa's position terms are "
                "dot products with the words' vectors."
            ),
            why=N_(
                "T5's b_h[bucket(j − i)] is read from a table of numbers and never sees the words; "
                "DeBERTa's content-to-position and position-to-content terms do: with other "
                "words they change by up to 3.65 (measured in the deep dive 'T5 and DeBERTa in "
                "code', section 4)."
            ),
        ),
        Choice(
            "c",
            N_(
                "DeBERTa adds the bias, one number per clipped distance; T5's bucketed term is a dot "
                "product with the words' vectors, so it changes with them."
            ),
            why=N_(
                "The other way round: T5's term is one learned number per bucket and head, read "
                "from a table whatever the words; DeBERTa's terms change with the words (section "
                "6 of this chapter)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Neither is relative: both still depend on where the tokens sit in the text, like an "
                "added table of positions."
            ),
            why=N_(
                "Both depend only on the words and the bucketed or clipped offset: moving a "
                "sentence through a 64-token context changes their scores by rounding only "
                "(below 1e-10, section 7 of this chapter)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 6 of this chapter (DeBERTa; the deep dive 'T5 and DeBERTa in code')"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "Put the sentence 'the cat sat on the mat' at every start position of a 64-token "
        "context of other tokens, with T5's bias in the attention scores. As the sentence moves, "
        "what stays the same?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Nothing: T5's bias is read at each token's own position, so moving the sentence "
                "changes its scores."
            ),
            why=N_(
                "T5's bias depends only on j − i, which moving the sentence leaves alone: the "
                "scores among its words change by below 1e-10 over 58 shifts (section 7 of this "
                "chapter)."
            ),
        ),
        Choice(
            "b",
            N_(
                "The scores among the sentence's words, and therefore the attention weights among "
                "them too."
            ),
            why=N_(
                "The scores stay, to rounding; the weights do not: the softmax also sees the "
                "context's tokens, which differ at each shift, so the weights among the "
                "sentence's words change by up to 0.15 (deep dive 'A bias past the training "
                "length', section 2)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The scores among its words stay (to rounding); the weights among them change, since "
                "the softmax also sees the neighbours."
            ),
            why=N_(
                "That is translation invariance of the scores, not of the weights: over 58 shifts "
                "the scores change by below 1e-10, the weights by up to 0.15, since the "
                "neighbours differ at each shift (section 7; the 0.15 is from the deep dive 'A "
                "bias past the training length', section 2)."
            ),
        ),
        Choice(
            "d",
            N_(
                "The scores, and they would also stay with sinusoidal positions added to the words, "
                "whose dot products depend on the offset only."
            ),
            why=N_(
                "Only the raw dot products do. After the projections W_q, W_k the offset-only "
                "property is lost (diagonal spread 8.86, section 1 of this chapter), and the "
                "sentence's scores wander by up to 4.1 as it moves (section 7)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 7 of this chapter (move a sentence: do its scores move?)"),
)

CONCEPTS = (c1, c2, c3, c4)
