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
from matplotlib.ticker import MaxNLocator, NullLocator

from posenc_lib.bounds import bound

DPI = 80
DIVERGING = "RdBu_r"  # negative blue, positive red
SEQUENTIAL = "Blues"


def new_figure(width: float, height: float):
    """A figure that does not display itself: the caller (a notebook or a dashboard) shows it."""
    with plt.ioff():
        return plt.figure(figsize=(width, height), dpi=DPI, layout="constrained")


def points(size: float) -> float:
    """A font size given for matplotlib's default 10 pt text, scaled with ``rcParams["font.size"]``.

    Labels sized explicitly then grow with the rest when the classroom demo enlarges the text
    (``tools.demo.projector_style``); at the default size this returns ``size`` unchanged.
    """
    return size * plt.rcParams["font.size"] / 10


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
    display(Image(compact_png(buffer.getvalue())))


def compact_png(data: bytes) -> bytes:
    """The same picture in a 256-colour palette: about a third of the bytes for a plot.

    A figure has far fewer than 256 distinct colours outside its colour maps, and a matplotlib
    colour map has 256 entries, so the picture looks the same; committed notebooks stay small.
    """
    from PIL import Image as PILImage

    picture = PILImage.open(io.BytesIO(data)).convert("RGB").quantize(colors=256)
    out = io.BytesIO()
    picture.save(out, format="PNG", optimize=True)
    return out.getvalue()


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
            ax_d.text(i, 0, "", ha="center", va="bottom", fontsize=points(8))
            for i in range(n_words)
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
            # Rounding-level drifts as a bound: their digits differ between CPUs (see bounds).
            label.set_text(f"{drift:.2f}" if drift >= 1e-3 else bound(drift, prefix="<"))


def attention_grid(maps, tokens, row_titles, col_titles, annotate: bool = True):
    """Chapter 1: attention maps side by side, e.g. two word orders x with/without positions.

    maps: (R, C, T, T) weights in [0, 1], rows of each map = queries, columns = keys.
    tokens: R lists of T labels (panel row r shows one sentence, so its tokens label both axes).
    row_titles: R strings (left of each panel row); col_titles: C strings (above each column).
    With ``annotate`` every weight is written on its cell (two decimals), for T up to 8.
    Returns the figure; show it with ``show(fig)``.
    """
    maps = _np(maps)
    if maps.ndim != 4 or maps.shape[2] != maps.shape[3]:
        raise ValueError(f"maps must have shape (R, C, T, T), got {tuple(maps.shape)}.")
    n_rows, n_cols, n_tokens, _ = maps.shape
    if len(tokens) != n_rows or any(len(t) != n_tokens for t in tokens):
        raise ValueError(f"tokens must be {n_rows} lists of {n_tokens} labels, got {tokens!r}.")
    if len(row_titles) != n_rows or len(col_titles) != n_cols:
        raise ValueError(
            f"need {n_rows} row titles and {n_cols} column titles, "
            f"got {len(row_titles)} and {len(col_titles)}."
        )
    fig = new_figure(0.4 + 2.7 * n_cols, 0.5 + 2.5 * n_rows)
    axes = fig.subplots(n_rows, n_cols, squeeze=False)
    for r, c in ((r, c) for r in range(n_rows) for c in range(n_cols)):
        ax, weights = axes[r, c], maps[r, c]  # weights: (T, T)
        image = ax.imshow(weights, cmap=SEQUENTIAL, vmin=0, vmax=1, interpolation="nearest")
        _tokens_on_axis(ax, tokens[r], "x")
        _tokens_on_axis(ax, tokens[r], "y")
        ax.tick_params(axis="x", labelrotation=90, labelsize=8)
        ax.tick_params(axis="y", labelsize=8)
        if r == 0:
            ax.set_title(col_titles[c], fontsize=10)
        if c == 0:
            ax.set_ylabel(f"{row_titles[r]}\nquery", fontsize=9)
        if r == n_rows - 1:
            ax.set_xlabel("key", fontsize=9)
        if annotate and n_tokens <= 8:
            for i, j in ((i, j) for i in range(n_tokens) for j in range(n_tokens)):
                w = float(weights[i, j])
                colour = "white" if w > 0.5 else "black"
                ax.text(j, i, f"{w:.2f}", ha="center", va="center", fontsize=7, color=colour)
    fig.colorbar(image, ax=axes, shrink=0.6, ticks=[0, 0.5, 1], label="attention weight")
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


def _heading(ax, text: str) -> None:
    """A title as plain text at the top of the axes (cheaper to redraw than ``set_title``)."""
    ax.text(0.5, 1.02, text, transform=ax.transAxes, ha="center", va="bottom", fontsize=points(10))


class SinusoidPlot:
    """Chapter 3: one sinusoidal table and what it implies (a ``sinusoid.SinusoidView``).

    Top left: the table (T, D), positions along x, dimensions along y (rows past D are blank, so
    the axes never move when D changes), with t (solid) and t + k (dashed) marked. Top right: the
    vector PE_t. Bottom left: <PE_t, PE_{t+k}> / (D/2) against the offset k, with k marked; the
    curve is the same for every t. Bottom right: the wavelength ladder, one point per pair, on a
    log scale, with the table length T as a line.

    Text is what a redraw pays for (about 1 ms per label): few ticks, and titles as plain axes
    text, which skips the title placement that measures every tick label.
    """

    def __init__(self, view, fig=None, max_dims: int = 128, max_wavelength: float = 1e6):
        self.fig = fig if fig is not None else new_figure(9.6, 4.2)
        self.max_dims = max_dims
        grid = self.fig.add_gridspec(2, 4, height_ratios=[1.15, 1])
        ax_map = self.fig.add_subplot(grid[0, :3])
        ax_vec = self.fig.add_subplot(grid[0, 3])
        ax_dot = self.fig.add_subplot(grid[1, :2])
        ax_ladder = self.fig.add_subplot(grid[1, 2:])
        self.axes = (ax_map, ax_vec, ax_dot, ax_ladder)
        n_pos = view.table.shape[0]
        # The image covers the D rows of the table; the grey background shows below it, and the
        # axes keep room for max_dims rows, so nothing moves when D changes.
        ax_map.set_facecolor("#eeeeee")
        self.image = ax_map.imshow(
            _np(view.table.T),
            aspect="auto",
            cmap=DIVERGING,
            vmin=-1,
            vmax=1,
            interpolation="nearest",
        )
        self.marker = ax_map.axvline(view.position, color="black", linewidth=1.5)
        self.shifted = ax_map.axvline(view.position, color="black", linewidth=1, linestyle="--")
        ax_map.set(xlim=(-0.5, n_pos - 0.5), xticks=[0, n_pos - 1])
        ax_map.set(ylim=(max_dims - 0.5, -0.5), yticks=[0, max_dims // 2, max_dims - 1])
        _heading(ax_map, "PE table: position t (solid), t + k (dashed); dimension down")
        ax_vec.axvline(0, color="gray", linewidth=0.8)
        (self.vector,) = ax_vec.plot([], [], linestyle="none", marker="o", markersize=2.5)
        ax_vec.set(xlim=(-1.1, 1.1), ylim=(max_dims - 0.5, -0.5), xticks=[-1, 1], yticks=[])
        _heading(ax_vec, "PE_t")
        ax_dot.axhline(0, color="gray", linewidth=0.8)
        (self.similarity,) = ax_dot.plot([], [], color="tab:blue", linewidth=1)
        (self.dot,) = ax_dot.plot([], [], "o", color="black", markersize=5)
        limit = int(view.offsets.abs().max())
        ax_dot.set(xlim=(-limit, limit), xticks=[-limit, 0, limit])
        ax_dot.set(ylim=(-1.05, 1.05), yticks=[0, 1])
        _heading(ax_dot, "<PE_t, PE_t+k> / (D/2) against offset k")
        # log10 of the wavelength on a linear axis, labelled in tokens: a log-scaled axis would
        # cost its transform and tick search on every redraw.
        (self.ladder,) = ax_ladder.plot([], [], "o", color="tab:purple", markersize=3)
        ax_ladder.axhline(math.log10(n_pos), color="gray", linewidth=0.8, linestyle=":")
        ax_ladder.set(xlim=(-1, max_dims // 2), ylim=(0, math.log10(max_wavelength)), xticks=[])
        ax_ladder.set_yticks([1, 3, 5], labels=["10", "1000", "100000"])
        _heading(ax_ladder, "wavelength of each pair i (dotted: T)")
        self.update(view)

    def update(self, view) -> None:
        """Show another SinusoidView of the same T (any D up to max_dims), in place."""
        table, t, k = view.table, view.position, view.offset  # (T, D), t, k
        n_pos, d_model = table.shape
        self.image.set_data(_np(table.T))
        self.image.set_extent((-0.5, n_pos - 0.5, d_model - 0.5, -0.5))
        self.marker.set_xdata([t, t])
        self.shifted.set_xdata([t + k, t + k])
        self.vector.set_data(_np(table[t]), range(table.shape[1]))
        self.similarity.set_data(_np(view.offsets), _np(view.similarity))
        self.dot.set_data([k], [view.dot / (table.shape[1] / 2)])
        self.ladder.set_data(range(len(view.wavelengths)), _np(view.wavelengths.log10()))


# Chapter 2: colour limits per table, fixed so that switching tables never rescales by surprise.
TABLE_COLOUR_LIMITS = {"integer": 255.0, "normalized": 1.0, "binary": 1.0, "sinusoidal": 1.0}


class TablePlot:
    """Chapter 2: one position table and its neighbour steps (a ``naive.TableView``).

    Left: the (T, D) table as a heatmap, positions along x, dimensions along y, the marked position
    as a black line; colour limits are fixed per table (``colour_limits``, by table name), so the
    integer table's size shows on its colour bar. Right: ||PE_{t+1} - PE_t|| against t on a fixed
    scale (0 to ``distance_limit``), with the marked position's step as a dot: a flat line means
    evenly spaced neighbours.
    """

    def __init__(self, view, fig=None, distance_limit: float = 3.0, colour_limits=None):
        self.colour_limits = colour_limits or TABLE_COLOUR_LIMITS
        self.fig = fig if fig is not None else new_figure(9.6, 3.0)
        ax_map, ax_step = self.fig.subplots(1, 2, width_ratios=[1.6, 1])
        self.axes = (ax_map, ax_step)
        n_pos, d_model = view.table.shape
        # The image shows table / limit on a fixed -1..1 scale, and the colour bar's labels say what
        # the limit is: relabelling keeps every artist, where a new colour range would redraw the bar.
        self.image = ax_map.imshow(
            _np(view.table.T),
            aspect="auto",
            cmap=DIVERGING,
            interpolation="nearest",
            vmin=-1,
            vmax=1,
        )
        # Below the map: the labels change width with the table, which a bar at the side would not fit.
        self.colorbar = self.fig.colorbar(
            self.image, ax=ax_map, ticks=[-1, 0, 1], location="bottom", shrink=0.4, aspect=25
        )
        self._limit = 1.0
        self.marker = ax_map.axvline(view.position, color="black", linewidth=1.5)
        ax_map.set(xlabel="position t", ylabel="dimension", yticks=[0, d_model - 1])
        (self.steps,) = ax_step.plot([], [], color="tab:blue", linewidth=1.2)
        (self.dot,) = ax_step.plot([], [], "o", color="black", markersize=5)
        ax_step.set(xlabel="t", title="step ||PE(t+1) - PE(t)||", ylim=(0, distance_limit))
        ax_step.set_yticks([0, round(distance_limit / 2, 1), round(distance_limit, 1)])
        for ax in self.axes:  # few tick labels: each costs about 1 ms of every redraw
            ax.xaxis.set_major_locator(MaxNLocator(4, integer=True))
        self._shape = None  # the (T, D) the axes are set up for
        self._name = None  # the table the colour limits are set for
        self.update(view)

    def update(self, view) -> None:
        """Show another TableView (any T, same D), changing artists in place."""
        ax_map, ax_step = self.axes
        n_pos, d_model = view.table.shape
        if view.name != self._name:
            self._limit = self.colour_limits.get(view.name, max(view.max_abs, 1e-6))
            self.colorbar.set_ticks(
                [-1, 0, 1], labels=[f"{-self._limit:g}", "0", f"{self._limit:g}"]
            )
        self.image.set_data(_np(view.table.T) / self._limit)
        if (n_pos, d_model) != self._shape:  # the sequence length changed: stretch the axes
            self.image.set_extent((-0.5, n_pos - 0.5, d_model - 0.5, -0.5))
            ax_map.set_xlim(-0.5, n_pos - 0.5)
            ax_step.set_xlim(-0.5, max(n_pos - 1.5, 0.5))
        if (view.name, n_pos, d_model) != (self._name, *(self._shape or (None, None))):
            ax_map.set_title(f"{view.name} table, T = {n_pos}, D = {d_model}")
        self._shape, self._name = (n_pos, d_model), view.name
        self.marker.set_xdata([view.position, view.position])
        distances = _np(view.distances)
        self.steps.set_data(range(len(distances)), distances)
        if view.position < len(distances):  # the last position has no next neighbour
            self.dot.set_data([view.position], [distances[view.position]])
        else:
            self.dot.set_data([], [])


class BucketPlot:
    """Chapter 4: T5's bucket map and the bias it builds (a ``relbias_demo.BucketView``).

    Left: the bucket of each offset j - i (keys before the query on the left), as a staircase;
    dashed lines at +-max_distance. Right: the (T, T) bias of one head, B[i, j] = table[bucket of
    j - i], rows = queries, columns = keys: constant along every diagonal (Toeplitz), in bands
    that widen away from the diagonal. Colours fixed at +-2.5 (the table is N(0, 1)).
    """

    def __init__(self, view, fig=None):
        self.fig = fig if fig is not None else new_figure(9.6, 3.0)
        ax_map, ax_bias = self.fig.subplots(1, 2, width_ratios=[1.5, 1])
        self.axes = (ax_map, ax_bias)
        offsets = _np(view.offsets)
        (self.staircase,) = ax_map.plot(offsets, _np(view.buckets), drawstyle="steps-mid")
        self.limits = [
            ax_map.axvline(x, color="gray", linestyle="--", linewidth=1) for x in (-1, 1)
        ]
        ax_map.set(xlabel="offset j - i (key - query)", ylabel="bucket", title="bucket of j - i")
        ax_map.set_xlim(offsets[0], offsets[-1])
        # Few tick labels: each costs about 1 ms of every redraw.
        ax_map.xaxis.set_major_locator(MaxNLocator(3, integer=True))
        ax_map.yaxis.set_major_locator(MaxNLocator(3, integer=True))
        self.image = ax_bias.imshow(
            _np(view.bias), cmap=DIVERGING, vmin=-2.5, vmax=2.5, interpolation="nearest"
        )
        ax_bias.set(title="bias B[i, j], one head", xlabel="key j", ylabel="query i")
        last = view.bias.shape[0] - 1
        ax_bias.set(xticks=[0, last], yticks=[0, last])
        self.fig.colorbar(self.image, ax=ax_bias, ticks=[-2, 0, 2], shrink=0.9)
        self._n_buckets = None
        self.update(view)

    def update(self, view) -> None:
        """Show another BucketView of the same T, changing artists in place."""
        ax_map, _ = self.axes
        self.staircase.set_ydata(_np(view.buckets))
        for line, sign in zip(self.limits, (-1, 1), strict=True):
            line.set_xdata([sign * view.max_distance] * 2)
        if view.num_buckets != self._n_buckets:  # rescale only when the bucket count changed
            ax_map.set_ylim(-0.5, view.num_buckets - 0.5)
            self._n_buckets = view.num_buckets
        self.image.set_data(_np(view.bias))


class RopePlot:
    """Chapter 6: one pair of R_m q and R_n k on the unit circle, and the score against m - n
    (a ``rope_demo.RotationView``).

    Left: the chosen pair of the rotated query (blue) and key (orange), each scaled to length 1:
    q turned by m theta_i, k by n theta_i, so the angle between them is (m - n) theta_i. Right: the
    score <R_m q, R_n k> against m - n (solid), the chosen pair's share of it (dashed), and the
    current (m - n, score) as a dot: the dot stays on the curve for every m, n. ``limit`` fixes
    the score axis (default: sum over pairs of |q_i| |k_i|, the largest any offset can reach).
    """

    def __init__(self, view, fig=None, limit: float | None = None):
        self.fig = fig if fig is not None else new_figure(8.0, 2.8)
        ax_circle, ax_score = self.fig.subplots(1, 2, width_ratios=[1, 2.2])
        self.axes = (ax_circle, ax_score)
        angles = torch.linspace(0, 2 * math.pi, 97)
        ax_circle.plot(_np(angles.cos()), _np(angles.sin()), color="gray", linewidth=0.8)
        ax_circle.axhline(0, color="lightgray", linewidth=0.6)
        ax_circle.axvline(0, color="lightgray", linewidth=0.6)
        (self.q_arrow,) = ax_circle.plot([], [], "-o", color="tab:blue", markevery=[1])
        (self.k_arrow,) = ax_circle.plot([], [], "-o", color="tab:orange", markevery=[1])
        self.q_label = ax_circle.text(0, 0, "q", color="tab:blue", ha="center", va="center")
        self.k_label = ax_circle.text(0, 0, "k", color="tab:orange", ha="center", va="center")
        ax_circle.set(xlim=(-1.3, 1.3), ylim=(-1.3, 1.3), xticks=[], yticks=[], aspect="equal")
        self.title = ax_circle.set_title("", fontsize=points(10))
        span = float(view.offsets.abs().max())
        if limit is None:
            limit = float(view.curve.abs().max()) * 1.1 + 1e-9
        ax_score.axhline(0, color="gray", linewidth=0.8)
        (self.curve,) = ax_score.plot([], [], color="black", linewidth=1.2, label="score")
        (self.pair_curve,) = ax_score.plot(
            [], [], color="tab:purple", linewidth=1, linestyle="--", label="pair's share"
        )
        self.marker = ax_score.axvline(0, color="tab:red", linewidth=1)
        (self.dot,) = ax_score.plot([], [], "o", color="tab:red", markersize=6)
        ax_score.set(xlim=(-span, span), ylim=(-limit, limit), xlabel="m - n")
        ax_score.xaxis.set_major_locator(MaxNLocator(5, integer=True))
        ax_score.yaxis.set_major_locator(MaxNLocator(5))
        ax_score.set_title("<R_m q, R_n k> against m - n", fontsize=points(10))
        ax_score.legend(loc="upper right", fontsize=points(8))
        self.update(view)

    def update(self, view) -> None:
        """Show another RotationView (same q, k and offset range), changing artists in place."""
        qx, qy = view.q_pair.tolist()
        kx, ky = view.k_pair.tolist()
        self.q_arrow.set_data([0, qx], [0, qy])
        self.k_arrow.set_data([0, kx], [0, ky])
        self.q_label.set_position((1.18 * qx, 1.18 * qy))
        self.k_label.set_position((1.18 * kx, 1.18 * ky))
        self.title.set_text(f"pair {view.pair}: m = {view.m}, n = {view.n}")
        offsets = _np(view.offsets)
        self.curve.set_data(offsets, _np(view.curve))  # changes with the base
        self.pair_curve.set_data(offsets, _np(view.pair_curve))
        delta = view.m - view.n
        self.marker.set_xdata([delta, delta])
        self.dot.set_data([delta], [view.score])


class AlibiPlot:
    """Chapter 5: one head of an ALiBi model (an ``alibi_demo.AlibiView``).

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
        ax_s.set_title("slope m of each head h")

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
        ax_b.set(xlabel="key j", ylabel="query i", yticks=[], title="its bias -m (i - j)")
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
        ax_w.set(xlabel="distance i - j", title="last query: grey no bias, blue ALiBi")
        self._key = None  # (H, T) the axis limits are set for
        self.update(view)

    @staticmethod
    def _pixels(bias):
        """The bias as an image: -inf (masked) becomes +1, above the colour range, so it shows in
        the colour map's "over" colour."""
        pixels = _np(bias).copy()  # (T/s, T/s); in NumPy: a small op, no torch threads woken
        pixels[pixels == -math.inf] = 1.0
        return pixels

    def update(self, view) -> None:
        """Show another AlibiView (any H, head or T), changing artists in place."""
        ax_s, ax_b, ax_w = self.axes
        n_heads, n_pos = view.num_heads, len(view.weights_alibi)
        heads = range(1, n_heads + 1)
        slopes = _np(view.slopes)
        self.ladder.set_data(heads[: view.ladder], slopes[: view.ladder])
        self.between.set_data(heads[view.ladder :], slopes[view.ladder :])
        self.ring.set_data([view.head + 1], [slopes[view.head]])
        self.image.set_data(self._pixels(view.bias))
        self.plain.set_data(range(n_pos), _np(view.weights_content))
        self.biased.set_data(range(n_pos), _np(view.weights_alibi))
        self.window.set_xdata([view.window, view.window])
        if (n_heads, n_pos) != self._key:  # the sizes changed: stretch the axes
            ax_s.set_xlim(0.4, n_heads + 0.6)
            edge = view.bias.shape[-1] * view.bias_step - 0.5  # each pixel is s positions wide
            self.image.set_extent((-0.5, edge, edge, -0.5))
            ax_b.set(xlim=(-0.5, n_pos - 0.5), ylim=(n_pos - 0.5, -0.5))
            ax_w.set_xlim(0, n_pos - 1)
        self._key = (n_heads, n_pos)


class ScalingPlot:
    """Chapter 7: what a RoPE scaling does to each pair, and to perplexity (a
    ``scaling_demo.ScalingView``).

    Left: each pair's wavelength 2 pi / theta_i (log scale) before (grey) and after the scaling
    (colour), with the training length L (solid) and s L (dashed): pairs under the solid line turn
    a full circle within L. Middle: theta'_i / theta_i for every method at this factor (the chosen
    one thick) and YaRN's ramp (dotted; 1 keeps, 0 divides by s). Right: the experiment's
    perplexity against the evaluation length, plain RoPE (grey), the chosen scaling without
    fine-tuning (colour) and after 200 steps of fine-tuning at 4L (dashed), where measured, with
    the control beside it: plain RoPE fine-tuned the same way, no scaling (grey dashed).
    Log axes are drawn as log10 values on linear axes: a log-scaled axis costs every redraw.
    """

    COLOURS = {"PI": "tab:red", "NTK": "tab:green", "dynamic": "tab:olive", "YaRN": "tab:purple"}

    def __init__(self, view, fig=None):
        self.fig = fig if fig is not None else new_figure(9.6, 3.0)
        ax_w, ax_r, ax_p = self.fig.subplots(1, 3, width_ratios=[1.1, 1.1, 1])
        self.axes = (ax_w, ax_r, ax_p)
        n_pairs = len(view.wavelengths)
        (self.before,) = ax_w.plot([], [], "o", color="0.65", markersize=3.5)
        (self.after,) = ax_w.plot([], [], "o", markersize=3.5)
        self.length = ax_w.axhline(0, color="black", linewidth=1)
        self.target = ax_w.axhline(0, color="black", linewidth=1, linestyle="--")
        ax_w.set(xlim=(-0.5, n_pairs - 0.5), ylim=(0, 7), xlabel="pair i")
        ax_w.set_yticks([1, 3, 5], labels=["10", "1e3", "1e5"])
        ax_w.set_xticks([0, n_pairs // 2, n_pairs - 1])
        ax_w.set_title("wavelength; grey: before; lines: L, sL", fontsize=points(9))
        self.ratios = {  # dynamic dashed: at length sL it equals NTK, which shows beneath it
            name: ax_r.plot([], [], "--" if name == "dynamic" else "-", color=colour)[0]
            for name, colour in self.COLOURS.items()
        }
        (self.ramp,) = ax_r.plot([], [], ":", color="black", linewidth=1.2, label="YaRN ramp")
        ax_r.set(xlim=(-0.5, n_pairs - 0.5), ylim=(0, 1.05), xlabel="pair i")
        ax_r.set_xticks([0, n_pairs // 2, n_pairs - 1])
        ax_r.set_yticks([0, 0.5, 1])
        ax_r.set_title("new/old frequency; dotted: YaRN ramp", fontsize=points(9))
        (self.plain,) = ax_p.plot([], [], "o-", color="0.6", markersize=3)
        (self.scaled,) = ax_p.plot([], [], "o-", markersize=3)
        (self.tuned,) = ax_p.plot([], [], "s--", markersize=3)
        (self.control,) = ax_p.plot([], [], "s--", color="0.45", markersize=3)  # no scaling
        ax_p.set(xlim=(-0.2, 3.2), ylim=(math.log10(2.5), 2), xlabel="evaluation length")
        ax_p.set_xticks([0, 1, 2, 3], labels=["L", "2L", "4L", "8L"])
        ax_p.set_yticks([math.log10(v) for v in (3, 10, 30)], labels=["3", "10", "30"])
        ax_p.set_title("perplexity; grey: RoPE, --: tuned", fontsize=points(9))
        self._method = None
        self.update(view)

    def update(self, view) -> None:
        """Show another ScalingView (same head_dim), changing artists in place."""
        pairs = range(len(view.wavelengths))
        self.before.set_data(pairs, _np(view.wavelengths.log10()))
        self.after.set_data(pairs, _np(view.scaled_wavelengths.log10()))
        self.length.set_ydata([math.log10(view.train_len)] * 2)
        self.target.set_ydata([math.log10(view.factor * view.train_len)] * 2)
        for name, line in self.ratios.items():
            line.set_data(pairs, _np(view.ratios[name]))
        self.ramp.set_data(pairs, _np(view.ramp))
        if view.method != self._method:  # restyle only when the method changed
            colour = self.COLOURS[view.method]
            for name, line in self.ratios.items():
                line.set_linewidth(2.5 if name == view.method else 0.8)
            self.after.set_color(colour)
            self.scaled.set_color(colour)
            self.tuned.set_color(colour)
            self._method = view.method
        steps = range(len(view.lengths))
        for line, curve in ((self.plain, view.plain), (self.scaled, view.scaled),
                            (self.tuned, view.finetuned), (self.control, view.control)):  # fmt: skip
            if curve is None:
                line.set_data([], [])
            else:
                line.set_data(steps, [math.log10(v) for v in curve])


def similarity_map(cosines, curve, marks=(1, 10, 100, 300), title="a learned table"):
    """Chapter 2: how alike a table's positions are, every pair (left) and by offset (right).

    cosines: (T, T), cos(P_s, P_t), or a block-averaged (T/b, T/b) copy (a lighter picture; the
    axes still count positions); curve: (T,), entry k the mean over t of cos(P_t, P_t+k);
    marks: offsets to dot and label on the curve. The offset axis is logarithmic (k = 1 .. T-1),
    so the ripples at small k and the decay at large k both show. Returns the figure.
    """
    cosines, curve = _np(cosines), _np(curve)
    n = curve.shape[0]
    fig = new_figure(8.6, 3.1)
    ax_map, ax_curve = fig.subplots(1, 2, width_ratios=[1, 1.35])
    steps = plt.get_cmap(DIVERGING, 12)  # 12 colour steps: a light PNG of 512 x 512 stripes
    image = ax_map.imshow(
        cosines, cmap=steps, vmin=-1, vmax=1, extent=(0, n, n, 0), interpolation="nearest"
    )
    fig.colorbar(image, ax=ax_map, ticks=[-1, 0, 1], shrink=0.85)
    ax_map.set(xlabel="position t", ylabel="position s")
    ax_map.set_title(f"cos(P_s, P_t), {title}", fontsize=points(10))
    offsets = range(1, n)
    ax_curve.plot(offsets, curve[1:], linewidth=1, color="tab:blue")
    ax_curve.axhline(0, color="gray", linewidth=0.8)
    for k in marks:  # each value written in a row below the curve, a thin line up to its dot
        ax_curve.plot([k], [curve[k]], "o", color="tab:red", markersize=4)
        ax_curve.annotate(
            f"{curve[k]:.3f}", (k, curve[k]), xytext=(k, -0.52), ha="left" if k == 1 else "center",
            fontsize=points(8), color="tab:red",
            arrowprops={"arrowstyle": "-", "color": "tab:red", "linewidth": 0.5, "alpha": 0.6},
        )  # fmt: skip
    ax_curve.set(xscale="log", xlim=(1, n - 1), ylim=(-0.6, 1.05), xlabel="offset k (log scale)")
    ax_curve.set_ylabel("mean over t of cos(P_t, P_t+k)", fontsize=points(9))
    ax_curve.set_title("similarity by offset", fontsize=points(10))
    return fig


def component_waves(scores, pairs, start: int = 1, turns: float = 4.0):
    """Chapter 2: principal components that turn in pairs, against position, one panel per pair.

    scores: (T, n) principal-component scores (column j = component j along the positions);
    pairs: objects with ``first``, ``second`` (0-based columns) and ``period`` (positions per turn),
    e.g. ``learned_table.component_pairs``. Each panel shows positions start .. start + about
    ``turns`` periods (at least 40, at most the table). Returns the figure.
    """
    scores = _np(scores)
    n = scores.shape[0]
    fig = new_figure(7.6, 0.8 + 0.95 * math.ceil(len(pairs) / 2))
    axes = fig.subplots(math.ceil(len(pairs) / 2), 2, squeeze=False).ravel()
    for ax, pair in zip(axes, pairs, strict=False):
        stop = min(n, start + max(40, int(turns * pair.period)))
        t = range(start, stop)
        ax.plot(t, scores[start:stop, pair.first], linewidth=1, label=f"PC {pair.first + 1}")
        ax.plot(t, scores[start:stop, pair.second], linewidth=1, label=f"PC {pair.second + 1}")
        ax.axhline(0, color="gray", linewidth=0.6)
        ax.set_title(
            f"PC {pair.first + 1} and PC {pair.second + 1}: period {pair.period:.1f}",
            fontsize=points(9),
        )
        ax.legend(fontsize=points(7), loc="upper right", ncol=2, handlelength=1)
        ax.yaxis.set_major_locator(MaxNLocator(3))
    for ax in axes[::2]:
        ax.set_ylabel("component score", fontsize=points(8))
    for ax in axes[len(pairs) :]:
        ax.set_visible(False)
    for ax in axes[-2:]:
        ax.set_xlabel("position t")
    return fig


def pairs_beside_sinusoids(scores, pairs, sinusoid, sinusoid_pairs, turns: float = 3.0):
    """Chapter 3: a learned table's turning pairs (left) beside sinusoidal pairs (right).

    scores: (T, n) principal-component scores of the learned table; pairs: objects with ``first``,
    ``second`` and ``period`` (``learned_table.component_pairs``); sinusoid: (T', D) sinusoidal
    table with T' >= T; sinusoid_pairs: one (i, wavelength) per learned pair, pair i being columns
    2i (sin) and 2i + 1 (cos). Row r shows positions 1 .. about ``turns`` learned periods on both
    sides, each curve scaled to an RMS of 1 so the shapes compare. Returns the figure.
    """
    scores, sinusoid = _np(scores), _np(sinusoid)
    n = scores.shape[0]
    fig = new_figure(8.2, 0.5 + 0.95 * len(pairs))
    axes = fig.subplots(len(pairs), 2, squeeze=False)
    for (ax_l, ax_r), pair, (i, wavelength) in zip(axes, pairs, sinusoid_pairs, strict=True):
        stop = min(n, 1 + max(30, int(turns * pair.period)))
        t = range(1, stop)
        for column, colour in ((pair.first, "tab:blue"), (pair.second, "tab:orange")):
            wave = scores[1:stop, column]
            ax_l.plot(
                t, wave / (wave**2).mean() ** 0.5, linewidth=1, color=colour,
                label=f"PC {column + 1}",
            )  # fmt: skip
        for column, colour, name in ((2 * i, "tab:blue", "sin"), (2 * i + 1, "tab:orange", "cos")):
            ax_r.plot(t, sinusoid[1:stop, column] * 2**0.5, linewidth=1, color=colour, label=name)
        for ax in (ax_l, ax_r):
            ax.legend(fontsize=points(7), loc="upper right", ncol=2, handlelength=1)
        ax_l.set_title(
            f"MiniLM PC {pair.first + 1}, {pair.second + 1}: period {pair.period:.1f}",
            fontsize=points(9),
        )
        ax_r.set_title(f"sinusoidal pair {i}: wavelength {wavelength:.1f}", fontsize=points(9))
        for ax in (ax_l, ax_r):
            ax.set_yticks([])
            ax.set_xlim(1, stop - 1)
            ax.set_ylabel("scaled", fontsize=points(8))
    axes[0, 0].set_ylabel("scaled (RMS 1)", fontsize=points(8))
    for ax in axes[-1]:
        ax.set_xlabel("position t")
    return fig


# Figures for a projector: 1.3x the pixels (dpi 80 -> 91) and text 1.25x larger in points, so
# labels are 1.42x larger on screen. Pixels cost time on every redraw (ipympl sends a PNG of the
# canvas), so the area grows little; and text larger still than 1.25x next to the same axes would
# make the titles of neighbouring panels collide. The page's CSS enlarges controls and readouts.
FONT_SCALE = 1.25
AREA_SCALE = 1.3


def projector_style(font_scale: float = FONT_SCALE, area_scale: float = AREA_SCALE) -> dict:
    """Make figures created from now on readable from the back of a room; returns what it set.

    Multiplies matplotlib's base font size (every label follows it, including those the course
    sizes explicitly, through ``plotting.points``) and raises the figures' dpi so that their
    pixel area grows by ``area_scale``. Affects this process only: the demo kernel.
    """
    import matplotlib as mpl

    if not (1 <= font_scale <= 3 and 1 <= area_scale <= 4):
        raise ValueError(
            f"font_scale must be in [1, 3] and area_scale in [1, 4], got {font_scale} and "
            f"{area_scale}: larger makes the labels collide and every redraw slow."
        )
    mpl.rcParams["font.size"] = 10 * font_scale
    mpl.rcParams["axes.titlesize"] = "medium"  # titles stay as wide as before next to the axes
    global DPI
    DPI = round(80 * math.sqrt(area_scale))
    return {"font.size": mpl.rcParams["font.size"], "dpi": DPI}
