"""Chapter 4's encoder–decoder figure: cross-attention's weights before and after the encoder's
input tokens are permuted, with and without positions in the encoder."""

from __future__ import annotations

import torch

from posenc_lib.i18n import _
from posenc_lib.viz.figures import SEQUENTIAL, label_tokens, new_figure, points, to_numpy


def cross_attention_maps(panels: dict[str, torch.Tensor], queries, keys):
    """A grid of cross-attention weights, rows = decoder queries, columns = encoder keys.

    panels: "row title | column title" -> (T_dec, T_enc) weights; the rows of the grid are the
    distinct row titles, in order, and so are the columns. queries, keys: the tokens' labels.
    All panels share one colour scale (0 to the largest weight). Returns the figure.
    """
    rows = list(dict.fromkeys(name.split(" | ")[0] for name in panels))
    cols = list(dict.fromkeys(name.split(" | ")[1] for name in panels))
    top = max(float(w.max()) for w in panels.values())
    fig = new_figure(2.6 * len(cols) + 0.6, 1.5 * len(rows) + 0.6)
    axes = fig.subplots(len(rows), len(cols), squeeze=False)
    for name, weights in panels.items():
        row, col = name.split(" | ")
        ax = axes[rows.index(row), cols.index(col)]
        image = ax.imshow(to_numpy(weights), cmap=SEQUENTIAL, vmin=0, vmax=top, aspect="auto")
        label_tokens(ax, keys, "x")
        label_tokens(ax, queries, "y")
        ax.set_title(f"{row}\n{col}", fontsize=points(8))
    fig.colorbar(image, ax=axes, shrink=0.8, label=_("weight"))
    fig.suptitle(
        _("does cross-attention see the order of the encoder's tokens?"), fontsize=points(10)
    )
    return fig
