"""The figure toolkit: what every chapter's figures share. Chapter figures live in ``viz/chNN_*.py``.

A figure takes tensors from the measurements and draws them; none computes. A figure that a
dashboard redraws is a small class: ``__init__`` builds the axes and artists once, ``update``
changes their data in place (``set_data``, ``set_height``, tick labels) so a slider moves without
re-creating anything. The caller redraws the canvas (``fig.canvas.draw_idle()``).

Figures are small (dpi 80) so committed notebooks stay light; ``projector_style`` enlarges them
for the classroom demo.
"""

from __future__ import annotations

import io
import math

import matplotlib.pyplot as plt
import torch

from posenc_lib.i18n import tr

DPI = 80
DIVERGING = "RdBu_r"  # negative blue, positive red
SEQUENTIAL = "Blues"
# Line colours that stay apart when thin: every two differ by more than 20 in CIEDE2000
# (tests/viz/test_figure_legibility.py). matplotlib's default cycle does not: its red and brown
# (C3, C5) differ by 16, its purple and pink (C4, C6) by 17; thin lines of those pairs read as one.
PALETTE = (
    "tab:blue",
    "tab:orange",
    "tab:green",
    "tab:red",
    "tab:purple",
    "tab:olive",
    "tab:cyan",
    "black",
)
LINESTYLES = ("-", "--", ":", "-.")


def line_style(index: int) -> dict:
    """The colour and linestyle of line ``index`` of an axes: the palette's colours, solid, then
    the same colours dashed, dotted...; any two lines of one axes differ in colour or style."""
    colour = PALETTE[index % len(PALETTE)]
    return {"color": colour, "linestyle": LINESTYLES[index // len(PALETTE) % len(LINESTYLES)]}


def ordered_style(index: int, count: int, cmap: str = "viridis") -> dict:
    """Line ``index`` of ``count`` ordered lines (heads by slope, say): a colour along ``cmap``,
    and solid and dashed in turn, so that neighbours, whose colours are close, differ in style."""
    colour = plt.get_cmap(cmap)(index / max(count - 1, 1))
    return {"color": colour, "linestyle": "-" if index % 2 == 0 else "--"}


def same_curves(curves: dict, rtol: float = 1e-6, atol: float = 1e-9) -> dict:
    """label -> the first earlier label whose curve has the same values, for the curves that
    repeat one (drawn alone, the later would hide the earlier exactly).

    curves: label -> a sequence of numbers (a tensor, an array or a list).
    """
    import numpy as np

    arrays = {label: np.asarray(to_numpy(values), dtype=float) for label, values in curves.items()}
    equal = {}
    for n, (label, values) in enumerate(arrays.items()):
        for earlier, before in list(arrays.items())[:n]:
            if earlier in equal or before.shape != values.shape:
                continue
            if np.allclose(values, before, rtol=rtol, atol=atol, equal_nan=True):
                equal[label] = earlier
                break
    return equal


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


def to_numpy(values):
    """A tensor as a NumPy array (matplotlib reads arrays; handing it tensors is deprecated)."""
    return values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else values


def label_tokens(ax, tokens, axis: str) -> None:
    """Label an axis's ticks 0 .. len(tokens) - 1 with the tokens (``axis``: "x" or "y")."""
    ticks = list(range(len(tokens)))
    if axis == "x":
        ax.set_xticks(ticks, labels=tokens)
    else:
        ax.set_yticks(ticks, labels=tokens)


def heading(ax, text: str) -> None:
    """A title as plain text at the top of the axes (cheaper to redraw than ``set_title``)."""
    ax.text(0.5, 1.02, text, transform=ax.transAxes, ha="center", va="bottom", fontsize=points(10))


# Figures for a projector: 1.3x the pixels (dpi 80 -> 91) and text 1.25x larger in points, so
# labels are 1.42x larger on screen. Pixels cost time on every redraw (ipympl sends a PNG of the
# canvas), so the area grows little; and text larger still than 1.25x next to the same axes would
# make the titles of neighbouring panels collide. The page's CSS enlarges controls and readouts.
FONT_SCALE = 1.25
AREA_SCALE = 1.3


def projector_style(font_scale: float = FONT_SCALE, area_scale: float = AREA_SCALE) -> dict:
    """Make figures created from now on readable from the back of a room; returns what it set.

    Multiplies matplotlib's base font size (every label follows it, including those the course
    sizes explicitly, through ``figures.points``) and raises the figures' dpi so that their
    pixel area grows by ``area_scale``. Affects this process only: the demo kernel.
    """
    import matplotlib as mpl

    if not (1 <= font_scale <= 3 and 1 <= area_scale <= 4):
        raise ValueError(
            tr(
                "font_scale must be in [1, 3] and area_scale in [1, 4], got {font_scale} and "
                "{area_scale}: larger makes the labels collide and every redraw slow.",
                font_scale=font_scale,
                area_scale=area_scale,
            )
        )
    mpl.rcParams["font.size"] = 10 * font_scale
    mpl.rcParams["axes.titlesize"] = "medium"  # titles stay as wide as before next to the axes
    global DPI
    DPI = round(80 * math.sqrt(area_scale))
    return {"font.size": mpl.rcParams["font.size"], "dpi": DPI}
