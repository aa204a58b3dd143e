"""What the chapters' ``diagnose`` methods share: naming the usual mistake an answer matches.

A question lists its usual mistakes as (the value the mistake gives, the sentence that names it),
recomputed for the case at hand; the first one the answer matches is named (``named_mistake``). An
answer that is a list of indices and matches none is told how many it has too many or too few
(``extra_or_missing``). The expected answer is never shown.
"""

from __future__ import annotations

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
