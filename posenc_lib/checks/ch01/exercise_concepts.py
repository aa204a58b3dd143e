"""Chapter 1's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on a case the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about the ideas themselves.

- c1 (choice): is a layer that adds the mean of all rows to every row equivariant, invariant, or
  neither (the definition, applied to a layer the lecture does not show);
- c2 (choice): which words of a 4-word sentence keep their output under a causal mask when the two
  middle words swap;
- c3 (choice): whether position vectors that repeat (row t depends only on whether t is even) let
  attention notice a swap of two slots with the same vector;
- c4 (number): how many of the 120 orders of five different words give the same sentence vector
  when the encoder reads the output in slot 0 instead of the mean (equivariance against invariance of
  the readout; BERT's ``[CLS]`` is such a readout).

Each question has its own hint, a nudge toward the idea. The numeric answer is counted with the
library's ``self_attention``, not typed in; the tests measure every claim the choices' ``why`` make.
"""

from __future__ import annotations

import itertools
import math

from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

SENTENCE = "the cat saw a dog"  # c4: five different words


def _same_slot0(words: list[str], tol: float = 1e-5) -> int:
    """How many orders of ``words`` give section 3's toy attention the same output in slot 0 as the
    original order (no positions), counted with the library's ``self_attention``."""
    from posenc_lib import self_attention
    from posenc_lib.analysis.ch01_order import toy_projections, word_vectors

    weights = toy_projections()
    x = word_vectors(words)  # (T, D)
    first = self_attention(x, *weights)[0][0]  # (D,)
    return sum(
        float((self_attention(x[list(order)], *weights)[0][0] - first).abs().max()) < tol
        for order in itertools.permutations(range(len(words)))
    )


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
            N_("Invariant: the mean of the rows forgets their order, so the output does too."),
            why=N_(
                "Only the mean forgets the order; the term X moves with the rows, so slot by slot "
                "f(PX) and f(X) differ. Invariance belongs to what forgets the rows' order "
                "altogether, like the pooled mean (section 3)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Neither: every output row depends on all the rows, so reordering mixes the words up."
            ),
            why=N_(
                "Self-attention also makes every output row depend on all the rows, and it is "
                "equivariant. What matters is whether reordering the input only reorders the "
                "output: apply the definition f(PX) = P f(X) term by term (section 3)."
            ),
        ),
        Choice(
            "c",
            N_("Equivariant: every row gets the same added vector, so the rows move as X moves."),
            why=N_(
                "The mean of the rows does not depend on their order, and a vector added to every "
                "row moves with no row: P(1·m) = 1·m. So f(PX) = P f(X), the definition of section "
                "3, as for self-attention."
            ),
        ),
        Choice(
            "d",
            N_("Both: the mean term forgets the order and the X term keeps it, so f is both."),
            why=N_(
                "Both would need P f(X) = f(X) for every P, that is all output rows equal. Here "
                "row i still holds word i's own vector, so the outputs differ slot by slot "
                "(section 3: equivariant is not invariant)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 3 of the lecture"),
    hint=N_(
        "write f(PX) term by term: what does P do to the term X, and what to the mean of the "
        "rows? Then compare the result with P f(X) and with f(X)."
    ),
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
                '"man" keeps its output, but it is not alone: which other word sees the same set '
                "of words before and after the swap (section 6)?"
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
    hint=N_(
        "for each of the four words, write the set of words it may attend to (itself and the words "
        "before it), once before the swap and once after. A word's output changes only if its "
        "set changes."
    ),
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
    hint=N_(
        "write the new input as PX + PE and compare it with P(X + PE) = PX + P·PE: they are equal "
        "when P·PE = PE. Which rows of PE does this P swap, and what do they hold?"
    ),
)

c4 = Numeric(
    "c4",
    prompt=N_(
        "A sentence encoder with no position information uses section 3's self-attention, but "
        "instead of the mean of its outputs it keeps the output in slot 0 as the sentence vector. "
        'It reads the five different words of "the cat saw a dog" in each of their 120 orders. '
        "How many of these orders, the original included, give the same sentence vector as the "
        "original order (up to rounding)? Answer with a number, or an expression Python computes "
        'to one (such as 2 * 3); a string such as "3!" is not read.'
    ),
    answer=lambda: _same_slot0(SENTENCE.split()),
    rel_tol=0.001,
    why=N_(
        "Slot 0 holds the output of the word standing there, and by equivariance that output does "
        'not depend on how the other four are ordered: every order with "the" first gives the same '
        "vector, 4! = 24 of the 120. One slot is equivariant, not invariant like the mean (section 3)."
    ),
    mistakes=(
        Mistake(
            math.factorial(5),
            N_(
                "that holds for the mean, which forgets where the rows went; one slot holds the "
                "output of whichever word stands there, and the words do not all give the same "
                "output (section 3: equivariant is not invariant)."
            ),
        ),
        Mistake(
            1,
            N_(
                "not only the original: the output in slot 0 belongs to the word standing there, "
                "and that word's output does not depend on the order of the words after it "
                "(section 3)."
            ),
        ),
        Mistake(
            5,
            N_(
                "that counts the different vectors slot 0 can hold, one per word that can stand "
                "there; the question asks how many orders give the original's vector."
            ),
        ),
        Mistake(
            math.factorial(5) - math.factorial(4),
            N_(
                "that counts the orders that give a different vector; the question asks for those "
                "that give the same one, the original included."
            ),
        ),
        Mistake(
            math.factorial(3),
            N_(
                "that keeps two words in place; only the word in slot 0 must stay, and the others "
                "may stand in any order."
            ),
        ),
        Mistake(
            4,
            N_(
                "that counts the words after slot 0, not their orders: count the ways to arrange "
                "them."
            ),
        ),
    ),
    answer_keys=("4!", "4 !", "24"),
    section=N_("section 3 of the lecture"),
    hint=N_(
        "slot 0 holds the output of whichever word stands there. Which orders put the original "
        "first word there, and does that word's output depend on how the words after it are "
        "ordered?"
    ),
)


EXERCISE_CONCEPTS = (c1, c2, c3, c4)
