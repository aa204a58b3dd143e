"""Chapter 8, section 6: SmolLM2-135M past its 8,192 trained positions, from the committed table.

Figures take the results of ``analysis.ch08_experiment`` (by default the committed
``data/real_model/results.json``) and draw; the dashboard redraws from those results and the
library's ``rope_scaling`` only (no forward pass), so a control change costs milliseconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import ipywidgets as W
import torch

from posenc_lib.analysis.ch08_experiment import load_results
from posenc_lib.analysis.ch08_long import HEAD_DIM, ROPE_THETA
from posenc_lib.i18n import N_, _, tr
from posenc_lib.rope_scaling import rope_inv_freq
from posenc_lib.viz.ch07_extrapolation import ScalingPlot
from posenc_lib.viz.dashboard import Dashboard, dropdown
from posenc_lib.viz.figures import new_figure, points, same_curves, to_numpy

# One colour per method, the same as chapter 7's scaling figures; no scaling in grey.
COLOURS = {"none": "0.45", **ScalingPlot.COLOURS}
LABELS = {"none": N_("no scaling"), "PI": "PI", "dynamic": N_("dynamic NTK"), "YaRN": "YaRN"}


def _label(method: str) -> str:
    """A method's name as shown, in the language in use."""
    return _(LABELS.get(method, method))


def _k(tokens: int) -> str:
    """4096 -> '4k', 12288 -> '12k', 200 -> '200'."""
    return f"{tokens // 1024}k" if tokens % 1024 == 0 else str(tokens)


def _hits(trials) -> tuple[int, int]:
    return sum(t["found"] for t in trials), len(trials)


# -- still figures ----------------------------------------------------------------------------------


def perplexity_by_position(results: dict | None = None, window: int | None = None):
    """Perplexity of each bin of positions in one window, one line per method, 8,192 marked.

    results: ``ch08_experiment`` results (default: the committed ones); window: the window's
    length in tokens (default: the longest). Log y axis. Returns the figure.
    """
    results = load_results() if results is None else results
    window = max(results["settings"]["windows"]) if window is None else window
    width = results["settings"]["bin"]
    fig = new_figure(7.0, 2.6)
    ax = fig.subplots()
    for method, rows in results["perplexity"].items():
        if str(window) not in rows:
            continue
        bins = rows[str(window)]["bins"]
        centres = [k * width + width / 2 for k in range(len(bins))]
        ax.plot(centres, bins, "o-", markersize=2.5, color=COLOURS.get(method),
                label=tr("{method}: last quarter {value:.1f}", method=_label(method), value=rows[str(window)]["last_quarter"]))  # fmt: skip
    ax.axvline(results["trained"], color="black", linestyle="--", linewidth=1)
    ax.text(results["trained"] * 1.01, 0.97, tr(" trained length {trained:,}", trained=results["trained"]),
            transform=ax.get_xaxis_transform(), va="top", fontsize=points(8))  # fmt: skip
    ax.axvspan(0.75 * window, window, color="0.92", zorder=0)
    ax.set(yscale="log", xlim=(0, window), xlabel=tr("position in a {window:,}-token window "
           "(each point: {width} tokens; shaded: the last quarter)", window=window, width=width),
           ylabel=_("perplexity"))  # fmt: skip
    ax.legend(fontsize=points(7.5), loc="upper left")
    return fig


def passkey_grid(results: dict | None = None):
    """Passkey retrieval, found / tried, for each method (rows) and prompt length (columns).

    Cells are coloured by the share found (white none, blue all); the trained length's edge is a
    dashed line. Returns the figure.
    """
    results = load_results() if results is None else results
    methods = list(results["passkey"])
    lengths = sorted({int(n) for rows in results["passkey"].values() for n in rows})
    share = torch.full((len(methods), len(lengths)), float("nan"))
    fig = new_figure(max(3.5, 1.4 + 0.9 * len(lengths)), 0.6 + 0.42 * len(methods))
    ax = fig.subplots()
    for i, method in enumerate(methods):
        for j, n in enumerate(lengths):
            trials = results["passkey"][method].get(str(n))
            if trials:
                found, tried = _hits(trials)
                share[i, j] = found / tried
                ax.text(j, i, f"{found}/{tried}", ha="center", va="center", fontsize=points(9),
                        color="white" if found / tried > 0.6 else "black")  # fmt: skip
    ax.imshow(to_numpy(share), cmap="Blues", vmin=0, vmax=1.3, aspect="auto")
    inside = sum(n <= results["trained"] for n in lengths)
    ax.axvline(inside - 0.5, color="black", linestyle="--", linewidth=1)
    ax.set_xticks(range(len(lengths)), labels=[f"{n:,}" for n in lengths])
    ax.set_yticks(range(len(methods)), labels=[_label(m) for m in methods])
    ax.set_xlabel(_("prompt length (tokens); dashed: the trained length"))
    ax.tick_params(length=0)
    return fig


def copy_losses(results: dict | None = None):
    """The induction copy test: second-copy loss by block length, one line per method.

    A block of random tokens written twice: a loss near 0 on the second copy means the model
    copies from one block length back; about ln(49152) = 10.8 means it cannot. Returns the figure.
    """
    results = load_results() if results is None else results
    blocks = [str(b) for b in results["settings"]["copy_blocks"]]
    fig = new_figure(4.2, 2.4)
    ax = fig.subplots()
    curves = {
        method: {int(b): rows[b]["second"] for b in blocks if b in rows}
        for method, rows in results["copy"].items()
    }
    # dynamic NTK equals no scaling on inputs within 8,192 tokens: methods with the same losses
    # are one line with both names, which a second line on top would hide
    repeats = same_curves({m: [c.get(int(b)) for b in blocks] for m, c in curves.items()})
    names = {method: [_label(method)] for method in curves if method not in repeats}
    for method, earlier in repeats.items():
        names[earlier].append(_label(method))
    for method, together in names.items():
        known = curves[method]
        ax.plot(list(known), list(known.values()), "o-", color=COLOURS.get(method),
                label=" = ".join(together))  # fmt: skip
    ax.axhline(math.log(49152), color="0.6", linestyle=":", linewidth=1,
               label=_("uniform guess, ln 49,152"))  # fmt: skip
    top = max(rows[b]["second"] for rows in results["copy"].values() for b in rows if b in blocks)
    ax.set(xscale="log", xlabel=_("block length (copy distance, tokens)"),
           ylabel=_("second-copy loss (nats)"), ylim=(0, max(12.0, top + 1.0)))  # fmt: skip
    ax.set_xticks([int(b) for b in blocks], labels=[f"{int(b):,}" for b in blocks])
    ax.minorticks_off()
    ax.legend(fontsize=points(7.5))
    return fig


# -- the dashboard ----------------------------------------------------------------------------------


@dataclass
class LongView:
    """What the dashboard shows for one method and window (all from committed results)."""

    method: str
    window: int
    width: int  # tokens per bin
    bins: list  # the method's perplexity per bin in this window
    plain: list  # no scaling's, the same window
    last_quarter: float
    plain_last_quarter: float
    ratio: torch.Tensor  # (D/2,) the method's frequency / the default's, at this window's length
    attention_scale: float  # YaRN's sqrt(1/t); 1 for the others
    passkey: dict  # length -> (found, tried)
    max_window: int
    trained: int


def long_view(method: str, window: int, results: dict) -> LongView:
    """The dashboard's numbers for ``method`` at ``window``: a lookup plus ``rope_inv_freq``."""
    rows = results["perplexity"]
    if method not in rows or str(window) not in rows[method]:
        raise ValueError(f"no committed perplexity for {method!r} at a {window}-token window.")
    params = results["methods"][method]
    scaled, scale = rope_inv_freq(HEAD_DIM, ROPE_THETA, params, window, dtype=torch.float64)
    default, _scale = rope_inv_freq(HEAD_DIM, ROPE_THETA, None, dtype=torch.float64)
    passkey = {int(n): _hits(t) for n, t in results["passkey"][method].items()}
    return LongView(
        method=method,
        window=window,
        width=results["settings"]["bin"],
        bins=rows[method][str(window)]["bins"],
        plain=rows["none"][str(window)]["bins"],
        last_quarter=rows[method][str(window)]["last_quarter"],
        plain_last_quarter=rows["none"][str(window)]["last_quarter"],
        ratio=scaled / default,
        attention_scale=scale,
        passkey=dict(sorted(passkey.items())),
        max_window=max(results["settings"]["windows"]),
        trained=results["trained"],
    )


class LongPlot:
    """Left: log10 perplexity per bin of positions for the chosen method (colour) and no scaling
    (grey) in the chosen window, the trained length dashed. Middle: each pair's frequency under
    the method over the default's, at this window's length (dynamic NTK changes with it). Right:
    passkey retrieval, the share of trials found at each prompt length.
    Log axes are drawn as log10 values on linear axes: a log-scaled axis costs every redraw.
    """

    def __init__(self, view: LongView, fig=None):
        self.fig = fig if fig is not None else new_figure(9.6, 2.8)
        ax_p, ax_r, ax_k = self.fig.subplots(1, 3, width_ratios=[1.6, 1, 0.9])
        self.axes = (ax_p, ax_r, ax_k)
        (self.plain,) = ax_p.plot([], [], "-", color=COLOURS["none"], linewidth=1)
        (self.curve,) = ax_p.plot([], [], "o-", markersize=2.5)
        ax_p.axvline(view.trained, color="black", linestyle="--", linewidth=1)
        self.quarter = ax_p.axvspan(0, 1, color="0.92", zorder=0)
        ax_p.set(xlim=(0, view.max_window), ylim=(0.5, 3.5), xlabel=_("position"))
        ticks = [view.max_window * k // 4 for k in range(5)]
        ax_p.set_xticks(ticks, labels=[_k(t) for t in ticks])
        ax_p.set_yticks([1, 2, 3], labels=["10", "100", "1000"])
        ax_p.set_title(_("perplexity by position; grey: no scaling"), fontsize=points(9))
        pairs = range(HEAD_DIM // 2)
        (self.ratio,) = ax_r.plot(pairs, [1] * len(pairs), "o", markersize=3)
        ax_r.set(xlim=(-0.5, HEAD_DIM // 2 - 0.5), ylim=(0, 1.1), xlabel=_("pair i"))
        ax_r.set_xticks([0, HEAD_DIM // 4, HEAD_DIM // 2 - 1])
        ax_r.set_yticks([0, 0.5, 1])
        ax_r.set_title(_("frequency / default's"), fontsize=points(9))
        self.bars = ax_k.bar(range(len(view.passkey)), [0] * len(view.passkey))
        ax_k.set_xticks(range(len(view.passkey)), labels=[_k(n) for n in view.passkey])
        ax_k.set(ylim=(0, 1.05), xlabel=_("prompt length"))
        ax_k.set_yticks([0, 0.5, 1])
        ax_k.set_title(_("passkey found"), fontsize=points(9))
        self._method = None
        self.update(view)

    def update(self, view: LongView) -> None:
        """Show another LongView (same results), changing artists in place."""
        centres = [k * view.width + view.width / 2 for k in range(len(view.bins))]
        self.curve.set_data(centres, [math.log10(v) for v in view.bins])
        self.plain.set_data(centres, [math.log10(v) for v in view.plain])
        self.quarter.set_x(0.75 * view.window)  # a Rectangle in axes-fraction height
        self.quarter.set_width(0.25 * view.window)
        self.ratio.set_ydata(to_numpy(view.ratio))
        for bar, (found, tried) in zip(self.bars, view.passkey.values(), strict=False):
            bar.set_height(found / tried if tried else 0)
        if view.method != self._method:
            colour = COLOURS.get(view.method, "tab:blue")
            for artist in (self.curve, self.ratio, *self.bars):
                artist.set_color(colour)
            self._method = view.method


def long_context_dashboard(results: dict | None = None) -> Dashboard:
    """Chapter 8: a RoPE scaling and a window length -> SmolLM2's perplexity by position (against
    no scaling), the scaling's frequencies at that length, and its passkey retrieval.

    ``results``: ``ch08_experiment`` results (default: the committed
    ``data/real_model/results.json``). No forward pass: the numbers are the committed ones.
    """
    results = load_results() if results is None else results
    methods = [m for m in results["methods"] if results["perplexity"].get(m)]
    windows = sorted(results["settings"]["windows"])
    controls = {
        "method": dropdown(
            _("scaling (factor 2)"),
            [(_label(m), m) for m in methods],
            "YaRN" if "YaRN" in methods else methods[0],
        ),
        "window": W.SelectionSlider(
            options=[(f"{w:,}", w) for w in windows],
            value=windows[-1],
            description=_("window (tokens)"),
            style={"description_width": "initial"},
        ),
    }

    def compute(method, window):
        return long_view(method, window, results)

    def readout(view: LongView) -> str:
        if view.window > view.trained:
            sentence = N_(
                "{name}, a {window:,}-token window (past the trained {trained:,}): "
                "last-quarter perplexity <b>{last:.1f}</b> (no scaling {plain:.1f}). Lowest "
                "frequency &times;<b>{lowest:.3g}</b>"
            )
        else:
            sentence = N_(
                "{name}, a {window:,}-token window (within the trained {trained:,}): "
                "last-quarter perplexity <b>{last:.1f}</b> (no scaling {plain:.1f}). Lowest "
                "frequency &times;<b>{lowest:.3g}</b>"
            )
        text = _(sentence).format(
            name=_label(view.method),
            window=view.window,
            trained=view.trained,
            last=view.last_quarter,
            plain=view.plain_last_quarter,
            lowest=float(view.ratio[-1]),
        )
        if view.attention_scale != 1:
            text += tr(", attention scale <b>{scale:.3f}</b>", scale=view.attention_scale)
        hits = _(", ").join(f"{_k(n)} {f}/{t}" for n, (f, t) in view.passkey.items())
        return text + tr(
            ". Passkey found: {hits}. (SmolLM2-135M, 4-bit, committed results.)",
            hits=hits or _("not measured"),
        )

    return Dashboard(
        N_("SmolLM2 past 8,192 tokens: perplexity by position, frequencies and passkey"),
        controls,
        compute,
        LongPlot,
        readout,
        (9.6, 2.8),
    )
