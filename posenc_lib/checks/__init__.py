"""Exercise checks that answer like a tutor: ``q1.check(fn)``, ``q1.hint()``, ``q1.solution()``.

What is where:
- ``question.py``: ``Question`` and ``Case`` (a check runs the learner's function, then judges),
  ``scorecard`` for a whole chapter.
- ``verdicts.py``: ``Verdict`` and ``Scorecard``, shown once in a notebook.
- ``concepts.py``: concept questions (``MultipleChoice``, ``Numeric``): a chapter's questions on its
  ideas, answered with a letter or a number in ``answer_cN``, graded like the coding ones.
- ``answers.py``: the answer types a question asks for (FLOAT, TENSOR...), the type policy, and
  the one home of reading and comparing a learner's value (``as_tensor``, ``close``...).
- ``solutions.py``: the worked solutions, read from the course's solutions notebooks.
- ``run.py`` (with ``timing.py``, ``references.py``, ``guard.py``, ``isolation.py``): calling a
  learner's function on copies of the inputs, under a time limit, with the library switched off.
- ``draws.py``, ``diagnosis.py``: what the chapters' questions share (seeded draws; naming the
  usual mistake an answer matches).
- ``chNN``: each chapter's questions, ``from posenc_lib.checks.ch01 import QUESTIONS, q1, ...``.
"""

from __future__ import annotations

from posenc_lib.checks import run
from posenc_lib.checks.answers import (
    ASKED,
    FLOAT,
    FLOATS,
    INDEX_LIST,
    INT,
    INT_TENSOR,
    TENSOR,
    as_floats,
    as_index_list,
    as_int,
    as_number,
    as_tensor,
    close,
    kind_of,
    near,
    not_finite,
    same_number,
    type_problem,
)
from posenc_lib.checks.concepts import Choice, Concept, Mistake, MultipleChoice, Numeric
from posenc_lib.checks.question import (
    MAX_MESSAGE,
    TIMEOUT_SECONDS,
    Case,
    Question,
    scorecard,
)
from posenc_lib.checks.run import NOT_ATTEMPTED, Collected, Outcome, TooMany, call, hard_limit
from posenc_lib.checks.solutions import solution_code
from posenc_lib.checks.verdicts import FAIL, PASS, Scorecard, Verdict

__all__ = [
    "ASKED",
    "FAIL",
    "FLOAT",
    "FLOATS",
    "INDEX_LIST",
    "INT",
    "INT_TENSOR",
    "MAX_MESSAGE",
    "NOT_ATTEMPTED",
    "PASS",
    "TENSOR",
    "TIMEOUT_SECONDS",
    "Case",
    "Choice",
    "Collected",
    "Concept",
    "Mistake",
    "MultipleChoice",
    "Numeric",
    "Outcome",
    "Question",
    "Scorecard",
    "TooMany",
    "Verdict",
    "as_floats",
    "as_index_list",
    "as_int",
    "as_number",
    "as_tensor",
    "call",
    "close",
    "hard_limit",
    "kind_of",
    "near",
    "not_finite",
    "run",
    "same_number",
    "scorecard",
    "solution_code",
    "type_problem",
]
