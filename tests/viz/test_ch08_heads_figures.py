"""Chapter 8's figures for the heads and the KV cache draw the results they are given."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from posenc_lib.analysis import ch08_heads as heads
from posenc_lib.viz import ch08_heads as figs


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def synthetic_shares():
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(4, 3, 20, 64, generator=g), torch.randn(4, 1, 20, 64, generator=g)
    return heads.pair_shares(q, k, 100000.0)


def test_band_shares_draws_each_band_and_the_pair_means():
    shares = synthetic_shares()
    fig = figs.band_shares(shares)
    maps = [ax for ax in fig.axes if ax.images]
    assert len(maps) == 3
    np.testing.assert_allclose(maps[2].images[0].get_array(), shares.query_bands[..., 2].numpy())
    pairs = fig.axes[-1]
    np.testing.assert_allclose(pairs.lines[0].get_ydata(), shares.query.mean((0, 1)).numpy())
    assert [t.get_text() for t in maps[0].texts + [maps[0].title]][-1].startswith("high")


def test_distance_profiles_draws_chosen_heads_and_the_bound():
    t = 30
    attn = torch.ones(2, 2, t, t).tril()
    attn = attn / attn.sum(-1, keepdim=True)  # (2, 2, T, T) uniform causal attention
    profile = heads.attention_profile(attn, min_query=4, local=2, far=8)
    distances = torch.arange(t)
    bound = heads.decay_reference(distances)
    fig = figs.distance_profiles(profile, {"a": (0, 1), "b": (1, 0)}, distances, bound)
    left, right = fig.axes
    assert [line.get_label() for line in left.lines if not line.get_label().startswith("_")][
        :2
    ] == [
        "a: layer 0, head 1",
        "b: layer 1, head 0",
    ]
    np.testing.assert_allclose(left.lines[0].get_ydata(), profile.by_distance[0, 1, 1 : t - 1])
    np.testing.assert_allclose(left.lines[1].get_ydata(), profile.binned[0, 1, 1:])
    np.testing.assert_allclose(right.lines[0].get_ydata(), bound.numpy())


def test_cache_steps_draws_gaps_and_texts():
    gaps = {"continue": torch.full((5,), 3e-5), "restart": torch.arange(1.0, 6.0)}
    texts = {"continued": " the bread", "restarted": " the the"}
    fig = figs.cache_steps(gaps, texts, "x" * 100)
    top, bottom = fig.axes
    np.testing.assert_allclose(top.lines[1].get_ydata(), gaps["restart"].numpy())
    shown = [t.get_text() for t in bottom.texts]
    assert shown[0].startswith("prompt: …x") and "' the the'" in shown[2]
