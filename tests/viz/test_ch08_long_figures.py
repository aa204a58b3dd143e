"""Chapter 8, section 6: the long-context figures and dashboard, drawn from results (no model)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_lib.analysis import ch08_experiment as er
from posenc_lib.analysis.ch08_long import SCALINGS
from posenc_lib.viz import ch08_long as V

WINDOWS = [4096, 8192, 12288, 16384]


def _results():
    """A results dict shaped as ch08_experiment writes it, with made-up numbers."""
    level = {"none": 10.0, "PI": 14.0, "dynamic": 10.0, "YaRN": 11.0}
    perplexity = {}
    for m in SCALINGS:
        perplexity[m] = {}
        for w in WINDOWS:
            bins = [level[m] * (1 + (50 if m == "none" and k * 512 >= 8192 else 0)) for k in
                    range(w // 512)]  # fmt: skip
            perplexity[m][str(w)] = {"bins": bins, "last_quarter": bins[-1], "overall": bins[0]}
    passkey = {
        m: {
            str(n): [{"found": not (n > 8192 and m in ("none", "PI")), "depth": 0.5}] * 3
            for n in (1024, 4096, 8192, 12288)
        }
        for m in SCALINGS
    }
    copy = {m: {str(b): {"first": 13.0, "second": 3.0 + (m == "PI") * 9} for b in (512, 1024)}
            for m in SCALINGS}  # fmt: skip
    return {
        "trained": 8192,
        "methods": SCALINGS,
        "settings": {"windows": WINDOWS, "bin": 512, "copy_blocks": [512, 1024], "factor": 2.0},
        "perplexity": perplexity,
        "passkey": passkey,
        "copy": copy,
    }


@pytest.fixture
def results():
    return _results()


def test_perplexity_by_position_draws_a_line_per_method_and_the_trained_length(results):
    fig = V.perplexity_by_position(results)
    ax = fig.axes[0]
    lines = [line for line in ax.get_lines() if len(line.get_xdata()) > 2]
    assert len(lines) == 4
    assert len(lines[0].get_xdata()) == 16384 // 512
    assert any(list(line.get_xdata()) == [8192, 8192] for line in ax.get_lines())
    assert "last quarter 510.0" in " ".join(t.get_text() for t in ax.get_legend().get_texts())
    plt.close(fig)


def test_passkey_grid_writes_found_over_tried_in_each_cell(results):
    fig = V.passkey_grid(results)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts.count("3/3") == 14 and texts.count("0/3") == 2
    plt.close(fig)


def test_copy_losses_draws_each_method(results):
    fig = V.copy_losses(results)
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    # Methods with the same losses (here all but PI) are one line with every name: a second line
    # on the same points would hide the first.
    assert labels == ["no scaling = dynamic NTK = YaRN", "PI", "uniform guess, ln 49,152"]
    assert len(fig.axes[0].get_lines()) == 3
    top = max(line.get_ydata().max() for line in fig.axes[0].get_lines()[:2])
    assert fig.axes[0].get_ylim()[1] > top  # every line inside the plot (PI's 13 nats too)
    plt.close(fig)


def test_the_dashboard_responds_to_method_and_window(results):
    dash = V.long_context_dashboard(results)
    plot = dash.plot
    assert dash.values() == {"method": "YaRN", "window": 16384}
    assert "last-quarter perplexity <b>11.0</b> (no scaling 510.0)" in dash.readout.value
    assert "12k 3/3" in dash.readout.value
    # YaRN keeps the fast pairs and halves the slow ones (factor 2).
    assert plot.ratio.get_ydata()[0] == pytest.approx(1.0)
    assert plot.ratio.get_ydata()[-1] == pytest.approx(0.5)
    dash.set(method="none")
    assert "12k 0/3" in dash.readout.value
    assert np.allclose(plot.ratio.get_ydata(), 1.0)
    assert [b.get_height() for b in plot.bars] == [1, 1, 1, 0]
    # Dynamic NTK: no change inside 8,192, a smaller lowest frequency at 16,384.
    dash.set(method="dynamic", window=8192)
    assert np.allclose(plot.ratio.get_ydata(), 1.0)
    assert len(plot.curve.get_xdata()) == 8192 // 512
    dash.set(window=16384)
    assert plot.ratio.get_ydata()[-1] < 0.5
    assert dash.changes == 4  # four control moves, each one redraw
    plt.close(dash.figure)


def test_the_dashboard_refuses_a_window_it_has_no_numbers_for(results):
    with pytest.raises(ValueError, match="no committed perplexity"):
        V.long_view("YaRN", 2048, results)


@pytest.mark.skipif(not er.COMMITTED.exists(), reason="no committed results.json yet")
def test_the_committed_results_draw():
    committed = er.load_results()
    for make in (V.perplexity_by_position, V.passkey_grid, V.copy_losses):
        plt.close(make(committed))
    dash = V.long_context_dashboard()
    for name, value in dash.sweep(6):
        dash.controls[name].value = value
    assert dash.changes == 6
    plt.close(dash.figure)
