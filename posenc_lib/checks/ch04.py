"""Chapter 4's exercises: the diagonal spread, Shaw's relative logits, T5's buckets, T5's bias.

    from posenc_lib.checks.ch04 import q1, q2, q3, q4
    q1.check(diagonal_spread); q1.hint(); q1.solution()

The references are the library's functions (``relbias_demo.diagonal_spread``,
``relbias_demo.shaw_logits``, ``relative.t5_relative_position_bucket``,
``relative.RelativePositionBias``' convention); each usual mistake is recomputed and, when the
learner's answer matches it, named.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch04_relative import diagonal_spread, offset_matrix, shaw_logits
from posenc_lib.checks import (
    FLOAT,
    INT_TENSOR,
    TENSOR,
    Case,
    Question,
    TooMany,
    as_number,
    as_tensor,
    close,
)
from posenc_lib.relative import t5_relative_position_bucket

NOTEBOOK = "04_relative_bias.ipynb"
F64 = torch.float64


def _generator(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 7919 + salt)


def _randint(low: int, high: int, generator) -> int:
    return int(torch.randint(low, high, (1,), generator=generator))


def _same(got: float, want: float) -> bool:
    return abs(got - want) <= 1e-4 * abs(want) + 1e-6


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
    returns, references = FLOAT, ("posenc_lib.analysis.ch04_relative.diagonal_spread",)
    title = "How far is a score matrix from Toeplitz?"
    hints = (
        "Entry (i, j) lies on the diagonal of offset j - i; `matrix.diagonal(d)` returns the "
        "entries (i, i + d), the diagonal of offset d.",
        "For a (T_q, T_k) matrix the offsets run from -(T_q - 1) (bottom-left corner) to "
        "T_k - 1 (top-right corner).",
        "For each diagonal take max - min; return the largest of these, as a float.",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 1)
        if seed == 0:
            n, (n_q, n_k), (m_q, m_k) = 5, (4, 7), (7, 3)
        else:  # larger: a square side, a wide and a tall shape (3 or more longer one way)
            n = _randint(8, 12, generator)
            n_q, m_k = _randint(6, 10, generator), _randint(6, 10, generator)
            n_k, m_q = n_q + _randint(3, 6, generator), m_k + _randint(3, 6, generator)
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
        cases.append(Case((toeplitz,), f"a ({n}, {n}) Toeplitz matrix"))
        # Each matrix below is Toeplitz but for a few entries, placed so that each usual mistake
        # gives its own number: the spread then sits on a diagonal of the case's choosing.
        main = _toeplitz(n, n, generator)
        # The main diagonal reads c + 0.5, c - 1, c, c + 2, c, ...: spread 3 between entries that
        # are not neighbours (largest step 2), and 1.5 from its first entry.
        main[0, 0], main[1, 1], main[3, 3] = main[0, 0] + 0.5, main[1, 1] - 1.0, main[3, 3] + 2.0
        cases.append(Case((main,), f"a ({n}, {n}) matrix, Toeplitz but for three entries"))
        hankel = values[torch.arange(n)[:, None] + torch.arange(n)[None, :]]  # constant on i + j
        cases.append(Case((hankel,), f"a ({n}, {n}) matrix constant along anti-diagonals"))
        wide = _toeplitz(n_q, n_k, generator)
        wide[1, n_k - 1] += 3.0  # offset n_k - 2, past a square's diagonals: spread 3
        wide[2, 2] += 1.0  # the main diagonal: spread 1
        wide[0, 1] += 2.0  # offset 1, inside a square's diagonals: spread 2
        cases.append(Case((wide,), f"a ({n_q}, {n_k}) matrix, Toeplitz but for three entries"))
        tall = _toeplitz(m_q, m_k, generator)
        tall[m_q - 1, 1] += 3.0  # offset 2 - m_q, below any diagonal of a (m_k, m_k) square
        tall[2, 1] += 1.0  # offset -1: spread 1
        cases.append(Case((tall,), f"a ({m_q}, {m_k}) matrix, Toeplitz but for two entries"))
        return cases

    def diagnose(self, case, value):
        (matrix,) = case.args
        matrix = matrix.double()
        if isinstance(value, torch.Tensor) and value.numel() > 1:
            return f"Return one number, the largest spread over all diagonals; yours is a tensor of shape {tuple(value.shape)} (perhaps one spread per diagonal: take the max)."
        got, problem = as_number(value, "The spread")
        if problem:
            return problem
        if _same(got, diagonal_spread(matrix)):
            return None
        n_q, n_k = matrix.shape
        along_rows = "you took max - min along each row (fixed i) or each column (fixed j); a Toeplitz matrix is constant along its diagonals, where j - i is fixed: take it along each diagonal, then the largest."
        from_reference = "you measured how far the entries lie from a reference value on each diagonal (its first entry, or its mean); the spread is max - min along it."
        mistakes = [
            (_spread(matrix, group="i + j"), "you grouped entries by i + j, the anti-diagonals; a Toeplitz matrix is constant along the diagonals, where j - i is the same."),
            (_spread(matrix, offsets=list(range(0, n_k))), "you skipped the diagonals below the main one (keys before the query, j < i)."),
            (_spread(matrix, offsets=list(range(-(n_q - 1), 1))), "you skipped the diagonals above the main one (keys after the query, j > i)."),
            (_spread(matrix, offsets=[0]), "you measured only the main diagonal; every diagonal j - i = d counts, from -(T_q - 1) to T_k - 1."),
            (float((matrix.amax(1) - matrix.amin(1)).max()), along_rows),
            (float((matrix.amax(0) - matrix.amin(0)).max()), along_rows),
            (float(matrix.max() - matrix.min()), "you took max - min over the whole matrix; take it along each diagonal, then the largest of those."),
            (_spread(matrix, offsets=list(range(-(n_q - 1), n_q))), "you assumed a square matrix: with T_k columns the diagonals run up to T_k - 1."),
            (_spread(matrix, offsets=list(range(-(n_k - 1), n_k))), "you took the offsets from the number of columns on both sides: below the main diagonal they run down to -(T_q - 1), set by the rows."),
            (_spread(matrix, reduce="std"), "you measured a standard deviation; the spread is max - min along the diagonal."),
            (_spread(matrix, reduce="from first"), from_reference),
            (_spread(matrix, reduce="from mean"), from_reference),
            (_spread(matrix, reduce="neighbours"), "you took the largest step between neighbouring entries of a diagonal; the spread is max - min over the whole diagonal, and its largest and smallest entries need not sit side by side."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if _same(got, wrong):
                return "Close, but " + sentence
        if got < 0:
            return "A spread is max - min: it cannot be negative."
        return "Your spread differs from the largest max - min along a diagonal j - i = d; check which entries you group together."

    def _judge(self, cases, outcomes):
        status, message = super()._judge(cases, outcomes)
        if "numel() == 0" in message or "zero-size array" in message:  # torch's, NumPy's words
            message += " An empty diagonal: your offsets ran past the matrix's corners; for a (T_q, T_k) matrix they run from -(T_q - 1) to T_k - 1."
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
    else:
        scores = (terms + position) / {"sqrt": math.sqrt(d), "none": 1.0, "d": d}[scale]
    return scores.T if transpose else scores


class ShawLogits(Question):
    name, function, points, notebook = "q2", "shaw_logits", 2, NOTEBOOK
    returns, references = TENSOR, ("posenc_lib.analysis.ch04_relative.shaw_logits",)
    title = "Shaw's relative logits with a clipped table"
    hints = (
        "The offset of query i and key j is j - i; its row of rel_keys is "
        "clamp(j - i, -clip, clip) + clip (0 .. 2 clip).",
        "Build the offsets j - i of all pairs at once, as a (T, T) tensor: subtract a column of "
        "positions (T, 1) from a row of positions (1, T), and broadcasting does the rest.",
        "a = rel_keys[index] picks one row per pair, (T, T, d); e_ij = q_i . (k_j + a_ij) / sqrt(d) "
        "is the content score q @ k.T plus the position score (q[:, None, :] * a).sum(-1), both "
        "divided by sqrt(d).",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 2)
        if seed == 0:
            shapes = [(7, 4, 2), (5, 6, 3)]
        else:
            shapes = [
                (_randint(9, 14, generator), _randint(3, 9, generator), _randint(2, 5, generator))
                for _ in range(3)
            ]
        cases = []
        for n, d, clip in shapes:
            q, k = torch.randn(2, n, d, generator=generator)
            table = torch.randn(2 * clip + 1, d, generator=generator)
            cases.append(
                Case(
                    (q, k, table, clip),
                    f"q and k ({n}, {d}), rel_keys ({2 * clip + 1}, {d}), clip = {clip}",
                )
            )
        return cases

    def diagnose(self, case, value):
        q, k, table, clip = (a.double() if isinstance(a, torch.Tensor) else a for a in case.args)
        n, d = q.shape
        if isinstance(value, torch.Tensor) and tuple(value.shape) == (n, n, d):
            return f"Your result has shape (T, T, d) = {tuple(value.shape)}: take the dot product with q_i, summing over the last axis, to get one logit per (i, j)."
        got, problem = as_tensor(value, "The logits", (n, n))
        if problem:
            return problem
        if close(got, shaw_logits(q, k, table, clip)):
            return None
        mistakes = [
            (_shaw(q, k, table, clip, sign=-1), "the relative vector is indexed by i - j; Shaw's a_ij belongs to the offset j - i (key minus query)."),
            (_shaw(q, k, table, clip, shift=False), "you forgot to add clip to the clamped offset: a negative index counts from the end of rel_keys; row m holds the offset m - clip."),
            (_shaw(q, k, table, clip, sign=-1, shift=False), "two slips: the offset should be j - i, and its row clamp(j - i, -clip, clip) + clip."),
            (_shaw(q, k, table, clip, scale="none"), "the logits are not scaled: divide by sqrt(d)."),
            (_shaw(q, k, table, clip, scale="d"), "you divided by d; the scale is 1/sqrt(d)."),
            (_shaw(q, k, table, clip, transpose=True), "your matrix is transposed: rows are queries i, columns keys j, so entry (i, j) is e_ij."),
            (_shaw(q, k, table, clip, content="k q"), "your content score is k @ q.T, whose entry (i, j) is k_i . q_j; rows are queries, so the content score is q @ k.T."),
            (_shaw(q, k, table, clip, scale="position only"), "you divided only the position term by sqrt(d); the whole score is divided, e_ij = (q_i . k_j + q_i . a_ij) / sqrt(d)."),
            (_shaw(q, k, table, clip, content="none"), "you left out the content score q_i . k_j: Shaw adds a_ij to the key, so e_ij = q_i . (k_j + a_ij) / sqrt(d)."),
            (_shaw(q, k, table, clip, to="query"), "you added a_ij to the query; Shaw adds it to the key: q_i . (k_j + a_ij)."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if close(got, wrong):
                return "Close, but " + sentence
        far = offset_matrix(n).abs() > clip  # (T, T): pairs beyond the clipping distance
        near_ok = close(got[~far], shaw_logits(q, k, table, clip)[~far])
        if near_ok and bool(far.any()):
            return "Your logits are right for offsets within +-clip and wrong beyond: offsets past clip use the end rows of rel_keys (clamp the offset)."
        return "The logits have the right shape but not the right values; compare each step with e_ij = q_i . (k_j + a_ij) / sqrt(d), a_ij = rel_keys[clamp(j - i, -clip, clip) + clip]."


# -- q3: T5's buckets ---------------------------------------------------------------------------------


def _buckets(rel, bidirectional, n, max_distance, *, flip=False, zero_up=False, halve=True,
             upper=None, cap=True, rounding="floor", denominator="ratio", dtype=torch.float32,
             times_exact=False, causal_abs=False):  # fmt: skip
    """T5's bucket of each offset, or one of its usual wrong variants (a LongTensor)."""
    rel = -rel if flip else rel
    if bidirectional:
        per_side = n // 2 if halve else n
        side = ((rel >= 0) if zero_up else (rel > 0)).long() * (
            per_side if upper is None else upper
        )
        distance = rel.abs()
    else:
        distance = rel.abs() if causal_abs else (-rel).clamp(min=0)  # keys after: distance 0
        per_side, side = n, torch.zeros_like(rel)
    exact = per_side // 2
    log_buckets = exact if times_exact else per_side - exact  # n - exact: n//2 only for even n
    scale = math.log(max_distance / exact) if denominator == "ratio" else math.log(max_distance)
    raw = exact + (distance.clamp(min=exact).to(dtype) / exact).log() / scale * log_buckets
    log_bucket = raw.round().long() if rounding == "round" else raw.long()
    if cap:
        log_bucket = log_bucket.clamp(max=per_side - 1)
    return side + torch.where(distance < exact, distance, log_bucket)


class T5Bucket(Question):
    name, function, points, notebook = "q3", "t5_bucket", 3, NOTEBOOK
    returns = INT_TENSOR
    references = (
        "posenc_lib.relative.t5_relative_position_bucket",
        "transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket",
    )
    title = "T5's relative position buckets"
    hints = (
        "Bidirectional: half the buckets for each direction; keys after the query (offset > 0) "
        "add num_buckets // 2 to their bucket. Causal: only keys before the query count; a key "
        "after it has distance 0.",
        "Within a direction with n buckets: distances below n // 2 are their own bucket. A farther "
        "distance r gets n//2 + int(log(r / (n//2)) / log(max_distance / (n//2)) * (n - n//2)).",
        "Cap that at n - 1 (everything past max_distance shares the last bucket), use torch.where "
        "to pick exact or log bucket, and return .long() ids. Compute the log in float32, as T5.",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 3)
        if seed == 0:
            # (True, 14, 40): 7 buckets per direction, an odd number, so n - exact = 4 != exact = 3
            settings = [(True, 32, 128), (False, 32, 128), (True, 16, 40), (False, 10, 30),
                        (True, 14, 40)]  # fmt: skip
        else:
            settings = []
            for bidirectional, odd in ((True, False), (False, False), (True, True)):
                # 18 .. 64 buckets; the last case has an odd number per direction (n = 2 mod 4)
                n = 4 * _randint(5, 17, generator) - 2 if odd else 2 * _randint(9, 33, generator)
                exact = (n // 2 if bidirectional else n) // 2
                settings.append(
                    (bidirectional, n, exact + _randint(2 * exact, 12 * exact, generator))
                )
        cases = []
        for bidirectional, n, max_distance in settings:
            reach = 3 * max_distance
            rel = torch.arange(-reach, reach + 1)  # (2 reach + 1,) offsets j - i
            kind = "bidirectional" if bidirectional else "causal"
            cases.append(Case((rel, bidirectional, n, max_distance), f"offsets -{reach}..{reach}, {kind}, num_buckets = {n}, max_distance = {max_distance}"))  # fmt: skip
        # "a LongTensor of the same shape": every draw also passes the (T, T) offsets of a score
        # matrix, as T5's attention does, with T past max_distance
        if seed == 0:
            bidirectional, n, max_distance, size = True, 24, 30, 40
        else:
            bidirectional = bool(_randint(0, 2, generator))
            n = 2 * _randint(9, 25, generator)
            exact = (n // 2 if bidirectional else n) // 2
            max_distance = exact + _randint(2 * exact, 6 * exact, generator)
            size = max_distance + _randint(5, 30, generator)
        kind = "bidirectional" if bidirectional else "causal"
        rel = offset_matrix(size)  # (T, T): j - i
        cases.append(Case((rel, bidirectional, n, max_distance), f"the offsets j - i of a ({size}, {size}) score matrix, {kind}, num_buckets = {n}, max_distance = {max_distance}"))  # fmt: skip
        return cases

    def diagnose(self, case, value):
        rel, bidirectional, n, max_distance = case.args
        if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
            return "Return bucket ids (integers), not a True/False mask."
        got, problem = as_tensor(value, "The buckets", tuple(rel.shape))
        if problem:
            return problem
        got = got.long()
        want = t5_relative_position_bucket(rel, bidirectional, n, max_distance)
        in_float64 = _buckets(rel, bidirectional, n, max_distance, dtype=F64)
        if bool(((got == want) | (got == in_float64)).all()):  # float32 or float64 logs both pass
            return None
        variant = {
            "flip": "the offset is key - query (j - i) and you used query - key: keys after the query are the future.",
            "swapped": f"this case is {'bidirectional' if bidirectional else 'causal'} and your buckets are those of a {'causal' if bidirectional else 'bidirectional'} model: check how you use `bidirectional`.",
            "zero_up": "offset 0 (the query's own key) belongs to the lower half, bucket 0: only offsets > 0 move to the upper half.",
            "halve": "with bidirectional=True each direction has num_buckets // 2 buckets (its exact range is num_buckets // 4).",
            "upper": "keys after the query add num_buckets // 2 to their bucket, not num_buckets.",
            "cap": "distances far beyond max_distance must stay in the last bucket of their direction: cap the log bucket at n - 1.",
            "round": "T5 truncates the log bucket (int(), .long(), floor); you rounded it.",
            "denominator": "divide log(r / exact) by log(max_distance / exact), not by log(max_distance).",
            "times_exact": "multiply by n - exact, not exact: a direction of n buckets has exact = n // 2 exact buckets and n - exact log buckets, one more when n is odd.",
            "causal_abs": "causal: a key after the query (offset j - i > 0) has distance 0, bucket 0; you gave it the distance |j - i|. The causal distance is max(i - j, 0).",
        }
        candidates = [
            ("flip", {"flip": True}), ("swapped", {}), ("zero_up", {"zero_up": True}),
            ("halve", {"halve": False}), ("upper", {"upper": n}), ("cap", {"cap": False}),
            ("round", {"rounding": "round"}), ("denominator", {"denominator": "log"}),
            ("times_exact", {"times_exact": True}), ("causal_abs", {"causal_abs": True}),
        ]  # fmt: skip
        for key, change in candidates:
            if key == "swapped":
                wrong = _buckets(rel, not bidirectional, n, max_distance)
            elif (key in ("zero_up", "halve", "upper") and not bidirectional) or (
                key == "causal_abs" and bidirectional
            ):
                continue
            else:
                wrong = _buckets(rel, bidirectional, n, max_distance, **change)
            if torch.equal(got, wrong):
                return "Close, but " + variant[key]
        if int(got.min()) < 0 or int(got.max()) >= n:
            return f"Bucket ids must lie in 0..num_buckets - 1 = 0..{n - 1}; yours run from {int(got.min())} to {int(got.max())}."
        wrong_at = rel[got != want]
        if bool((wrong_at.abs() < (n // 2 if bidirectional else n) // 2).any()):
            return "Some near offsets are in the wrong bucket: distances below the exact range (n // 2 within a direction) are their own bucket."
        return f"Your near buckets are right, but the log buckets differ, first at offset {int(wrong_at[wrong_at.abs().argmin()])}: check the formula exact + log(r / exact) / log(max_distance / exact) * (n - exact)."


# -- q4: T5's bias with a cache ----------------------------------------------------------------------


def _bias(table, bucket_fn, q_len, k_len, *, cached=True, sign=1, reshape=False):
    """The (H, q_len, k_len) bias, or one of its usual wrong variants."""
    offsets = offset_matrix(q_len, k_len, k_len - q_len if cached else 0) * sign  # (T_q, T_k)
    values = table[bucket_fn(offsets)]  # (T_q, T_k, H)
    if reshape:  # the same numbers in memory order, cut anew: heads and positions mixed
        return values.reshape(table.shape[1], q_len, k_len)  # (H, T_q, T_k)
    return values.permute(2, 0, 1)  # (H, T_q, T_k)


def _bucket_fn(bidirectional, num_buckets, max_distance):
    def bucket_fn(relative_position):
        return t5_relative_position_bucket(
            relative_position, bidirectional, num_buckets, max_distance
        )

    bucket_fn.__name__ = "bucket_fn"
    return bucket_fn


class RelativeBias(Question):
    name, function, points, notebook = "q4", "relative_bias", 3, NOTEBOOK
    returns, references = TENSOR, ("posenc_lib.relative.RelativePositionBias.forward",)
    title = "T5's bias matrix from a table, with a cache"
    hints = (
        "Query row r sits at position i = k_len - q_len + r (the last q_len of the k_len "
        "positions); key column j at position j. The offset is j - i.",
        "bucket_fn(offsets) turns a (q_len, k_len) tensor of offsets into bucket ids of the same "
        "shape; table[ids] is then (q_len, k_len, H).",
        "Move the head axis first: .permute(2, 0, 1) gives (H, q_len, k_len).",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 4)
        if seed == 0:
            settings = [(2, 4, 10, False, 8, 12), (3, 1, 9, False, 16, 20), (4, 6, 6, True, 16, 20)]
        else:
            # every draw: a chunk of new tokens, a bidirectional model without a cache (q_len =
            # k_len), and one new token after a prompt (q_len = 1; last, as there several slips
            # give the same row)
            settings = []
            for bidirectional, one in ((False, False), (True, False), (False, True)):
                k_len = _randint(24, 60, generator)
                q_len = k_len if bidirectional else _randint(2, k_len // 2, generator)
                q_len = 1 if one else q_len
                settings.append((_randint(5, 9, generator), q_len, k_len, bidirectional, 32, 64))
        cases = []
        for heads, q_len, k_len, bidirectional, n, max_distance in settings:
            table = torch.randn(n, heads, generator=generator)
            fn = _bucket_fn(bidirectional, n, max_distance)
            kind = "bidirectional" if bidirectional else "causal"
            cases.append(Case((table, fn, q_len, k_len), f"table ({n}, {heads}), bucket_fn {kind} with max_distance {max_distance}, q_len = {q_len}, k_len = {k_len}"))  # fmt: skip
        return cases

    def diagnose(self, case, value):
        table, bucket_fn, q_len, k_len = case.args
        heads = table.shape[1]
        table = table.double()
        if isinstance(value, TooMany):
            return "Return one tensor; your function returned an endless iterator."
        if isinstance(value, torch.Tensor) and tuple(value.shape) == (q_len, k_len, heads):
            return f"Your bias has shape (q_len, k_len, H) = {tuple(value.shape)}: put the heads first, (H, q_len, k_len), with .permute(2, 0, 1)."
        if isinstance(value, torch.Tensor) and tuple(value.shape) == (heads, k_len, q_len) != (
            heads,
            q_len,
            k_len,
        ):
            return f"Your bias has shape (H, k_len, q_len) = {tuple(value.shape)}: rows are queries, columns keys, (H, q_len, k_len)."
        got, problem = as_tensor(value, "The bias", (heads, q_len, k_len))
        if problem:
            return problem
        if close(got, _bias(table, bucket_fn, q_len, k_len)):
            return None
        own_buckets = "you computed the buckets yourself, with T5's defaults (max_distance = 128); use the `bucket_fn` you are given, which knows the model's own settings."
        mistakes = [
            (_bias(table, bucket_fn, q_len, k_len, cached=False), "your queries sit at positions 0..q_len - 1; with a cache they are the last q_len of the k_len positions, so query row r is at position k_len - q_len + r."),
            (_bias(table, bucket_fn, q_len, k_len, sign=-1), "you looked up i - j; the offset is key minus query, j - i."),
            (_bias(table, bucket_fn, q_len, k_len, cached=False, sign=-1), "two slips: the offset is j - i (key minus query), and query row r sits at position k_len - q_len + r."),
            (_bias(table[:, :1].expand(-1, heads), bucket_fn, q_len, k_len), "every head got head 0's bias: column h of the table belongs to head h."),
            (_bias(table, bucket_fn, q_len, k_len, reshape=True), "you used .reshape (or .view) to put the heads first: it keeps the numbers in their memory order and only cuts them anew, so heads and positions get mixed. Move the head axis with .permute(2, 0, 1)."),
            *((_bias(table, _bucket_fn(both, table.shape[0], 128), q_len, k_len), own_buckets) for both in (False, True)),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if close(got, wrong):
                return "Close, but " + sentence
        if q_len == k_len and close(got, _bias(table, bucket_fn, q_len, k_len).transpose(-2, -1)):
            return "Your matrix is transposed: rows are queries, columns keys."
        return "Your bias has the right shape but not the right values: look up table[bucket_fn(j - i)] with i = k_len - q_len + r for query row r, then put the heads first."


q1, q2, q3, q4 = DiagonalSpread(), ShawLogits(), T5Bucket(), RelativeBias()
QUESTIONS = (q1, q2, q3, q4)
