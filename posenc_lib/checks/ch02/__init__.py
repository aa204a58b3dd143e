"""Chapter 2's exercises: the binary code, how uneven its steps are, the normalized code's
dependence on the sequence length, and how fast a real learned table's similarity fades.

    from posenc_lib.checks.ch02 import q1, q2, q3, q4
    q1.check(binary_encoding); q1.hint(); q1.solution()

and four concept questions, c1 to c4 (``exercise_concepts``), answered with a value:
``c1.check(answer_c1)``. ``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``: the
exercises ask other questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on
numbers and cases the lecture does not print.

The references are the library's own functions (``absolute.binary_encoding``,
``naive.neighbour_distances``, ``learned_table.first_offset_below``); the sentences name the usual
mistakes by recomputing them.
"""

from __future__ import annotations

from posenc_lib.checks.ch02.binary_code import BinaryCode, Unevenness
from posenc_lib.checks.ch02.concepts import CONCEPTS
from posenc_lib.checks.ch02.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch02.learned_fade import _DRAWN, _KNOWN, FirstOffsetBelow, _answers
from posenc_lib.checks.ch02.normalized_gap import NormalizedGap

q1, q2, q3, q4 = BinaryCode(), Unevenness(), NormalizedGap(), FirstOffsetBelow()
QUESTIONS = (q1, q2, q3, q4, *EXERCISE_CONCEPTS)

__all__ = [
    "CONCEPTS",
    "EXERCISE_CONCEPTS",
    "QUESTIONS",
    "_DRAWN",
    "_KNOWN",
    "_answers",
    "c1",
    "c2",
    "c3",
    "c4",
    "q1",
    "q2",
    "q3",
    "q4",
]
