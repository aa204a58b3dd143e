"""Chapter 2's figures and dashboard: naive position tables and a learned table."""

from __future__ import annotations

import math

import ipywidgets as W
import matplotlib.pyplot as plt
from matplotlib.ticker import MaxNLocator

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch02_naive import TABLES, table_view
from posenc_lib.i18n import N_, _, tr
from posenc_lib.viz.dashboard import Dashboard, dropdown
from posenc_lib.viz.figures import (
    DIVERGING,
    line_style,
    new_figure,
    points,
    same_curves,
    to_numpy,
)

# Chapter 2: colour limits per table, fixed so that switching tables never rescales by surprise.
TABLE_COLOUR_LIMITS = {"integer": 255.0, "normalized": 1.0, "binary": 1.0, "sinusoidal": 1.0}
# The tables' names as a figure shows them (the keys of TABLES), translated when drawn.
TABLE_NAMES = {
    "integer": N_("integer"),
    "normalized": N_("normalized"),
    "binary": N_("binary"),
    "sinusoidal": N_("sinusoidal"),
}


class TablePlot:
    """Chapter 2: one position table and its neighbour steps (an ``analysis.ch02_naive.TableView``).

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
            to_numpy(view.table.T),
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
        ax_map.set(xlabel=_("position t"), ylabel=_("dimension"), yticks=[0, d_model - 1])
        (self.steps,) = ax_step.plot([], [], color="tab:blue", linewidth=1.2)
        (self.dot,) = ax_step.plot([], [], "o", color="black", markersize=5)
        ax_step.set(xlabel="t", title=_("step ||PE(t+1) - PE(t)||"), ylim=(0, distance_limit))
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
        self.image.set_data(to_numpy(view.table.T) / self._limit)
        if (n_pos, d_model) != self._shape:  # the sequence length changed: stretch the axes
            self.image.set_extent((-0.5, n_pos - 0.5, d_model - 0.5, -0.5))
            ax_map.set_xlim(-0.5, n_pos - 0.5)
            ax_step.set_xlim(-0.5, max(n_pos - 1.5, 0.5))
        if (view.name, n_pos, d_model) != (self._name, *(self._shape or (None, None))):
            name = _(TABLE_NAMES.get(view.name, view.name))
            ax_map.set_title(
                tr(
                    "{name} table, T = {n_pos}, D = {d_model}",
                    name=name,
                    n_pos=n_pos,
                    d_model=d_model,
                )
            )
        self._shape, self._name = (n_pos, d_model), view.name
        self.marker.set_xdata([view.position, view.position])
        distances = to_numpy(view.distances)
        self.steps.set_data(range(len(distances)), distances)
        if view.position < len(distances):  # the last position has no next neighbour
            self.dot.set_data([view.position], [distances[view.position]])
        else:
            self.dot.set_data([], [])


A_LEARNED_TABLE = N_("a learned table")  # similarity_map's default title


def similarity_map(cosines, curve, marks=(1, 10, 100, 300), title=A_LEARNED_TABLE):
    """Chapter 2: how alike a table's positions are, every pair (left) and by offset (right).

    cosines: (T, T), cos(P_s, P_t), or a block-averaged (T/b, T/b) copy (a lighter picture; the
    axes still count positions); curve: (T,), entry k the mean over t of cos(P_t, P_t+k);
    marks: offsets to dot and label on the curve. The offset axis is logarithmic (k = 1 .. T-1),
    so the ripples at small k and the decay at large k both show. Returns the figure.
    """
    cosines, curve = to_numpy(cosines), to_numpy(curve)
    n = curve.shape[0]
    fig = new_figure(8.6, 3.1)
    ax_map, ax_curve = fig.subplots(1, 2, width_ratios=[1, 1.35])
    steps = plt.get_cmap(DIVERGING, 12)  # 12 colour steps: a light PNG of 512 x 512 stripes
    image = ax_map.imshow(
        cosines, cmap=steps, vmin=-1, vmax=1, extent=(0, n, n, 0), interpolation="nearest"
    )
    fig.colorbar(image, ax=ax_map, ticks=[-1, 0, 1], shrink=0.85)
    ax_map.set(xlabel=_("position t"), ylabel=_("position s"))
    ax_map.set_title(tr("cos(P_s, P_t), {title}", title=_(title)), fontsize=points(10))
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
    ax_curve.set(xscale="log", xlim=(1, n - 1), ylim=(-0.6, 1.05), xlabel=_("offset k (log scale)"))
    ax_curve.set_ylabel(_("mean over t of cos(P_t, P_t+k)"), fontsize=points(9))
    ax_curve.set_title(_("similarity by offset"), fontsize=points(10))
    return fig


def component_waves(scores, pairs, start: int = 1, turns: float = 4.0):
    """Chapter 2: principal components that turn in pairs, against position, one panel per pair.

    scores: (T, n) principal-component scores (column j = component j along the positions);
    pairs: objects with ``first``, ``second`` (0-based columns) and ``period`` (positions per turn),
    e.g. ``learned_table.component_pairs``. Each panel shows positions start .. start + about
    ``turns`` periods (at least 40, at most the table). Returns the figure.
    """
    scores = to_numpy(scores)
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
            tr(
                "PC {first} and PC {second}: period {period:.1f}",
                first=pair.first + 1,
                second=pair.second + 1,
                period=pair.period,
            ),
            fontsize=points(9),
        )
        ax.legend(fontsize=points(7), loc="upper right", ncol=2, handlelength=1)
        ax.yaxis.set_major_locator(MaxNLocator(3))
    for ax in axes[::2]:
        ax.set_ylabel(_("component score"), fontsize=points(8))
    for ax in axes[len(pairs) :]:
        ax.set_visible(False)
    for ax in axes[-2:]:
        ax.set_xlabel(_("position t"))
    return fig


def table_dashboard(d_model: int = 8, max_positions: int = 256) -> Dashboard:
    """Chapter 2: pick a table and a sequence length; see the table and how far apart neighbours are.

    Controls: the table (integer, normalized, binary, and chapter 3's sinusoidal for comparison),
    the sequence length T, and a marked position. The readout gives the numbers the chapter asks
    about: the largest |value|, the shortest and longest neighbour step, the step from 2 to 3.
    """
    d_model = validate.even_int("d_model", d_model, N_("the sinusoidal table is built from pairs."))
    max_positions = validate.positive_int("max_positions", max_positions, maximum=2**d_model)
    if max_positions < 4:
        raise ValueError(f"max_positions must be at least 4, got {max_positions}.")
    style = {"description_width": "initial"}
    labels = {
        "integer": N_("integer t"),
        "normalized": N_("normalized t/(T-1)"),
        "binary": N_("binary bits"),
    }
    labels["sinusoidal"] = N_("sinusoidal (chapter 3)")
    options = [(_(labels.get(name, name)), name) for name in TABLES]
    controls = {
        "name": dropdown(_("table"), options, "binary"),
        "n_positions": W.IntSlider(
            value=min(64, max_positions),
            min=4,
            max=max_positions,
            description=_("sequence length T"),
            style=style,
        ),
        "position": W.IntSlider(
            value=min(31, max_positions - 1),
            min=0,
            max=max_positions - 1,
            description=_("position t"),
            style=style,
        ),
    }

    def compute(name, n_positions, position):
        return table_view(name, n_positions, d_model, position)

    def readout(view):
        steps = view.distances.tolist()  # (T-1,): step t is ||PE_t+1 - PE_t||, the right panel
        longest = max(range(len(steps)), key=steps.__getitem__)
        clamped = (
            tr(" (slider past the end: showing t = {position})", position=view.position)
            if view.clamped
            else ""
        )
        return tr(
            "max |value| = <b>{max_abs:.3g}</b>; neighbour step "
            "||PE(t+1) &minus; PE(t)|| (right panel): shortest "
            "<b>{shortest:.3g}</b>, longest <b>{longest_step:.3g}</b> (t = {longest} &rarr; "
            "{next}, the panel's peak), longest / shortest "
            "<b>{ratio:.3g}</b>; "
            "||PE(3) &minus; PE(2)|| = <b>{step_2:.3g}</b>{clamped}",
            max_abs=view.max_abs,
            shortest=min(steps),
            longest_step=steps[longest],
            longest=longest,
            next=longest + 1,
            ratio=steps[longest] / max(min(steps), 1e-12),
            step_2=steps[2],
            clamped=clamped,
        )

    def make_plot(view, fig):
        limits = {**TABLE_COLOUR_LIMITS, "integer": float(max_positions - 1)}
        return TablePlot(view, fig, 1.06 * d_model**0.5, limits)

    return Dashboard(
        _("Naive position tables: values and neighbour steps"),
        controls,
        compute,
        make_plot,
        readout,
        (9.6, 3.0),
    )


# -- the lecture's still figures ---------------------------------------------------------------------


def norm_growth(integer, normalized, binary, words):
    """How long each position vector is against t, beside the word vectors' lengths (log scale).

    integer, normalized, binary: (T,) each, ||PE_t|| of that table; words: (T,), ||x_t||.
    Returns the figure.
    """
    n_positions = len(words)
    fig = new_figure(6.4, 2.6)
    ax = fig.subplots()
    ax.plot(to_numpy(integer), label=_("integer"))
    ax.plot(to_numpy(normalized), label=tr("normalized (T = {n})", n=n_positions))
    ax.plot(to_numpy(binary), label=_("binary"), linewidth=0.8)
    ax.plot(to_numpy(words), color="gray", linewidth=0.8, label=_("word vectors"))
    ax.set(yscale="log", ylim=(0.1, 1e7), xlabel=_("position t"), ylabel=_("||PE_t|| (log scale)"))
    ax.set_title(_("how long is each position vector?"))
    ax.legend(fontsize=8, ncol=4, loc="upper center")
    return fig


def normalized_gaps(codes):
    """The normalized codes t / (T - 1) of sentences of several lengths, one row each, with
    tokens 2 and 3 in red and the gap between them written beside.

    codes: T -> (T,) the codes of a T-token sentence. Returns the figure.
    """
    fig = new_figure(6.4, 1.8)
    ax = fig.subplots()
    for row, (n_tokens, values) in enumerate(codes.items()):
        values = to_numpy(values)  # (T,)
        ax.plot(values, [row] * n_tokens, "|", color="gray", markersize=12)
        ax.plot(values[2:4], [row, row], "|-", color="tab:red", markersize=16, linewidth=3)
        gap = float(values[3] - values[2])
        ax.annotate(
            tr("gap {gap:.3g}", gap=gap),
            (float(values[3]), row),
            xytext=(8, 6),
            textcoords="offset points",
        )
    labels = [tr("{n} tokens", n=n_tokens) for n_tokens in codes]
    ax.set(yticks=range(len(codes)), yticklabels=labels, ylim=(-0.6, len(codes) - 0.4))
    ax.set(xlim=(-0.02, 1.02), xlabel=_("normalized code t / (T - 1)"))
    ax.set(title=_("tokens 2 and 3 (red) in two sentences"))
    return fig


def binary_distances(bits, hamming, euclid):
    """The binary table's first 32 positions (left) and its neighbour distances (right).

    bits: (T, B) the binary table; hamming, euclid: (T-1,) distance from t to t + 1, in bits
    flipped and in the Euclidean norm. Returns the figure.
    """
    fig = new_figure(9, 2.6)
    ax_map, ax_step = fig.subplots(1, 2, width_ratios=[1, 1.6])
    ax_map.imshow(
        to_numpy(bits[:32].T), cmap="Blues", aspect="auto", interpolation="nearest", origin="lower"
    )
    ax_map.set(
        xlabel=_("position t"), ylabel=_("bit j"), title=_("binary table, first 32 positions")
    )
    ax_step.plot(to_numpy(hamming), label=_("Hamming (bits flipped)"), linewidth=0.9)
    ax_step.plot(to_numpy(euclid), label=_("Euclidean"), linewidth=0.9)
    title = tr("neighbour distances, T = {n}", n=len(bits))
    ax_step.set(xlabel="t", ylabel=_("distance, t to t + 1"), title=title)
    ax_step.legend(fontsize=8)
    return fig


def flip_rates_and_waves(rates, bits, smooth):
    """Each bit's flip rate against 1 / 2^j (left); bits 0-3 over 32 positions as steps with
    their smoothed waves dotted (right).

    rates: (B,) share of steps at which bit j flips; bits: (T, B) the binary table; smooth: (T, B)
    one wave per bit, from 0 to 1. Returns the figure.
    """
    n_bits = len(rates)
    fig = new_figure(9, 2.6)
    ax_rate, ax_wave = fig.subplots(1, 2, width_ratios=[1, 1.6])
    ax_rate.bar(range(n_bits), to_numpy(rates), color="tab:blue")
    ax_rate.plot(range(n_bits), [1 / 2**k for k in range(n_bits)], "k.", label=r"$1\,/\,2^j$")
    ax_rate.set(
        yscale="log", xlabel=_("bit j"), ylabel=_("flips per step"), title=_("flip rate per bit")
    )
    ax_rate.legend(fontsize=8)
    bits, smooth = to_numpy(bits), to_numpy(smooth)
    for k, colour in zip(range(4), ("tab:blue", "tab:orange", "tab:green", "tab:red"), strict=True):
        ax_wave.step(range(32), bits[:32, k] + 1.3 * k, where="mid", color=colour, linewidth=1)
        ax_wave.plot(
            range(32), smooth[:32, k] + 1.3 * k, color=colour, linestyle=":", linewidth=1.5
        )
    ax_wave.set(xlabel=_("position t"), yticks=[0.5 + 1.3 * k for k in range(4)])
    ax_wave.set_yticklabels([tr("bit {k}", k=k) for k in range(4)])
    ax_wave.set_title(_("bits 0-3 (steps) and their smoothed waves (dotted)"))
    return fig


def row_similarity(cosines, row: int):
    """How much each row of some tables resembles one row: cos(PE_row, PE_s) against s.

    cosines: label -> (T,) cos(PE_row, PE_s) for every s. Returns the figure.
    """
    fig = new_figure(6.4, 2.4)
    ax = fig.subplots()
    for label, values in cosines.items():
        ax.plot(to_numpy(values), label=label)
    ax.axhline(0, color="gray", linewidth=0.8)
    ax.set(xlabel=_("position s"), ylabel=f"cos(PE_{row}, PE_s)", ylim=(-0.5, 1.05))
    ax.set_title(tr("how much does each row resemble row {row}?", row=row))
    ax.legend(fontsize=8, loc="upper right")
    return fig


def decay_curves(curves, marks=(1, 10, 100)):
    """Long-range decay, read as chapter 6 reads RoPE's: each table's similarity curve
    c_k = mean_t cos(PE_t, PE_{t+k}) against the offset k (log scale), up to half its length.

    curves: label -> (T,) the curve from offset 0 (``learned_table.cosine_by_offset``); marks:
    offsets drawn as dotted lines. Returns the figure.
    """
    half = {label: to_numpy(values)[: len(values) // 2 + 1] for label, values in curves.items()}
    equal = same_curves(half)  # e.g. integer and normalized: every cosine is 1
    names = {label: [label] for label in half if label not in equal}
    for label, earlier in equal.items():
        names[earlier].append(label)
    fig = new_figure(6.4, 2.8)
    ax = fig.subplots()
    for index, (label, together) in enumerate(names.items()):
        values = half[label]  # offsets 0 .. T // 2
        shown = " = ".join(together)  # curves with the same values: one line, both names
        ax.plot(range(1, len(values)), values[1:], label=shown, linewidth=1.1, **line_style(index))
    for k in marks:
        ax.axvline(k, color="gray", linestyle=":", linewidth=0.8)
    ax.axhline(0, color="gray", linewidth=0.8)
    ax.set(xscale="log", xlabel=_("offset k (log scale)"), ylabel=_("mean cos(PE_t, PE_t+k)"))
    ax.set(ylim=(-0.5, 1.05), title=_("does a position's likeness fade with distance?"))
    ax.legend(fontsize=points(7.5), loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig
