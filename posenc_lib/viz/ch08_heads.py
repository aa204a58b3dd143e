"""Chapter 8's figures for what the heads do with the frequencies and for RoPE in the KV cache.

Each takes results of ``analysis.ch08_heads`` / ``analysis.ch08_cache`` and returns a Figure;
none computes anything but a mean for display.
"""

from __future__ import annotations

import textwrap

import torch

from posenc_lib.analysis.ch08_heads import BANDS, AttentionProfile, PairShares
from posenc_lib.i18n import FONT_FAMILY, _, tr
from posenc_lib.viz.figures import SEQUENTIAL, new_figure, points, to_numpy

BAND_COLOURS = ("tab:red", "tab:purple", "tab:blue")  # high, mid, low


def band_shares(shares: PairShares):
    """Each query head's share of its norm in the high, mid and low frequency bands (one heat map
    per band: rows = layers, columns = heads), and the mean share of every pair (queries and keys)
    against the pair index, each band shaded, with the even share 1/P dashed.

    shares: a ``PairShares``. Returns the figure.
    """
    fig = new_figure(9.0, 3.2)
    grid = fig.add_gridspec(1, 5, width_ratios=(1, 1, 1, 0.1, 3.2))
    maps = [fig.add_subplot(grid[0, b]) for b in range(len(BANDS))]
    legend = fig.add_subplot(grid[0, 3])
    pairs = fig.add_subplot(grid[0, 4])
    for b, ax in enumerate(maps):
        image = ax.imshow(
            to_numpy(shares.query_bands[..., b]), cmap=SEQUENTIAL, vmin=0, vmax=1,
            aspect="auto", interpolation="nearest",
        )  # fmt: skip
        even = float(shares.uniform_bands[b])
        ax.set_title(tr("{band} (even {even:.2f})", band=_(BANDS[b]), even=even), fontsize=points(9), color=BAND_COLOURS[b])  # fmt: skip
        ax.set(xlabel=_("head"))
        ax.set_xticks([0, 4, 8])
        if b:
            ax.set_yticks([])
    maps[0].set_ylabel(_("layer"))
    fig.colorbar(image, cax=legend, label=_("share of |q|²"))
    n = shares.query.shape[-1]
    index = torch.arange(n)
    for b, colour in enumerate(BAND_COLOURS):
        inside = index[shares.bands == b]
        pairs.axvspan(
            float(inside.min()) - 0.5, float(inside.max()) + 0.5, color=colour, alpha=0.08
        )
    pairs.plot(to_numpy(index), to_numpy(shares.query.mean((0, 1))), "o-", ms=3, label=_("queries"))
    pairs.plot(to_numpy(index), to_numpy(shares.key.mean((0, 1))), "s-", ms=3, label=_("keys"))
    pairs.axhline(1 / n, color="gray", linestyle="--", linewidth=0.8, label=tr("even, 1/{n}", n=n))
    pairs.set(xlabel=_("pair i (dims i, i + 32); wavelength grows →"), ylabel=_("mean share"))
    pairs.set_title(_("mean over all heads and layers"), fontsize=points(9))
    pairs.legend(fontsize=points(7))
    return fig


def distance_profiles(profile: AttentionProfile, heads, distances, bound):
    """Mean attention probability against the query-key distance for chosen heads (left, log-log;
    the first token left out; faint: each distance, bold: each bin's mean), beside RoPE's decay bound divided by its value at 0 (right).

    profile: an ``AttentionProfile``; heads: label -> (layer, head); distances, bound: (P,) each
    (``ch08_heads.decay_reference``). Returns the figure.
    """
    fig = new_figure(8.4, 2.8)
    left, right = fig.subplots(1, 2, width_ratios=(1.5, 1))
    n = profile.by_distance.shape[-1]
    d = torch.arange(1, n - 1)  # distance 0 has no place on a log axis: drawn as a dot at 0.8
    edges = profile.edges.double()  # (R + 1,)
    centres = (edges[1:-1] * (edges[2:] - 1)).sqrt()  # (R - 1,): geometric middles of bins 1 ..
    colours = ("C0", "C1", "C2", "C3")
    for (label, (layer, head)), colour in zip(heads.items(), colours, strict=False):
        row = profile.by_distance[layer, head]  # (T,)
        left.plot(to_numpy(d), to_numpy(row[1 : n - 1]), color=colour, lw=0.6, alpha=0.35)
        left.plot(to_numpy(centres), to_numpy(profile.binned[layer, head, 1:]), "o-", ms=3,
                  color=colour, lw=1.4, label=tr("{label}: layer {layer}, head {head}", label=label, layer=layer, head=head))  # fmt: skip
        left.plot([0.8], [float(row[0])], "o", color=colour, ms=3)
    left.axvline(profile.local_distance + 0.5, color="gray", linestyle=":", linewidth=0.8)
    left.set(xscale="log", yscale="log", xlabel=_("distance m - n (dot at left: 0)"),
             ylabel=_("mean attention probability"))  # fmt: skip
    left.set_title(_("measured: where chosen heads look"), fontsize=points(9))
    left.legend(fontsize=points(7), loc="lower left")
    right.plot(to_numpy(distances), to_numpy(bound), color="black", lw=1)
    right.set(
        xscale="symlog", xlabel=_("distance m - n"), ylabel=_("bound / bound at 0"), ylim=(0, 1.05)
    )
    right.set_title(_("RoPE's decay bound (base 1e5, Dh 64)"), fontsize=points(9))
    return fig


def cache_steps(gaps, texts, prompt: str):
    """Largest |logit difference| from the one-pass logits at each new token (top, log scale), and
    the greedy continuations as text (bottom).

    gaps: label -> (N,) per-step max |difference|; texts: label -> continuation string (same
    labels, same order); prompt: the prompt's text (its end is shown). Returns the figure.
    """
    fig = new_figure(8.4, 3.5)
    top, bottom = fig.subplots(2, 1, height_ratios=(1.6, 1))
    for (label, gap), colour in zip(gaps.items(), ("tab:green", "tab:red"), strict=True):
        steps = torch.arange(len(gap))
        top.plot(to_numpy(steps), to_numpy(gap), "o-", ms=3, color=colour, label=label)
    top.set(yscale="log", xlabel=_("new token j (position P + j)"), ylabel="max |Δ logit|")
    top.set_title(_("cached decoding against one pass over the whole text"), fontsize=points(9))
    top.legend(fontsize=points(7), loc="center right")
    bottom.axis("off")
    tail = "…" + prompt[-70:] if len(prompt) > 70 else prompt
    lines = [(tr("prompt: {tail}", tail=tail), "black")]
    for (label, text), colour in zip(texts.items(), ("tab:green", "tab:red"), strict=True):
        lines.append((tr("{label}: {text!r}", label=label, text=text), colour))
    y = 1.0
    for line, colour in lines:
        wrapped = textwrap.fill(line, 110)
        bottom.text(0, y, wrapped, va="top", ha="left", fontsize=points(8), color=colour,
                    transform=bottom.transAxes, family=["monospace", FONT_FAMILY])  # fmt: skip
        y -= 0.2 * (wrapped.count("\n") + 1) + 0.08
    return fig
