"""Chapter 4's exercises: q3, T5's buckets; q4, T5's bias with a cache."""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch04_relative import offset_matrix
from posenc_lib.checks import draws
from posenc_lib.checks.answers import INT_TENSOR, TENSOR, as_tensor, close
from posenc_lib.checks.ch04.setting import F64, NOTEBOOK
from posenc_lib.checks.diagnosis import CLOSE_BUT, named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.checks.run import TooMany
from posenc_lib.i18n import N_, _, tr
from posenc_lib.relative import t5_relative_position_bucket

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
    name, function, points, notebook = "q3", "t5_bucket", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "log(max_distance / exact) * (n - exact)",
        "torch.clamp(log_bucket, max=n - 1)",
        "torch.where(distance < exact, distance, log_bucket)",
        "multiply by n - exact",
        "log(max_distance / exact)",
        "at n - 1",
    )
    returns = INT_TENSOR
    references = (
        "posenc_lib.relative.t5_relative_position_bucket",
        "transformers.models.t5.modeling_t5.T5Attention._relative_position_bucket",
    )
    title = N_("T5's relative position buckets")
    hints = (
        N_(
            "Work in two steps on whole tensors: first each offset's distance r (and, when "
            "bidirectional, a tensor `upper` of num_buckets // 2 for offsets > 0, else 0); then the "
            "bucket of r within its direction, added to `upper`. Try it on torch.arange(-20, 21) "
            "and print the result."
        ),
        N_(
            "Compute the log bucket for every r at once, even where r < exact (r = 0 gives -inf "
            "there, which is harmless: torch.where picks r instead); take the log of r.float(), "
            "since torch.log does not take integer tensors, and turn it into ids with .long()."
        ),
        N_(
            "Cap that at n - 1 (the cap, not max_distance, decides where the last bucket starts: "
            "with 32 buckets and max_distance 128 a bidirectional bias puts every distance from 91 on in it), use "
            "torch.where to pick exact or log bucket, and return .long() ids. Compute the log in "
            "float32, as T5."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 3)
        if seed == 0:
            # (True, 14, 40): 7 buckets per direction, an odd number, so n - exact = 4 != exact = 3
            settings = [(True, 32, 128), (False, 32, 128), (True, 16, 40), (False, 10, 30),
                        (True, 14, 40)]  # fmt: skip
        else:
            settings = []
            for bidirectional, odd in ((True, False), (False, False), (True, True)):
                # 18 .. 64 buckets; the last case has an odd number per direction (n = 2 mod 4)
                n = (
                    4 * draws.randint(5, 17, generator) - 2
                    if odd
                    else 2 * draws.randint(9, 33, generator)
                )
                exact = (n // 2 if bidirectional else n) // 2
                settings.append(
                    (bidirectional, n, exact + draws.randint(2 * exact, 12 * exact, generator))
                )
        cases = []
        for bidirectional, n, max_distance in settings:
            reach = 3 * max_distance
            rel = torch.arange(-reach, reach + 1)  # (2 reach + 1,) offsets j - i
            kind = _("bidirectional") if bidirectional else _("causal")
            cases.append(Case((rel, bidirectional, n, max_distance), tr("offsets -{reach}..{reach}, {kind}, num_buckets = {n}, max_distance = {max_distance}", reach=reach, kind=kind, n=n, max_distance=max_distance)))  # fmt: skip
        # "a LongTensor of the same shape": every draw also passes the (T, T) offsets of a score
        # matrix, as T5's attention does, with T past max_distance
        if seed == 0:
            bidirectional, n, max_distance, size = True, 24, 30, 40
        else:
            bidirectional = bool(draws.randint(0, 2, generator))
            n = 2 * draws.randint(9, 25, generator)
            exact = (n // 2 if bidirectional else n) // 2
            max_distance = exact + draws.randint(2 * exact, 6 * exact, generator)
            size = max_distance + draws.randint(5, 30, generator)
        kind = _("bidirectional") if bidirectional else _("causal")
        rel = offset_matrix(size)  # (T, T): j - i
        cases.append(Case((rel, bidirectional, n, max_distance), tr("the offsets j - i of a ({size}, {size}) score matrix, {kind}, num_buckets = {n}, max_distance = {max_distance}", size=size, kind=kind, n=n, max_distance=max_distance)))  # fmt: skip
        return cases

    def diagnose(self, case, value):
        rel, bidirectional, n, max_distance = case.args
        if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
            return _("Return bucket ids (integers), not a True/False mask.")
        got, problem = as_tensor(value, N_("The buckets"), tuple(rel.shape))
        if problem:
            return problem
        got = got.long()
        want = t5_relative_position_bucket(rel, bidirectional, n, max_distance)
        in_float64 = _buckets(rel, bidirectional, n, max_distance, dtype=F64)
        if bool(((got == want) | (got == in_float64)).all()):  # float32 or float64 logs both pass
            return None
        variant = {
            "flip": N_(
                "the offset is key - query (j - i) and you used query - key, so keys before and after the query trade buckets: re-read the sign of the offset in the question."
            ),
            "swapped": (
                N_(
                    "this case is bidirectional and your buckets are those of a causal model: check how you use `bidirectional`."
                )
                if bidirectional
                else N_(
                    "this case is causal and your buckets are those of a bidirectional model: check how you use `bidirectional`."
                )
            ),
            "zero_up": N_(
                "offset 0 (the query's own key) belongs to the lower half, bucket 0: only offsets > 0 move to the upper half."
            ),
            "halve": N_(
                "with bidirectional=True each direction has num_buckets // 2 buckets (its exact range is num_buckets // 4)."
            ),
            "upper": N_(
                "keys after the query add num_buckets // 2 to their bucket, not num_buckets."
            ),
            "cap": N_(
                "distances far beyond max_distance ran past the last bucket of their direction: re-read the question's cap."
            ),
            "round": N_("T5 truncates the log bucket (int(), .long(), floor); you rounded it."),
            "denominator": N_(
                "your log bucket divides by log(max_distance); re-read what the question's formula divides log(r / e) by."
            ),
            "times_exact": N_(
                "your log buckets are scaled by e = n // 2, the number of exact buckets; a direction of n buckets has more log buckets than that when n is odd: re-read the last line of the question."
            ),
            "causal_abs": N_(
                "causal: a key after the query (offset j - i > 0) has distance 0, bucket 0; you gave it the distance |j - i|: re-read the question's causal distance."
            ),
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
                return _(CLOSE_BUT) + _(variant[key])
        if int(got.min()) < 0 or int(got.max()) >= n:
            return tr(
                "Bucket ids must lie in 0..num_buckets - 1 = 0..{top}; yours run from {low} to {high}.",
                top=n - 1,
                low=int(got.min()),
                high=int(got.max()),
            )
        wrong_at = rel[got != want]
        if bool((wrong_at.abs() < (n // 2 if bidirectional else n) // 2).any()):
            return _(
                "Some near offsets are in the wrong bucket: distances below the exact range (n // 2 within a direction) are their own bucket."
            )
        return tr(
            "Your near buckets are right, but the log buckets differ, first at offset {offset}: compare your log bucket, term by term, with the question's formula at that offset (section 5 of the lecture).",
            offset=int(wrong_at[wrong_at.abs().argmin()]),
        )


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
    name, function, points, notebook = "q4", "relative_bias", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "table[bucket_fn(j - i)]",
        "k_len - q_len + r",
        ".permute(2, 0, 1)",
        "table[buckets]",
    )
    returns, references = TENSOR, ("posenc_lib.relative.RelativePositionBias.forward",)
    title = N_("T5's bias matrix from a table, with a cache")
    hints = (
        N_(
            "With a cache, the q_len queries are the newest tokens, not the first ones. Write out "
            "the offsets j - i of a small case by hand (2 new queries after 4 cached tokens, say): "
            "which position does each query row hold? The lecture's 'With a cache' (section 5) "
            "does the same."
        ),
        N_(
            "Build all the offsets at once by broadcasting: a (1, k_len) row of key positions, "
            "torch.arange(k_len)[None, :], minus a (q_len, 1) column of query positions gives the "
            "(q_len, k_len) offsets j - i. bucket_fn(offsets) turns them into bucket ids of the "
            "same shape; table[ids] is then (q_len, k_len, H)."
        ),
        N_(
            "The query column is (k_len - q_len + torch.arange(q_len))[:, None]. Move the head "
            "axis first: .permute(2, 0, 1) gives (H, q_len, k_len)."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 4)
        if seed == 0:
            settings = [(2, 4, 10, False, 8, 12), (3, 1, 9, False, 16, 20), (4, 6, 6, True, 16, 20)]
        else:
            # every draw: a chunk of new tokens, a bidirectional model without a cache (q_len =
            # k_len), and one new token after a prompt (q_len = 1; last, as there several slips
            # give the same row)
            settings = []
            for bidirectional, one in ((False, False), (True, False), (False, True)):
                k_len = draws.randint(24, 60, generator)
                q_len = k_len if bidirectional else draws.randint(2, k_len // 2, generator)
                q_len = 1 if one else q_len
                settings.append(
                    (draws.randint(5, 9, generator), q_len, k_len, bidirectional, 32, 64)
                )
        cases = []
        for heads, q_len, k_len, bidirectional, n, max_distance in settings:
            table = torch.randn(n, heads, generator=generator)
            fn = _bucket_fn(bidirectional, n, max_distance)
            kind = _("bidirectional") if bidirectional else _("causal")
            cases.append(Case((table, fn, q_len, k_len), tr("table ({n}, {heads}), bucket_fn {kind} with max_distance {max_distance}, q_len = {q_len}, k_len = {k_len}", n=n, heads=heads, kind=kind, max_distance=max_distance, q_len=q_len, k_len=k_len)))  # fmt: skip
        return cases

    def diagnose(self, case, value):
        table, bucket_fn, q_len, k_len = case.args
        heads = table.shape[1]
        table = table.double()
        if isinstance(value, TooMany):
            return _("Return one tensor; your function returned an endless iterator.")
        if isinstance(value, torch.Tensor) and tuple(value.shape) == (q_len, k_len, heads):
            return tr(
                "Your bias has shape (q_len, k_len, H) = {shape}: the question asks for the heads first, (H, q_len, k_len).",
                shape=tuple(value.shape),
            )
        if isinstance(value, torch.Tensor) and tuple(value.shape) == (heads, k_len, q_len) != (
            heads,
            q_len,
            k_len,
        ):
            return tr(
                "Your bias has shape (H, k_len, q_len) = {shape}: rows are queries, columns keys, (H, q_len, k_len).",
                shape=tuple(value.shape),
            )
        got, problem = as_tensor(value, N_("The bias"), (heads, q_len, k_len))
        if problem:
            return problem
        if close(got, _bias(table, bucket_fn, q_len, k_len)):
            return None
        own_buckets = N_(
            "you computed the buckets yourself, with T5's defaults (max_distance = 128); use the `bucket_fn` you are given, which knows the model's own settings."
        )
        mistakes = [
            (_bias(table, bucket_fn, q_len, k_len, cached=False), N_("your queries sit at positions 0..q_len - 1, as if there were no cache; re-read where the question puts query row r.")),
            (_bias(table, bucket_fn, q_len, k_len, sign=-1), N_("you looked up i - j; the offset is key minus query, j - i.")),
            (_bias(table, bucket_fn, q_len, k_len, cached=False, sign=-1), N_("two slips: your offset is query minus key, and your queries sit at 0..q_len - 1 as if there were no cache; re-read the question's offsets and positions.")),
            (_bias(table[:, :1].expand(-1, heads), bucket_fn, q_len, k_len), N_("every head got head 0's bias: column h of the table belongs to head h.")),
            (_bias(table, bucket_fn, q_len, k_len, reshape=True), N_("you used .reshape (or .view) to put the heads first: it keeps the numbers in their memory order and only cuts them anew, so heads and positions get mixed: the head axis has to move, not the numbers be cut anew.")),
            *((_bias(table, _bucket_fn(both, table.shape[0], 128), q_len, k_len), own_buckets) for both in (False, True)),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong))
        if named:
            return named
        if q_len == k_len and close(got, _bias(table, bucket_fn, q_len, k_len).transpose(-2, -1)):
            return _("Your matrix is transposed: rows are queries, columns keys.")
        return _(
            "Your bias has the right shape but not the right values: check each query row's position, the offsets you pass to bucket_fn and where the heads go, against the question's entry [h, r, j]."
        )
