"""Chapter 3's exercises: the sinusoidal table, its shift matrix, the direction gap, the base,
the four terms of a score.

    from posenc_lib.checks.ch03 import q1, q2, q3, q4, q5
    q1.check(sinusoidal_encoding); q1.hint(); q1.solution()

The references are the library's functions (``absolute.sinusoidal_encoding``,
``absolute.sinusoidal_shift_matrix``, ``sinusoid.direction_gap``, ``sinusoid.confusion``,
``ch03_add_concat.score_terms``); each usual mistake is recomputed and, when the learner's answer
matches it, named.
"""

from __future__ import annotations

from posenc_lib.checks.ch03.add_or_concat import ScoreTerms
from posenc_lib.checks.ch03.direction_gap import DirectionGap
from posenc_lib.checks.ch03.smallest_base import SmallestBase
from posenc_lib.checks.ch03.table_and_shift import ShiftMatrix, SinusoidalTable

q1, q2, q3, q4 = SinusoidalTable(), ShiftMatrix(), DirectionGap(), SmallestBase()
q5 = ScoreTerms()
QUESTIONS = (q1, q2, q3, q4, q5)
