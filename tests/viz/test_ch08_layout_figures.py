"""Chapter 8's figures for configs, layouts and bf16 angles: drawn from small synthetic results."""

import matplotlib.pyplot as plt
import pytest
import torch

from posenc_lib.analysis.ch06_rope import layout_permutation
from posenc_lib.analysis.ch08_config import PUBLISHED_ROPE, published_wavelengths
from posenc_lib.analysis.ch08_precision import RECIPES, worst_angle_error
from posenc_lib.rope_scaling import rope_inv_freq
from posenc_lib.viz.ch08_layout import (
    angle_errors,
    attention_layouts,
    row_sources,
)
from posenc_lib.viz.ch08_layout import (
    published_wavelengths as wavelength_figure,
)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _lines(fig):
    return [line for ax in fig.axes for line in ax.get_lines()]


def test_published_wavelengths_draws_one_curve_per_model():
    waves = published_wavelengths()
    lengths = {e.model: e.config["max_position_embeddings"] for e in PUBLISHED_ROPE}
    fig = wavelength_figure(waves, lengths)
    curves = [line for line in _lines(fig) if len(line.get_xdata()) > 2]
    assert len(curves) == len(PUBLISHED_ROPE)
    # Llama 3's slowest pair: 2 pi * 500000 ** (126 / 128), about 2.5 million positions.
    llama3 = [c for c in curves if c.get_label() == "Llama 3 8B"][0]
    assert llama3.get_ydata()[-1] == pytest.approx(float(waves["Llama 3 8B"][-1]))
    assert fig.axes[0].get_yscale() == "log"


def test_row_sources_plots_the_permutation():
    source = (torch.arange(2)[:, None] * 64 + layout_permutation(64)).flatten()
    fig = row_sources(source, 64, heads=2)
    dots = _lines(fig)[0]
    assert list(dots.get_ydata()[:3]) == [0, 2, 4]
    assert len(dots.get_xdata()) == 128


def test_attention_layouts_shows_the_difference():
    right = torch.eye(4)
    wrong = torch.full((4, 4), 0.25).tril()
    fig = attention_layouts({"model": right, "wrong": wrong}, ["a", "b", "c", "d"])
    images = [ax.get_images()[0] for ax in fig.axes if ax.get_images()]
    assert len(images) == 3
    assert images[-1].get_array()[0, 0] == pytest.approx(-0.75)


def test_angle_errors_one_line_per_recipe():
    inv_freq = rope_inv_freq(64, 100000.0, dtype=torch.float64)[0]
    positions = torch.arange(1, 1024)
    errors = {r: worst_angle_error(positions, inv_freq, r) for r in RECIPES}
    fig = angle_errors(positions, errors)
    labelled = [line for line in _lines(fig) if line.get_label() in RECIPES]
    assert len(labelled) == len(RECIPES)
    assert fig.axes[0].get_xscale() == "log"
