"""Chapter 5's dashboard: the readout names the head's slope and window, the figure shows the view
it was given, and settings past the end are clamped and said so (the loops over every dashboard
are in tests/viz/test_dashboards.py)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_lib.viz.ch05_alibi import alibi_dashboard


@pytest.fixture
def dashboard():
    made = alibi_dashboard()
    yield made
    plt.close(made.figure)


def test_the_readout_gives_the_slope_and_the_window(dashboard):
    dashboard.set(num_heads=8, head=1, n_positions=256)
    text = dashboard.readout.value
    assert "head <b>1</b> of 8" in text and "= <b>0.5</b>" in text
    assert "every <b>4.6</b> tokens" in text
    assert dashboard.result.near_alibi > 0.8 > 0.1 > dashboard.result.near_content
    dashboard.set(head=8)
    assert "every <b>589.5</b> tokens" in dashboard.readout.value
    assert "longer than the sequence" in dashboard.readout.value
    dashboard.set(n_positions=1024)
    assert "longer than the sequence" not in dashboard.readout.value


def test_twelve_heads_show_four_in_between_and_the_steepest_is_head_nine(dashboard):
    dashboard.set(num_heads=12, head=9)
    plot = dashboard.plot
    assert len(plot.ladder.get_xdata()) == 8 and list(plot.between.get_xdata()) == [9, 10, 11, 12]
    assert plot.ring.get_xdata()[0] == 9
    assert plot.ring.get_ydata()[0] == pytest.approx(2**-0.5)
    assert "m = 2^&minus;0.5" in dashboard.readout.value


def test_a_head_past_the_last_is_clamped_and_the_readout_says_so(dashboard):
    dashboard.set(num_heads=4, head=30)
    assert dashboard.result.head == 3 and dashboard.result.clamped
    assert "only 4 heads: showing the last" in dashboard.readout.value
    assert dashboard.plot.ring.get_xdata()[0] == 4


def test_the_figure_shows_the_view_it_was_given(dashboard):
    dashboard.set(n_positions=1024, head=3)
    view, plot = dashboard.result, dashboard.plot
    assert np.allclose(plot.biased.get_ydata(), view.weights_alibi.numpy())
    assert np.allclose(plot.plain.get_ydata(), view.weights_content.numpy())
    assert plot.window.get_xdata()[0] == pytest.approx(view.window)
    pixels = plot.image.get_array()
    assert pixels.shape == (128, 128) and view.bias_step == 8  # every 8th query and key of 1024
    assert (pixels[np.triu_indices(128, 1)] > 0).all()  # masked keys: above the colour range
    assert (pixels[np.tril_indices(128)] <= 0).all()
    assert plot.image.get_extent() == [-0.5, 1023.5, 1023.5, -0.5]
    assert plot.axes[2].get_xlim() == (0, 1023)
    dashboard.set(n_positions=96)
    assert plot.image.get_array().shape == (96, 96) and dashboard.result.bias_step == 1


def test_bad_settings_get_a_sentence():
    with pytest.raises(ValueError, match="max_heads must be at least 1"):
        alibi_dashboard(max_heads=0)
