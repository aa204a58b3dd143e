"""Dashboards: driven by setting control values, as a test or a benchmark does without a browser."""

import base64
import math

import ipywidgets as W
import matplotlib.pyplot as plt
import numpy as np
import pytest

from posenc_lib.viz.ch00_start import wave_dashboard
from posenc_lib.viz.ch01_order import order_dashboard
from posenc_lib.viz.registry import DASHBOARDS


@pytest.fixture(params=sorted(DASHBOARDS))
def dashboard(request):
    made = DASHBOARDS[request.param]()
    yield made
    plt.close(made.figure)


def _artists(figure):
    return [id(a) for ax in figure.axes for a in ax.get_children()]


def test_every_control_change_redraws_in_place(dashboard):
    figure, plot, artists = dashboard.figure, dashboard.plot, _artists(dashboard.figure)
    pictures, readouts = {dashboard.png()}, {dashboard.readout.value}
    for n, (name, value) in enumerate(dashboard.sweep(12), start=1):
        dashboard.controls[name].value = value
        assert dashboard.changes == n
        assert dashboard.values()[name] == value
        pictures.add(dashboard.png())
        readouts.add(dashboard.readout.value)
    # The same figure, axes and artists throughout: only their data changed.
    assert dashboard.figure is figure and dashboard.plot is plot
    assert _artists(dashboard.figure) == artists
    assert len(pictures) > 6 and len(readouts) > 3


def test_sweep_visits_every_control_with_real_changes(dashboard):
    current = dashboard.values()
    seen = set()
    for name, value in dashboard.sweep(4 * len(dashboard.controls)):
        assert value != current[name]
        current[name] = value
        seen.add(name)
    assert seen == set(dashboard.controls)


def test_displayed_dashboard_carries_a_png_for_readers_without_a_kernel(dashboard):
    bundle = dashboard._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert base64.b64decode(bundle["image/png"]).startswith(b"\x89PNG")
    assert "live dashboard" in bundle["text/plain"]


def test_order_dashboard_readout_tells_order_blind_from_order_aware():
    dashboard = order_dashboard()
    dashboard.set(order=(2, 1, 0))
    assert "cannot tell the order" in dashboard.readout.value
    assert [t.get_text() for t in dashboard.plot.axes[0].get_xticklabels()] == [
        "man",
        "bites",
        "dog",
    ]
    dashboard.set(positions=True)
    assert "can tell the orders apart" in dashboard.readout.value
    assert dashboard.result.max_deviation > 0.1
    plt.close(dashboard.figure)


def test_wave_dashboard_moves_its_marker():
    dashboard = wave_dashboard()
    dashboard.set(position=30)
    assert dashboard.plot.marker.get_xdata()[0] == 30
    plt.close(dashboard.figure)


def test_bad_dashboard_requests_get_a_sentence():
    dashboard = wave_dashboard()
    with pytest.raises(ValueError, match="no control named speed"):
        dashboard.set(speed=3)
    plt.close(dashboard.figure)
    with pytest.raises(ValueError, match="at most 4 words"):
        order_dashboard("the quick brown fox jumps")


# ipympl's own toolbar triggers a traitlets deprecation warning; not ours to fix.
@pytest.mark.filterwarnings("ignore:Passing unrecognized arguments:DeprecationWarning")
def test_under_ipympl_the_live_canvas_is_part_of_the_widget():
    previous = plt.get_backend()
    plt.switch_backend("module://ipympl.backend_nbagg")
    try:
        dashboard = order_dashboard()
        assert dashboard.live and isinstance(dashboard.figure.canvas, W.DOMWidget)
        assert dashboard.figure.canvas in dashboard.widget.children
        assert not dashboard.figure.canvas.toolbar_visible
        plt.close(dashboard.figure)
    finally:
        plt.switch_backend(previous)


def test_order_dashboard_strength_works_only_with_positions_on():
    dashboard = order_dashboard()
    assert dashboard.controls["strength"].disabled
    dashboard.set(positions=True)
    assert not dashboard.controls["strength"].disabled
    strong = dashboard.result.max_deviation
    dashboard.set(strength=0.2)
    assert dashboard.result.max_deviation < strong
    # Every strength the lecture measures (section 5: 0.01, 0.1, 1) is on the slider.
    slider = dashboard.controls["strength"]
    assert slider.base**slider.min == pytest.approx(0.01) and slider.base**slider.max > 1
    assert all(((math.log10(s) - slider.min) / slider.step) % 1 == 0 for s in (0.01, 0.1, 1.0))
    # The figure shows the new result, not an old one.
    assert np.allclose(dashboard.plot.weights.get_array(), dashboard.result.weights.numpy())
    plt.close(dashboard.figure)


def test_the_still_image_caption_leaves_the_figure_as_it_was():
    dashboard = order_dashboard()
    texts, plain = len(dashboard.figure.texts), dashboard.png()
    captioned = dashboard.png(caption=True)
    assert captioned != plain
    assert len(dashboard.figure.texts) == texts and dashboard.png() == plain
    plt.close(dashboard.figure)


def test_a_setting_the_math_refuses_is_explained_in_the_readout():
    dashboard = order_dashboard()
    dashboard._compute = lambda **values: (_ for _ in ()).throw(ValueError("pe_scale must be >= 0"))
    before = dashboard.result
    dashboard.set(causal=True)
    assert "pe_scale must be &gt;= 0" in dashboard.readout.value
    assert dashboard.result is before and dashboard.changes == 0
    plt.close(dashboard.figure)


def test_table_dashboard_reads_out_the_binary_steps_and_clamps_the_position():
    from posenc_lib.viz.ch02_naive import table_dashboard

    dashboard = table_dashboard()
    dashboard.set(name="binary", n_positions=64, position=31)
    # Binary: the longest step is 31 -> 32, where six bits flip (sqrt 6 = 2.45).
    assert "longest <b>2.45</b> (t = 31 &rarr; 32, the panel's peak)" in dashboard.readout.value
    assert dashboard.plot.dot.get_ydata()[0] == pytest.approx(6**0.5)
    dashboard.set(name="integer", n_positions=16, position=200)
    assert "max |value| = <b>15</b>" in dashboard.readout.value
    assert "showing t = 15" in dashboard.readout.value
    assert dashboard.plot.marker.get_xdata()[0] == 15
    assert [t.get_text() for t in dashboard.plot.colorbar.ax.get_xticklabels()][-1] == "255"
    plt.close(dashboard.figure)
    with pytest.raises(ValueError, match="max_positions must be at most 16"):
        table_dashboard(d_model=4, max_positions=64)


def test_sinusoid_dashboard_reads_out_confusion_and_keeps_its_axes():
    from posenc_lib.viz.ch03_sinusoid import sinusoid_dashboard

    dashboard = sinusoid_dashboard()
    assert "47,117" in dashboard.readout.value and "none confused" in dashboard.readout.value
    limits = [ax.get_ylim() for ax in dashboard.plot.axes]
    dashboard.set(d_model=8)  # base 10000 with 8 dims: t + 6 is closer than t + 1
    assert "first confusion at k = <b>6</b>" in dashboard.readout.value
    assert dashboard.plot.image.get_array().shape == (8, 128)
    assert [ax.get_ylim() for ax in dashboard.plot.axes] == limits  # the frame does not move
    dashboard.set(d_model=64, position=40, offset=-7)
    assert dashboard.plot.shifted.get_xdata()[0] == 33
    assert dashboard.plot.dot.get_ydata()[0] == pytest.approx(
        float(dashboard.result.table[40] @ dashboard.result.table[33]) / 32, abs=1e-5
    )
    dashboard.set(d_model=27)  # a width a script might set: rounded to an even one
    assert dashboard.result.table.shape[1] % 2 == 0
    # The base moves in even steps on a log scale (R20: value k is 10^(k/20) rounded to 3 digits,
    # within 1.3%) and shows round labels; the lecture's bases 10 .. 10000 and 1.4 / 1.6 are on it.
    bases = [value for _, value in dashboard.controls["base"].options]
    grid = [10 ** (round(20 * math.log10(b)) / 20) for b in bases]  # the exact log-even steps
    assert [round(20 * math.log10(g)) for g in grid] == list(range(2, 101))  # 1.25 .. 100,000
    assert all(abs(b / g - 1) < 0.013 for b, g in zip(bases, grid, strict=True))
    assert {1.4, 1.6, 10.0, 100.0, 1000.0, 10000.0} <= set(bases)
    assert all(
        len(label.replace(",", "").replace(".", "")) <= 6
        for label, _ in dashboard.controls["base"].options
    )
    dashboard.set(base=1.4)  # below the smallest unambiguous base for D = 64 (1.55)
    assert "first confusion" in dashboard.readout.value
    dashboard.set(base=1.6)
    assert "none confused" in dashboard.readout.value
    plt.close(dashboard.figure)


def test_scaling_dashboard_reads_out_the_experiment_and_says_when_it_does_not_apply():
    from posenc_lib.models.results import load_results
    from posenc_lib.viz.ch07_extrapolation import scaling_dashboard

    results = load_results()  # the committed means over seeds: the dashboard must show them
    pi, tuned = results["scaled"]["linear"]["4"], results["finetuned"]
    control_4l = tuned["default"]["ppl"]["256"]
    dashboard = scaling_dashboard()
    readout = dashboard.readout.value
    # PI, s = 4: every frequency divided by 4; the committed curve and the fine-tuned one.
    assert "<b>5</b> of 16 pairs" in readout and "&times;<b>0.25</b>" in readout
    assert f"<b>{pi['64']:.2f}</b> / <b>{pi['512']:.2f}</b>" in readout
    assert f"<b>{tuned['linear']['ppl']['256']:.2f}</b> at 4L" in readout
    # the control beside it: plain RoPE fine-tuned the same way, grey dashed
    assert f"(plain RoPE fine-tuned the same way: <b>{control_4l:.2f}</b>)" in readout
    control = dashboard.plot.control
    assert np.allclose(10 ** np.asarray(control.get_ydata())[2], control_4l, rtol=1e-6)
    dashboard.set(method="YaRN")
    assert dashboard.plot.control is control and len(control.get_ydata()) == 4  # same artist
    assert f"fine-tuned the same way: <b>{control_4l:.2f}</b>" in dashboard.readout.value
    dashboard.set(method="NTK")
    assert (
        len(control.get_ydata()) == 0 and "fine-tuned the same way" not in dashboard.readout.value
    )
    dashboard.set(method="YaRN", factor=8)
    assert "attention scale &radic;(1/t) = 0.1 ln s + 1 = <b>1.208</b>" in dashboard.readout.value
    assert "measured for base 10000" not in dashboard.readout.value
    ntk = dashboard.plot.ratios["NTK"].get_ydata()
    assert np.allclose(ntk, dashboard.plot.ratios["dynamic"].get_ydata())  # at length sL
    dashboard.set(base=1e5)
    assert "measured for base 10000 and L = 64 only" in dashboard.readout.value
    dashboard.set(base=1e4, train_len=128)
    assert "measured for base 10000 and L = 64 only" in dashboard.readout.value
    assert dashboard.plot.length.get_ydata()[0] == pytest.approx(np.log10(128))
    plt.close(dashboard.figure)


def test_compact_png_keeps_the_picture_in_fewer_bytes():
    import io

    import numpy as np
    from PIL import Image

    from posenc_lib.viz import figures

    fig = figures.new_figure(4, 2)
    ax = fig.subplots()
    ax.imshow(np.linspace(-1, 1, 400).reshape(20, 20), cmap=figures.DIVERGING)
    ax.plot([0, 19], [0, 19], color="black")
    raw = io.BytesIO()
    fig.savefig(raw, format="png", dpi=fig.dpi)
    small = figures.compact_png(raw.getvalue())
    before = np.asarray(Image.open(io.BytesIO(raw.getvalue())).convert("RGB"), dtype=float)
    after = np.asarray(Image.open(io.BytesIO(small)).convert("RGB"), dtype=float)
    assert before.shape == after.shape
    error = np.abs(before - after)  # (H, W, 3), in 0..255 levels
    assert error.mean() < 1.0 and np.quantile(error, 0.999) <= 24  # a palette step at most
    assert error.max() <= 48  # a few anti-aliased edge pixels land one step further
    assert len(small) < 0.7 * len(raw.getvalue())


def test_the_still_image_caption_keeps_subscripts_and_angle_brackets():
    from posenc_lib.viz.dashboard import caption_text

    readout = "&lang;PE<sub>t</sub>, PE<sub>t+k</sub>&rang; = <b>22.41</b>; 2&pi;&middot;base"
    assert caption_text(readout) == "⟨PEₜ, PEₜ₊ₖ⟩ = 22.41; 2π·base"  # not "(PEt, PEt+k)"
    assert caption_text("x<sub>q,w</sub> y<sup>2</sup> z<sup>ab</sup>") == "x_(q,w) y² z^(ab)"
    dashboard = sinusoid_dashboard_for_caption()
    try:
        assert "PEₜ₊ₖ" in caption_text(dashboard.readout.value)
    finally:
        plt.close(dashboard.figure)


def sinusoid_dashboard_for_caption():
    from posenc_lib.viz.ch03_sinusoid import sinusoid_dashboard

    return sinusoid_dashboard()


def test_sinusoid_table_panel_shows_sines_above_cosines_filling_the_axes():
    """Interleaved rows (sin near 0 beside cos near 1, a pixel each) read as stripes, not waves."""
    from posenc_lib.viz.ch03_sinusoid import sinusoid_dashboard

    dashboard = sinusoid_dashboard()
    for d_model in (64, 16):
        dashboard.set(d_model=d_model)
        table = dashboard.result.table.numpy()  # (T, D)
        shown = np.asarray(dashboard.plot.image.get_array())  # (D, T), sines first
        np.testing.assert_array_equal(shown[: d_model // 2], table[:, 0::2].T)
        np.testing.assert_array_equal(shown[d_model // 2 :], table[:, 1::2].T)
        assert dashboard.plot.image.get_extent()[2:] == [1, 0]  # the whole height, any D
    plt.close(dashboard.figure)
