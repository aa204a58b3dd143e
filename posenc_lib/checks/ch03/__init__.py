"""Chapter 3's exercises: the sinusoidal table, its shift matrix, the direction gap, the base,
the four terms of a score.

    from posenc_lib.checks.ch03 import q1, q2, q3, q4, q5
    q1.check(sinusoidal_encoding); q1.hint(); q1.solution()

and four concept questions, c1 to c4 (``exercise_concepts``), answered with a value:
``c1.check(answer_c1)``. ``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``: the
exercises ask other questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on
numbers or cases the lecture does not print.

The references are the library's functions (``absolute.sinusoidal_encoding``,
``absolute.sinusoidal_shift_matrix``, ``sinusoid.direction_gap``, ``sinusoid.confusion``,
``ch03_add_concat.score_terms``); each usual mistake is recomputed and, when the learner's answer
matches it, named.
"""

from __future__ import annotations

from posenc_lib.checks.ch03.add_or_concat import ScoreTerms
from posenc_lib.checks.ch03.concepts import CONCEPTS
from posenc_lib.checks.ch03.direction_gap import DirectionGap
from posenc_lib.checks.ch03.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch03.smallest_base import SmallestBase
from posenc_lib.checks.ch03.table_and_shift import ShiftMatrix, SinusoidalTable

q1, q2, q3, q4 = SinusoidalTable(), ShiftMatrix(), DirectionGap(), SmallestBase()
q5 = ScoreTerms()
QUESTIONS = (q1, q2, q3, q4, q5, *EXERCISE_CONCEPTS)

__all__ = [
    "CONCEPTS",
    "EXERCISE_CONCEPTS",
    "QUESTIONS",
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
