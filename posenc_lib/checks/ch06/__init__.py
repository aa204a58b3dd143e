"""Chapter 6's exercises: RoPE in both layouts, the m - n invariance, the decay bound, and the
convention detective (weights made for one layout, run with the other), and the smallest base
whose slowest pair does not wrap within a context.

    from posenc_lib.checks.ch06 import q1, q2, q3, q4, q5
    q1.check(apply_rope); q1.hint(); q1.solution()

and four concept questions, c1 to c4 (``exercise_concepts``), answered with a value:
``c1.check(answer_c1)``. ``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``: the
exercises ask other questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on
numbers and cases the lecture does not print.

The references are the library's (``rope.apply_rope`` through ``ch06_rope.rotate``,
``ch06_rope.decay_bound``, ``ch06_rope.convert_projection``, ``ch06_beyond.smallest_base``); each usual mistake is recomputed and,
when the learner's answer matches it, named.
"""

from __future__ import annotations

from posenc_lib.checks.ch06.base import SmallestBase
from posenc_lib.checks.ch06.bound_and_layout import DecayBound, FixLayout
from posenc_lib.checks.ch06.concepts import CONCEPTS
from posenc_lib.checks.ch06.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch06.rotation import ApplyRope, SpreadAtOffset

q1, q2, q3, q4, q5 = ApplyRope(), SpreadAtOffset(), DecayBound(), FixLayout(), SmallestBase()
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
