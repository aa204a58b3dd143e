"""T5's buckets as chapter 4 shows them (``analysis.ch04_buckets``): the ranges agree with
transformers' T5, and the dashboard's bias is the library's T5 bias of its table."""

import torch
from torch.testing import assert_close
from transformers.models.t5.modeling_t5 import T5Attention

from posenc_lib import RelativePositionBias
from posenc_lib.analysis.ch04_buckets import bucket_ranges, bucket_view


def test_bucket_ranges_cover_every_distance_and_agree_with_transformers():
    for bidirectional in (True, False):
        ranges = bucket_ranges(32, 128, bidirectional, up_to=300)
        assert ranges[0][1] == 0 and ranges[-1][2] == 300
        assert all(a[2] + 1 == b[1] for a, b in zip(ranges, ranges[1:], strict=False))
        for bucket, first, last in ranges:
            theirs = T5Attention._relative_position_bucket(
                -torch.arange(first, last + 1), bidirectional, 32, 128
            )
            assert theirs.eq(bucket).all()
    # The last bucket starts well before max_distance: at 91 (encoder), 113 (decoder).
    assert bucket_ranges(32, 128, True)[-1][:2] == (15, 91)
    assert bucket_ranges(32, 128, False)[-1][:2] == (31, 113)


def test_bucket_view_is_the_t5_bias_of_its_table():
    view = bucket_view(32, 128, True, n_positions=100, seed=3)
    table = torch.randn(32, generator=torch.Generator().manual_seed(3))
    module = RelativePositionBias(1, 32, 128, bidirectional=True)
    module.bias.weight.data = table[:, None]
    assert_close(view.bias, module(100)[0].detach())
    assert (view.exact, view.last_start, view.raised) == (8, 91, False)
    # Bidirectional T5 never uses bucket num_buckets / 2: offset 0 belongs to the lower half.
    assert view.used == 31 and 16 not in view.buckets.tolist()
    raised = bucket_view(32, 5, False, n_positions=50)
    assert raised.raised and raised.max_distance == 17 and raised.exact == 16
