"""Chapter 1's concept questions.

- c1: what reordering the words does to self-attention's outputs (they move with the words).
- c2: which outputs a causal mask keeps when the first two words swap (the last word's).
- c3: whether adding position vectors breaks equivariance (yes: they stay in their slots).
- c4: in how many orders of 5 different words a pooled sentence vector is the same (all 5! = 120).
"""

from __future__ import annotations

import math

from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

c1 = MultipleChoice(
    "c1",
    prompt=N_(
        'One self-attention layer with no position information reads "dog bites man", then "man '
        'bites dog" (the same three word vectors, the first and last swapped). What happens to '
        "its outputs?"
    ),
    choices=(
        Choice(
            "a",
            N_("Nothing at all: slot by slot, the outputs are exactly the same."),
            why=N_(
                "Slot 0 holds dog's output in one sentence and man's in the other, so slot by slot "
                "the outputs differ (by up to 0.57 in section 3). What stays the same is each "
                "word's own output, moved to the word's new slot."
            ),
        ),
        Choice(
            "b",
            N_(
                "Each word's output is the same as before, moved to the word's new slot: "
                "Attn(PX) = P·Attn(X)."
            ),
            why=N_(
                "Reordering the words reorders Q, K and V alike, so every score and every weight "
                "moves with its words: permutation equivariance, measured below 1e-5 in section 3."
            ),
        ),
        Choice(
            "c",
            N_(
                "Each word gets a new output, because it now reads the other words in another order."
            ),
            why=N_(
                "A weight depends only on how a query matches a key, never on where the key stands, "
                "so no word's output changes: section 3 measured every change below 1e-5."
            ),
        ),
        Choice(
            "d",
            N_(
                "Each word's output only moves, but the mean of the outputs (a pooled sentence vector) "
                "changes."
            ),
            why=N_(
                "A mean adds the rows up, and a sum does not care about the order of its terms: the "
                "pooled vector is the same for both sentences (below 1e-5 in section 3). It is "
                "permutation invariant."
            ),
        ),
    ),
    answer="b",
    section=N_("section 3 of the lecture"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "A causal mask lets word t attend only to words 0..t. With such a mask and no position "
        'information, attention reads "dog bites man", then "bites dog man" (the first two words '
        "swapped). Which words keep the output they had before the swap?"
    ),
    choices=(
        Choice(
            "a",
            N_("None of them: with a causal mask, attention knows the order of every word."),
            why=N_(
                '"man" keeps its output (the change is below 1e-5 in section 6): it attends to the '
                "same set of three words either way, and attention over a set cannot tell their "
                "order. A causal mask gives order only partly."
            ),
        ),
        Choice(
            "b",
            N_("All of them: with or without a mask, attention is blind to order."),
            why=N_(
                'The outputs of "bites" and "dog" change (by 3.4 and 3.3 in section 6): '
                '"bites" now comes first and sees only itself, and "dog" now also sees "bites". '
                "With a mask, a word sees which words came before it."
            ),
        ),
        Choice(
            "c",
            N_('Only "man": it sees the same set of words, {dog, bites, man}, in both sentences.'),
            why=N_(
                "Its query is the same and the set of keys and values it attends to is the same, "
                "only in another order, which attention cannot see: its change is below 1e-5, "
                "while the two swapped words change by 3.3 and 3.4 (section 6)."
            ),
        ),
        Choice(
            "d",
            N_('Only "dog" and "bites": each keeps its output and merely moves to its new slot.'),
            why=N_(
                'Those are the two outputs that change (by 3.3 and 3.4 in section 6): "bites" now '
                'comes first and sees only itself; "dog" now sees "bites" too. A word\'s output '
                "depends on the set of words before it, and that set changed for both."
            ),
        ),
    ),
    answer="c",
    section=N_("section 6 of the lecture"),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "Add a position vector to each slot, X → X + s·PE, where row t of PE depends only on the "
        "position t, then reorder the words. Is attention on the new input still permutation "
        "equivariant?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "No: the words move but the position vectors stay in their slots, so the gap grows "
                "with the strength s."
            ),
            why=N_(
                "P(X + s·PE) is not PX + s·PE, so attention sees a new input: the gap is 8.1e-03 at "
                "s = 0.01, 8.0e-02 at s = 0.1 and 6.6e-01 at s = 1 in section 5, growing in "
                "proportion to s while s is small."
            ),
        ),
        Choice(
            "b",
            N_(
                "Yes: adding a vector to every row of the input cannot change how attention treats "
                "a reordering."
            ),
            why=N_(
                "The words move but the position vectors stay in their slots, so the new input is "
                "not a reordering of the old one: the gap in section 5 is 8.1e-03 at s = 0.01 and "
                "6.6e-01 at s = 1, far above rounding."
            ),
        ),
        Choice(
            "c",
            N_(
                "Only when s is about 1 or more: smaller position vectors are lost in float32 rounding."
            ),
            why=N_(
                "Even s = 0.01 gives a gap of 8.1e-03 in section 5, more than 800 times the 1e-5 "
                "that rounding stays below without positions. A small position signal breaks the "
                "symmetry a little; it is not lost."
            ),
        ),
        Choice(
            "d",
            N_("No, and adding one and the same vector to every slot would break it just as well."),
            why=N_(
                "A vector that is the same in every slot moves with the words: P(X + C) = PX + C "
                "when all rows of C are equal, so attention stays equivariant. Only a vector that "
                "depends on the slot breaks the symmetry (section 5)."
            ),
        ),
    ),
    answer="a",
    section=N_("section 5 of the lecture"),
)

c4 = Numeric(
    "c4",
    prompt=N_(
        "A sentence encoder with no position information (the self-attention of section 3, then "
        "the mean of its outputs) reads a sentence of 5 different words. In how many orders of "
        "these 5 words, the original order included, does it give the same sentence vector "
        "(up to rounding)?"
    ),
    answer=lambda: math.factorial(5),
    rel_tol=0.001,
    why=N_(
        "In all of them: every order is a permutation P of the words, each output moves with its "
        "word, and the mean forgets the order. There are 5! = 5·4·3·2·1 = 120 orders, as "
        '"dog bites man" has 3! = 6 (section 3).'
    ),
    mistakes=(
        Mistake(
            1,
            N_(
                "Not only the original order: the encoder cannot see any reordering, because each "
                "output moves with its word and the mean forgets where the rows went (section 3). "
                "Count every order of the 5 words."
            ),
        ),
        Mistake(
            10,
            N_(
                "10 is the number of ways to swap two of the words; every order of the 5 words gives "
                "the same mean, not only a single swap. Count all the orders."
            ),
        ),
        Mistake(
            24,
            N_("24 = 4! counts the orders of 4 words; the sentence has 5 (section 3)."),
        ),
        Mistake(
            3125,
            N_(
                "3125 = 5^5 lets a word appear several times; an order of the sentence uses each of "
                "its 5 words exactly once."
            ),
        ),
    ),
    answer_keys=("5!", "5·4·3·2·1", "5 choices, then 4"),
    section=N_("section 3 of the lecture"),
)

CONCEPTS = (c1, c2, c3, c4)
