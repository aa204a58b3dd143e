"""Randomized positions (Ruoss et al. 2023): sorted, distinct, inside the range, reproducible."""

import pytest
import torch

from posenc_lib.randomized import randomized_positions


def test_each_row_is_sorted_distinct_and_inside_the_range():
    generator = torch.Generator().manual_seed(3)
    positions = randomized_positions(64, 512, batch=(200,), generator=generator)
    assert positions.shape == (200, 64) and positions.dtype == torch.int64
    assert bool((positions.diff(dim=-1) > 0).all())  # strictly increasing: sorted and distinct
    assert int(positions.min()) >= 0 and int(positions.max()) <= 511
    # the whole range is used: over 200 draws the positions reach both ends
    assert int(positions.min()) == 0 and int(positions.max()) == 511
    # and the rows differ (the draws are not one sample repeated)
    assert len({tuple(row.tolist()) for row in positions}) == 200


def test_the_draws_cover_the_range_evenly():
    # Each position of 0..N-1 is chosen with probability T / N.
    positions = randomized_positions(
        16, 64, batch=(4000,), generator=torch.Generator().manual_seed(0)
    )
    counts = torch.bincount(positions.flatten(), minlength=64).double() / 4000  # (64,)
    assert float((counts - 16 / 64).abs().max()) < 0.04


def test_a_generator_makes_them_reproducible_and_a_full_range_is_every_position():
    first = randomized_positions(8, 100, generator=torch.Generator().manual_seed(7))
    again = randomized_positions(8, 100, generator=torch.Generator().manual_seed(7))
    assert torch.equal(first, again) and first.shape == (8,)
    assert torch.equal(randomized_positions(10, 10, batch=3), torch.arange(10).expand(3, 10))


@pytest.mark.parametrize(
    "args, message",
    [
        ((65, 64), "cannot draw 65 different positions from a range of 64"),
        ((0, 64), "n_positions"),
        ((4, 0), "max_position"),
        ((4.5, 64), "n_positions"),
    ],
)
def test_impossible_requests_get_a_sentence(args, message):
    with pytest.raises(ValueError, match=message):
        randomized_positions(*args)
