"""Chapter 5's exercises: ALiBi slopes for any head count, the causal bias, a head's window, and
how much attention reaches past a distance.

    from posenc_lib.checks.ch05 import q1, q2, q3, q4
    q1.check(alibi_slopes); q1.hint(); q1.solution()

and four concept questions, c1 to c4 (``exercise_concepts``), answered with a value:
``c1.check(answer_c1)``. ``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``: the
exercises ask other questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on
numbers the lecture does not print. A chapter that splits them the same way defines both tuples;
one whose exercises ask the lecture's quiz has ``CONCEPTS`` only.

The references are the library's own (``alibi_slopes``, ``alibi_bias``, ``analysis.ch05_alibi``); the
sentences name the usual mistakes (slopes for the wrong head count, the sign flipped, the mask
missing or on the wrong side, log base 10, an off-by-one distance) by recomputing them.
"""

from __future__ import annotations

from posenc_lib.checks.ch05.concepts import CONCEPTS
from posenc_lib.checks.ch05.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch05.reach import FarAttention, Window, _beyond
from posenc_lib.checks.ch05.slopes_and_bias import CausalBias, Slopes, _bias

q1, q2, q3, q4 = Slopes(), CausalBias(), Window(), FarAttention()
QUESTIONS = (q1, q2, q3, q4, *EXERCISE_CONCEPTS)

__all__ = [
    "CONCEPTS",
    "EXERCISE_CONCEPTS",
    "QUESTIONS",
    "_beyond",
    "_bias",
    "c1",
    "c2",
    "c3",
    "c4",
    "q1",
    "q2",
    "q3",
    "q4",
]
