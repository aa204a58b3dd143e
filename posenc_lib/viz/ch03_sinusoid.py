"""Chapter 3's figures and dashboard: the sinusoidal table, its offsets and its wavelengths."""

from __future__ import annotations

import math

import ipywidgets as W
import torch

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch03_sinusoid import sinusoid_view
from posenc_lib.i18n import N_, _, tr
from posenc_lib.viz.dashboard import Dashboard
from posenc_lib.viz.figures import DIVERGING, heading, new_figure, points, to_numpy


class SinusoidPlot:
    """Chapter 3: one sinusoidal table and what it implies (an ``analysis.ch03_sinusoid.SinusoidView``).

    Top left: the table (T, D), positions along x; along y the sine rows (dims 0, 2, 4, ...) in the
    upper half and the cosine rows (dims 1, 3, 5, ...) in the lower half, each from the fastest
    pair down to the slowest, stretched to fill the axes whatever D is (interleaved rows one pixel
    each, sin near 0 beside cos near 1, read as stripes, not waves); t (solid) and t + k (dashed)
    are marked. Top right: the vector PE_t, its dims in the same order. Bottom left: <PE_t, PE_{t+k}> / (D/2) against the offset k, with k marked; the
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
        # y runs from 0 (top) to 1 (bottom) whatever D is: sines in the upper half, cosines in
        # the lower, so nothing moves when D changes.
        self.image = ax_map.imshow(
            to_numpy(self._by_function(view.table).T),
            aspect="auto",
            cmap=DIVERGING,
            vmin=-1,
            vmax=1,
            interpolation="nearest",
            extent=(-0.5, n_pos - 0.5, 1, 0),
        )
        self.marker = ax_map.axvline(view.position, color="black", linewidth=1.5)
        self.shifted = ax_map.axvline(view.position, color="black", linewidth=1, linestyle="--")
        ax_map.axhline(0.5, color="black", linewidth=0.8)
        ax_map.set(xlim=(-0.5, n_pos - 0.5), xticks=[0, n_pos - 1])
        ax_map.set(ylim=(1, 0))
        ax_map.set_yticks([0.25, 0.75], labels=["sin", "cos"])
        heading(
            ax_map, _("PE table: sin rows, then cos rows, fast pairs on top; t solid, t + k dashed")
        )
        ax_vec.axvline(0, color="gray", linewidth=0.8)
        ax_vec.axhline(0.5, color="black", linewidth=0.8)
        (self.vector,) = ax_vec.plot([], [], linestyle="none", marker="o", markersize=2.5)
        ax_vec.set(xlim=(-1.1, 1.1), ylim=(1, 0), xticks=[-1, 1], yticks=[])
        heading(ax_vec, "PE_t")
        ax_dot.axhline(0, color="gray", linewidth=0.8)
        (self.similarity,) = ax_dot.plot([], [], color="tab:blue", linewidth=1)
        (self.dot,) = ax_dot.plot([], [], "o", color="black", markersize=5)
        limit = int(view.offsets.abs().max())
        ax_dot.set(xlim=(-limit, limit), xticks=[-limit, 0, limit])
        ax_dot.set(ylim=(-1.05, 1.05), yticks=[0, 1])
        heading(ax_dot, _("<PE_t, PE_t+k> / (D/2) against offset k"))
        # log10 of the wavelength on a linear axis, labelled in tokens: a log-scaled axis would
        # cost its transform and tick search on every redraw.
        (self.ladder,) = ax_ladder.plot([], [], "o", color="tab:purple", markersize=3)
        ax_ladder.axhline(math.log10(n_pos), color="gray", linewidth=0.8, linestyle=":")
        ax_ladder.set(xlim=(-1, max_dims // 2), ylim=(0, math.log10(max_wavelength)), xticks=[])
        ax_ladder.set_yticks([1, 3, 5], labels=["10", "1000", "100000"])
        heading(ax_ladder, _("wavelength of each pair i (dotted: T)"))
        self.update(view)

    @staticmethod
    def _by_function(table):
        """(T, D) -> (T, D): the sine columns (0, 2, 4, ...), then the cosine columns."""
        return torch.cat((table[:, 0::2], table[:, 1::2]), dim=1)

    def update(self, view) -> None:
        """Show another SinusoidView of the same T (any D up to max_dims), in place."""
        table, t, k = view.table, view.position, view.offset  # (T, D), t, k
        d_model = table.shape[1]
        self.image.set_data(to_numpy(self._by_function(table).T))
        self.marker.set_xdata([t, t])
        self.shifted.set_xdata([t + k, t + k])
        rows = [(j + 0.5) / d_model for j in range(d_model)]  # each dim's row centre, 0..1
        self.vector.set_data(to_numpy(self._by_function(table[None, t])[0]), rows)
        self.similarity.set_data(to_numpy(view.offsets), to_numpy(view.similarity))
        self.dot.set_data([k], [view.dot / (table.shape[1] / 2)])
        self.ladder.set_data(range(len(view.wavelengths)), to_numpy(view.wavelengths.log10()))


def pairs_beside_sinusoids(scores, pairs, sinusoid, sinusoid_pairs, turns: float = 3.0):
    """Chapter 3: a learned table's turning pairs (left) beside sinusoidal pairs (right).

    scores: (T, n) principal-component scores of the learned table; pairs: objects with ``first``,
    ``second`` and ``period`` (``learned_table.component_pairs``); sinusoid: (T', D) sinusoidal
    table with T' >= T; sinusoid_pairs: one (i, wavelength) per learned pair, pair i being columns
    2i (sin) and 2i + 1 (cos). Row r shows positions 1 .. about ``turns`` learned periods on both
    sides, each curve scaled to an RMS of 1 so the shapes compare. Returns the figure.
    """
    scores, sinusoid = to_numpy(scores), to_numpy(sinusoid)
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
            tr(
                "MiniLM PC {first}, {second}: period {period:.1f}",
                first=pair.first + 1,
                second=pair.second + 1,
                period=pair.period,
            ),
            fontsize=points(9),
        )
        ax_r.set_title(
            tr("sinusoidal pair {i}: wavelength {wavelength:.1f}", i=i, wavelength=wavelength),
            fontsize=points(9),
        )
        for ax in (ax_l, ax_r):
            ax.set_yticks([])
            ax.set_xlim(1, stop - 1)
    fig.supylabel(_("scaled (RMS 1)"), fontsize=points(9))  # one label for every row's height
    for ax in axes[-1]:
        ax.set_xlabel(_("position t"))
    return fig


# Renard's R20 series of preferred numbers (ISO 3): 20 steps a decade, value k within 1.3% of
# 10^(k/20), so the steps are even on a log scale (x1.10 to x1.14), with labels of 3 digits at most.
R20 = tuple(
    map(float, "1 1.12 1.25 1.4 1.6 1.8 2 2.24 2.5 2.8 3.15 3.55 4 4.5 5 5.6 6.3 7.1 8 9".split())
)


def preferred_numbers(low: float, high: float) -> list[tuple[str, float]]:
    """(label, value) pairs of the R20 series from low to high, for a SelectionSlider on a log scale."""
    values = [round(m * 10**e, 6) for e in range(-3, 10) for m in R20]
    return [(f"{v:,g}", v) for v in values if low <= v <= high]


def sinusoid_dashboard(n_positions: int = 128, horizon: int = 4096) -> Dashboard:
    """Chapter 3: base, d_model, a position t and an offset k; the table, PE_t, the dot product
    against every offset and the wavelength ladder follow, and the readout gives the numbers."""
    n_positions = validate.positive_int("n_positions", n_positions, maximum=1024)
    if n_positions < 8:
        raise ValueError(f"n_positions must be at least 8, got {n_positions}.")
    style = {"description_width": "initial"}
    reach = min(100, n_positions - 1)
    controls = {
        "base": W.SelectionSlider(  # even steps on a log scale, 20 a decade, with round labels
            options=preferred_numbers(1.25, 1e5), value=10000.0, description="base", style=style
        ),
        "d_model": W.IntSlider(
            value=64, min=8, max=128, step=8, description="d_model", style=style
        ),
        "position": W.IntSlider(
            value=20, min=0, max=n_positions - 1, description=_("position t"), style=style
        ),
        "offset": W.IntSlider(
            value=8, min=-reach, max=reach, description=_("offset k"), style=style
        ),
    }

    def compute(base, d_model, position, offset):
        d_model = max(2, 2 * round(d_model / 2))  # an even width, whatever a script sets
        return sinusoid_view(n_positions, d_model, base, position, offset, horizon)

    def readout(view):
        d, confusion = view.table.shape[1], view.confusion
        verdict = (
            tr("first confusion at k = <b>{k}</b>", k=confusion.first_offset)
            if confusion.first_offset is not None
            else _("none confused")
        )
        return tr(
            "D = {d}: longest wavelength <b>{longest:,.0f}</b> "
            "(not 2&pi;&middot;base = {popular:,.0f}); "
            "&lang;PE<sub>t</sub>, PE<sub>t+k</sub>&rang; = <b>{dot:.2f}</b> of D/2 = "
            "{half} at k = {offset}, for every t; positions 0..{last}: "
            "closest non-neighbour dist(k)/dist(1) = <b>{margin:.2f}</b> "
            "(k = {closest}), {verdict}",
            d=d,
            longest=float(view.wavelengths[-1]),
            popular=2 * math.pi * view.base,
            dot=view.dot,
            half=d // 2,
            offset=view.offset,
            last=view.horizon - 1,
            margin=confusion.margin,
            closest=confusion.closest_offset,
            verdict=verdict,
        )

    return Dashboard(
        N_("Sinusoidal encoding: base, width, position and offset"),
        controls,
        compute,
        SinusoidPlot,
        readout,
        (9.6, 4.2),
    )


# -- the lecture's still figures ---------------------------------------------------------------------


def bits_and_pairs(bits, t_fine, waves, pairs):
    """Bits 0-3 of t as steps with a smooth wave of the same period each (left); the (sin, cos)
    pairs with the bits' periods as a heatmap, first 48 positions (right).

    bits: (T, B) the binary table; t_fine: (F,) positions the waves are drawn at; waves: one
    (F,) wave per bit drawn; pairs: (T, 2B) the (sin, cos) pairs. Returns the figure.
    """
    fig = new_figure(9.0, 2.6)
    ax_bits, ax_map = fig.subplots(1, 2, width_ratios=[1, 1.2])
    bits, t_fine = to_numpy(bits), to_numpy(t_fine)
    for j, wave in enumerate(waves):  # each bit drawn 1.5 units above the last
        ax_bits.step(range(33), bits[:33, j] + 1.5 * j, where="post", color="black", linewidth=1)
        ax_bits.plot(t_fine, to_numpy(wave) + 1.5 * j, color="tab:red", linewidth=1)
    rows = range(len(waves))
    ax_bits.set_yticks([1.5 * j + 0.5 for j in rows], labels=[tr("bit {j}", j=j) for j in rows])
    ax_bits.set(xlabel=_("position t"), title=_("bits (black) and their smooth waves (red)"))
    image = ax_map.imshow(to_numpy(pairs[:48].T), aspect="auto", cmap=DIVERGING, vmin=-1, vmax=1)
    fig.colorbar(image, ax=ax_map, ticks=[-1, 0, 1])
    ax_map.set(xlabel=_("position t"), ylabel=_("dimension (pair j: rows 2j, 2j + 1)"))
    ax_map.set_title(_("(sin, cos) pairs with the bits' periods 2, 4, ..., 256"), fontsize=10)
    return fig


def shift_and_turn(matrix, pair, shift: int, pair_name: str):
    """The matrix M_k that moves every position k steps on (left), and one pair of positions
    0..T-1 on its circle with arrows t -> t + k from three starts (right).

    matrix: (D, D), M_k; pair: (T, 2), one (sin, cos) pair of the table; shift: k; pair_name:
    what the right panel's title calls the pair. Returns the figure.
    """
    fig = new_figure(7.6, 3.2)
    ax_m, ax_circle = fig.subplots(1, 2, width_ratios=[1.2, 1])
    image = ax_m.imshow(to_numpy(matrix), cmap=DIVERGING, vmin=-1, vmax=1)
    fig.colorbar(image, ax=ax_m, ticks=[-1, 0, 1])
    ax_m.set(
        title=tr("M_{shift} for D = {d} (base 10000)", shift=shift, d=len(matrix)),
        xlabel=_("column"),
        ylabel=_("row"),
    )
    pair = to_numpy(pair)  # (T, 2)
    ax_circle.plot(pair[:, 0], pair[:, 1], "o", color="tab:blue", markersize=3)
    for start in (0, 6, 13):
        ax_circle.annotate(
            "",
            xy=pair[start + shift],
            xytext=pair[start],
            arrowprops={"arrowstyle": "->", "color": "red"},
        )
        ax_circle.text(*(1.12 * pair[start]), f"t={start}", fontsize=8, ha="center")
    ax_circle.set(aspect="equal", xlim=(-1.3, 1.3), ylim=(-1.3, 1.3), xlabel="sin", ylabel="cos")
    ax_circle.set_title(f"{pair_name}: t -> t + {shift}", fontsize=10)
    return fig


def closest_by_range(ratios, n_ranges: int):
    """The smallest dist(k) / dist(1) in each range of offsets k, one panel per width D, one line
    per base; the dashed line at 1 is a neighbour's distance.

    ratios: (D, base) -> (centres (R,), smallest ratio per range (R,)). Returns the figure.
    """
    widths = sorted({d for d, _ in ratios})
    fig = new_figure(8.6, 2.4)
    axes = fig.subplots(1, len(widths), sharey=True)
    for ax, d in zip(axes, widths, strict=True):
        for (width, base), (centres, values) in ratios.items():
            if width == d:
                ax.plot(
                    to_numpy(centres),
                    to_numpy(values),
                    linewidth=1.2,
                    label=tr("base {base:g}", base=base),
                )
        ax.axhline(1, color="black", linestyle="--", linewidth=0.8)
        ax.set(xscale="log", xlabel=tr("offset k ({n} ranges)", n=n_ranges))
        ax.set_title(tr("smallest dist(k) / dist(1) per range, D = {d}", d=d), fontsize=10)
    axes[0].legend(fontsize=8, loc="upper right")
    return fig


def similarity_by_range(curves, d_model: int):
    """<PE_t, PE_t+k> / (D/2) averaged over each range of offsets k, one line per base, with a
    dotted line at k = base.

    curves: base -> (centres (R,), mean similarity per range (R,)). Returns the figure.
    """
    fig = new_figure(6.4, 2.4)
    ax = fig.subplots()
    for base, (centres, values) in curves.items():
        ax.plot(
            to_numpy(centres), to_numpy(values), linewidth=1.2, label=tr("base {base:g}", base=base)
        )
    ax.axhline(0, color="gray", linewidth=0.8)
    for base in curves:
        ax.axvline(base, color="gray", linestyle=":", linewidth=0.8)
    ax.set(xscale="log", xlabel=_("offset k (dotted: k = base)"), ylabel=_("mean similarity"))
    title = tr("<PE_t, PE_t+k> / (D/2), averaged per range of k, D = {d}", d=d_model)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    return fig


def similarity_by_offset(offsets, curves, base: float = 10000):
    """<PE_t, PE_t+k> / (D/2) against the offset k, one panel per width D, sharing the y axis.

    offsets: (K,) the offsets k; curves: D -> (K,) the normalised dot product at each offset
    (``analysis.ch03_sinusoid.dot_by_offset`` divided by D/2) for the given base. Returns the
    figure.
    """
    offsets = to_numpy(offsets)
    fig = new_figure(8.4, 2.2)
    axes = fig.subplots(1, len(curves), sharey=True, squeeze=False)[0]
    for ax, (d, curve) in zip(axes, curves.items(), strict=True):
        ax.plot(offsets, to_numpy(curve), linewidth=1)
        ax.axhline(0, color="gray", linewidth=0.8)
        ax.set(
            xlabel=_("offset k"),
            title=tr("<PE_t, PE_t+k> / (D/2), D = {d}, base {base:g}", d=d, base=base),
        )
    return fig


def variance_by_dimension(variance, n_positions: int, base: float = 10000):
    """How much each dimension of a sinusoidal table moves over positions 0..n_positions-1.

    variance: (D,) each dimension's variance over those positions; sines (even dims) blue, cosines
    (odd dims) orange, with a dashed line at a full turn's 0.5. Returns the figure.
    """
    fig = new_figure(6.4, 2.2)
    ax = fig.subplots()
    d_model = len(variance)
    colours = ["tab:blue" if i % 2 == 0 else "tab:orange" for i in range(d_model)]
    ax.bar(range(d_model), to_numpy(variance), color=colours)
    ax.axhline(0.5, color="gray", linestyle="--", linewidth=0.8)
    ax.set(xlabel=_("dimension (blue sin, orange cos)"), ylabel=_("variance over t"))
    ax.set_title(
        tr(
            "which dimensions move over {n} positions (base {base:g}, D = {d})",
            n=n_positions,
            base=base,
            d=d_model,
        ),
        fontsize=points(10),
    )
    return fig
