"""What the chapters' ``diagnose`` methods share: naming the usual mistake an answer matches.

A question lists its usual mistakes as (the value the mistake gives, the sentence that names it),
recomputed for the case at hand; the first one the answer matches is named (``named_mistake``). An
answer that is a list of indices and matches none is told how many it has too many or too few
(``extra_or_missing``). The expected answer is never shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable


def named_mistake(
    mistakes: Iterable[tuple[object, str]], matches: Callable[[object], bool], lead="Close, but "
) -> str | None:
    """``lead`` + the sentence of the first mistake whose value ``matches``, or None."""
    for wrong, sentence in mistakes:
        if matches(wrong):
            return lead + sentence
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
