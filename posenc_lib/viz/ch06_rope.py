"""Chapter 6's figures and dashboard: RoPE turns q and k, and the score depends on m - n only."""

from __future__ import annotations

import math

import ipywidgets as W
import torch
from matplotlib.ticker import MaxNLocator

from posenc_lib import _validate as validate
from posenc_lib.analysis.ch06_rope import random_query_key, rotation_view, score_bound
from posenc_lib.i18n import N_, _, tr
from posenc_lib.viz.dashboard import Dashboard
from posenc_lib.viz.figures import new_figure, points, to_numpy


class RopePlot:
    """Chapter 6: one pair of R_m q and R_n k on the unit circle, and the score against m - n
    (an ``analysis.ch06_rope.RotationView``).

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
        ax_circle.plot(to_numpy(angles.cos()), to_numpy(angles.sin()), color="gray", linewidth=0.8)
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
        (self.curve,) = ax_score.plot([], [], color="black", linewidth=1.2, label=_("score"))
        (self.pair_curve,) = ax_score.plot(
            [], [], color="tab:purple", linewidth=1, linestyle="--", label=_("pair's share")
        )
        self.marker = ax_score.axvline(0, color="tab:red", linewidth=1)
        (self.dot,) = ax_score.plot([], [], "o", color="tab:red", markersize=6)
        ax_score.set(xlim=(-span, span), ylim=(-limit, limit), xlabel="m - n")
        ax_score.xaxis.set_major_locator(MaxNLocator(5, integer=True))
        ax_score.yaxis.set_major_locator(MaxNLocator(5))
        ax_score.set_title(_("<R_m q, R_n k> against m - n"), fontsize=points(10))
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
        self.title.set_text(tr("pair {pair}: m = {m}, n = {n}", pair=view.pair, m=view.m, n=view.n))
        offsets = to_numpy(view.offsets)
        self.curve.set_data(offsets, to_numpy(view.curve))  # changes with the base
        self.pair_curve.set_data(offsets, to_numpy(view.pair_curve))
        delta = view.m - view.n
        self.marker.set_xdata([delta, delta])
        self.dot.set_data([delta], [view.score])


def rope_dashboard(head_dim: int = 16, max_position: int = 127, seed: int = 0) -> Dashboard:
    """Chapter 6: rotate a query to position m and a key to n; watch one pair turn on the unit
    circle and the score follow m - n only.

    Controls: m, n, the base, and which pair to draw. q and k are fixed random vectors (``seed``).
    The readout gives the pair's angles and the score, which equals the curve at m - n.
    """
    d = validate.even_int("head_dim", head_dim, N_("RoPE rotates the dims in pairs."))
    top = validate.positive_int("max_position", max_position, maximum=4096)
    q, k = random_query_key(d, seed)  # (D,) each, float64
    style = {"description_width": "initial"}
    controls = {
        "m": W.IntSlider(value=10, min=0, max=top, description=_("query position m"), style=style),
        "n": W.IntSlider(value=3, min=0, max=top, description=_("key position n"), style=style),
        "base": W.FloatLogSlider(
            value=10000, base=10, min=1, max=6, step=0.25, description="base", style=style
        ),
        "pair": W.IntSlider(value=1, min=0, max=d // 2 - 1, description=_("pair i"), style=style),
    }

    def compute(m, n, base, pair):
        return rotation_view(q, k, m, n, base, pair, max_offset=top)

    def readout(view):
        turn = math.remainder((view.m - view.n) * view.theta, 2 * math.pi)  # in [-pi, pi]
        at_offset = float(view.curve[view.m - view.n + top])
        return tr(
            "pair {pair}: &theta; = {theta:.3g} rad per position; q turned by "
            "m&theta; = {m_turn:.3g}, k by n&theta; = {n_turn:.3g}: "
            "the angle between them changed by (m &minus; n)&theta; = {turn:+.3f} (mod 2&pi;). "
            "Score &lang;R_m q, R_n k&rang; = <b>{score:.4f}</b>; the curve at "
            "m &minus; n = {offset}: <b>{at_offset:.4f}</b>",
            pair=view.pair,
            theta=view.theta,
            m_turn=view.m * view.theta,
            n_turn=view.n * view.theta,
            turn=turn,
            score=view.score,
            offset=view.m - view.n,
            at_offset=at_offset,
        )

    def make_plot(view, fig):  # a fixed score axis: the largest score any offset can reach
        return RopePlot(view, fig, limit=1.05 * score_bound(q, k))

    return Dashboard(
        N_("RoPE: rotate q to m and k to n; the score depends on m - n only"),
        controls,
        compute,
        make_plot,
        readout,
        (8.0, 2.8),
    )


# -- the lecture's still figures ---------------------------------------------------------------------


def turned_pairs(q, k, turn, positions, angles):
    """A query (blue) and a key (orange) of one pair, as directions, turned to positions m and n;
    one panel per (m, n), the unturned directions faint.

    q, k: (2,); turn(v, p): v turned to position p; positions: (m, n) per panel; angles: the angle
    from k to q in each panel, in degrees. Returns the figure.
    """
    fig = new_figure(8.4, 2.9)
    axes = fig.subplots(1, len(positions))
    circle = torch.linspace(0, 2 * math.pi, 97)
    for ax, (m, n), angle in zip(axes, positions, angles, strict=True):
        ax.plot(circle.cos(), circle.sin(), color="lightgray", linewidth=0.8)
        for v, colour, p in ((q, "tab:blue", m), (k, "tab:orange", n)):
            unit = v / v.norm()  # directions only: the lengths do not turn
            turned = turn(unit, p)
            ax.plot([0, unit[0]], [0, unit[1]], color=colour, alpha=0.3, linewidth=2)
            ax.plot([0, turned[0]], [0, turned[1]], color=colour, linewidth=2.5)
        ax.set(
            title=tr("m = {m}, n = {n}: angle {angle:.0f}°", m=m, n=n, angle=angle),
            xlim=(-1.2, 1.2),
            ylim=(-1.2, 1.2),
        )
        ax.set(xticks=[], yticks=[], aspect="equal")
    axes[0].plot([], [], color="tab:blue", label=_("q, turned by mθ"))
    axes[0].plot([], [], color="tab:orange", label=_("k, turned by nθ"))
    axes[0].legend(fontsize=7, loc="lower left")
    return fig


def score_maps(maps):
    """Score matrices S[m, n] side by side, each on its own symmetric colour scale.

    maps: title -> (T, T), rows = query positions m, columns = key positions n. Returns the figure.
    """
    fig = new_figure(6.4, 2.6)
    axes = fig.subplots(1, len(maps))
    for ax, (title, scores) in zip(axes, maps.items(), strict=True):
        limit = float(scores.abs().max())
        image = ax.imshow(
            to_numpy(scores), cmap="RdBu_r", vmin=-limit, vmax=limit, interpolation="nearest"
        )
        ax.set(title=title, xlabel=_("key position n"), ylabel=_("query position m"))
        fig.colorbar(image, ax=ax, shrink=0.8)
    return fig


def pair_layouts(permutations):
    """Which dims form each pair, one row per layout: an arc joins the two dims of pair i.

    permutations: layout name ("interleaved" or "half") -> (D,) dims in pair order, D = 8.
    Returns the figure.
    """
    fig = new_figure(6.4, 2.4)
    axes = fig.subplots(len(permutations), 1)
    for ax, (style, perm) in zip(axes, permutations.items(), strict=True):
        for pair in range(len(perm) // 2):
            a, b = perm[2 * pair].item(), perm[2 * pair + 1].item()  # the two dims of the pair
            colour = f"C{pair}"
            height = 0.4 + 0.17 * pair  # one height per pair, so no two arcs overlap
            ax.plot([a, a, b, b], [0, height, height, 0], color=colour)
            for dim in (a, b):
                ax.text(dim, -0.35, f"x{dim}", ha="center", color=colour, fontsize=10)
        ax.set(xlim=(-0.6, 7.6), ylim=(-0.6, 1.1), xticks=[], yticks=[])
        if style == "interleaved":
            title = tr("{style}: pair i joins dims 2i and 2i+1", style=style)
        else:
            title = tr("{style}: pair i joins dims i and i + D/2", style=style)
        ax.set_title(title, fontsize=10)
        for side in ax.spines.values():
            side.set_visible(False)
    return fig


def logits_by_distance(logits, query: int, back: int):
    """One query's logits against the ``back`` keys before it, by distance, for several models.

    logits: label -> (T, T) logits (the first drawn black, the next red). Returns the figure.
    """
    fig = new_figure(6.0, 2.5)
    ax = fig.subplots()
    for (label, scores), colour in zip(logits.items(), ("black", "tab:red"), strict=True):
        row = scores[query, query - back :].flip(0)  # (back + 1,): distance 0 .. back
        ax.plot(range(back + 1), to_numpy(row), color=colour, linewidth=1.2, label=label)
    ax.set(xlabel=_("distance m - n from the last query"), ylabel=_("logit"), xlim=(0, back))
    ax.set_title(
        tr("query {query} against the {back} keys before it", query=query, back=back), fontsize=10
    )
    ax.legend(fontsize=8)
    return fig


def score_ceilings(edges, by_width, by_base, expected, near, measured):
    """RoPE's long-range bound, as its highest value per bin of distances: three head dims at base
    10000 (left), three bases at D = 128 with the mean score of q = k and its measured points
    (right).

    edges: (R + 1,) bin edges; by_width: label -> (R,) per-bin highest bound, D = 32, 64, 128;
    by_base: the same per base, 1e2, 1e4, 5e5 (the curve for D = 128, base 1e4 is in both);
    expected: (R,) per-bin highest mean score; near, measured: (P,) each, distances and the
    measured mean score. Returns the figure.
    """
    fig = new_figure(9.4, 2.5)
    axes = fig.subplots(1, 2, sharey=True)
    left = to_numpy(edges[:-1])
    for (label, tops), colour in zip(by_width.items(), ("C0", "C1", "C2"), strict=True):
        axes[0].plot(left, to_numpy(tops), color=colour, lw=1, label=label)
    # The curve both panels draw (base 10000, D = 128: by_width's last, by_base's middle) keeps
    # one colour, C2, in both; the right panel's other two get colours the left does not use.
    for (label, tops), colour in zip(by_base.items(), ("C4", "C2", "C9"), strict=True):
        axes[1].plot(left, to_numpy(tops), color=colour, lw=1, label=label)
    axes[1].plot(
        left, to_numpy(expected), color="tab:red", lw=1,
        label=_("expected score q = k (base 10000 only)"),
    )  # fmt: skip
    axes[1].plot(
        to_numpy(near), to_numpy(measured), "o", color="tab:red", markersize=2,
        label=_("  measured, 1000 q (base 10000)"),
    )  # fmt: skip
    titles = (_("base 10000, three head dims"), _("D = 128, three bases"))
    for ax, title in zip(axes, titles, strict=True):
        ax.set(xscale="log", xlabel=_("distance m - n"), title=title)
        ax.axhline(0, color="lightgray", linewidth=0.8)
    axes[0].legend(fontsize=7, loc="lower left")
    # Beside the right panel, so that it covers none of the curves between 10^3 and 10^4.
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    axes[0].set_ylabel(_("per-bin highest / at 0"))
    return fig


def self_scores(positions, curves):
    """A query meeting its own key (offset 0) against the position, for several mismatches.

    positions: (P,); curves: label -> (P,) score / |q|^2. Returns the figure.
    """
    fig = new_figure(7.4, 2.5)
    ax = fig.subplots()
    for name, curve in curves.items():
        ax.plot(to_numpy(positions), to_numpy(curve), label=name, linewidth=1)
    ax.axhline(0, color="lightgray", linewidth=0.8)
    ax.set(xscale="log", xlabel=_("position p of both query and key"), ylabel=_("score / |q|^2"))
    ax.set_title(_("a query meeting its own key, offset 0"), fontsize=10)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))  # beside the axes
    return fig


def time_curves(lengths, times, title: str):
    """Milliseconds against the sequence length (log-log), one line per operation.

    lengths: the T measured; times: label -> one time per length. Returns the figure.
    """
    fig = new_figure(5.2, 2.7)
    ax = fig.subplots()
    for name, values in times.items():
        ax.plot(lengths, values, "o-", label=name)
    ax.set(xscale="log", yscale="log", xlabel=_("sequence length T"), ylabel=_("milliseconds"))
    ax.set_title(title, fontsize=10)
    ax.set_xticks(lengths, labels=[str(n) for n in lengths])
    ax.minorticks_off()
    ax.legend(fontsize=8)
    return fig
