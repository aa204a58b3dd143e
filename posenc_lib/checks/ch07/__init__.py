"""Chapter 7's exercises: the NTK-aware base, YaRN's ramp and attention scale, which RoPE pairs turn a
full circle within the training length, and which pairs a trained model sees new scores on.

    from posenc_lib.checks.ch07 import q1, q2, q3, q4
    q1.check(ntk_base); q1.hint(); q1.solution()

and four concept questions, c1 to c4 (``exercise_concepts``), answered with a value:
``c1.check(answer_c1)``. ``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``: the
exercises ask other questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on
cases the lecture does not print.

The references are the library's (``rope_scaling.ntk_base``, ``yarn_ramp``,
``yarn_attention_scale``, ``full_turn_pairs``; ``ch07_extrapolation.new_score_pairs``); each usual
mistake is recomputed and, when the learner's answer matches it, named.
"""

from __future__ import annotations

from posenc_lib.checks.ch07.concepts import CONCEPTS
from posenc_lib.checks.ch07.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch07.ntk_and_yarn import NtkBase, YarnRampScale
from posenc_lib.checks.ch07.turns import FullTurnPairs, NewScorePairs

q1, q2, q3, q4 = NtkBase(), YarnRampScale(), FullTurnPairs(), NewScorePairs()
QUESTIONS = (q1, q2, q3, q4, *EXERCISE_CONCEPTS)

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
]
