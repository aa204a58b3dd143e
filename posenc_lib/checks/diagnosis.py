"""What the chapters' ``diagnose`` methods share: naming the usual mistake an answer matches.

A question lists its usual mistakes as (the value the mistake gives, the sentence that names it),
recomputed for the case at hand; the first one the answer matches is named (``named_mistake``). An
answer that is a list of indices and matches none is told how many it has too many or too few
(``extra_or_missing``). The expected answer is never shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from posenc_lib.i18n import N_
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

CLOSE_BUT = N_("Close, but ")


def named_mistake(
    mistakes: Iterable[tuple[object, str]], matches: Callable[[object], bool], lead=CLOSE_BUT
) -> str | None:
    """``lead`` + the sentence of the first mistake whose value ``matches``, or None.

    Both are shown in the language in use: a sentence marked ``N_`` (or already translated with
    ``_``/``tr``) and a ``lead`` marked ``N_`` are translated here.
    """
    for wrong, sentence in mistakes:
        if matches(wrong):
            return translate(lead) + translate(sentence)
    return None


def extra_or_missing(
    got: Iterable[int],
    want: Iterable[int],
    extra: Callable[[int], str],
    missing: Callable[[int], str],
) -> str:
    """What is off in a list of indices, by count: ``extra(n)`` for the n indices of ``got`` that
    ``want`` lacks, or, when there are none, ``missing(n)`` for the n of ``want`` that ``got`` left out."""
    got, want = set(got), set(want)
    n_extra = len(got - want)
    return extra(n_extra) if n_extra else missing(len(want - got))


# How a formula may be spelled: the same expression written with other signs or spaces.
_SPELLINGS = {
    "**": "^",
    "·": "*",
    "×": "*",
    "−": "-",
    "√": "sqrt",
    "`": "",
    "torch.": "",
    "math.": "",
}
_NUMBER = re.compile(r"[-+]?(\d[\d,]*\.?\d*|\.\d+)([eE][-+]?\d+)?")


def _folded(text: str) -> str:
    """``text`` lower-cased, without spaces, with one spelling of each operator."""
    text = text.lower()
    for spelling, sign in _SPELLINGS.items():
        text = text.replace(spelling, sign)
    return "".join(text.split())


def leaked(message: str, keys: Iterable[str]) -> list[str]:
    """The answer keys that ``message`` gives away: an expression found in it (spaces, case and
    ``**``/``^`` aside), or a number found as a whole number in it ("9.21" is in "about 9.21 tokens",
    not in "19.21"; "500,000" and "500000" are the same)."""
    found = []
    for key in keys:
        if _NUMBER.fullmatch(key.strip()):
            want = float(key.strip().replace(",", ""))
            numbers = (m.group(0).replace(",", "") for m in _NUMBER.finditer(message))
            if any(_same_number(n, want) for n in numbers):
                found.append(key)
        elif _folded(key) in _folded(message):
            found.append(key)
    return found


def _same_number(text: str, want: float) -> bool:
    try:
        return float(text.rstrip(".")) == want
    except ValueError:
        return False
