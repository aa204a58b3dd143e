"""Chapter 4's figures and dashboard: score matrices read along their diagonals, Shaw's clipped
term, Transformer-XL's four terms, T5's buckets and the relative bias they build, and scores of a
sentence moved through a text."""

from __future__ import annotations

import ipywidgets as W
import torch
from matplotlib.ticker import MaxNLocator

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch04_relative import RELATIVE, ShiftResult, bucket_view
from posenc_lib.i18n import N_, _, tr
from posenc_lib.viz.dashboard import AUTO_WIDTH, Dashboard
from posenc_lib.viz.figures import DIVERGING, PALETTE, new_figure, points, to_numpy


def _symmetric_map(ax, matrix: torch.Tensor):
    """A (T, T) matrix in the diverging map, its colours symmetric about 0 (+- its largest |entry|)."""
    limit = float(matrix.abs().max())
    return ax.imshow(
        to_numpy(matrix), cmap=DIVERGING, vmin=-limit, vmax=limit, interpolation="nearest"
    )


def diagonal_maps(
    panels: dict[str, torch.Tensor], title: str = N_("constant along each diagonal?")
):
    """Section 1: (T, T) score matrices side by side, rows = queries i, columns = keys j.

    ``panels``: panel title -> (T, T) matrix. A Toeplitz matrix (entry (i, j) depends on j - i
    only) shows stripes parallel to the diagonal; each panel's colours run over its own +-max,
    read on its own colour bar.
    """
    fig = new_figure(3.4 * len(panels), 3.0)
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (name, matrix) in zip(axes, panels.items(), strict=True):
        image = _symmetric_map(ax, matrix)
        fig.colorbar(image, ax=ax, shrink=0.8)  # each panel its own scale: the text compares sizes
        last = matrix.shape[-1] - 1
        ticks = [0, (last + 1) // 2, last]
        ax.set(title=name, xlabel=_("key j"), xticks=ticks, yticks=ticks)
    axes[0].set_ylabel(_("query i"))
    fig.suptitle(_(title), fontsize=points(10))  # the default is marked N_; a caller's, shown as is
    return fig


def shaw_position_term(term: torch.Tensor, clip: int):
    """Section 3: Shaw's position term q_i . a_ij as a (T, T) map, with the diagonals j - i = +-clip
    (beyond them every entry reads one of the table's two end rows)."""
    fig = new_figure(4.4, 3.4)
    ax = fig.subplots()
    image = _symmetric_map(ax, term)
    last = term.shape[-1] - 1
    ax.plot([0, last - clip], [clip, last], color="black", linewidth=1)  # j - i = -clip
    ax.plot([clip, last], [0, last - clip], color="black", linewidth=1)  # j - i = +clip
    ax.set(title=_("Shaw's position term q_i . a_ij"), xlabel=_("key j"), ylabel=_("query i"))
    ax.set(xticks=range(0, last + 1, 2), yticks=range(0, last + 1, 2))
    fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def term_maps(terms: dict[str, torch.Tensor]):
    """Section 4: the terms of a score (name -> (T, T)), one map each, rows = queries, columns = keys;
    each map's colours run over its own +-max, read on its own colour bar."""
    fig = new_figure(10.4, 2.9)
    axes = fig.subplots(1, len(terms), squeeze=False)[0]
    for ax, (name, term) in zip(axes, terms.items(), strict=True):
        fig.colorbar(_symmetric_map(ax, term), ax=ax, shrink=0.8)
        ax.set(title=_(name), xticks=[], yticks=[], xlabel=_("key j"))
    axes[0].set_ylabel(_("query i"))
    return fig


def bucket_staircases(offsets: torch.Tensor, buckets: dict[str, torch.Tensor], max_distance: int):
    """Section 5: T5's bucket of every offset j - i, one staircase per setting.

    ``offsets``: (K,) offsets j - i; ``buckets``: label -> (K,) their buckets. Dashed lines at
    +-max_distance.
    """
    fig = new_figure(7.2, 2.8)
    ax = fig.subplots()
    for label, staircase in buckets.items():
        ax.step(to_numpy(offsets), to_numpy(staircase), where="mid", label=label)
    for edge in (-max_distance, max_distance):
        ax.axvline(edge, color="gray", linestyle="--", linewidth=1)
    ax.set(xlabel=_("offset j - i (key - query); dashed: +-max_distance"), ylabel=_("bucket"))
    before = offsets <= 0  # keys at or before the query: the last bucket's first distance there
    starts = [
        int(-offsets[before & (staircase == staircase[before].max())].max())
        for staircase in buckets.values()
    ]
    ax.set_title(
        tr(
            "T5's buckets: one each up close, log-wide far away, the last from distance {starts}",
            starts=" / ".join(str(start) for start in starts),
        )
    )
    ax.legend(fontsize=points(8), loc="center right")
    return fig


def moved_scores(results: dict[str, ShiftResult], query: int, key: int, ylabel: str):
    """Section 7: one score of a sentence (its token ``query`` against its token ``key``) at every
    shift, one line per scorer of ``analysis.ch04_relative.SCORERS``: solid for the absolute ones,
    dashed for the relative ones (flat, when the scores are translation invariant)."""
    fig = new_figure(8.4, 2.8)
    ax = fig.subplots()
    for index, (name, result) in enumerate(results.items()):
        style = "--" if name in RELATIVE else "-"
        ax.plot(result.shifts, to_numpy(result.scores[:, query, key]), style, label=_(name),
                color=PALETTE[index % len(PALETTE)])  # fmt: skip
    ax.set(xlabel=_("start position of the sentence"), ylabel=ylabel)
    ax.set_title(_("the same two words, moved through the text"))
    ax.legend(fontsize=points(8), loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


class BucketPlot:
    """Chapter 4: T5's bucket map and the bias it builds (an ``analysis.ch04_relative.BucketView``).

    Left: the bucket of each offset j - i (keys before the query on the left), as a staircase;
    dashed lines at +-max_distance. Right: the (T, T) bias of one head, B[i, j] = table[bucket of
    j - i], rows = queries, columns = keys: constant along every diagonal (Toeplitz), in bands
    that widen away from the diagonal. Colours fixed at +-2.5 (the table is N(0, 1)).
    """

    def __init__(self, view, fig=None):
        self.fig = fig if fig is not None else new_figure(9.6, 3.0)
        ax_map, ax_bias = self.fig.subplots(1, 2, width_ratios=[1.5, 1])
        self.axes = (ax_map, ax_bias)
        offsets = to_numpy(view.offsets)
        (self.staircase,) = ax_map.plot(offsets, to_numpy(view.buckets), drawstyle="steps-mid")
        self.limits = [
            ax_map.axvline(x, color="gray", linestyle="--", linewidth=1) for x in (-1, 1)
        ]
        ax_map.set(
            xlabel=_("offset j - i (key - query)"), ylabel=_("bucket"), title=_("bucket of j - i")
        )
        ax_map.set_xlim(offsets[0], offsets[-1])
        # Few tick labels: each costs about 1 ms of every redraw.
        ax_map.xaxis.set_major_locator(MaxNLocator(3, integer=True))
        ax_map.yaxis.set_major_locator(MaxNLocator(3, integer=True))
        self.image = ax_bias.imshow(
            to_numpy(view.bias), cmap=DIVERGING, vmin=-2.5, vmax=2.5, interpolation="nearest"
        )
        ax_bias.set(title=_("bias B[i, j], one head"), xlabel=_("key j"), ylabel=_("query i"))
        last = view.bias.shape[0] - 1
        ax_bias.set(xticks=[0, last], yticks=[0, last])
        self.fig.colorbar(self.image, ax=ax_bias, ticks=[-2, 0, 2], shrink=0.9)
        self._n_buckets = None
        self.update(view)

    def update(self, view) -> None:
        """Show another BucketView of the same T, changing artists in place."""
        ax_map, _ = self.axes
        self.staircase.set_ydata(to_numpy(view.buckets))
        for line, sign in zip(self.limits, (-1, 1), strict=True):
            line.set_xdata([sign * view.max_distance] * 2)
        if view.num_buckets != self._n_buckets:  # rescale only when the bucket count changed
            ax_map.set_ylim(-0.5, view.num_buckets - 0.5)
            self._n_buckets = view.num_buckets
        self.image.set_data(to_numpy(view.bias))


def bucket_dashboard(n_positions: int = 160) -> Dashboard:
    """Chapter 4: T5's bucket parameters -> the bucket of every offset and the bias they build.

    Controls: num_buckets, max_distance, bidirectional. The readout gives the exact range, where
    the last bucket starts, and how few learned numbers fill a T x T bias.
    """
    n_positions = validate.positive_int("n_positions", n_positions, maximum=1024)
    style = {"description_width": "initial"}
    controls = {
        "num_buckets": W.IntSlider(value=32, min=4, max=64, description="num_buckets", style=style),
        "max_distance": W.IntSlider(
            value=128, min=4, max=256, description="max_distance", style=style
        ),
        "bidirectional": W.Checkbox(
            value=True, description=_("bidirectional (encoder)"), indent=False, layout=AUTO_WIDTH
        ),
    }

    def compute(num_buckets, max_distance, bidirectional):
        return bucket_view(num_buckets, max_distance, bidirectional, n_positions)

    def readout(view):
        side = _("each side") if view.bidirectional else _("keys before the query")
        future = "" if view.bidirectional else _("; every key after the query shares bucket 0")
        raised = (
            tr(
                " (max_distance raised to {max_distance}: it must exceed the exact range)",
                max_distance=view.max_distance,
            )
            if view.raised
            else ""
        )
        return tr(
            "{side}: distances 0..{last_exact} get a bucket each, the last bucket starts at "
            "distance <b>{last_start}</b>{future}; this {n} &times; {n} "
            "bias uses <b>{used}</b> of {num_buckets} learned numbers{raised}",
            side=side,
            last_exact=view.exact - 1,
            last_start=view.last_start,
            future=future,
            n=n_positions,
            used=view.used,
            num_buckets=view.num_buckets,
            raised=raised,
        )

    return Dashboard(
        N_("T5 buckets: which offsets share a learned bias"),
        controls,
        compute,
        BucketPlot,
        readout,
        (9.6, 3.0),
    )
