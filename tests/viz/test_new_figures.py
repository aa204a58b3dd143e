"""Figures of chapters 2, 3, 4, 6 and 7 draw the data they are given (lines, bands, images, labels)."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from posenc_lib.analysis.ch03_add_concat import CrossTerms
from posenc_lib.models.results import load_results
from posenc_lib.viz import ch02_naive, ch03_add_concat, ch04_encdec, ch06_beyond
from posenc_lib.viz import ch07_extrapolation as ch07


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def legend_labels(ax):
    return [text.get_text() for text in ax.get_legend().get_texts()]


def band_limits(band, x):
    """The lowest and highest y of a fill_between band at the abscissa x."""
    vertices = np.concatenate([path.vertices for path in band.get_paths()])
    ys = vertices[np.isclose(vertices[:, 0], x), 1]
    assert ys.size, f"the band does not reach x = {x}"
    return ys.min(), ys.max()


def check_seed_panel(ax, results, rows):
    """One line (the means) and one band (min..max) per row, over the lengths the row could run."""
    assert len(ax.lines) == len(rows)
    assert len(ax.collections) == len(rows)
    assert legend_labels(ax) == rows
    for line, band, name in zip(ax.lines, ax.collections, rows, strict=True):
        row = results["rows"][name]
        known = [t for t in results["lengths"] if row["ppl"][str(t)] is not None]
        x = [t / results["L"] for t in known]
        assert line.get_label() == name
        np.testing.assert_allclose(line.get_xdata(), x)
        np.testing.assert_allclose(line.get_ydata(), [row["ppl"][str(t)] for t in known])
        assert band.get_facecolor()[0][:3] == pytest.approx(
            plt.matplotlib.colors.to_rgb(line.get_color())
        )
        for t, at in zip(known, x, strict=True):
            low, high = band_limits(band, at)
            assert low == pytest.approx(row["min"][str(t)])
            assert high == pytest.approx(row["max"][str(t)])
        if len(known) > 1:  # nothing beyond the last length the row ran at
            vertices = np.concatenate([path.vertices for path in band.get_paths()])
            assert vertices[:, 0].min() == pytest.approx(x[0])
            assert vertices[:, 0].max() == pytest.approx(x[-1])


def test_seed_bands_draws_the_committed_results_one_panel_per_comparison():
    results = load_results()
    panels = {
        "sinusoidal: unscaled and x sqrt(d)": ["sinusoidal", "sinusoidal-scaled"],
        "learned table: unscaled and x sqrt(d)": ["learned", "learned-scaled"],
        "for comparison": ["none", "rope", "alibi"],
    }
    fig = ch07.seed_bands(results, panels)
    assert len(fig.axes) == len(panels)
    for ax, (title, rows) in zip(fig.axes, panels.items(), strict=True):
        assert ax.get_title() == title
        assert ax.get_xscale() == ax.get_yscale() == "log"
        check_seed_panel(ax, results, rows)
    learned = fig.axes[1].lines  # the learned tables have no rows beyond T = L
    for line in learned:
        np.testing.assert_allclose(line.get_xdata(), [1.0])
    assert len(fig.axes[0].lines[0].get_xdata()) == len(results["lengths"])
    assert f"{len(results['seeds'])} seeds" in fig.axes[0].get_ylabel()


def tiny_results():
    def row(ppl, spread=0.5):
        return {
            "ppl": {k: v for k, v in ppl.items()},
            "min": {k: (None if v is None else v - spread) for k, v in ppl.items()},
            "max": {k: (None if v is None else v + 2 * spread) for k, v in ppl.items()},
        }

    return {
        "L": 8,
        "lengths": [8, 16, 32, 64],
        "seeds": [0, 1],
        "rows": {
            "grows": row({"8": 3.0, "16": 6.0, "32": 12.0, "64": 24.0}),
            "fixed": row({"8": 2.5, "16": None, "32": None, "64": None}, spread=0.1),
            "flat": row({"8": 4.0, "16": 4.1, "32": 4.2, "64": 4.3}, spread=0.2),
        },
    }


def test_seed_bands_draws_a_line_and_a_band_per_row_and_stops_rows_that_cannot_run():
    results = tiny_results()
    panels = {"first": ["grows", "fixed"], "second": ["flat"]}
    fig = ch07.seed_bands(results, panels)
    assert [ax.get_title() for ax in fig.axes] == ["first", "second"]
    check_seed_panel(fig.axes[0], results, ["grows", "fixed"])
    check_seed_panel(fig.axes[1], results, ["flat"])
    np.testing.assert_allclose(fig.axes[0].lines[0].get_xdata(), [1, 2, 4, 8])
    np.testing.assert_allclose(fig.axes[0].lines[1].get_xdata(), [1])
    assert fig.axes[0].lines[0].get_color() != fig.axes[0].lines[1].get_color()
    assert "2 seeds" in fig.axes[0].get_ylabel()


def test_decay_curves_draws_each_curve_up_to_half_its_table():
    curves = {
        "ten rows": torch.linspace(1.0, 0.1, 10),
        "seven rows": torch.tensor([1.0, 0.9, 0.5, 0.2, -0.1, -0.3, -0.4]),
    }
    fig = ch02_naive.decay_curves(curves, marks=(2, 4))
    (ax,) = fig.axes
    ten, seven = ax.lines[:2]
    np.testing.assert_allclose(ten.get_xdata(), [1, 2, 3, 4, 5])  # offsets 1 .. T // 2
    np.testing.assert_allclose(ten.get_ydata(), curves["ten rows"][1:6].numpy())
    np.testing.assert_allclose(seven.get_xdata(), [1, 2, 3])
    np.testing.assert_allclose(seven.get_ydata(), curves["seven rows"][1:4].numpy())
    assert ten.get_color() != seven.get_color()
    assert legend_labels(ax) == list(curves)
    verticals = [line.get_xdata()[0] for line in ax.lines[2:4]]
    assert verticals == [2, 4]  # the marks
    assert len(ax.lines) == 5  # two curves, two marks, the zero line
    assert ax.get_xscale() == "log"


def test_decay_curves_draws_equal_curves_as_one_line_with_both_names():
    flat = torch.ones(8)  # the integer and normalized tables: every cosine is 1
    curves = {"integer": flat, "normalized": flat.clone(), "falls": torch.linspace(1, 0, 8)}
    fig = ch02_naive.decay_curves(curves, marks=())
    (ax,) = fig.axes
    assert legend_labels(ax) == ["integer = normalized", "falls"]
    assert len(ax.lines) == 3  # two curves and the zero line


def test_cross_terms_fade_draws_the_three_curves_and_the_trained_point():
    cross = CrossTerms([16, 64, 256], [0.2, 0.1, 0.05], [0.15, 0.08, 0.04])
    random_cosine = [0.19, 0.099, 0.049]
    fig = ch03_add_concat.cross_terms_fade(cross, random_cosine, (384, 0.03, "a trained model"))
    (ax,) = fig.axes
    assert len(ax.lines) == 4
    for line in ax.lines[:3]:
        np.testing.assert_allclose(line.get_xdata(), cross.widths)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), cross.word_position_cosine)
    np.testing.assert_allclose(ax.lines[1].get_ydata(), random_cosine)
    np.testing.assert_allclose(ax.lines[2].get_ydata(), cross.cosine_gap)
    assert ax.lines[1].get_linestyle() == ":"
    np.testing.assert_allclose(ax.lines[3].get_xydata(), [[384, 0.03]])
    assert legend_labels(ax)[-1] == "a trained model"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["16", "64", "256"]
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_cross_terms_fade_without_a_trained_model_draws_three_lines():
    cross = CrossTerms([16, 32], [0.2, 0.14], [0.15, 0.1])
    fig = ch03_add_concat.cross_terms_fade(cross, [0.19, 0.14])
    (ax,) = fig.axes
    assert len(ax.lines) == 3
    assert len(legend_labels(ax)) == 3


def test_cross_attention_maps_places_each_panel_on_its_row_and_column():
    g = torch.Generator().manual_seed(0)
    panels = {
        name: torch.rand(3, 6, generator=g).softmax(-1)
        for name in (
            "plain | original",
            "with PE | reversed",
            "plain | reversed",
            "with PE | original",
        )
    }
    panels["with PE | reversed"] = panels["with PE | reversed"] * 1.5  # the largest weight
    queries, keys = ["die", "Katze", "sass"], "the cat sat on the mat".split()
    fig = ch04_encdec.cross_attention_maps(panels, queries, keys)
    maps = [ax for ax in fig.axes if ax.images]
    assert len(maps) == 4
    assert len(fig.axes) == 5  # four maps and one shared colour bar
    grid = {("plain", "original"): 0, ("plain", "reversed"): 1}
    grid |= {("with PE", "original"): 2, ("with PE", "reversed"): 3}
    top = float(max(w.max() for w in panels.values()))
    for (row, col), index in grid.items():
        ax, weights = maps[index], panels[f"{row} | {col}"]
        assert ax.get_title() == f"{row}\n{col}"
        np.testing.assert_allclose(ax.images[0].get_array(), weights.numpy())
        assert ax.images[0].get_clim() == pytest.approx((0, top))
        assert [t.get_text() for t in ax.get_xticklabels()] == keys
        assert [t.get_text() for t in ax.get_yticklabels()] == queries
    assert "order" in fig.get_suptitle()


def test_shift_changes_draws_one_line_per_variant_clipped_for_the_log_scale():
    shifts = [1, 10, 100]
    changes = {
        "q, k turned": [0.0, 1e-20, 3e-15],
        "v turned too": torch.tensor([0.1, 0.5, 1.2]),
    }
    fig = ch06_beyond.shift_changes(shifts, changes)
    (ax,) = fig.axes
    assert len(ax.lines) == 2
    np.testing.assert_allclose(ax.lines[0].get_xdata(), shifts)
    np.testing.assert_allclose(ax.lines[0].get_ydata(), [1e-16, 1e-16, 3e-15])
    np.testing.assert_allclose(ax.lines[1].get_ydata(), [0.1, 0.5, 1.2], rtol=1e-6)
    assert legend_labels(ax) == list(changes)
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_wavelength_vs_base_draws_the_curve_the_rule_and_each_model():
    bases = torch.logspace(3, 6, 7, dtype=torch.float64)
    waves = 2 * torch.pi * bases ** (126 / 128)
    models = {"model A": (1e4, 2048), "model B": (5e5, 8192)}
    fig = ch06_beyond.wavelength_vs_base(bases, waves, models)
    (ax,) = fig.axes
    assert len(ax.lines) == 2 + len(models)
    np.testing.assert_allclose(ax.lines[0].get_xdata(), bases.numpy())
    np.testing.assert_allclose(ax.lines[0].get_ydata(), waves.numpy())
    np.testing.assert_allclose(ax.lines[1].get_ydata(), bases.numpy())  # context = base
    assert ax.lines[1].get_linestyle() == "--"
    for line, (base, context) in zip(ax.lines[2:], models.values(), strict=True):
        np.testing.assert_allclose(line.get_xydata(), [[base, context]])
    assert [(t.get_text(), t.xy) for t in ax.texts] == [
        (name, point) for name, point in models.items()
    ]
    assert ax.get_xscale() == ax.get_yscale() == "log"


def test_lag_curves_draws_the_recurrence_the_scores_and_the_period():
    recurrence = torch.rand(25, generator=torch.Generator().manual_seed(1))
    profiles = {"tuned": torch.cos(torch.arange(1, 26) * 0.6), "ladder": torch.linspace(1, 0, 25)}
    fig = ch06_beyond.lag_curves(recurrence, profiles, 10.5)
    top, bottom = fig.axes
    heights = [bar.get_height() for bar in top.patches]
    np.testing.assert_allclose(heights, recurrence.numpy())
    assert [bar.get_x() + bar.get_width() / 2 for bar in top.patches] == pytest.approx(range(1, 26))
    scores = bottom.lines[: len(profiles)]
    for line, score in zip(scores, profiles.values(), strict=True):
        np.testing.assert_allclose(line.get_xdata(), range(1, 26))
        np.testing.assert_allclose(line.get_ydata(), score.numpy(), rtol=1e-6)
    assert legend_labels(bottom) == list(profiles)
    for periods in (top.lines, bottom.lines[len(profiles) :]):
        assert [line.get_xdata()[0] for line in periods] == [10.5, 21.0]  # multiples <= 25


def test_grid_score_maps_draws_each_map_on_its_own_symmetric_scale():
    g = torch.Generator().manual_seed(2)
    maps = {
        "2-D RoPE": torch.randn(6, 8, generator=g),
        "raster": 3 * torch.randn(6, 8, generator=g),
    }
    fig = ch06_beyond.grid_score_maps(maps)
    images = [ax for ax in fig.axes if ax.images]
    assert len(images) == 2
    assert len(fig.axes) == 4  # a colour bar per map
    for ax, (title, scores) in zip(images, maps.items(), strict=True):
        assert ax.get_title() == title
        np.testing.assert_allclose(ax.images[0].get_array(), scores.numpy())
        limit = float(scores.abs().max())
        assert ax.images[0].get_clim() == pytest.approx((-limit, limit))
    assert images[0].images[0].get_clim() != pytest.approx(images[1].images[0].get_clim())


def test_grid_score_maps_draws_a_single_map():
    fig = ch06_beyond.grid_score_maps({"only": torch.randn(3, 4)})
    assert len([ax for ax in fig.axes if ax.images]) == 1


def test_lag_curves_refuses_a_period_that_is_not_positive():
    with pytest.raises(ValueError, match="period must be a positive"):
        ch06_beyond.lag_curves(torch.ones(4), {"x": torch.ones(4)}, 0)
