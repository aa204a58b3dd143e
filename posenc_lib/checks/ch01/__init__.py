"""Chapter 1's exercises: attention by hand, permutations, the equivariance gap, breaking it.

    from posenc_lib.checks.ch01 import q1, q2, q3, q4, q5, c1, c2, c3, c4
    q1.check(attention); q1.hint(); q1.solution()
    c1.ask(); c1.check(answer_c1)   # the concept questions (exercise_concepts.py), 1 point each

``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``; the exercises ask other
questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on cases the lecture
does not print.

The references are the library's own functions (``self_attention``, ``permutation_matrix``); the
sentences name the usual mistakes by recomputing them and comparing.
"""

from __future__ import annotations

from posenc_lib.checks.ch01.attention import Attention, Permutation
from posenc_lib.checks.ch01.causal_mask import UnchangedRows
from posenc_lib.checks.ch01.concepts import CONCEPTS
from posenc_lib.checks.ch01.equivariance import AddPositions, EquivarianceGap, _gap
from posenc_lib.checks.ch01.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch01.setting import _random_order

q1, q2, q3, q4, q5 = Attention(), Permutation(), EquivarianceGap(), AddPositions(), UnchangedRows()
QUESTIONS = (q1, q2, q3, q4, q5, *EXERCISE_CONCEPTS)

__all__ = [
    "CONCEPTS",
    "EXERCISE_CONCEPTS",
    "QUESTIONS",
    "_gap",
    "_random_order",
    "c1",
    "c2",
    "c3",
    "c4",
    "q1",
    "q2",
    "q3",
    "q4",
    "q5",
]
