"""Chapter 1's figures and dashboard: what reordering a sentence does to attention."""

from __future__ import annotations

import itertools
import math

import ipywidgets as W
import torch

from posenc_lib.analysis.ch01_order import reorder_experiment
from posenc_lib.bounds import bound
from posenc_lib.i18n import _, tr
from posenc_lib.viz.dashboard import AUTO_WIDTH, Dashboard, dropdown
from posenc_lib.viz.figures import DIVERGING, SEQUENTIAL, label_tokens, new_figure, points, to_numpy


class OrderPlot:
    """Chapter 1: what reordering a sentence does to attention (a ``analysis.ch01_order.ReorderResult``).

    Left: the attention weights of the reordered sentence (T, T), rows = queries, columns = keys.
    Middle: its outputs Attn(PX) (T, d_v), one row per word, in the same row order as the left.
    Right: per word, the length (2-norm) of the change of its output from the original output of
    the same word, ||Attn(PX)_i - (P Attn(X))_i||; with positions on, X here includes them. All
    bars at zero means attention cannot tell the order.

    title: an optional line above the three panels (the notebook's still figures say what they
    show; the dashboard, whose settings change, leaves it out).

    Text is kept to what a reader needs: each label costs about 1 ms of every redraw.
    """

    def __init__(self, result, fig=None, drift_limit: float = 4.0, title: str | None = None):
        self.fig = fig if fig is not None else new_figure(9.6, 3.0)
        if title:
            self.fig.suptitle(title)
        ax_w, ax_o, ax_d = self.fig.subplots(1, 3, width_ratios=[1, 1.5, 1])
        self.axes = (ax_w, ax_o, ax_d)
        self._tokens = None  # the word order the tick labels show
        n_words, d_v = result.outputs.shape
        out_limit = float(result.outputs.abs().max()) * 1.1 + 1e-6

        self.weights = ax_w.imshow(
            to_numpy(result.weights), cmap=SEQUENTIAL, vmin=0, vmax=1, interpolation="nearest"
        )
        ax_w.set(
            title=_("attention weights"), xlabel=_("key (word attended to)"), ylabel=_("query")
        )
        self.outputs = ax_o.imshow(
            to_numpy(result.outputs),
            cmap=DIVERGING,
            vmin=-out_limit,
            vmax=out_limit,
            aspect="auto",
            interpolation="nearest",
        )
        ax_o.set(title=tr("outputs, one row per word ({d_v} dims)", d_v=d_v), xticks=[], yticks=[])
        tick = math.floor(out_limit * 10) / 10  # a round value inside the colour range
        self.fig.colorbar(self.outputs, ax=ax_o, ticks=[-tick, 0, tick])
        self.bars = ax_d.bar(range(n_words), to_numpy(result.drift), color="tab:red")
        ax_d.set(title=_("change per word (norm)"))
        ax_d.set_ylim(0, drift_limit)
        ax_d.set_yticks([0, drift_limit / 2, drift_limit])
        self.bar_labels = [
            ax_d.text(i, 0, "", ha="center", va="bottom", fontsize=points(8))
            for i in range(n_words)
        ]
        self.update(result)

    def update(self, result) -> None:
        """Show another ReorderResult of the same sentence length, changing artists in place."""
        ax_w, ax_o, ax_d = self.axes
        self.weights.set_data(to_numpy(result.weights))
        self.outputs.set_data(to_numpy(result.outputs))
        if result.tokens != self._tokens:  # relabel only when the order changed
            for axis, ax in (("x", ax_w), ("y", ax_w), ("x", ax_d)):  # ax_o's rows line up
                label_tokens(ax, result.tokens, axis)
            self._tokens = result.tokens
        top = ax_d.get_ylim()[1]
        for bar, label, drift in zip(
            self.bars, self.bar_labels, result.drift.tolist(), strict=True
        ):
            bar.set_height(min(drift, top))
            label.set_y(min(drift, top * 0.9))
            # Rounding-level drifts as a bound: their digits differ between CPUs (see bounds).
            label.set_text(f"{drift:.2f}" if drift >= 1e-3 else bound(drift, prefix="<"))


def final_states(states: dict[str, torch.Tensor]):
    """Section 1: a recurrent network's final state h_T (D,) for each word order, as grouped bars.

    ``states``: sentence -> its final state (D,). Bars of one dimension stand side by side, one
    colour per sentence. Returns the figure; show it with ``show(fig)``.
    """
    fig = new_figure(6, 2.2)
    ax = fig.subplots()
    width = 0.8 / len(states)  # the bars of one dimension fill 0.8 of its slot
    for j, (sentence, state) in enumerate(states.items()):
        shift = (j - (len(states) - 1) / 2) * width
        ax.bar([i + shift for i in range(len(state))], to_numpy(state), width=width, label=sentence)
    ax.set(
        xlabel=_("state dimension"),
        ylabel=_("final state"),
        title=_("the RNN's final state, per order"),
    )
    ax.legend(fontsize=points(8))
    return fig


def _write_weights(ax, weights, fontsize=None) -> None:
    """Write each weight of a (T, T) map in [0, 1] on its cell, two decimals, white on dark cells."""
    n_rows, n_cols = weights.shape
    for i, j in itertools.product(range(n_rows), range(n_cols)):
        w = float(weights[i, j])
        colour = "white" if w > 0.5 else "black"
        ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=fontsize, color=colour)


def sentence_maps(maps: dict[str, torch.Tensor]):
    """Section 3: one sentence's attention weights per panel, each weight written on its cell.

    ``maps``: sentence -> its (T, T) weights in [0, 1], rows = queries, columns = keys; the
    sentence's words label both axes of its panel. Returns the figure; show it with ``show(fig)``.
    """
    fig = new_figure(7, 3)
    axes = fig.subplots(1, len(maps), squeeze=False)[0]
    for ax, (sentence, weights) in zip(axes, maps.items(), strict=True):
        weights, words = to_numpy(weights), sentence.split()  # (T, T), T words
        ax.imshow(weights, cmap=SEQUENTIAL, vmin=0, vmax=1)
        label_tokens(ax, words, "x")
        label_tokens(ax, words, "y")
        ax.set(title=sentence, xlabel=_("key"), ylabel=_("query"))
        _write_weights(ax, weights)
    return fig


def attention_grid(maps, tokens, row_titles, col_titles, annotate: bool = True):
    """Chapter 1: attention maps side by side, e.g. two word orders x with/without positions.

    maps: (R, C, T, T) weights in [0, 1], rows of each map = queries, columns = keys.
    tokens: R lists of T labels (panel row r shows one sentence, so its tokens label both axes).
    row_titles: R strings (left of each panel row); col_titles: C strings (above each column).
    With ``annotate`` every weight is written on its cell (two decimals), for T up to 8.
    Returns the figure; show it with ``show(fig)``.
    """
    maps = to_numpy(maps)
    if maps.ndim != 4 or maps.shape[2] != maps.shape[3]:
        raise ValueError(
            tr("maps must have shape (R, C, T, T), got {shape}.", shape=tuple(maps.shape))
        )
    n_rows, n_cols, n_tokens, _width = maps.shape
    if len(tokens) != n_rows or any(len(t) != n_tokens for t in tokens):
        raise ValueError(
            tr(
                "tokens must be {n_rows} lists of {n_tokens} labels, got {tokens!r}.",
                n_rows=n_rows,
                n_tokens=n_tokens,
                tokens=tokens,
            )
        )
    if len(row_titles) != n_rows or len(col_titles) != n_cols:
        raise ValueError(
            tr(
                "need {n_rows} row titles and {n_cols} column titles, got {rows} and {cols}.",
                n_rows=n_rows,
                n_cols=n_cols,
                rows=len(row_titles),
                cols=len(col_titles),
            )
        )
    fig = new_figure(0.4 + 2.7 * n_cols, 0.5 + 2.5 * n_rows)
    axes = fig.subplots(n_rows, n_cols, squeeze=False)
    for r, c in ((r, c) for r in range(n_rows) for c in range(n_cols)):
        ax, weights = axes[r, c], maps[r, c]  # weights: (T, T)
        image = ax.imshow(weights, cmap=SEQUENTIAL, vmin=0, vmax=1, interpolation="nearest")
        label_tokens(ax, tokens[r], "x")
        label_tokens(ax, tokens[r], "y")
        ax.tick_params(axis="x", labelrotation=90, labelsize=8)
        ax.tick_params(axis="y", labelsize=8)
        if r == 0:
            ax.set_title(col_titles[c], fontsize=10)
        if c == 0:
            ax.set_ylabel(f"{row_titles[r]}\n{_('query')}", fontsize=9)
        if r == n_rows - 1:
            ax.set_xlabel(_("key"), fontsize=9)
        if annotate and n_tokens <= 8:
            _write_weights(ax, weights, fontsize=7)
    fig.colorbar(image, ax=axes, shrink=0.6, ticks=[0, 0.5, 1], label=_("attention weight"))
    return fig


def order_dashboard(sentence: str = "dog bites man") -> Dashboard:
    """Chapter 1: reorder a sentence and watch attention's rows and columns move with the words.

    Controls: the word order; positions on/off and their strength; a causal mask.
    """
    words = tuple(sentence.split())
    orders = list(itertools.permutations(range(len(words))))
    if len(orders) > 24:
        raise ValueError(
            tr(
                "order_dashboard takes at most 4 words, got {n}: {sentence!r}.",
                n=len(words),
                sentence=sentence,
            )
        )
    style = {"description_width": "initial"}
    controls = {
        "order": dropdown(  # reversed at first: the still image then shows a real reordering
            _("word order"), [(" ".join(words[i] for i in o), o) for o in orders], orders[-1]
        ),
        "positions": W.Checkbox(
            value=False, description=_("add position vectors"), indent=False, layout=AUTO_WIDTH
        ),
        # A log scale from 0.01 to 10**0.5 = 3.16 in quarter decades: it reaches every strength
        # the lecture measures (0.01, 0.1, 1), and the small ones are not crowded into one end.
        "strength": W.FloatLogSlider(
            value=1.0,
            base=10,
            min=-2,
            max=0.5,
            step=0.25,
            description=_("position strength"),
            style=style,
            disabled=True,
        ),
        "causal": W.Checkbox(
            value=False, description=_("causal mask"), indent=False, layout=AUTO_WIDTH
        ),
    }
    # The strength slider only means something with positions on: grey it out otherwise.
    W.dlink((controls["positions"], "value"), (controls["strength"], "disabled"), lambda on: not on)

    def compute(order, positions, strength, causal):
        return reorder_experiment(words, order, strength if positions else 0.0, causal)

    def readout(result):
        verdict = (
            _("the outputs only moved with their words: attention cannot tell the order")
            if result.max_deviation < 1e-5
            else _("the outputs changed: the model can tell the orders apart")
        )
        return tr(
            "largest |Attn(PX) &minus; P&middot;Attn(X)|: <b>{deviation}</b>; "
            "sentence vector (mean of outputs) changed by <b>{pooled}</b> "
            "&rarr; {verdict}",
            deviation=bound(result.max_deviation),
            pooled=bound(result.pooled_gap),
            verdict=verdict,
        )

    return Dashboard(
        tr('Reorder "{sentence}"', sentence=sentence),
        controls,
        compute,
        OrderPlot,
        readout,
        (9.6, 3.0),
    )
