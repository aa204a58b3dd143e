"""Chapter 3's exercises: q3, the direction gap."""

from __future__ import annotations

import torch

from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.analysis.ch03_sinusoid import direction_gap
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, as_number, same_number
from posenc_lib.checks.ch03.setting import NOTEBOOK, _memo
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q3: the direction gap -------------------------------------------------------------------------------


def _gap_variant(table, kind):
    """The direction gap of a (T, D) float64 table, or a usual wrong variant of it."""
    n = table.shape[0]
    if kind == "roll":  # torch.roll wraps around the ends: pairs that are not k apart
        return max(
            float(((table * table.roll(-k, 0)).sum(-1) - (table * table.roll(k, 0)).sum(-1)).abs().max())
            for k in range(1, n)
        )  # fmt: skip
    if kind == "translation":  # compares t with t = 0 instead of ahead with behind
        gram = table @ table.T
        return max(float((gram.diagonal(k) - gram[0, k]).abs().max()) for k in range(1, n))
    if kind == "cosine":
        unit = table / table.norm(dim=-1, keepdim=True).clamp_min(1e-300)
        return direction_gap(unit)
    gram = table @ table.T  # (T, T)
    gaps = []
    last = {"k = 1": 1, "k short": (n - 1) // 2 - 1}.get(kind, (n - 1) // 2)
    for k in range(1, last + 1):
        if kind == "wrap behind":  # t from 0: gram[t, t - k] wraps to the end for t < k
            t = torch.arange(0, n - k)  # (n - k,)
            gaps.append(gram[t, t + k] - gram[t, t - k])
            continue
        end = n - k - (1 if kind == "short range" else 0)
        begin = k + (1 if kind == "t late" else 0)
        ahead = gram.diagonal(k)[begin:end]  # <PE_t, PE_t+k>
        behind = gram.diagonal(-k)[begin - k : end - k]  # <PE_t, PE_t-k>
        diff = ahead - behind
        if diff.numel() == 0:
            continue
        gaps.append(diff)
    if not gaps:  # no offset left to compare (a 3-row table with the largest offset skipped)
        return 0.0
    every = torch.cat(gaps)
    if kind == "mean":
        return float(every.abs().mean())
    if kind == "signed":
        return float(every.max())
    return float(every.abs().max())


_GAP_MISTAKES = ("roll", "mean", "signed", "k = 1", "translation", "cosine", "wrap behind",
                 "k short", "short range", "t late")  # fmt: skip


@_memo  # the search for a telling table takes up to a second
def _gap_tables(seed: int) -> tuple:
    """q3's tables for ``seed``: ((table, kind, size), ...), described by ``_describe``."""
    # Every draw holds, besides a sinusoidal table: a random one whose largest difference is
    # negative (so the sign matters); a ramp with an even T (its largest gaps use the largest
    # offset, where range(1, T // 2 + 1) runs into an offset with no position, and a wrapped
    # index pairs far rows); tables with a long last row and a long first row (the largest
    # gaps use t + k = T - 1, or t - k = 0); and the smallest table allowed, T = 3 (one offset,
    # one position: an empty range of k or of t gives 0).
    generator = draws.seeded(seed, 3)
    if seed == 0:
        n_sin, d_sin, base = 24, 8, 10000.0
        n_rand, d_rand = 9, 5
        n_ramp, d_ramp = 10, 3
        d_tiny = 4
    else:
        n_sin = draws.randint(25, 41, generator)
        d_sin = 2 * draws.randint(2, 9, generator)
        base = draws.pick([100.0, 1000.0, 10000.0], generator)
        n_rand = 2 * draws.randint(5, 9, generator) + 1  # 11 .. 17, odd
        d_rand = draws.randint(3, 9, generator)
        n_ramp, d_ramp = 2 * draws.randint(6, 9, generator), 2  # even
        d_tiny = draws.randint(5, 9, generator)
    sin_table = sinusoidal_encoding(n_sin, d_sin, base)  # float32, as a learner would build it
    # A random table, its rows reversed if need be so that its largest difference is
    # negative (reversing the rows swaps ahead and behind, so it flips every difference).
    random_table = torch.randn(n_rand, d_rand, generator=generator)  # float32
    if _gap_variant(random_table.double(), "signed") == direction_gap(random_table):
        random_table = random_table.flip(0)
    while True:  # a long last row: the largest gaps sit at the last t of an offset k > 1
        last_row = torch.randn(n_rand, d_rand, generator=generator)  # float32
        last_row[-1] *= 4
        want = direction_gap(last_row)
        # Reversed, it has a long first row, where "t late" gives what "short range" gives
        # here: that number must differ from the answer and from the other slips' numbers.
        pe = last_row.double()
        short, late = (_gap_variant(pe, k) for k in ("short range", "t late"))
        others = [_gap_variant(pe, k) for k in ("k = 1", "k short")]
        others.append(_gap_variant(pe.flip(0), "signed"))
        if abs(late - want) < 1e-9 * want and all(
            abs(short - w) > 0.02 * want for w in (want, *others)
        ):
            break
    first_row = last_row.flip(0)  # a long first row: the largest gaps use t - k = 0
    ramp = torch.arange(n_ramp, dtype=torch.float32)[:, None].expand(n_ramp, d_ramp).clone()
    ramp = ramp + 0.1 * torch.randn(n_ramp, d_ramp, generator=generator)
    while True:  # T = 3: one offset (k = 1) and one position (t = 1)
        tiny = torch.randn(3, d_tiny, generator=generator)  # float32
        if direction_gap(tiny) > 0.5:
            break
    return (
        (sin_table, "sinusoidal", (n_sin, d_sin, base)),
        (ramp, "ramp", (n_ramp, d_ramp)),
        (last_row, "last row", (n_rand, d_rand)),
        (first_row, "first row", (n_rand, d_rand)),
        (random_table, "random", (n_rand, d_rand)),
        (tiny, "tiny", (3, d_tiny)),
    )


def _describe(kind: str, size: tuple) -> str:
    """A q3 table's description, in the language in use (built when shown, not memoized)."""
    if kind == "sinusoidal":
        n, d, base = size
        return f"table = sinusoidal_encoding({n}, {d}, {base:g})"
    n, d = size
    if kind == "ramp":
        return tr("table = a ({n}, {d}) table whose row t is about (t, t, ...)", n=n, d=d)
    if kind == "last row":
        return tr("table = a random ({n}, {d}) table with a long last row", n=n, d=d)
    if kind == "first row":
        return tr("table = a random ({n}, {d}) table with a long first row", n=n, d=d)
    if kind == "random":
        return tr("table = a random ({n}, {d}) table", n=n, d=d)
    return tr("table = a random ({n}, {d}) table, the smallest allowed", n=n, d=d)


_WRAPS = N_(
    "your pairs wrap around the ends of the table (torch.roll does that, and so does a negative "
    "index t - k, which counts from the end): near the ends t gets paired with rows that are not k "
    "steps away. Keep only the t with both t - k and t + k inside the table, t = k .. T - 1 - k."
)


class DirectionGap(Question):
    name, function, points, notebook = "q3", "direction_gap", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "gram[t, t + k] - gram[t, t - k]",
        "torch.arange(k, n - k)",
        "G[t, t + k] - G[t, t - k]",
    )
    returns, references = FLOAT, ("posenc_lib.analysis.ch03_sinusoid.direction_gap",)
    title = N_("Measure whether a position table has a direction")
    hints = (
        N_("G = table @ table.T holds every dot product: G[t, s] = <PE_t, PE_s>."),
        N_(
            "The check's six tables: a sinusoidal one (a gap at rounding level), one that grows with "
            "t (T even), a random one with its last row scaled by 4, whose largest gaps use that row "
            "(t + k = T - 1), the same one upside down (its largest gaps use row 0, t - k = 0), "
            "another random one, and one with T = 3 (one offset, one position). Your ranges of k "
            "and t must reach both ends of the table."
        ),
        N_(
            "For each k from 1 to (T - 1) // 2, the positions t with both t - k and t + k in the table "
            "are t = k .. T - 1 - k. Compare G[t, t + k] with G[t, t - k] for those t."
        ),
        N_(
            "Keep the largest absolute difference over all k and t, and return it as a float. "
            "G.diagonal(k) lists G[t, t + k] for t = 0, 1, ...; slice it to the t you need."
        ),
    )

    def cases(self, seed=0):
        return [
            Case((table.clone(),), _describe(kind, size)) for table, kind, size in _gap_tables(seed)
        ]

    def diagnose(self, case, value):
        (table,) = case.args
        got, problem = as_number(value, N_("The direction gap"))
        if problem:
            return problem
        pe = table.double()
        want = direction_gap(pe)
        if same_number(got, want, atol=1e-5):
            return None
        if pe.shape[0] == 3 and abs(got) < 1e-9 and want > 1e-3:
            return _(
                "Your gap is 0 for a 3-row table, the smallest the question allows: there the one offset k = 1 and the one position t = 1 count (rows 0, 1, 2). Does your range of k, or of t, come out empty for T = 3?"
            )
        if got == 0.0 or (abs(got) < 1e-9 and want > 1e-3):
            return _(
                "Your gap is 0 for a table that has a direction. If you compared <PE_t, PE_(t+k)> with <PE_(t+k), PE_t>: a dot product does not care about the order of its two vectors, so that difference is 0 for every table and proves nothing. Compare position t's dot product with the one k steps ahead and with the one k steps behind."
            )
        mistakes = [
            ("roll", _WRAPS),
            ("mean", N_("the gap is the largest absolute difference, not the mean.")),
            ("signed", N_("take the absolute value before the max: a difference of -0.3 counts as much as +0.3.")),
            ("k = 1", N_("you only tried k = 1; try every offset k = 1 .. (T - 1) // 2.")),
            ("translation", N_("you compared <PE_t, PE_(t+k)> with <PE_0, PE_k>: that tests whether the dot product depends on t. The question compares the neighbour k steps ahead with the one k steps behind, from the same t.")),
            ("cosine", N_("you normalised the vectors (cosine similarity); the question asks about the plain dot product <PE_t, PE_s>.")),
            ("k short", N_("your offsets stop one short: k runs from 1 up to (T - 1) // 2, included (for an odd T, range(1, T // 2) misses the last one).")),
            ("wrap behind", _WRAPS),
            ("short range", N_("your range of t stops one short: t runs from k up to T - 1 - k, included.")),
            ("t late", N_("your range of t starts one late: t runs from k (where t - k = 0, the first row) up to T - 1 - k.")),
        ]  # fmt: skip
        named = named_mistake(
            ((_gap_variant(pe, kind), sentence) for kind, sentence in mistakes),
            lambda wrong: same_number(got, wrong, atol=1e-5),
        )
        if named:
            return named
        if got < 0:
            return _("A gap is a size: it cannot be negative.")
        return _(
            "Your gap differs from the largest |<PE_t, PE_(t+k)> - <PE_t, PE_(t-k)>| over t and k; check which pairs of rows you compare."
        )
