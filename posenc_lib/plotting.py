"""Figures of the course. Each takes tensors from the math modules and draws them; none computes.

A figure that a dashboard redraws is a small class: ``__init__`` builds the axes and artists once,
``update`` changes their data in place (``set_data``, ``set_height``, tick labels) so a slider moves
without re-creating anything. The caller redraws the canvas (``fig.canvas.draw_idle()``).

Figures are small (dpi 80) so committed notebooks stay light.
"""

from __future__ import annotations

import io
import math

import matplotlib.pyplot as plt
import torch

DPI = 80
DIVERGING = "RdBu_r"  # negative blue, positive red
SEQUENTIAL = "Blues"


def new_figure(width: float, height: float):
    """A figure that does not display itself: the caller (a notebook or a dashboard) shows it."""
    with plt.ioff():
        return plt.figure(figsize=(width, height), dpi=DPI, layout="constrained")


def show(fig) -> None:
    """Show a figure that does not move as a plain PNG, and close it.

    Under ``%matplotlib widget`` every pyplot figure would become a live canvas widget; a figure
    with no controls gains nothing from that and loses robustness (a notebook saved with widget
    state reopens such canvases blank, ipympl issue #359). A PNG shows the same everywhere.
    """
    from IPython.display import Image, display

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=fig.dpi)
    plt.close(fig)
    display(Image(buffer.getvalue()))


def _np(values):
    """A tensor as a NumPy array (matplotlib reads arrays; handing it tensors is deprecated)."""
    return values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else values


def _tokens_on_axis(ax, tokens, axis: str) -> None:
    ticks = list(range(len(tokens)))
    if axis == "x":
        ax.set_xticks(ticks, labels=tokens)
    else:
        ax.set_yticks(ticks, labels=tokens)


class OrderPlot:
    """Chapter 1: what reordering a sentence does to attention (a ``toy.ReorderResult``).

    Left: the attention weights of the reordered sentence (T, T), rows = queries, columns = keys.
    Middle: its outputs Attn(PX) (T, d_v), one row per word, in the same row order as the left.
    Right: per word, the length (2-norm) of the change of its output from the original output of
    the same word, ||Attn(PX)_i - (P Attn(X))_i||; with positions on, X here includes them. All
    bars at zero means attention cannot tell the order.

    Text is kept to what a reader needs: each label costs about 1 ms of every redraw.
    """

    def __init__(self, result, fig=None, drift_limit: float = 4.0):
        self.fig = fig if fig is not None else new_figure(9.6, 3.0)
        ax_w, ax_o, ax_d = self.fig.subplots(1, 3, width_ratios=[1, 1.5, 1])
        self.axes = (ax_w, ax_o, ax_d)
        self._tokens = None  # the word order the tick labels show
        n_words, d_v = result.outputs.shape
        out_limit = float(result.outputs.abs().max()) * 1.1 + 1e-6

        self.weights = ax_w.imshow(
            _np(result.weights), cmap=SEQUENTIAL, vmin=0, vmax=1, interpolation="nearest"
        )
        ax_w.set(title="attention weights", xlabel="key (word attended to)", ylabel="query")
        self.outputs = ax_o.imshow(
            _np(result.outputs),
            cmap=DIVERGING,
            vmin=-out_limit,
            vmax=out_limit,
            aspect="auto",
            interpolation="nearest",
        )
        ax_o.set(title=f"outputs, one row per word ({d_v} dims)", xticks=[], yticks=[])
        tick = math.floor(out_limit * 10) / 10  # a round value inside the colour range
        self.fig.colorbar(self.outputs, ax=ax_o, ticks=[-tick, 0, tick])
        self.bars = ax_d.bar(range(n_words), _np(result.drift), color="tab:red")
        ax_d.set(title="change per word (norm)")
        ax_d.set_ylim(0, drift_limit)
        ax_d.set_yticks([0, drift_limit / 2, drift_limit])
        self.bar_labels = [
            ax_d.text(i, 0, "", ha="center", va="bottom", fontsize=8) for i in range(n_words)
        ]
        self.update(result)

    def update(self, result) -> None:
        """Show another ReorderResult of the same sentence length, changing artists in place."""
        ax_w, ax_o, ax_d = self.axes
        self.weights.set_data(_np(result.weights))
        self.outputs.set_data(_np(result.outputs))
        if result.tokens != self._tokens:  # relabel only when the order changed
            for axis, ax in (("x", ax_w), ("y", ax_w), ("x", ax_d)):  # ax_o's rows line up
                _tokens_on_axis(ax, result.tokens, axis)
            self._tokens = result.tokens
        top = ax_d.get_ylim()[1]
        for bar, label, drift in zip(
            self.bars, self.bar_labels, result.drift.tolist(), strict=True
        ):
            bar.set_height(min(drift, top))
            label.set_y(min(drift, top * 0.9))
            label.set_text(f"{drift:.0e}" if drift < 1e-3 else f"{drift:.2f}")


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
        self.image = ax_map.imshow(_np(table.T), aspect="auto", cmap=DIVERGING, vmin=-1, vmax=1)
        self.marker = ax_map.axvline(position, color="black", linewidth=2)
        self.fig.colorbar(self.image, ax=ax_map, ticks=[-1, 0, 1], pad=0.01)
        ax_map.set(xlabel="position t", ylabel="dimension", title="sinusoidal table")
        ax_vec.axvline(0, color="gray", linewidth=0.8)
        (self.vector,) = ax_vec.plot(
            _np(table[position]), range(d_model), linestyle="none", marker="o", markersize=4
        )
        # Same dimension axis as the map, so its labels on the left serve both panels.
        ax_vec.set(xlim=(-1.1, 1.1), ylim=(d_model - 0.5, -0.5), xticks=[-1, 0, 1], yticks=[])
        ax_vec.set_xlabel("value")
        self.update(result)

    def update(self, result: tuple[torch.Tensor, int]) -> None:
        """Show another table of the same shape and another marked position, in place."""
        table, position = result  # (T, D), t
        self.image.set_data(_np(table.T))
        self.marker.set_xdata([position, position])
        self.vector.set_xdata(_np(table[position]))
        self.axes[1].set_title(f"PE at t = {position}")
