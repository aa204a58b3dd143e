"""Chapter 3's figure for "add or concatenate?": as the width grows, the word-position cosine and the
gap between adding and concatenating fall like 1/sqrt(D) (the cross terms themselves grow like sqrt(D))."""

from __future__ import annotations

from matplotlib.ticker import NullFormatter

from posenc_lib.i18n import _
from posenc_lib.viz.figures import new_figure, points


def cross_terms_fade(cross, random_cosine, trained=None):
    """Against the width D (log-log): the mean |cos(word, position)| of random words and
    sinusoidal positions, the mean gap between the cosine of two sums and of two concatenations,
    and the mean |cos| of random directions (dotted), all falling like 1 / sqrt(D).

    cross: an ``analysis.ch03_add_concat.CrossTerms``; random_cosine: (len(widths),) the random
    directions' mean |cos| (``random_abs_cosine``) at each width; trained: optional
    (D, mean |cos|, label) of a trained model's word and position tables, drawn as one point.
    Returns the figure.
    """
    fig = new_figure(6.4, 2.6)
    ax = fig.subplots()
    widths = list(cross.widths)
    ax.plot(widths, list(cross.word_position_cosine), "o-", markersize=4,
            label=_("|cos(word, position)|"))  # fmt: skip
    # drawn after (on top of) the word-position line, which it all but covers
    ax.plot(widths, list(random_cosine), ":", color="black", label=_("random directions: E|cos|"))
    ax.plot(widths, list(cross.cosine_gap), "s-", markersize=4,
            label=_("|cos(sums) - cos(concatenations)|"))  # fmt: skip
    if trained is not None:
        d, value, label = trained
        ax.plot([d], [value], "*", color="black", markersize=10, label=label)
    ax.set(xscale="log", yscale="log", xlabel=_("width D"), ylabel=_("mean over pairs"))
    ax.set_xticks(widths, [str(d) for d in widths])
    ax.set_yticks([0.02, 0.05, 0.1, 0.2], ["0.02", "0.05", "0.1", "0.2"])
    ax.yaxis.set_minor_formatter(NullFormatter())  # only the labels above
    ax.set_title(_("|cos(word, position)| and the add-concatenate gap fall like 1 / sqrt(D)"),
                 fontsize=points(10))  # fmt: skip
    ax.legend(fontsize=points(8))
    return fig
