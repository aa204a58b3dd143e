"""Chapter 1's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on a case the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (choice): is a layer that adds the mean of all rows to every row equivariant, invariant, or
  neither (the definition, applied to a layer the lecture does not show);
- c2 (choice): which words of a 4-word sentence keep their output under a causal mask when the two
  middle words swap;
- c3 (choice): whether position vectors that repeat (row t depends only on whether t is even) let
  attention notice a swap of two slots with the same vector;
- c4 (number): how many different sentences of six words, one of them twice, get the same pooled
  sentence vector.

The numeric answer and the named mistakes are computed, not typed in; the tests measure every claim
the choices' ``why`` make with the library's ``self_attention``.
"""

from __future__ import annotations

import itertools
import math

from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

SENTENCE = "the dog saw the cat run"  # c4: six words, "the" twice


def _orders(words: list[str]) -> int:
    """How many different word sequences use exactly these words (a repeated word counted as one)."""
    return len(set(itertools.permutations(words)))


c1 = MultipleChoice(
    "c1",
    prompt=N_(
        "A layer adds to every row the mean of all the rows: f(X) = X + 1·mean(X), where mean(X) is "
        "the average row and 1 a column of ones. Reorder the rows, X → PX. Is f permutation "
        "equivariant, permutation invariant, or neither?"
    ),
    choices=(
        Choice(
            "a",
            N_("Invariant: the mean forgets the order, so f(PX) = f(X)."),
            why=N_(
                "Only the mean forgets the order; the term X moves with the rows, so slot by slot "
                "f(PX) and f(X) differ. Invariance belongs to what forgets the rows' order "
                "altogether, like the pooled mean (section 3)."
            ),
        ),
        Choice(
            "b",
            N_("Neither: every output row depends on all the rows, which mixes up the words."),
            why=N_(
                "Self-attention also makes every output row depend on all the rows, and it is "
                "equivariant. What matters is whether reordering the input only reorders the "
                "output: apply the definition f(PX) = P f(X) term by term (section 3)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Equivariant: mean(PX) = mean(X), and each row gets the same vector, so "
                "f(PX) = PX + 1·mean(X) = P f(X)."
            ),
            why=N_(
                "The mean of the rows does not depend on their order, and a vector added to every "
                "row moves with no row: P(1·m) = 1·m. So f(PX) = P f(X), the definition of section "
                "3, as for self-attention."
            ),
        ),
        Choice(
            "d",
            N_("Both: its output is the same for every order, and it moves with the rows."),
            why=N_(
                "Both would need P f(X) = f(X) for every P, that is all output rows equal. Here "
                "row i still holds word i's own vector, so the outputs differ slot by slot "
                "(section 3: equivariant is not invariant)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 3 of the lecture"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "With a causal mask (word t attends only to words 0..t) and no position information, "
        'attention reads "the dog bites man", then "the bites dog man" (the two middle words '
        "swapped). Which words keep the output they had before the swap?"
    ),
    choices=(
        Choice(
            "a",
            N_("None of them: with a causal mask, attention knows the order of every word."),
            why=N_(
                "A word's output depends on its own query and the set of words it sees, 0..t, not "
                "on their order. Check each word: which set does it see before the swap, and "
                "which after (section 6)?"
            ),
        ),
        Choice(
            "b",
            N_('Only "man": the last word is the only one that sees every word.'),
            why=N_(
                '"man" keeps its output, but it is not alone: compare the set of words that "the" '
                "sees before and after the swap (section 6)."
            ),
        ),
        Choice(
            "c",
            N_('"dog" and "bites": each keeps its output and merely moves to its new slot.'),
            why=N_(
                'Those are the two that change: "bites" no longer sees "dog", and "dog" now sees '
                '"bites" too. Under the mask a word\'s output depends on the set of words before it '
                "(section 6)."
            ),
        ),
        Choice(
            "d",
            N_('"the" and "man": each sees the same set of words before and after the swap.'),
            why=N_(
                '"the" sees only itself both times, "man" sees all four words both times, and '
                "attention over a set cannot tell its order; the two swapped words see other sets "
                "(section 6)."
            ),
        ),
    ),
    answer="d",
    section=N_("section 6 of the lecture"),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "A position table repeats two vectors: row t is u for even t and w for odd t (u ≠ w). Add it "
        'to the slots of "the dog bites man" (slots 0 to 3), then swap the words in slots 0 and 2: '
        '"bites dog the man". With no mask, does any word\'s output change, beyond rounding?'
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Yes, every word's output: position vectors were added, and they break the symmetry."
            ),
            why=N_(
                "Position vectors break the symmetry only where the words land on a different "
                "vector. Compare the position vectors of the two slots that were swapped "
                "(section 5: PE stays in its slots while the words move)."
            ),
        ),
        Choice(
            "b",
            N_(
                "No: slots 0 and 2 hold the same vector u, so the new input is the old one with "
                "two rows swapped."
            ),
            why=N_(
                "P(X + PE) = PX + P·PE, and swapping two rows that are both u leaves PE as it "
                "was: PX + PE = P(X + PE), a mere reordering, so each output moves with its word "
                "(sections 3 and 5)."
            ),
        ),
        Choice(
            "c",
            N_("Only the outputs of the two swapped words; the other two see the same words."),
            why=N_(
                "With no mask every word sees every word, so if the input changed, every output "
                "would. Ask instead whether the input changed at all: which position vectors sit "
                "in the two swapped slots (section 5)?"
            ),
        ),
        Choice(
            "d",
            N_("No: attention is blind to order, whatever is added to its input."),
            why=N_(
                "Attention is blind to order only when its input is a reordering of the old one: "
                "section 5's position vectors break the symmetry. Here the reason is the table "
                "itself; a swap of slots 0 and 1 would change every output."
            ),
        ),
    ),
    answer="b",
    section=N_("sections 3 and 5 of the lecture"),
)

c4 = Numeric(
    "c4",
    prompt=N_(
        "A sentence encoder with no position information (section 3's self-attention, then the "
        'mean of its outputs) reads "the dog saw the cat run": six words, "the" twice. How many '
        "different sentences, the original included, use exactly these six words and get the same "
        "sentence vector (up to rounding)?"
    ),
    answer=lambda: _orders(SENTENCE.split()),
    rel_tol=0.001,
    why=N_(
        "Every reordering gives the same vector: each output moves with its word and the mean "
        'forgets the order. The 6! = 720 orders count each sentence twice (the two "the" '
        "swapped), so there are 720 / 2 = 360 different sentences (section 3)."
    ),
    mistakes=(
        Mistake(
            math.factorial(6),
            N_(
                'you counted the orders of six different words; the two "the" are the same word, '
                "and swapping them gives back the same sentence."
            ),
        ),
        Mistake(
            1,
            N_(
                "not only the original: the encoder cannot see any reordering, because each output "
                "moves with its word and the mean forgets where the rows went (section 3)."
            ),
        ),
        Mistake(
            math.factorial(5),
            N_(
                'you counted the orders of five words; the sentence has six, "the" in two of its '
                "slots (section 3)."
            ),
        ),
        Mistake(
            math.comb(6, 2),
            N_(
                "that counts the ways to swap two of the words; every order gives the same mean, "
                "not only a single swap (section 3)."
            ),
        ),
        Mistake(
            6**6,
            N_(
                "that lets a word appear any number of times; a reordering uses each of the six "
                "words exactly as often as the sentence does."
            ),
        ),
    ),
    answer_keys=("720 / 2", "6! / 2", "6!/2", "6!/2!"),
    section=N_("section 3 of the lecture"),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
