"""The start page: a first look at a sinusoidal table (``table_map``) and a position slider over
it (``WavePlot``, ``wave_dashboard``)."""

from __future__ import annotations

import ipywidgets as W
import torch

from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.i18n import _, tr
from posenc_lib.viz.dashboard import Dashboard
from posenc_lib.viz.figures import DIVERGING, new_figure, to_numpy


def table_map(table: torch.Tensor):
    """A sinusoidal table (T, D) as a heatmap: one column per position t, one row per dimension."""
    fig = new_figure(6.0, 2.6)
    ax = fig.subplots()
    image = ax.imshow(to_numpy(table.T), aspect="auto", cmap=DIVERGING, vmin=-1, vmax=1)
    ax.set(
        xlabel=_("position t"),
        ylabel=_("dimension"),
        title=tr("sinusoidal encoding, D = {d}", d=table.shape[1]),
    )
    fig.colorbar(image, ax=ax)
    return fig


class WavePlot:
    """A position table (T, D) as a heatmap with one position marked, and that position's vector.

    ``result`` is (table, t). Left: the table, positions along x, dimensions along y. Right: the
    vector PE_t of the marked position t, one point per dimension. Used by the start page's slider check.
    """

    def __init__(self, result: tuple[torch.Tensor, int], fig=None):
        table, position = result  # (T, D), t
        self.fig = fig if fig is not None else new_figure(8.0, 2.6)
        ax_map, ax_vec = self.fig.subplots(1, 2, width_ratios=[2, 1])
        self.axes = (ax_map, ax_vec)
        n_pos, d_model = table.shape
        self.image = ax_map.imshow(
            to_numpy(table.T), aspect="auto", cmap=DIVERGING, vmin=-1, vmax=1
        )
        self.marker = ax_map.axvline(position, color="black", linewidth=2)
        self.fig.colorbar(self.image, ax=ax_map, ticks=[-1, 0, 1], pad=0.01)
        ax_map.set(xlabel=_("position t"), ylabel=_("dimension"), title=_("sinusoidal table"))
        ax_vec.axvline(0, color="gray", linewidth=0.8)
        (self.vector,) = ax_vec.plot(
            to_numpy(table[position]), range(d_model), linestyle="none", marker="o", markersize=4
        )
        # Same dimension axis as the map, so its labels on the left serve both panels.
        ax_vec.set(xlim=(-1.1, 1.1), ylim=(d_model - 0.5, -0.5), xticks=[-1, 0, 1], yticks=[])
        ax_vec.set_xlabel(_("value"))
        self.update(result)

    def update(self, result: tuple[torch.Tensor, int]) -> None:
        """Show another table of the same shape and another marked position, in place."""
        table, position = result  # (T, D), t
        self.image.set_data(to_numpy(table.T))
        self.marker.set_xdata([position, position])
        self.vector.set_xdata(to_numpy(table[position]))
        self.axes[1].set_title(tr("PE at t = {position}", position=position))


def wave_dashboard(n_positions: int = 64, d_model: int = 32) -> Dashboard:
    """Start page: a slider picks a position; the figure marks it and shows its sinusoidal vector."""
    style = {"description_width": "initial"}
    controls = {
        "position": W.IntSlider(
            value=3, min=0, max=n_positions - 1, description=_("position t"), style=style
        ),
        "base": W.FloatLogSlider(
            value=10000, base=10, min=1, max=5, step=0.25, description="base", style=style
        ),
    }

    def compute(position, base):
        return sinusoidal_encoding(n_positions, d_model, base), position

    def readout(result):
        table, position = result
        values = ", ".join(f"{v:+.2f}" for v in table[position, :4].tolist())
        return tr(
            "PE<sub>{position}</sub> starts ({values}, ...)", position=position, values=values
        )

    return Dashboard(
        _("Move the slider: the black line and the vector follow"),
        controls,
        compute,
        WavePlot,
        readout,
        (8.0, 2.6),
    )
