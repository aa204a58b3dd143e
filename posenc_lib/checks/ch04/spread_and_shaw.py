"""Chapter 4's exercises: q1, the diagonal spread; q2, Shaw's relative logits."""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch04_relative import diagonal_spread, offset_matrix, shaw_logits
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, TENSOR, as_number, as_tensor, close, same_number
from posenc_lib.checks.ch04.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import RAISED, Case, Question
from posenc_lib.i18n import N_, _, tr

# -- q1: the diagonal spread ----------------------------------------------------------------------------


def _spread(matrix, group="j - i", reduce="range", offsets=None):
    """The spread of ``matrix`` (T_q, T_k) by diagonal, or one of its usual wrong variants."""
    n_q, n_k = matrix.shape
    i, j = torch.arange(n_q)[:, None], torch.arange(n_k)[None, :]
    key = {"j - i": j - i, "i + j": i + j}[group].expand(n_q, n_k)
    wanted = sorted(set(key.flatten().tolist())) if offsets is None else offsets
    worst = 0.0
    for value in wanted:
        entries = matrix[key == value]
        if entries.numel() == 0:
            continue
        if reduce == "range":
            size = float(entries.max() - entries.min())
        elif reduce == "std":
            size = float(entries.std(unbiased=False))
        elif reduce == "from first":  # the largest distance from the diagonal's first entry
            size = float((entries - entries[0]).abs().max())
        elif reduce == "neighbours":  # the largest step between neighbouring entries
            size = float(entries.diff().abs().max()) if entries.numel() > 1 else 0.0
        else:  # "from mean": the largest distance from the diagonal's mean
            size = float((entries - entries.mean()).abs().max())
        worst = max(worst, size)
    return worst


def _toeplitz(n_q: int, n_k: int, generator) -> torch.Tensor:
    values = torch.randn(n_q + n_k - 1, generator=generator)  # one per offset
    return values[offset_matrix(n_q, n_k) + n_q - 1]  # (T_q, T_k)


class DiagonalSpread(Question):
    name, function, points, notebook = "q1", "diagonal_spread", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "matrix.diagonal(d)",
        "range(-(n_q - 1), n_k)",
        "diagonal.max() - diagonal.min()",
    )
    returns, references = FLOAT, ("posenc_lib.analysis.ch04_relative.diagonal_spread",)
    title = N_("How far is a score matrix from Toeplitz?")
    hints = (
        N_(
            "Entry (i, j) lies on the diagonal of offset j - i; `matrix.diagonal(d)` returns the "
            "entries (i, i + d), the diagonal of offset d."
        ),
        N_(
            "For a (T_q, T_k) matrix the offsets run from -(T_q - 1) (bottom-left corner) to "
            "T_k - 1 (top-right corner)."
        ),
        N_(
            "Loop over d in range(-(T_q - 1), T_k) (a few dozen diagonals: a Python loop is fine), "
            "keep the largest diagonal.max() - diagonal.min(), and turn it into a float with .item()."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 1)
        if seed == 0:
            n, (n_q, n_k), (m_q, m_k) = 5, (4, 7), (7, 3)
        else:  # larger: a square side, a wide and a tall shape (3 or more longer one way)
            n = draws.randint(8, 12, generator)
            n_q, m_k = draws.randint(6, 10, generator), draws.randint(6, 10, generator)
            n_k, m_q = n_q + draws.randint(3, 6, generator), m_k + draws.randint(3, 6, generator)
        cases = []
        values = torch.randn(2 * n - 1, generator=generator).sort().values  # one per offset
        # The largest value at offset -(n - 1), the smallest at offset 1 (n odd) or 2 (n even): no
        # anti-diagonal holds both (i + j has the parity of j - i), and no row or column does (they
        # span n consecutive offsets), so grouping by i + j, by rows or by columns never gives the
        # whole range, and each gives its own number.
        low = n if n % 2 else n + 1  # index of the smallest value: offset low - (n - 1)
        middle = values[1:-1]
        values = torch.cat([values[-1:], middle[: low - 1], values[:1], middle[low - 1 :]])
        toeplitz = values[offset_matrix(n) + n - 1]  # (n, n)
        cases.append(Case((toeplitz,), tr("a ({n}, {n}) Toeplitz matrix", n=n)))
        # Each matrix below is Toeplitz but for a few entries, placed so that each usual mistake
        # gives its own number: the spread then sits on a diagonal of the case's choosing.
        main = _toeplitz(n, n, generator)
        # The main diagonal reads c + 0.5, c - 1, c, c + 2, c, ...: spread 3 between entries that
        # are not neighbours (largest step 2), and 1.5 from its first entry.
        main[0, 0], main[1, 1], main[3, 3] = main[0, 0] + 0.5, main[1, 1] - 1.0, main[3, 3] + 2.0
        cases.append(Case((main,), tr("a ({n}, {n}) matrix, Toeplitz but for three entries", n=n)))
        hankel = values[torch.arange(n)[:, None] + torch.arange(n)[None, :]]  # constant on i + j
        cases.append(Case((hankel,), tr("a ({n}, {n}) matrix constant along anti-diagonals", n=n)))
        wide = _toeplitz(n_q, n_k, generator)
        wide[1, n_k - 1] += 3.0  # offset n_k - 2, past a square's diagonals: spread 3
        wide[2, 2] += 1.0  # the main diagonal: spread 1
        wide[0, 1] += 2.0  # offset 1, inside a square's diagonals: spread 2
        cases.append(
            Case(
                (wide,),
                tr("a ({n_q}, {n_k}) matrix, Toeplitz but for three entries", n_q=n_q, n_k=n_k),
            )
        )
        tall = _toeplitz(m_q, m_k, generator)
        tall[m_q - 1, 1] += 3.0  # offset 2 - m_q, below any diagonal of a (m_k, m_k) square
        tall[2, 1] += 1.0  # offset -1: spread 1
        cases.append(
            Case(
                (tall,),
                tr("a ({n_q}, {n_k}) matrix, Toeplitz but for two entries", n_q=m_q, n_k=m_k),
            )
        )
        return cases

    def diagnose(self, case, value):
        (matrix,) = case.args
        matrix = matrix.double()
        if isinstance(value, torch.Tensor) and value.numel() > 1:
            return tr(
                "Return one number, the largest spread over all diagonals; yours is a tensor of shape {shape} (perhaps one spread per diagonal: take the max).",
                shape=tuple(value.shape),
            )
        got, problem = as_number(value, N_("The spread"))
        if problem:
            return problem
        if same_number(got, diagonal_spread(matrix)):
            return None
        n_q, n_k = matrix.shape
        along_rows = N_(
            "you took max - min along each row (fixed i) or each column (fixed j); a Toeplitz matrix is constant along its diagonals, where j - i is fixed: take it along each diagonal, then the largest."
        )
        from_reference = N_(
            "you measured how far the entries lie from a reference value on each diagonal (its first entry, or its mean); the spread is max - min along it."
        )
        mistakes = [
            (_spread(matrix, group="i + j"), N_("you grouped entries by i + j, the anti-diagonals; a Toeplitz matrix is constant along the diagonals, where j - i is the same.")),
            (_spread(matrix, offsets=list(range(0, n_k))), N_("you skipped the diagonals below the main one (keys before the query, j < i).")),
            (_spread(matrix, offsets=list(range(-(n_q - 1), 1))), N_("you skipped the diagonals above the main one (keys after the query, j > i).")),
            (_spread(matrix, offsets=[0]), N_("you measured only the main diagonal; every diagonal j - i = d counts, from -(T_q - 1) to T_k - 1.")),
            (float((matrix.amax(1) - matrix.amin(1)).max()), along_rows),
            (float((matrix.amax(0) - matrix.amin(0)).max()), along_rows),
            (float(matrix.max() - matrix.min()), N_("you took max - min over the whole matrix; take it along each diagonal, then the largest of those.")),
            (_spread(matrix, offsets=list(range(-(n_q - 1), n_q))), N_("you assumed a square matrix: with T_k columns the diagonals run up to T_k - 1.")),
            (_spread(matrix, offsets=list(range(-(n_k - 1), n_k))), N_("you took the offsets from the number of columns on both sides: below the main diagonal they run down to -(T_q - 1), set by the rows.")),
            (_spread(matrix, reduce="std"), N_("you measured a standard deviation; the spread is max - min along the diagonal.")),
            (_spread(matrix, reduce="from first"), from_reference),
            (_spread(matrix, reduce="from mean"), from_reference),
            (_spread(matrix, reduce="neighbours"), N_("you took the largest step between neighbouring entries of a diagonal; the spread is max - min over the whole diagonal, and its largest and smallest entries need not sit side by side.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: same_number(got, wrong))
        if named:
            return named
        if got < 0:
            return _("A spread is max - min: it cannot be negative.")
        return _(
            "Your spread differs from the largest max - min along a diagonal j - i = d; check which entries you group together."
        )

    def _judge(self, cases, outcomes):
        status, message = super()._judge(cases, outcomes)
        # Decided on the errors raised (torch's, NumPy's own words), not on the message's words,
        # which may be in Chinese.
        # Only when the case reported is the one that raised: one message per failing case, so an
        # answer that first fails another case with a named mistake gets that sentence alone.
        empty = any(
            o.kind == RAISED
            and ("numel() == 0" in o.error or "zero-size array" in o.error)
            and o.error in message
            for o in outcomes
        )
        if empty:
            message += _(
                " An empty diagonal: your offsets ran past the matrix's corners; for a (T_q, T_k) matrix they run from -(T_q - 1) to T_k - 1."
            )
        return status, message


# -- q2: Shaw's relative logits ----------------------------------------------------------------------


def _shaw(q, k, table, clip, *, sign=1, shift=True, scale="sqrt", content="q k", to="key",
          transpose=False):  # fmt: skip
    """Shaw's logits (T, T), or one of their usual wrong variants (float64)."""
    n, d = q.shape
    offsets = sign * offset_matrix(n)  # (T, T): j - i, or i - j with sign=-1
    index = offsets.clamp(-clip, clip) + (clip if shift else 0)  # negative wraps when not shifted
    a = table[index]  # (T, T, d)
    if to == "query":  # the relative vector added to the query instead of the key
        scores = torch.einsum("ijd,jd->ij", q[:, None, :] + a, k)
        return scores / math.sqrt(d)
    position = torch.einsum("id,ijd->ij", q, a)  # (T, T): q_i . a_ij
    terms = {"q k": q @ k.T, "k q": k @ q.T, "none": torch.zeros(n, n, dtype=q.dtype)}[content]
    if scale == "position only":  # only the position term divided by sqrt(d)
        scores = terms + position / math.sqrt(d)
    elif scale == "content only":  # only the content term divided by sqrt(d)
        scores = terms / math.sqrt(d) + position
    else:
        scores = (terms + position) / {"sqrt": math.sqrt(d), "none": 1.0, "d": d}[scale]
    return scores.T if transpose else scores


class ShawLogits(Question):
    name, function, points, notebook = "q2", "shaw_logits", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "clamp(j - i, -clip, clip) + clip",
        "offsets.clamp(-clip, clip) + clip",
        "the offset j - i",
        "(content + position) / math.sqrt(d)",
        "the scale is 1/sqrt(d)",
    )
    returns, references = TENSOR, ("posenc_lib.analysis.ch04_relative.shaw_logits",)
    title = N_("Shaw's relative logits with a clipped table")
    hints = (
        N_(
            "The offset of query i and key j is j - i; its row of rel_keys is "
            "clamp(j - i, -clip, clip) + clip (0 .. 2 clip)."
        ),
        N_(
            "Build the offsets j - i of all pairs at once, as a (T, T) tensor: subtract a column "
            "of positions (T, 1) from a row of positions (1, T), and broadcasting does the rest."
        ),
        N_(
            "a = rel_keys[index] picks one row per pair, (T, T, d); e_ij = q_i . (k_j + a_ij) / "
            "sqrt(d) is the content score q @ k.T plus the position score "
            "(q[:, None, :] * a).sum(-1), both divided by sqrt(d)."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 2)
        if seed == 0:
            shapes = [(7, 4, 2), (5, 6, 3)]
        else:
            shapes = [
                (
                    draws.randint(9, 14, generator),
                    draws.randint(3, 9, generator),
                    draws.randint(2, 5, generator),
                )
                for _ in range(3)
            ]
        cases = []
        for n, d, clip in shapes:
            q, k = torch.randn(2, n, d, generator=generator)
            table = torch.randn(2 * clip + 1, d, generator=generator)
            cases.append(
                Case(
                    (q, k, table, clip),
                    tr(
                        "q and k ({n}, {d}), rel_keys ({rows}, {d}), clip = {clip}",
                        n=n,
                        d=d,
                        rows=2 * clip + 1,
                        clip=clip,
                    ),
                )
            )
        return cases

    def diagnose(self, case, value):
        q, k, table, clip = (a.double() if isinstance(a, torch.Tensor) else a for a in case.args)
        n, d = q.shape
        if isinstance(value, torch.Tensor) and tuple(value.shape) == (n, n, d):
            return tr(
                "Your result has shape (T, T, d) = {shape}: take the dot product with q_i, summing over the last axis, to get one logit per (i, j).",
                shape=tuple(value.shape),
            )
        got, problem = as_tensor(value, N_("The logits"), (n, n))
        if problem:
            return problem
        if close(got, shaw_logits(q, k, table, clip)):
            return None
        mistakes = [
            (_shaw(q, k, table, clip, sign=-1), N_("the relative vector is indexed by the offset the other way round (query minus key): re-read which offset Shaw's a_ij belongs to (section 3 of the lecture).")),
            (_shaw(q, k, table, clip, shift=False), N_("you forgot to add clip to the clamped offset: a negative index counts from the end of rel_keys; row m holds the offset m - clip.")),
            (_shaw(q, k, table, clip, sign=-1, shift=False), N_("two slips: your offset is i - j, and the clamped offset is used as a row number as it is (negative rows count from the end); re-read how the question numbers the rows of rel_keys.")),
            (_shaw(q, k, table, clip, scale="none"), N_("your logits are not scaled: re-read the question's formula for e_ij.")),
            (_shaw(q, k, table, clip, scale="d"), N_("you divided by d itself: look again at how the question's formula scales the logits.")),
            (_shaw(q, k, table, clip, transpose=True), N_("your matrix is transposed: rows are queries i, columns keys j, so entry (i, j) is e_ij.")),
            (_shaw(q, k, table, clip, content="k q"), N_("your content score is k @ q.T, whose entry (i, j) is k_i . q_j; rows are queries, so the content score is q @ k.T.")),
            (_shaw(q, k, table, clip, scale="position only"), N_("you divided only the position term by sqrt(d); the whole score is divided, e_ij = (q_i . k_j + q_i . a_ij) / sqrt(d).")),
            (_shaw(q, k, table, clip, scale="content only"), N_("you divided only the content term q_i . k_j by sqrt(d), as in plain attention; Shaw's position term sits inside the same dot product, q_i . (k_j + a_ij), so it is scaled too.")),
            (_shaw(q, k, table, clip, content="none"), N_("you left out the content score q_i . k_j: Shaw adds a_ij to the key, so e_ij = q_i . (k_j + a_ij) / sqrt(d).")),
            (_shaw(q, k, table, clip, to="query"), N_("you added a_ij to the query; Shaw adds it to the key: q_i . (k_j + a_ij).")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong))
        if named:
            return named
        far = offset_matrix(n).abs() > clip  # (T, T): pairs beyond the clipping distance
        near_ok = close(got[~far], shaw_logits(q, k, table, clip)[~far])
        if near_ok and bool(far.any()):
            return _(
                "Your logits are right for offsets within +-clip and wrong beyond: offsets past clip use the end rows of rel_keys (clamp the offset)."
            )
        return _(
            "The logits have the right shape but not the right values; compare each step (the offsets, the rows of rel_keys, the scale) with the question's formula for e_ij and a_ij (section 3 of the lecture)."
        )
