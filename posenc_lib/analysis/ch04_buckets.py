"""Chapter 4's view of T5's buckets: which distances share a bucket, and the bias they make.

T5's bucket function and bias are the core's ``relative.t5_relative_position_bucket`` and
``relative.RelativePositionBias`` (Raffel et al. 2020, arXiv:1910.10683, section 2.1): exact
buckets for small distances, logarithmically wider ones up to ``max_distance``, one last bucket
beyond. This module lays them out for the chapter's printed tables (``bucket_ranges``) and its
dashboard (``bucket_view``).

Shapes: T positions; offsets j - i (key minus query) as in ``toeplitz.offset_matrix``.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.toeplitz import offset_matrix
from posenc_lib.relative import t5_relative_position_bucket


def bucket_ranges(num_buckets=32, max_distance=128, bidirectional=True, up_to=256):
    """(bucket, first distance, last distance) for each bucket of keys at or before the query.

    Distances d = i - j = 0 .. up_to (offsets j - i = -d); with bidirectional=True the keys after
    the query use the upper half of the buckets in the same way. The last range is open: every
    distance >= its first lands there. Returns a list of tuples of ints.
    """
    up_to = validate.positive_int("up_to", up_to, maximum=2**24)
    distance = torch.arange(up_to + 1)  # (N,)
    buckets = t5_relative_position_bucket(-distance, bidirectional, num_buckets, max_distance)
    starts = torch.nonzero(torch.diff(buckets, prepend=torch.tensor([-1]))).flatten().tolist()
    ends = [s - 1 for s in starts[1:]] + [up_to]
    return [(int(buckets[s]), s, e) for s, e in zip(starts, ends, strict=True)]


class BucketView(NamedTuple):
    """What the chapter 4 dashboard shows for one setting of T5's bucket parameters."""

    offsets: torch.Tensor  # (2T - 1,): j - i from -(T - 1) to T - 1
    buckets: torch.Tensor  # (2T - 1,): the bucket of each offset
    bias: torch.Tensor  # (T, T): the bias of a fixed random table, by bucket of j - i
    num_buckets: int
    max_distance: int  # as used (raised if the setting asked for too small a value)
    bidirectional: bool
    exact: int  # distances 0 .. exact - 1 get a bucket each (per direction)
    last_start: int  # the first distance that lands in its direction's last bucket
    used: int  # distinct buckets that occur among the offsets shown
    raised: bool  # True if max_distance was raised to exact + 1


def bucket_view(num_buckets, max_distance, bidirectional, n_positions=160, seed=0) -> BucketView:
    """T5's bucket map over offsets -(T-1)..T-1 and the (T, T) bias of a fixed random table.

    The table holds one N(0, 1) value per bucket, drawn from ``seed`` (the same values for the
    same num_buckets, whatever the other settings). max_distance below the exact range is raised
    to exact + 1, the smallest value T5's formula accepts, and ``raised`` says so.
    """
    n_buckets = validate.positive_int("num_buckets", num_buckets, maximum=4096)
    validate.boolean("bidirectional", bidirectional)
    n = validate.positive_int("n_positions", n_positions, maximum=4096)
    per_side = n_buckets // 2 if bidirectional else n_buckets
    exact = per_side // 2
    distance = validate.positive_int("max_distance", max_distance)
    raised = distance <= exact
    distance = exact + 1 if raised else distance
    offsets = torch.arange(-(n - 1), n)  # (2T-1,)
    buckets = t5_relative_position_bucket(offsets, bidirectional, n_buckets, distance)  # (2T-1,)
    g = torch.Generator().manual_seed(validate.whole_int("seed", seed, maximum=2**31 - 1))
    table = torch.randn(n_buckets, generator=g)  # (num_buckets,)
    index = offset_matrix(n) + n - 1  # (T, T): position of j - i in ``offsets``
    by_offset = table[buckets]  # (2T-1,): the bias of each offset
    # gather, not by_offset[index]: indexing runs multi-threaded and can take 10 ms on 2 cores
    bias = by_offset.expand(n, 2 * n - 1).gather(1, index)  # (T, T)
    # Distances 0 .. max_distance: by max_distance every formula has reached the last bucket.
    far = t5_relative_position_bucket(
        -torch.arange(distance + 1), bidirectional, n_buckets, distance
    )
    last_start = int(torch.nonzero(far == per_side - 1).flatten()[0])
    used = int(torch.unique(buckets).numel())
    return BucketView(
        offsets, buckets, bias, n_buckets, distance, bidirectional, exact, last_start, used, raised
    )
