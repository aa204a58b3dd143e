"""Chapter 5's figures and dashboard: ALiBi's slopes, its bias and the attention it shapes."""

from __future__ import annotations

import math

import ipywidgets as W
import matplotlib.pyplot as plt
from matplotlib import patheffects
from matplotlib.ticker import MaxNLocator, NullLocator

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch05_alibi import MAX_VIEW_POSITIONS, alibi_view
from posenc_lib.i18n import N_, _, tr
from posenc_lib.viz.dashboard import Dashboard
from posenc_lib.viz.figures import new_figure, ordered_style, to_numpy


class AlibiPlot:
    """Chapter 5: one head of an ALiBi model (an ``analysis.ch05_alibi.AlibiView``).

    Left: every head's slope m on a log scale; heads on the geometric ladder 2^(-8h/H') in blue,
    the extra heads (when H is not a power of two; each half a ladder step above one of the first
    heads) in orange, the shown head ringed. Middle: the head's causal (T, T) bias -m (i - j) in bands of 1 (each a weight factor
    e), clipped at -10 (a factor of about 5e-5: nothing below that is seen), future keys grey
    (which head and T are shown is the dashboard's readout, not a title: text is slow to redraw);
    for a long sequence the view holds every s-th row and column, each drawn s positions wide.
    Right: the last query's attention weights on random content against the distance i - j (log
    scale), without ALiBi (grey) and with it (blue); the dashed line is the head's window ln(10)/m.
    """

    BIAS_FLOOR = -10.0

    def __init__(self, view, fig=None):
        self.fig = fig if fig is not None else new_figure(9.6, 3.0)
        ax_s, ax_b, ax_w = self.fig.subplots(1, 3, width_ratios=[0.8, 1, 1.3])
        self.axes = (ax_s, ax_b, ax_w)
        ax_s.set_yscale("log", base=2)
        ax_s.set_ylim(2**-8.8, 2**0.4)
        ax_s.set_yticks([1.0, 2.0**-4, 2.0**-8], labels=["1", "1/16", "1/256"])
        ax_s.yaxis.set_minor_locator(NullLocator())
        ax_s.xaxis.set_major_locator(MaxNLocator(3, integer=True))
        (self.ladder,) = ax_s.plot([], [], "o", color="tab:blue", markersize=4)
        (self.between,) = ax_s.plot([], [], "o", color="tab:orange", markersize=4)
        (self.ring,) = ax_s.plot([], [], "o", markersize=10, mfc="none", mec="black")
        ax_s.set_title(_("slope m of each head h"))

        # A band per unit of bias; masked keys are drawn as the "over" colour (see _pixels).
        cmap = plt.get_cmap("viridis", 10).with_extremes(over="#d9d9d9")
        self.image = ax_b.imshow(
            self._pixels(view.bias),
            cmap=cmap,
            vmin=self.BIAS_FLOOR,
            vmax=0,
            interpolation="nearest",
            aspect="auto",
        )
        self.fig.colorbar(self.image, ax=ax_b, ticks=[-10, 0], pad=0.02)
        ax_b.set(xlabel=_("key j"), ylabel=_("query i"), yticks=[], title=_("its bias -m (i - j)"))
        ax_b.xaxis.set_major_locator(MaxNLocator(2, integer=True))

        ax_w.set_yscale("log", nonpositive="clip")
        ax_w.set_ylim(1e-6, 1.5)
        ax_w.set_yticks([1e-6, 1e-3, 1], labels=["1e-6", "1e-3", "1"])
        ax_w.yaxis.set_minor_locator(NullLocator())
        ax_w.xaxis.set_major_locator(MaxNLocator(3, integer=True))
        (self.plain,) = ax_w.plot([], [], color="0.6", linewidth=1)
        (self.biased,) = ax_w.plot([], [], color="tab:blue", linewidth=1.2)
        self.window = ax_w.axvline(0, color="black", linestyle="--", linewidth=1)
        # The title names the lines: a legend would cost more per redraw than the rest of the panel.
        ax_w.set(xlabel=_("distance i - j"), title=_("last query: grey no bias, blue ALiBi"))
        self._key = None  # (H, T) the axis limits are set for
        self.update(view)

    @staticmethod
    def _pixels(bias):
        """The bias as an image: -inf (masked) becomes +1, above the colour range, so it shows in
        the colour map's "over" colour."""
        pixels = to_numpy(bias).copy()  # (T/s, T/s); in NumPy: a small op, no torch threads woken
        pixels[pixels == -math.inf] = 1.0
        return pixels

    def update(self, view) -> None:
        """Show another AlibiView (any H, head or T), changing artists in place."""
        ax_s, ax_b, ax_w = self.axes
        n_heads, n_pos = view.num_heads, len(view.weights_alibi)
        heads = range(1, n_heads + 1)
        slopes = to_numpy(view.slopes)
        self.ladder.set_data(heads[: view.ladder], slopes[: view.ladder])
        self.between.set_data(heads[view.ladder :], slopes[view.ladder :])
        self.ring.set_data([view.head + 1], [slopes[view.head]])
        self.image.set_data(self._pixels(view.bias))
        self.plain.set_data(range(n_pos), to_numpy(view.weights_content))
        self.biased.set_data(range(n_pos), to_numpy(view.weights_alibi))
        self.window.set_xdata([view.window, view.window])
        if (n_heads, n_pos) != self._key:  # the sizes changed: stretch the axes
            ax_s.set_xlim(0.4, n_heads + 0.6)
            edge = view.bias.shape[-1] * view.bias_step - 0.5  # each pixel is s positions wide
            self.image.set_extent((-0.5, edge, edge, -0.5))
            ax_b.set(xlim=(-0.5, n_pos - 0.5), ylim=(n_pos - 0.5, -0.5))
            ax_w.set_xlim(0, n_pos - 1)
        self._key = (n_heads, n_pos)


def alibi_dashboard(max_heads: int = 64) -> Dashboard:
    """Chapter 5: the number of heads, one head and the sequence length -> every head's slope, that
    head's bias matrix, and the last query's attention weights on random content with and without
    ALiBi. The readout gives the head's slope, its window (the distance at which the bias costs a
    factor of 10) and how much of the weight stays inside it.
    """
    max_heads = validate.positive_int("max_heads", max_heads, maximum=2**16)
    style = {"description_width": "initial"}
    controls = {
        "num_heads": W.IntSlider(
            value=min(8, max_heads), min=1, max=max_heads, description=_("heads H"), style=style
        ),
        "head": W.IntSlider(
            value=min(5, max_heads), min=1, max=max_heads, description=_("head h"), style=style
        ),
        "n_positions": W.IntSlider(
            value=256,
            min=16,
            max=MAX_VIEW_POSITIONS,
            step=16,
            description=_("length T"),
            style=style,
        ),
    }

    def compute(num_heads, head, n_positions):
        return alibi_view(num_heads, head - 1, n_positions)  # the slider counts heads from 1

    def readout(view):
        slope = float(view.slopes[view.head])
        clamped = (
            tr(" (only {num_heads} heads: showing the last)", num_heads=view.num_heads)
            if view.clamped
            else ""
        )
        longer = view.window > len(view.weights_alibi)  # the window reaches past the first token
        beyond = _(" &ndash; longer than the sequence") if longer else ""
        return tr(
            "head <b>{head}</b> of {num_heads}{clamped}: m = 2^&minus;"
            "{exponent:.3g} = <b>{slope:.3g}</b>; weight &divide;10 every "
            "<b>{window:.1f}</b> tokens{beyond}; last query's weight within that window: "
            "<b>{near_alibi:.0%}</b> with ALiBi, <b>{near_content:.0%}</b> without",
            head=view.head + 1,
            num_heads=view.num_heads,
            clamped=clamped,
            exponent=-math.log2(slope),
            slope=slope,
            window=view.window,
            beyond=beyond,
            near_alibi=view.near_alibi,
            near_content=view.near_content,
        )

    return Dashboard(
        N_("ALiBi: slopes, one head's bias, and a row of attention"),
        controls,
        compute,
        AlibiPlot,
        readout,
        (9.6, 3.0),
    )


# -- the lecture's still figures ---------------------------------------------------------------------


def bias_and_weights(bias, weights, slope: str):
    """One head's causal bias -m (i - j) in bands of 1/2 (left) and the attention weights it gives
    on equal content (right); masked keys grey.

    bias: (T, T), -inf above the diagonal; weights: (T, T); slope: m as the title writes it.
    Returns the figure.
    """
    fig = new_figure(7.6, 3.2)
    axes = fig.subplots(1, 2)
    for ax, values, title, cmap in (
        (axes[0], bias.masked_fill(bias.isinf(), float("nan")), tr("bias -m(i - j), m = {slope}", slope=slope), "viridis"),
        (axes[1], weights, _("attention weights (equal content)"), "Blues"),
    ):  # fmt: skip
        levels = (
            11 if cmap == "viridis" else 256
        )  # the bias in bands of 1/2: one band per step back
        image = ax.imshow(
            to_numpy(values), cmap=plt.get_cmap(cmap, levels).with_extremes(bad="#d9d9d9")
        )
        fig.colorbar(image, ax=ax, shrink=0.8)
        ax.set(title=title, xlabel=_("key j"), ylabel=_("query i"))
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # positions are integers
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return fig


def slope_ladders(ladders, labelled: int, title: str):
    """Every head's slope m (log scale) for several head counts H, one column each: heads on the
    geometric ladder 2^(-8h/H') in blue, the extra heads in orange; the column of H = ``labelled``
    names each head.

    ladders: H -> (slopes (H,), H' the ladder's size). Returns the figure.
    """
    fig = new_figure(6.4, 3.0)
    ax = fig.subplots()
    for x, (heads, (slopes, low)) in enumerate(ladders.items()):
        slopes = to_numpy(slopes)  # (H,)
        ladder_label = _("on the ladder 2^(-8h/H')") if x == 0 else None
        ax.plot([x] * low, slopes[:low], "o", color="tab:blue", ms=6, label=ladder_label)
        if heads > low:
            between = slopes[low:]  # (H - H',)
            ax.plot(
                [x] * len(between), between, "s", color="tab:orange", ms=7, label=_("extra heads")
            )
        if heads == labelled:
            for h, m in enumerate(slopes.tolist()):
                ax.annotate(
                    f"h{h + 1}", (x, m), xytext=(7, -3), textcoords="offset points", fontsize=7
                )
    ax.set_yscale("log", base=2)
    ax.set_xticks(range(len(ladders)), labels=[f"H = {heads}" for heads in ladders])
    ax.set(xlim=(-0.6, len(ladders) - 0.4), ylabel=_("slope m (log scale)"), title=title)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def head_biases(bias, windows, slopes):
    """The causal bias of each of 8 heads in bands of 1, clipped at -10, masked keys blank; a
    white line at j = i - window, past which keys cost more than a factor of 10.

    bias: (8, T, T); windows: (8,) ln(10) / m; slopes: (8,). Returns the figure.
    """
    n_show = bias.shape[-1]
    fig = new_figure(7.6, 3.9)
    axes = fig.subplots(2, 4, sharex=True, sharey=True)
    cmap = plt.get_cmap("viridis", 10).with_extremes(bad="#d9d9d9")  # a band per unit of bias
    for h, ax in enumerate(axes.flat):
        shown = bias[h].masked_fill(bias[h].isinf(), float("nan"))  # (T, T), masked keys blank
        image = ax.imshow(to_numpy(shown), cmap=cmap, vmin=-10, vmax=0, interpolation="nearest")
        w = windows[h].item()
        if w < n_show:  # the line j = i - window: below it, keys cost more than a factor 10
            # white edged in black: seen on the yellow band next to the diagonal and on the dark
            # purple below it alike
            outline = [patheffects.withStroke(linewidth=3.2, foreground="black")]
            ax.plot([0, n_show - 1 - w], [w, n_show - 1], color="white", lw=1.4,
                    path_effects=outline)  # fmt: skip
        ax.set_title(
            tr("head {h}: m = 1/{inverse}", h=h + 1, inverse=round(1 / slopes[h].item())),
            fontsize=9,
        )
    for ax in axes[1]:
        ax.set_xlabel(_("key j"))
    for ax in axes[:, 0]:
        ax.set_ylabel(_("query i"))
    fig.colorbar(image, ax=axes, shrink=0.7, label=_("bias"))
    return fig


def query_rows(rows, query: int, title: str):
    """One query's attention weights over the keys under several masks and biases.

    rows: label -> (T,) weights (drawn solid, dashed, solid, ...); query: its position, marked
    by a grey line. Returns the figure.
    """
    fig = new_figure(6.4, 3.0)
    ax = fig.subplots()
    for k, (label, row) in enumerate(rows.items()):
        ax.plot(to_numpy(row), "--" if k % 2 else "-", label=label, lw=1.5)
    ax.axvline(query, color="gray", lw=0.8)
    ax.set(xlabel=_("key j"), ylabel=_("weight"), title=title)
    fig.legend(fontsize=8, loc="outside lower center", ncol=2)  # below the axes: hides no curve
    return fig


def far_share(lengths, shares, trained: int):
    """How much of the last query's attention lands past the training distance, per head, against
    the sequence length (log scale).

    lengths: (N,) sequence lengths; shares: (H, N) weight beyond distance ``trained - 1``.
    Returns the figure.
    """
    heads = len(shares)
    fig = new_figure(6.4, 2.8)
    ax = fig.subplots()
    for h in range(heads):  # neighbouring heads, close in colour, alternate solid and dashed
        ax.plot(to_numpy(lengths), to_numpy(shares[h]), label=tr("head {h}", h=h + 1),
                **ordered_style(h, heads))  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set(
        xlabel=tr("sequence length T (trained on {trained})", trained=trained),
        ylabel=tr("weight beyond distance {distance}", distance=trained - 1),
        title=_("how much of the last query's attention lands on unseen distances"),
        ylim=(-0.02, 1),
    )
    ax.legend(fontsize=7, ncol=2)
    return fig


def needle_curves(distances, curves, no_alibi: float, advantage: float):
    """The weight on a key that wins on content, against its distance, per head and without ALiBi.

    distances: (K,); curves: (H, K) the needle's weight per head; no_alibi: its weight with no
    bias; advantage: its content lead, for the title. Returns the figure.
    """
    heads = len(curves)
    fig = new_figure(6.0, 2.6)
    ax = fig.subplots()
    for h in range(heads):  # neighbouring heads, close in colour, alternate solid and dashed
        ax.plot(to_numpy(distances), to_numpy(curves[h]), label=tr("head {h}", h=h + 1),
                **ordered_style(h, heads))  # fmt: skip
    ax.axhline(no_alibi, color="black", ls="--", lw=1, label=_("no ALiBi"))
    ax.set(
        xscale="log",
        yscale="log",
        ylim=(1e-6, 1.5),
        xlabel=_("distance of the needle"),
        ylabel=_("weight on the needle"),
        title=tr(
            "a key that wins on content by {advantage:g}, moved further away", advantage=advantage
        ),
    )
    ax.legend(fontsize=7, ncol=3)
    return fig
