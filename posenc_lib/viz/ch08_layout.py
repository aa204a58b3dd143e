"""Chapter 8's figures for reading a config, the layout on real weights, and bf16 angles.

Each function takes results from ``analysis.ch08_config``, ``analysis.ch08_layout`` and
``analysis.ch08_precision`` and returns a matplotlib figure; none computes.
"""

from __future__ import annotations

from posenc_lib.i18n import _, tr
from posenc_lib.viz.figures import (
    DIVERGING,
    PALETTE,
    SEQUENTIAL,
    label_tokens,
    new_figure,
    points,
    same_curves,
    to_numpy,
)


def published_wavelengths(wavelengths, lengths):
    """Every pair's wavelength (positions per full turn, log scale) for published models.

    wavelengths: model -> (Dh/2,) float64; lengths: model -> max_position_embeddings (drawn as a
    dotted line in the model's colour). The x axis is the pair's place 2i / Dh, so models with
    different head_dims line up. Returns the figure.
    """
    fig = new_figure(6.4, 3.0)
    ax = fig.subplots()
    repeats = same_curves(wavelengths)  # e.g. Llama 2 and Mistral: head_dim 128, base 10000
    for n, (model, waves) in enumerate(wavelengths.items()):
        pairs = len(waves)
        place = [2 * i / (2 * pairs) for i in range(pairs)]
        colour = PALETTE[n % len(PALETTE)]
        # A model whose curve a later one repeats is drawn wide beneath it; the later, dashed.
        style = {"linewidth": 3.0} if model in repeats.values() else {"linewidth": 1.3}
        if model in repeats:
            style["linestyle"] = "--"
        ax.plot(place, to_numpy(waves), color=colour, label=model, **style)
        ax.axhline(lengths[model], color=colour, linewidth=0.7, linestyle=":")
    ax.set_yscale("log")
    ax.set(xlabel=_("pair place 2i / head_dim"), ylabel=_("wavelength (positions)"))
    ax.set_title(
        _("wavelength of each rotary pair; dotted: max_position_embeddings"), fontsize=points(10)
    )
    ax.legend(fontsize=points(7), ncol=2, loc="upper left")
    return fig


def row_sources(source, head_dim: int, heads: int = 1, matrix: str = "k_proj"):
    """Which GGUF row each loaded row came from, for the first ``heads`` heads.

    source: (R,) int64 from ``ch08_layout.match_rows``: loaded row r is GGUF row source[r]. Dots
    on the diagonal would mean no reordering; the two lines per head are the first members
    (GGUF rows 2i) then the second members (GGUF rows 2i + 1) of the pairs. Returns the figure.
    """
    rows = heads * head_dim
    fig = new_figure(6.4, 2.8)
    ax = fig.subplots()
    ax.plot(range(rows), to_numpy(source[:rows]), ".", color="tab:blue", markersize=4)
    ax.plot([0, rows - 1], [0, rows - 1], color="lightgray", linewidth=0.8, zorder=0)
    for h in range(1, heads):
        ax.axvline(h * head_dim - 0.5, color="gray", linewidth=0.6, linestyle="--")
    ax.set(xlabel=tr("row of {matrix} as loaded (half layout)", matrix=matrix), ylabel=_("row in the GGUF file"))  # fmt: skip
    ax.set_title(
        _("loaded row h*64 + j*32 + i comes from GGUF row h*64 + 2i + j"), fontsize=points(10)
    )
    return fig


def attention_layouts(maps, tokens):
    """Attention probabilities of one head, side by side: one map per label, plus their difference.

    maps: label -> (T, T) probabilities (the first is the reference; the last panel is the last
    map minus the first). tokens: T strings for the axes. Returns the figure.
    """
    labels = list(maps)
    fig = new_figure(8.4, 3.0)
    axes = fig.subplots(1, len(labels) + 1)
    for ax, label in zip(axes, labels, strict=False):
        image = ax.imshow(
            to_numpy(maps[label]), cmap=SEQUENTIAL, vmin=0, vmax=1, interpolation="nearest"
        )
        ax.set_title(label, fontsize=points(9))
    fig.colorbar(image, ax=axes[len(labels) - 1], shrink=0.8)
    gap = maps[labels[-1]] - maps[labels[0]]
    limit = max(float(gap.abs().max()), 1e-9)
    image = axes[-1].imshow(
        to_numpy(gap), cmap=DIVERGING, vmin=-limit, vmax=limit, interpolation="nearest"
    )
    axes[-1].set_title(_("difference"), fontsize=points(9))
    fig.colorbar(image, ax=axes[-1], shrink=0.8)
    for ax in axes:
        label_tokens(ax, tokens, "y")
        ax.tick_params(axis="y", labelsize=points(6))
        ax.set_xticks([])
        ax.set_xlabel(_("key"))
    return fig


def angle_errors(positions, errors, bf16_exact_limit: int = 256):
    """The largest angle error over pairs and positions up to m, one line per recipe (log scale).

    positions: (T,); errors: recipe -> (T,) radians (``ch08_precision.worst_angle_error``:
    wrapped, so at most pi). A dashed line marks the last integer bfloat16 stores exactly.
    Returns the figure.
    """
    fig = new_figure(6.4, 2.8)
    ax = fig.subplots()
    x = to_numpy(positions)
    for n, (recipe, error) in enumerate(errors.items()):
        ax.plot(x, to_numpy(error.clamp_min(1e-12)), color=f"C{n}", linewidth=0.9, label=_(recipe))
    ax.axvline(bf16_exact_limit, color="gray", linestyle="--", linewidth=0.8)
    ax.text(
        bf16_exact_limit * 1.1,
        2e-7,
        _("257: first position bf16 rounds"),
        fontsize=points(8),
        color="gray",
    )
    ax.set(xscale="log", yscale="log", ylim=(1e-7, 5), xlabel=_("position m"))
    ax.set(ylabel=_("worst |angle error| up to m (rad)"))
    ax.set_title(_("angle m * theta_i formed in lower precision vs float64"), fontsize=points(10))
    ax.legend(fontsize=points(8), loc="upper left")
    return fig
