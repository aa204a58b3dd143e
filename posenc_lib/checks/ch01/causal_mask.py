"""Chapter 1's exercises: q5, which outputs a causal mask keeps when two words swap."""

from __future__ import annotations

from posenc_lib.checks import draws
from posenc_lib.checks.answers import INDEX_LIST, as_index_list
from posenc_lib.checks.ch01.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import extra_or_missing
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q5: what the causal mask keeps ------------------------------------------------------------------


class UnchangedRows(Question):
    name, function, points, notebook = "q5", "unchanged_rows", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "t < min(i, j) or t > max(i, j)",
        "t < first or t > last",
        "list(range(T))",
    )
    returns, references = INDEX_LIST, ()  # reasoning, not a computation the library does
    title = N_("Which outputs does a causal mask keep when two words swap?")
    hints = (
        N_(
            "With a causal mask, row t of the output depends on the word at t and the *set* of "
            "words at positions 0..t."
        ),
        N_(
            "Ask, for each row t, whether the swap changes the word at t or the set of words at 0..t."
        ),
        N_(
            "Sort the rows into four groups: before both swapped positions, the two swapped positions "
            "themselves, between them, and after both; answer the question of hint 2 once per group, "
            "and treat i == j on its own."
        ),
    )

    def cases(self, seed=0):
        # Every draw holds each shape of the question: rows before, between and after the pair,
        # i < j and i > j; i == j; a pair at the start (i or j = 0) and at the end (T - 1).
        if seed == 0:
            return [
                Case(t, f"T = {t[0]}, i = {t[1]}, j = {t[2]}")
                for t in [(5, 1, 3), (4, 0, 1), (6, 4, 1), (3, 2, 2), (25, 21, 9), (7, 5, 6)]
            ]
        generator = draws.seeded(seed, 6)

        triples = []
        for flip in (False, True):  # at least one row before, three between, one after
            n = draws.randint(8, 14, generator)
            low = draws.randint(1, n - 4, generator)
            high = draws.randint(low + 3, n - 1, generator)
            triples.append((n, high, low) if flip else (n, low, high))
        n = draws.randint(7, 13, generator)
        triples.append((n, *[draws.randint(1, n - 1, generator)] * 2))  # i == j
        n = draws.randint(21, 41, generator)
        triples.append(
            (n, 0, draws.randint(2, n - 1, generator))
        )  # from the first word, in a sentence past 20 words
        n = draws.randint(7, 13, generator)
        triples.append((n, n - 1, n - 2))  # the last two words, i > j
        return [Case(t, f"T = {t[0]}, i = {t[1]}, j = {t[2]}") for t in triples]

    def diagnose(self, case, value):
        n, i, j = case.args
        got, problem = as_index_list(value, N_("Your answer"), n, _outside(n))
        if problem:
            return problem
        got = {int(r) for r in got}
        note = _(" (Here i > j.)") if i > j else ""
        want = {t for t in range(n) if t < min(i, j) or t > max(i, j) or i == j}
        if got == want:
            return None
        if i == j and got != set(range(n)):
            return _("When i == j nothing is swapped: no row can change.")
        between = {t for t in range(n) if min(i, j) < t < max(i, j)}
        if between and between <= got:
            return _("Rows between the two swapped words see a different set of earlier words after the swap, so their outputs change.") + note  # fmt: skip
        if {t for t in want if t > max(i, j)} - got:
            return _("A row after both swapped words attends to the same set of words, only in another order, and attention cannot tell order: those rows do not change.") + note  # fmt: skip
        if {min(i, j), max(i, j)} & got:
            return _("The rows of the two swapped words change: each now holds the other word, so it asks with a different query, even where it sees the same set of words.") + note  # fmt: skip
        return extra_or_missing(
            got,
            want,
            lambda extra: (tr("{extra} of your rows does change when the words swap.", extra=extra) if extra == 1 else tr("{extra} of your rows do change when the words swap.", extra=extra)) + note,
            lambda missing: (tr("You left out {missing} row that does not change.", missing=missing) if missing == 1 else tr("You left out {missing} rows that do not change.", missing=missing)) + note,
        )  # fmt: skip


def _outside(n):
    """The sentence for row numbers outside 0 .. n - 1 (the first five of them shown)."""

    def sentence(outside):
        shown = ", ".join(map(str, outside[:5])) + (", ..." if len(outside) > 5 else "")
        return tr(
            "Row numbers run from 0 to T - 1 = {last}; yours include {shown}.",
            last=n - 1,
            shown=shown,
        )

    return sentence
