"""Chapter 6's figures beyond the basics: turning values, the base against the context, a period in
the signal, and 2-D RoPE on a grid of patches (measurements in ``analysis.ch06_beyond``)."""

from __future__ import annotations

from posenc_lib.i18n import _, tr
from posenc_lib.viz.figures import DIVERGING, PALETTE, new_figure, points, to_numpy


def shift_changes(shifts, changes):
    """The largest change of the attention outputs when every position moves by ``shift``.

    shifts: the shifts (x axis); changes: name -> one largest |change| per shift. Log scale, with
    rounding-level values clipped at 1e-16 so they show. Returns the figure.
    """
    fig = new_figure(5.6, 2.6)
    ax = fig.subplots()
    for name, values in changes.items():
        ax.plot(list(shifts), [max(float(v), 1e-16) for v in values], "o-", label=name)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel=_("shift of every position"),
        ylabel=_("largest change"),
    )
    ax.set_title(_("what moving the whole text changes"), fontsize=points(10))
    ax.legend(fontsize=points(8))
    return fig


def wavelength_vs_base(bases, wavelengths, models):
    """The slowest pair's wavelength against the base, and published models' (base, context).

    bases, wavelengths: (P,) for one head_dim; models: name -> (base, context length). A model
    sits below the curve when its slowest pair turns less than once over its context. The dashed
    line is the tutorials' rule of thumb "base > context". Returns the figure.
    """
    fig = new_figure(5.6, 3.2)
    ax = fig.subplots()
    ax.plot(
        to_numpy(bases),
        to_numpy(wavelengths),
        color="black",
        label=_("slowest wavelength, D = 128"),
    )
    ax.plot(
        to_numpy(bases), to_numpy(bases), color="gray", linestyle="--", label=_("context = base")
    )
    for n, (name, (base, context)) in enumerate(models.items()):
        ax.plot([base], [context], "o", color=PALETTE[n % len(PALETTE)])
        ax.annotate(
            name, (base, context), fontsize=points(7), xytext=(4, -3), textcoords="offset points"
        )
    ax.set(xscale="log", yscale="log", xlabel=_("base (rope_theta)"), ylabel=_("positions"))
    ax.legend(fontsize=points(8), loc="upper left")
    return fig


def lag_curves(recurrence, profiles, period):
    """Top: how often an A recurs at each lag. Bottom: the score two A's get at each lag.

    recurrence: (P,) share of A-A pairs per lag 1..P; profiles: name -> (P,) score per lag;
    period: drawn as dotted lines at its multiples. Returns the figure.
    """
    if not period > 0:
        raise ValueError(
            tr("period must be a positive number of positions, got {period!r}.", period=period)
        )
    fig = new_figure(6.0, 3.4)
    top, bottom = fig.subplots(2, 1, sharex=True)
    lags = list(range(1, len(recurrence) + 1))
    top.bar(lags, to_numpy(recurrence), color="tab:gray")
    top.set(ylabel=_("A at t and t - lag"))
    for name, score in profiles.items():
        bottom.plot(lags, to_numpy(score), label=name)
    bottom.set(xlabel=_("lag (positions)"), ylabel=_("score of two A's"))
    bottom.legend(fontsize=points(8), loc="lower left")
    turn = period
    while turn < len(recurrence) + 1:
        for ax in (top, bottom):
            ax.axvline(turn, color="tab:red", linestyle=":", linewidth=0.8)
        turn += period
    return fig


def grid_score_maps(maps):
    """Score of one query patch against every key patch, drawn on the grid.

    maps: title -> (rows, cols) scores. Each on its own symmetric colour scale. Returns the figure.
    """
    fig = new_figure(6.4, 2.6)
    axes = fig.subplots(1, len(maps), squeeze=False)[0]
    for ax, (title, scores) in zip(axes, maps.items(), strict=True):
        limit = float(scores.abs().max())
        image = ax.imshow(to_numpy(scores), cmap=DIVERGING, vmin=-limit, vmax=limit)
        ax.set(xlabel=_("key column"), ylabel=_("key row"))
        ax.set_title(title, fontsize=points(9))
        fig.colorbar(image, ax=ax, shrink=0.8)
    return fig
