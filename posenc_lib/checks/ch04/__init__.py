"""Chapter 4's exercises: the diagonal spread, Shaw's relative logits, T5's buckets, T5's bias,
encoder–decoder attention.

    from posenc_lib.checks.ch04 import q1, q2, q3, q4, q5
    q1.check(diagonal_spread); q1.hint(); q1.solution()

and four concept questions, c1 to c4 (``exercise_concepts``), answered with a value:
``c1.check(answer_c1)``. ``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``: the
exercises ask other questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on
numbers or cases the lecture does not print.

The references are the library's functions (``toeplitz.diagonal_spread``,
``ch04_relative.shaw_logits``, ``relative.t5_relative_position_bucket``,
``relative.RelativePositionBias``' convention, ``ch04_encdec.cross_attention``); each usual mistake is recomputed and, when the
learner's answer matches it, named.
"""

from __future__ import annotations

from posenc_lib.checks.ch04.concepts import CONCEPTS
from posenc_lib.checks.ch04.cross_attention import CrossAttention
from posenc_lib.checks.ch04.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch04.spread_and_shaw import DiagonalSpread, ShawLogits
from posenc_lib.checks.ch04.t5_buckets import RelativeBias, T5Bucket

q1, q2, q3, q4 = DiagonalSpread(), ShawLogits(), T5Bucket(), RelativeBias()
q5 = CrossAttention()
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
