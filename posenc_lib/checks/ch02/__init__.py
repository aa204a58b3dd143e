"""Chapter 2's exercises: the binary code, how uneven its steps are, the normalized code's
dependence on the sequence length, and how fast a real learned table's similarity fades.

    from posenc_lib.checks.ch02 import q1, q2, q3, q4
    q1.check(binary_encoding); q1.hint(); q1.solution()

The references are the library's own functions (``absolute.binary_encoding``,
``naive.neighbour_distances``, ``learned_table.first_offset_below``); the sentences name the usual
mistakes by recomputing them.
"""

from __future__ import annotations

from posenc_lib.checks.ch02.binary_code import BinaryCode, Unevenness
from posenc_lib.checks.ch02.learned_fade import _DRAWN, _KNOWN, FirstOffsetBelow, _answers
from posenc_lib.checks.ch02.normalized_gap import NormalizedGap

q1, q2, q3, q4 = BinaryCode(), Unevenness(), NormalizedGap(), FirstOffsetBelow()
QUESTIONS = (q1, q2, q3, q4)

__all__ = ["QUESTIONS", "_DRAWN", "_KNOWN", "_answers", "q1", "q2", "q3", "q4"]
