"""What the Chinese-edition tests share: a Chinese character, and the numbers a text prints.

Imported by the test files beside it (pytest puts this folder on the path, as for
tests/checks/chapter_checks.py).
"""

from __future__ import annotations

import re
from collections import Counter

CJK = re.compile(r"[\u4e00-\u9fff]")  # a Chinese character (CJK Unified Ideographs)
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def numbers(text: str) -> Counter:
    """The numbers in ``text``, as a multiset: the same in both languages, whatever their order."""
    return Counter(NUMBER.findall(text))
