"""Chapter 7's figures and dashboard: RoPE scalings and the extrapolation experiment's perplexity."""

from __future__ import annotations

import math

import ipywidgets as W
from matplotlib.ticker import MaxNLocator

from posenc_lib.analysis.ch07_scaling import METHODS as SCALING_METHODS
from posenc_lib.analysis.ch07_scaling import scaling_view
from posenc_lib.i18n import N_, _, tr
from posenc_lib.models.results import load_results
from posenc_lib.viz.dashboard import Dashboard, dropdown
from posenc_lib.viz.figures import new_figure, points, to_numpy


class ScalingPlot:
    """Chapter 7: what a RoPE scaling does to each pair, and to perplexity (a
    ``analysis.ch07_scaling.ScalingView``).

    Left: each pair's wavelength 2 pi / theta_i (log scale) before (grey) and after the scaling
    (colour), with the training length L (solid) and s L (dashed), named in a legend: pairs under
    the solid line turn a full circle within L. Middle: theta'_i / theta_i for every method at this
    factor (the chosen one thick, each named in a legend) and YaRN's ramp (dotted; 1 keeps, 0
    divides by s). Right: the experiment's
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
        (self.before,) = ax_w.plot([], [], "o", color="0.65", markersize=3.5, label=_("unscaled"))
        (self.after,) = ax_w.plot([], [], "o", markersize=3.5, label=_("scaled"))
        self.length = ax_w.axhline(0, color="black", linewidth=1, label="L")
        self.target = ax_w.axhline(0, color="black", linewidth=1, linestyle="--", label="sL")
        ax_w.set(xlim=(-0.5, n_pairs - 0.5), ylim=(0, 7), xlabel=_("pair i"))
        ax_w.set_yticks([1, 3, 5], labels=["10", "1e3", "1e5"])
        ax_w.set_xticks([0, n_pairs // 2, n_pairs - 1])
        ax_w.set_title(_("wavelength (positions per turn)"), fontsize=points(9))
        names = {  # dynamic, dashed, lies on NTK's line (at length sL they agree): one entry
            "PI": "PI",
            "NTK": _("NTK-aware (= dynamic NTK at T = sL)"),
            "dynamic": "_dynamic",  # a leading "_": no legend entry of its own
            "YaRN": "YaRN",
        }
        self.ratios = {  # dynamic first: at length sL it equals NTK, drawn over it
            name: ax_r.plot(
                [],
                [],
                "--" if name == "dynamic" else "-",
                color=self.COLOURS[name],
                label=names[name],
            )[0]
            for name in ("dynamic", "PI", "NTK", "YaRN")
        }
        (self.ramp,) = ax_r.plot([], [], ":", color="black", linewidth=1.2, label=_("YaRN ramp"))
        ax_r.set(xlim=(-0.5, n_pairs - 0.5), ylim=(0, 1.05), xlabel=_("pair i"))
        ax_r.set_xticks([0, n_pairs // 2, n_pairs - 1])
        ax_r.set_yticks([0, 0.5, 1])
        ax_r.set_title(_("new/old frequency (thick: the chosen one)"), fontsize=points(9))
        ax_w.legend(fontsize=points(7), loc="upper left", ncol=2, frameon=False)
        ax_r.legend(fontsize=points(6.5), loc="upper right", frameon=False)
        self._scaled_key = ax_w.get_legend().legend_handles[1]  # its colour follows the method
        (self.plain,) = ax_p.plot([], [], "o-", color="0.6", markersize=3)
        (self.scaled,) = ax_p.plot([], [], "o-", markersize=3)
        (self.tuned,) = ax_p.plot([], [], "s--", markersize=3)
        (self.control,) = ax_p.plot([], [], "s--", color="0.45", markersize=3)  # no scaling
        ax_p.set(xlim=(-0.2, 3.2), ylim=(math.log10(2.5), 2), xlabel=_("evaluation length"))
        ax_p.set_xticks([0, 1, 2, 3], labels=["L", "2L", "4L", "8L"])
        ax_p.set_yticks([math.log10(v) for v in (3, 10, 30)], labels=["3", "10", "30"])
        ax_p.set_title(
            _("perplexity (mean of seeds)\ngrey: plain RoPE; dashed: fine-tuned"),
            fontsize=points(9),
        )
        self._method = None
        self.update(view)

    def update(self, view) -> None:
        """Show another ScalingView (same head_dim), changing artists in place."""
        pairs = range(len(view.wavelengths))
        self.before.set_data(pairs, to_numpy(view.wavelengths.log10()))
        self.after.set_data(pairs, to_numpy(view.scaled_wavelengths.log10()))
        self.length.set_ydata([math.log10(view.train_len)] * 2)
        self.target.set_ydata([math.log10(view.factor * view.train_len)] * 2)
        for name, line in self.ratios.items():
            line.set_data(pairs, to_numpy(view.ratios[name]))
        self.ramp.set_data(pairs, to_numpy(view.ramp))
        if view.method != self._method:  # restyle only when the method changed
            colour = self.COLOURS[view.method]
            for name, line in self.ratios.items():
                line.set_linewidth(2.5 if name == view.method else 0.8)
            self.after.set_color(colour)
            self.scaled.set_color(colour)
            self.tuned.set_color(colour)
            self._method = view.method
            self._scaled_key.set_color(colour)  # the legend's "scaled" marker, drawn in place
        steps = range(len(view.lengths))
        for line, curve in ((self.plain, view.plain), (self.scaled, view.scaled),
                            (self.tuned, view.finetuned), (self.control, view.control)):  # fmt: skip
            if curve is None:
                line.set_data([], [])
            else:
                line.set_data(steps, [math.log10(v) for v in curve])


def scaling_dashboard(results: dict | None = None) -> Dashboard:
    """Chapter 7: a RoPE scaling, its factor s, the base and the training length L -> each pair's
    wavelength against L, every method's new frequencies, YaRN's ramp and attention scale, and the
    experiment's perplexity curve for the chosen method and factor.

    ``results``: the experiment's results (default: ``models.results.load_results()``). The curves
    were measured for base 10000 and L = 64 (head_dim 32) only; the readout says so otherwise.
    """
    results = load_results() if results is None else results
    style = {"description_width": "initial"}
    labels = {"PI": _("Position Interpolation"), "NTK": "NTK-aware", "dynamic": _("dynamic NTK")}
    controls = {
        "method": dropdown(_("scaling"), [(labels.get(m, m), m) for m in SCALING_METHODS], "PI"),
        "factor": W.ToggleButtons(
            options=[("s = 2", 2), ("s = 4", 4), ("s = 8", 8)],
            value=4,
            style={"button_width": "4em"},  # 52 px in JupyterLab; grows with the demo's font
        ),
        "base": W.FloatLogSlider(
            value=10000, base=10, min=2, max=6, step=0.25, description="base", style=style
        ),
        "train_len": W.IntSlider(
            value=64, min=16, max=1024, step=16, description=_("training length L"), style=style
        ),
    }

    def compute(method, factor, base, train_len):
        return scaling_view(method, factor, base, train_len, results)

    def readout(view):
        n_pairs = len(view.wavelengths)
        ratios = view.ratios[view.method]
        text = tr(
            "<b>{full}</b> of {n_pairs} pairs turn a full circle within the L - 1 = "
            "{steps} steps of a training text (L = {train_len}). {method}, s = {factor:g}: "
            "pair 0's frequency &times;<b>{first:.3g}</b>, the last pair's "
            "&times;<b>{last:.3g}</b>",
            full=view.full_turn,
            n_pairs=n_pairs,
            train_len=view.train_len,
            steps=view.train_len - 1,
            method=labels.get(view.method, view.method),
            factor=view.factor,
            first=float(ratios[0]),
            last=float(ratios[-1]),
        )
        if view.method == "YaRN":
            text += tr(
                "; attention scale &radic;(1/t) = 0.1 ln s + 1 = <b>{scale:.3f}</b> "
                "(logits &times;{logits:.3f})",
                scale=view.attention_scale,
                logits=view.attention_scale**2,
            )
        if view.method == "dynamic":
            text += _(
                " (factor 1, as in the experiment: at length T its stretch is"
                " 1&middot;T/L &minus; (1 &minus; 1) = T/L, drawn at T = sL; one measured curve)"
            )
        if view.scaled is not None:
            text += tr(
                ". Perplexity at L / 8L: <b>{at_l:.2f}</b> / <b>{at_8l:.2f}</b>"
                " (plain RoPE {plain_l:.2f} / {plain_8l:.2f})",
                at_l=view.scaled[0],
                at_8l=view.scaled[-1],
                plain_l=view.plain[0],
                plain_8l=view.plain[-1],
            )
        if view.finetuned is not None:
            text += tr("; fine-tuned at 4L: <b>{tuned:.2f}</b> at 4L", tuned=view.finetuned[2])
            if view.control is not None:
                text += tr(
                    " (plain RoPE fine-tuned the same way: <b>{control:.2f}</b>)",
                    control=view.control[2],
                )
        if not view.measured:
            text += _(
                '. <span style="color: #b42318">The perplexity curves were measured for base '
                "10000 and L = 64 only: they do not change with these settings.</span>"
            )
        return text

    return Dashboard(
        N_("RoPE scalings: each pair's frequency, YaRN's ramp and the perplexity they give"),
        controls,
        compute,
        ScalingPlot,
        readout,
        (9.6, 3.0),
    )


# -- the lecture's still figures ---------------------------------------------------------------------

# One colour per position encoding of the tiny model, in every figure of the chapter; the
# "x sqrt(d)" variants share their table's colour, dashed (METHOD_LINESTYLES). Any two colours
# differ by more than 20 in CIEDE2000 (tests/viz/test_figure_legibility.py): brown beside red read
# as one colour, so the learned table is cyan.
METHOD_COLOURS = {
    "none": "0.5",
    "sinusoidal": "tab:orange",
    "learned": "tab:cyan",
    "t5": "tab:green",
    "t5-far-buckets-untrained": "tab:olive",  # T5's kin, 23.5 apart from tab:green (CIEDE2000)
    "alibi": "tab:blue",
    "rope": "tab:red",
    "sinusoidal-scaled": "tab:orange",
    "learned-scaled": "tab:cyan",
    "rope-randomized": "tab:purple",
}
METHOD_LINESTYLES = {"sinusoidal-scaled": "--", "learned-scaled": "--"}


def method_style(name: str) -> dict:
    """The colour and linestyle a method's line has in every figure of the chapter."""
    return {"color": METHOD_COLOURS[name], "linestyle": METHOD_LINESTYLES.get(name, "-")}


_OTHER_COLOURS = ("0.2", "tab:brown", "tab:pink")  # rows of no method of the chapter, in order


def row_style(name: str, k: int = 0) -> dict:
    """The style of a row of the experiment's results: its method's colour and linestyle
    (``method_style``), diamonds for the "-scaled" tables, dotted for a sliding window, square
    markers once fine-tuned.

    name: a row of ``results["rows"]``, a method ("rope") or a method and a variant
    ("rope, window L", "learned-scaled, interpolated + fine-tuned"); a row of no method of the
    chapter takes the k-th of ``_OTHER_COLOURS``.
    """
    method, _, variant = name.partition(", ")
    if method in METHOD_COLOURS:
        style = method_style(method) | {"marker": "o"}
    else:
        style = {"color": _OTHER_COLOURS[k % len(_OTHER_COLOURS)], "linestyle": "-", "marker": "o"}
    if method.endswith("-scaled"):  # a lone point at L shows no dashes: a diamond tells it apart
        style["marker"] = "D"
    if "window" in variant:
        style["linestyle"] = ":"
    if "fine-tuned" in variant:
        style["marker"] = "s"
    return style


# Perplexities span 3 to 1000 on a log axis: a tick per decade alone leaves values near 3 unread.
_LOG_TICK_SETS = (
    (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8),
    (1, 1.5, 2, 3, 5, 7),
    (1, 2, 5),
    (1, 3),
    (1,),
)


def _label_log_axis(ax, most: int = 7) -> None:
    """Labelled ticks on a log y axis: the finest of ``_LOG_TICK_SETS`` (per decade) that puts at
    least 2 and at most ``most`` ticks in view. An axis spanning less than a factor of 1.5 gets
    evenly spaced ticks instead (on so short a span a log axis looks linear)."""
    low, high = ax.get_ylim()
    ax.minorticks_off()
    if high / low < 1.5:
        ticks = [t for t in MaxNLocator(5).tick_values(low, high) if low <= t <= high]
        ax.set_yticks(ticks, labels=[f"{t:g}" for t in ticks])
        ax.set_ylim(low, high)
        return
    for steps in _LOG_TICK_SETS:
        ticks = [
            step * 10.0**decade
            for decade in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
            for step in steps
            if low <= step * 10.0**decade <= high
        ]
        if 2 <= len(ticks) <= most:
            break
    ax.set_yticks(ticks, labels=[f"{t:g}" for t in ticks])
    ax.set_ylim(low, high)


LENGTH_LABELS = ["L", "2L", "4L", "8L"]


def perplexity_growth(methods, lengths, train_len: int, paper, ours_to_paper):
    """Perplexity / perplexity at L against the evaluation length / L (log-log): ours (left),
    the ALiBi paper's Table 2 (right).

    methods: name -> {"ppl": {str(length): perplexity or None}}, and, where given,
    "seeds": {str(length): [one perplexity per seed]}, drawn as the band from the lowest to the
    highest seed's own ratio; lengths: the lengths evaluated; paper: the paper's table ({"L_valid": [...], "<name>_ppl": [...]}, None where it ran out of
    memory); ours_to_paper: our name -> the paper's. Returns the figure.
    """
    fig = new_figure(7.6, 2.6)
    ax_ours, ax_paper = fig.subplots(1, 2, sharey=True)
    for name, entry in methods.items():
        ppl = [entry["ppl"][str(t)] for t in lengths]
        known = [k for k, p in enumerate(ppl) if p is not None]  # the learned model stops at L
        x, y = [lengths[k] / train_len for k in known], [ppl[k] / ppl[0] for k in known]
        ax_ours.plot(x, y, marker="o", label=name, markersize=4, **method_style(name))
        if "seeds" in entry and len(known) == len(lengths):  # each seed over its own value at L
            per_seed = [
                [p / p0 for p, p0 in zip(entry["seeds"][str(t)], entry["seeds"][str(lengths[0])],
                                         strict=True)]
                for t in lengths
            ]  # fmt: skip
            ax_ours.fill_between(x, [min(r) for r in per_seed], [max(r) for r in per_seed],
                                 color=METHOD_COLOURS[name], alpha=0.2, linewidth=0)  # fmt: skip
    for name, theirs in ours_to_paper.items():
        column = paper[f"{theirs}_ppl"]  # None where the paper ran out of memory
        known = [k for k, p in enumerate(column) if p is not None]
        x = [paper["L_valid"][k] / paper["L_valid"][0] for k in known]
        y = [column[k] / column[0] for k in known]
        ax_paper.plot(x, y, label=theirs, **method_style(name))
    ax_ours.set_title(
        tr("ours: L = {train_len} characters", train_len=train_len)
        + "\n"
        + _("bands: lowest to highest seed"),
        fontsize=points(9),
    )
    ax_ours.set_ylabel(_("perplexity / perplexity at L"))
    ax_paper.set_title(_("ALiBi paper, appendix Table 2:\nL = 512 tokens"), fontsize=points(9))
    for ax in (ax_ours, ax_paper):
        ax.set(xscale="log", yscale="log", xlabel=_("evaluation length / L"), xlim=(0.9, 9))
        ax.set_xticks([1, 2, 4, 8], labels=["1", "2", "4", "8"])
        ax.minorticks_off()
        ax.axhline(1, color="lightgray", linewidth=0.8)
        ax.legend(fontsize=7, loc="upper left")
    _label_log_axis(ax_ours)  # the y axis is shared
    return fig


def loss_by_position(binned, width: int, train_len: int, n_windows: int):
    """Mean loss against the position in the window, one line per model, L marked: every model
    (top), and the same lines zoomed on the band of 0.8 to 3.2 nats (bottom), where T5, NoPE, RoPE
    and ALiBi part.

    binned: name -> (T / width,) mean loss of each bin of ``width`` positions. Returns the figure.
    """
    fig = new_figure(7.0, 3.9)
    ax_all, ax_zoom = fig.subplots(2, 1, sharex=True, height_ratios=[1, 1.3])
    for ax in (ax_all, ax_zoom):
        for name, values in binned.items():
            centres = [k * width + width / 2 for k in range(len(values))]
            ax.plot(centres, to_numpy(values), linewidth=1.3,
                    label=name if ax is ax_all else None, **method_style(name))  # fmt: skip
        ax.axvline(train_len, color="black", linestyle="--", linewidth=1)
    ax_all.text(train_len + 6, 0.25, tr("training length L = {L}", L=train_len), fontsize=8)
    top = max(float(to_numpy(values).max()) for values in binned.values())  # the highest bin
    xlabel = tr(
        "position in the window (each point: {width} positions, {n_windows} windows)",
        width=width,
        n_windows=n_windows,
    )
    ax_zoom.set(xlabel=xlabel, xlim=(0, 8 * train_len), ylim=(0.8, 3.2))
    ax_all.set(ylabel=_("mean loss (nats)"), ylim=(0, max(8.5, 1.05 * top)))
    ax_zoom.set_ylabel(_("zoomed: 0.8 to 3.2"))
    fig.legend(fontsize=8, ncol=6, loc="outside upper center", frameon=False)
    return fig


def pair_wavelengths_and_scores(waves, full, scores, train_len: int, layer: int, head: int):
    """Each pair's wavelength, the pairs that turn a full circle within L in blue (left); the
    position-only score of pairs 4 and 7 of one head against the distance (middle, right), with
    the range seen within L shaded.

    waves: (P,) wavelengths; full: the pairs that turn within L; scores: (P, 8L) one head's
    position-only score per pair and distance. Returns the figure.
    """
    waves = to_numpy(waves)
    fig = new_figure(8.4, 2.4)
    axes = fig.subplots(1, 3, width_ratios=[1, 1.2, 1.2])
    axes[0].semilogy(range(len(waves)), waves, "o", color="0.6", markersize=4)
    axes[0].semilogy(full, waves[full], "o", color="tab:blue", markersize=4)
    axes[0].axhline(train_len - 1, color="black", linewidth=1)
    axes[0].axhline(8 * train_len, color="black", linewidth=1, linestyle="--")
    axes[0].set(
        xlabel=_("pair i"),
        ylabel=_("wavelength (lines: L - 1, 8L)"),
        title=_("blue: a full turn within L"),
    )
    for ax, pair in zip(axes[1:], (4, 7), strict=True):
        c = scores[pair]  # (8L,)
        ax.axvspan(0, train_len - 1, color="0.92")
        ax.axhspan(
            float(c[:train_len].min()), float(c[:train_len].max()), color="tab:blue", alpha=0.15
        )
        ax.plot(to_numpy(c), color="tab:red" if pair not in full else "tab:blue", linewidth=0.7)
        ax.set(
            xlabel=_("distance m - n"),
            xlim=(0, 8 * train_len - 1),
            title=tr("pair {pair}, layer {layer}, head {head}", pair=pair, layer=layer, head=head),
        )
    axes[1].set_ylabel(_("position-only score"))
    return fig


def scaled_perplexity(plain, scaled, lengths, methods):
    """Perplexity against the evaluation length for each RoPE scaling without fine-tuning, one
    panel per factor s = 2, 4, 8 (PI, NTK-aware, YaRN), and a fourth for dynamic NTK, whose one
    curve (factor 1, s = T/L) belongs to no single s; plain RoPE in grey in each.

    plain: {str(length): perplexity}; scaled: rope_type -> factor (str) -> the same; methods:
    our name -> rope_type. Returns the figure.
    """
    fig = new_figure(9.6, 2.6)
    axes = fig.subplots(1, 4, sharey=True)
    steps = range(len(lengths))
    panels = [(f"s = {factor}", factor, [m for m in methods if m != "dynamic"])
              for factor in ("2", "4", "8")]  # fmt: skip
    panels.append((_("dynamic NTK (s = T/L)"), "1", [m for m in methods if m == "dynamic"]))
    for ax, (title, factor, shown) in zip(axes, panels, strict=True):
        ax.plot(
            steps, [plain[str(t)] for t in lengths], "o-", color="0.5", label=_("plain RoPE"),
            markersize=4,
        )  # fmt: skip
        for method in shown:
            ppl = scaled[methods[method]][factor]
            ax.plot(
                steps,
                [ppl[str(t)] for t in lengths],
                "o-",
                color=ScalingPlot.COLOURS[method],
                label=method,
                markersize=4,
            )
        ax.set(yscale="log", xlabel=_("evaluation length"))
        ax.set_title(title, fontsize=points(9))
        ax.set_xticks(list(steps), labels=LENGTH_LABELS)
        ax.set_yticks([3, 10, 30, 70], labels=["3", "10", "30", "70"])
        ax.minorticks_off()
        if ax is axes[0] or ax is axes[-1]:
            ax.legend(fontsize=7, loc="upper left")
    axes[0].set_ylabel(_("perplexity"))
    return fig


def finetuned_perplexity(rows, lengths, zoomed):
    """Perplexity against the evaluation length for the seven rows of the fine-tuning table: all
    of them on a log axis (left), the ``zoomed`` ones (near 3) again on a linear axis (right).

    rows: label -> {str(length): perplexity}, in the table's order. Returns the figure.
    """
    fig = new_figure(7.4, 2.3)
    ax_log, ax_lin = fig.subplots(1, 2, width_ratios=[1, 1])
    steps = range(len(lengths))
    for (label, ppl), colour, style in zip(
        rows.items(),
        ("0.5", "tab:red", "tab:red", "tab:purple", "tab:purple", "0.3", "tab:blue"),
        (":", ":", "-", ":", "-", "-", "--"),
        strict=True,
    ):
        curve = [ppl[str(t)] for t in lengths]
        ax_log.plot(steps, curve, style, marker="o", color=colour, label=label, markersize=4)
        if label in zoomed:  # the rows near 3, spread out on a linear axis
            ax_lin.plot(steps, curve, style, marker="o", color=colour, markersize=4)
    ax_log.set(yscale="log", xlabel=_("evaluation length"), ylabel=_("perplexity"))
    ax_log.set_yticks([3, 10, 30], labels=["3", "10", "30"])
    ax_log.minorticks_off()
    ax_log.set_title(_("all rows (log axis)"), fontsize=10)
    ax_lin.set(xlabel=_("evaluation length"), ylim=(2.7, 3.8))
    ax_lin.set_title(_("fine-tuned rows and ALiBi (linear axis)"), fontsize=10)
    for ax in (ax_log, ax_lin):
        ax.set_xticks(list(steps), labels=LENGTH_LABELS)
    fig.suptitle(_("dotted: no fine-tuning; solid: fine-tuned at 4L"), fontsize=10)
    fig.legend(fontsize=7, loc="outside right upper", frameon=False)
    return fig


def forward_times(rounds, middle):
    """Milliseconds per forward pass per model: the median of the rounds as a bar, their range as
    an error bar.

    rounds: name -> the times of each round; middle: name -> their median. Returns the figure.
    """
    names = list(rounds)
    fig = new_figure(6.0, 2.2)
    ax = fig.subplots()
    low = [middle[n] - min(rounds[n]) for n in names]
    high = [max(rounds[n]) - middle[n] for n in names]
    ax.barh(
        names, [middle[n] for n in names], xerr=[low, high],
        color=[METHOD_COLOURS[n] for n in names],
    )  # fmt: skip
    ax.set(xlabel=_("ms per forward pass, 512 characters (bars: range of the rounds)"))
    ax.set_title(tr("this machine, one thread, {n} rounds", n=len(rounds[names[0]])), fontsize=10)
    return fig


def seed_bands(results: dict, panels: dict):
    """Perplexity against the evaluation length, one panel per comparison: each row's mean over
    the training seeds as a line, and its lowest to highest seed as a band (log scale).

    results: the experiment's results (``rows`` with "ppl", "min", "max" per length);
    panels: panel title -> list of row names. A row is drawn only at the lengths where it ran.
    Returns the figure.
    """
    alone = len(panels) == 1  # one panel: wider, its legend beside it rather than on the lines
    fig = new_figure(7.4 if alone else 3.3 * len(panels) + 0.6, 3.4 if alone else 2.8)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    lengths, train_len = results["lengths"], results["L"]
    for ax, (title, rows) in zip(axes, panels.items(), strict=True):
        others = 0  # rows of no method of the chapter seen so far in this panel
        for name in rows:
            row, style = results["rows"][name], row_style(name, others)  # one colour per method
            others += name.partition(", ")[0] not in METHOD_COLOURS
            known = [t for t in lengths if row["ppl"][str(t)] is not None]
            x = [t / train_len for t in known]
            if len(known) == 1:  # a lone point at L, among the others there: a larger ring on top
                ax.plot(x, [row["ppl"][str(t)] for t in known], markersize=8, linewidth=0,
                        label=name, zorder=5,
                        **style | {"markerfacecolor": "none", "markeredgewidth": 1.6})  # fmt: skip
            else:
                ax.plot(x, [row["ppl"][str(t)] for t in known], markersize=3, label=name,
                        linewidth=1.2, **style)  # fmt: skip
            ax.fill_between(x, [row["min"][str(t)] for t in known],
                            [row["max"][str(t)] for t in known], color=style["color"],
                            alpha=0.15, linewidth=0)  # fmt: skip
        ax.set(xscale="log", yscale="log", xlabel=_("evaluation length / L"), xlim=(0.85, 9.5))
        ax.set_title(title, fontsize=points(9))
        ax.set_xticks([1, 2, 4, 8], labels=["1", "2", "4", "8"])
        ax.minorticks_off()
        _label_log_axis(ax)
        if alone:
            ax.legend(
                fontsize=points(8.5), loc="upper left", bbox_to_anchor=(1.02, 1), frameon=False
            )
        else:
            ax.legend(fontsize=6.5, loc="best")
    axes[0].set_ylabel(tr("perplexity\n({n} seeds: mean, min-max band)", n=len(results["seeds"])))
    return fig
