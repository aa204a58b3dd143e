"""Chapter 5's lecture quiz, ``quiz(CONCEPTS)`` at the end of ``notebooks/05_alibi.ipynb`` (and the
website's and the classroom demo's quiz): four questions on the chapter's ideas, answered by a click.

- c1 (choice): where ALiBi puts position, and what shape its penalty has;
- c2 (number): the slope of head 1 of an 8-head model, from the library's ``alibi_slopes``;
- c3 (number): the effective window of head 2 of 8 (a factor 10), to one decimal;
- c4 (choice): the recency prior: where a key that wins on content is cancelled by the bias.

The exercises grade other questions (``exercise_concepts``), which make the learner use these ideas
on numbers the lecture does not print. Every number in a statement here is one chapter 5 prints;
the numeric answers are computed with the library, not typed in.
"""

from __future__ import annotations

import math

from posenc_lib.alibi import alibi_slopes
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_


def _slope(head: int, heads: int = 8) -> float:
    """The ALiBi slope of head ``head`` (1-based) of ``heads``, from the library."""
    return float(alibi_slopes(heads)[head - 1])


c1 = MultipleChoice(
    "c1",
    prompt=N_("How does ALiBi tell a head where query i and key j stand?"),
    choices=(
        Choice(
            "a",
            N_(
                "It subtracts m·(i − j) from query i's score for key j, each head with its own fixed "
                "slope m."
            ),
            why=N_(
                "ALiBi's bias is a straight line in the distance, −m·(i − j), one fixed slope per "
                "head, zero parameters; the causal mask hides the keys after the query (section 1)."
            ),
        ),
        Choice(
            "b",
            N_(
                "It adds the vector (m_1·i, ..., m_H·i) to the word embedding of the token at position i."
            ),
            why=N_(
                "ALiBi never touches the word vectors: the embeddings go into the model unchanged. "
                "The numbers m·j can be read as a table of position vectors (the deep dive ALiBi "
                "in real code), "
                "but they are added to the attention scores, not to the words (section 1)."
            ),
        ),
        Choice(
            "c",
            N_("It lowers each score by a penalty inversely proportional to the distance i − j."),
            why=N_(
                "A common tutorial claim, which the chapter's myth box corrects: the penalty is "
                "proportional to the distance. Doubling the distance doubles it, and penalty / "
                "distance is m at every distance (section 1)."
            ),
        ),
        Choice(
            "d",
            N_(
                "It learns one bias per bucket of distances, a table of parameters shared by the "
                "layers."
            ),
            why=N_(
                "That is T5's relative bias of chapter 4. ALiBi learns nothing: its bias is a fixed "
                "line whose slopes are set before training (sections 1 and 2)."
            ),
        ),
    ),
    answer="a",
    section=N_("section 1 of this chapter (and its myth box)"),
)

c2 = Numeric(
    "c2",
    prompt=N_("An ALiBi model has 8 heads. What is the slope m of head 1, the steepest?"),
    answer=lambda: float(alibi_slopes(8)[0]),  # head 1 of 8
    rel_tol=0.01,
    why=N_(
        "m_h = 2^(−8h/H) for head h of H; for H = 8 that is 2^(−h), so head 1 has m = 2^(−1) = 1/2 "
        "(section 2: the ladder runs 1/2, 1/4, ..., 1/256)."
    ),
    mistakes=(
        Mistake(
            _slope(8),
            N_(
                "1/256 is the slope of head 8, the flattest; the question asks for head 1, the "
                "steepest, at the other end of the ladder (section 2)."
            ),
        ),
        Mistake(
            1 / 8,
            N_("1/8 is 1/H, or head 3's slope. Put h = 1 and H = 8 into the ladder of section 2."),
        ),
        Mistake(
            1.0,
            N_(
                "a slope of 1 would be 2^0, i.e. h = 0; the heads are counted from h = 1 (section 2)."
            ),
        ),
    ),
    section=N_("section 2 of this chapter"),
    answer_keys=("2^(−1)", "2^(-1)", "1/2 for 8 heads", "= 1/2"),
)

c3 = Numeric(
    "c3",
    prompt=N_(
        "Head 2 of an 8-head ALiBi model has slope m = 1/4. With equal content scores, at what "
        "distance (in tokens) has its bias cut a key's attention weight by a factor of 10? "
        "Answer to one decimal."
    ),
    answer=lambda: math.log(10) / float(alibi_slopes(8)[1]),  # head 2 of 8
    rel_tol=0.03,
    decimals=1,  # "to one decimal": 9.2 or 9.21 passes, 9 does not
    answer_keys=("ln(10) / m", "ln(10)/m", "4 · ln 10", "4 ln 10", "4·ln(10)", "m·d = ln 10"),
    unit=N_("tokens"),
    why=N_(
        "d = ln(10) / m = 4 · ln 10 ≈ 9.2 tokens, the head's effective window: the weight at "
        "distance d is e^(−m·d) times the weight at distance 0, a factor 10 lower when m·d = ln 10 "
        "(section 3's table)."
    ),
    mistakes=(
        Mistake(
            1 / _slope(2),
            N_(
                "1/m = 4 is where the weight has fallen by a factor e, not 10: redo section 3's "
                "working with the factor the question asks for."
            ),
        ),
        Mistake(
            10.0,
            N_(
                "10 is the first whole distance at which the weight is below a tenth (section 3's "
                "table); the factor is exactly 10 somewhat earlier, at a distance that need not be "
                "whole."
            ),
        ),
        Mistake(
            math.log(2) / _slope(2),
            N_(
                "ln(2)/m ≈ 2.8 is where the weight has halved; the question asks for a factor of 10 "
                "(section 3)."
            ),
        ),
        Mistake(
            math.log(10) * _slope(2),
            N_(
                "m · ln 10 ≈ 0.58 has the slope upside down: a flatter head (smaller m) looks further, "
                "so its window must grow as m shrinks (section 3)."
            ),
        ),
        Mistake(
            math.log(10),
            N_(
                "ln 10 ≈ 2.3 is the distance at which a slope of 1 would cut the weight tenfold: this "
                "head's slope is 1/4, and the bias grows with m · d (section 3)."
            ),
        ),
    ),
    section=N_("section 3 of this chapter"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "In an 8-head ALiBi model, one key beats every other key on content by a = 5 (before the "
        "bias it would get e^5 ≈ 148 times their weight). Which statement about that key is true?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Beyond a few tokens no head can give it any attention: ALiBi's bias masks far keys."
            ),
            why=N_(
                "Nothing is masked but the future: the flattest head (m = 1/256) still gives the "
                "key 0.012 of its weight 1000 tokens back, less than plain attention's 0.068 but "
                "not zero (section 6)."
            ),
        ),
        Choice(
            "b",
            N_("Training adjusts each head's slope until far keys are no longer penalised."),
            why=N_(
                "The slopes are fixed before training and never learned (section 2); training can "
                "only fight the prior by making content scores larger than m·d (section 6)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The bias lowers its weight at every distance, near keys included, compared with no "
                "ALiBi."
            ),
            why=N_(
                "Near the query the bias helps it: fewer competitors survive the penalty, so the "
                "key wins more weight than without ALiBi (0.98 against 0.068 at distance 1 in head 1). "
                "Only far away does the penalty hurt (section 6)."
            ),
        ),
        Choice(
            "d",
            N_(
                "The bias cancels its advantage at a distance a/m: 10 tokens in head 1, 1280 in head "
                "8."
            ),
            why=N_(
                "ALiBi's bias m·d equals the content advantage a at d = a/m, so each head has its "
                "own reach, from 10 to 1280 tokens here. This recency prior is fixed before training "
                "(section 6)."
            ),
        ),
    ),
    answer="d",
    section=N_("section 6 of this chapter"),
)

CONCEPTS = (c1, c2, c3, c4)
