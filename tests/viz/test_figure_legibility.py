"""Every figure the course draws is legible: no text off the canvas, no two lines alike, no curve
hidden under another.

Each figure function a lecture calls (``FIGURES``, with inputs shaped and labelled as the lecture's)
and every dashboard of ``viz/registry.py`` at its default state is drawn with the layout the
notebooks get (constrained layout, drawn at the figure's dpi; a dashboard's layout frozen after one
draw), in English and in Chinese, and audited:

- text: every drawn title, axis label, tick label, legend entry, annotation and table cell lies
  within the figure (its window extent inside the figure's bbox, with a pixel to spare);
- lines: in one axes, no two data lines share (colour, linestyle, marker), and two lines of the
  same linestyle and marker differ in colour by more than ``MIN_DELTA_E`` (CIEDE2000): thin lines
  of red and brown, or purple and pink, read as one colour;
- hidden curves: a line drawn wholly on top of another's points, with the same linestyle, hides it.

Reference lines (``axhline``/``axvline``, drawn in axes coordinates) are left out of the line
checks: they mark values and are named in titles, not legends.
"""

from __future__ import annotations

import math
import re

import matplotlib
import matplotlib.colors as mcolors
import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch
from matplotlib.lines import Line2D
from matplotlib.text import Annotation, Text
from matplotlib.transforms import BlendedGenericTransform

from posenc_lib import i18n
from posenc_lib.viz.figures import new_figure
from posenc_lib.viz.registry import DASHBOARDS

matplotlib.use("Agg")

MIN_DELTA_E = 20.0  # CIEDE2000; tab:red vs tab:brown is 16, tab:purple vs tab:pink 17
SPARE_PX = 1.0


# -- the audit ---------------------------------------------------------------------------------------


def _lab(colour) -> tuple[float, float, float]:
    """CIE L*a*b* (D65) of a matplotlib colour (sRGB, IEC 61966-2-1)."""
    rgb = np.array(mcolors.to_rgb(colour))
    linear = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    to_xyz = np.array(
        [[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]
    )
    xyz = to_xyz @ linear / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > (6 / 29) ** 3, np.cbrt(xyz), xyz / (3 * (6 / 29) ** 2) + 4 / 29)
    return 116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])


def delta_e_2000(lab_1, lab_2) -> float:
    """CIEDE2000 colour difference of two L*a*b* colours (Sharma, Wu and Dalal 2005, eqs. 1-22)."""
    (l1, a1, b1), (l2, a2, b2) = lab_1, lab_2
    c_mean = (math.hypot(a1, b1) + math.hypot(a2, b2)) / 2
    g = 0.5 * (1 - math.sqrt(c_mean**7 / (c_mean**7 + 25**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = math.hypot(a1p, b1), math.hypot(a2p, b2)
    h1p = math.degrees(math.atan2(b1, a1p)) % 360 if c1p else 0.0
    h2p = math.degrees(math.atan2(b2, a2p)) % 360 if c2p else 0.0
    dh = 0.0
    if c1p * c2p:
        dh = h2p - h1p
        dh = dh - 360 if dh > 180 else dh + 360 if dh < -180 else dh
    d_l, d_c = l2 - l1, c2p - c1p
    d_h = 2 * math.sqrt(c1p * c2p) * math.sin(math.radians(dh / 2))
    l_mean, cp_mean = (l1 + l2) / 2, (c1p + c2p) / 2
    h_mean = h1p + h2p
    if c1p * c2p:
        if abs(h1p - h2p) <= 180:
            h_mean = (h1p + h2p) / 2
        else:
            h_mean = (h1p + h2p + 360) / 2 if h1p + h2p < 360 else (h1p + h2p - 360) / 2
    t = (
        1
        - 0.17 * math.cos(math.radians(h_mean - 30))
        + 0.24 * math.cos(math.radians(2 * h_mean))
        + 0.32 * math.cos(math.radians(3 * h_mean + 6))
        - 0.20 * math.cos(math.radians(4 * h_mean - 63))
    )
    d_theta = 30 * math.exp(-(((h_mean - 275) / 25) ** 2))
    r_c = 2 * math.sqrt(cp_mean**7 / (cp_mean**7 + 25**7))
    s_l = 1 + 0.015 * (l_mean - 50) ** 2 / math.sqrt(20 + (l_mean - 50) ** 2)
    s_c, s_h = 1 + 0.045 * cp_mean, 1 + 0.015 * cp_mean * t
    r_t = -math.sin(math.radians(2 * d_theta)) * r_c
    terms = (d_l / s_l, d_c / s_c, d_h / s_h)
    return math.sqrt(sum(x * x for x in terms) + r_t * terms[1] * terms[2])


def colour_difference(colour_1, colour_2) -> float:
    return delta_e_2000(_lab(colour_1), _lab(colour_2))


def _drawn_texts(fig, renderer):
    """(description, Text) for every text the renderer draws: tick labels of drawn ticks only."""
    tick_labels, drawn = set(), set()
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.majorTicks + axis.minorTicks:
                tick_labels.update({id(tick.label1), id(tick.label2)})
            tick_labels.update({id(axis.label), id(axis.offsetText)})
            if ax.axison and axis.get_visible():  # an axis switched off draws none of them
                for tick in axis._update_ticks():
                    drawn.update({id(tick.label1), id(tick.label2)})
                drawn.update({id(axis.label), id(axis.offsetText)})
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip():
            continue
        if id(text) in tick_labels and id(text) not in drawn:
            continue
        axes = text.axes
        if axes is not None and not axes.get_visible():
            continue
        if isinstance(text, Annotation) and not text._check_xy(renderer):
            continue  # an annotation whose point is outside its axes is not drawn
        if text.get_clip_on() and text.get_clip_box() is not None and id(text) not in tick_labels:
            continue  # clipped to its axes: it cannot leave them
        yield text


def spilled_texts(fig) -> list[str]:
    """The drawn texts that reach outside the figure, each as 'text' (how far out, px)."""
    fig.draw_without_rendering()  # the layout and text positions of a draw, without pixels
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    out = []
    for text in _drawn_texts(fig, renderer):
        extent = text.get_window_extent(renderer)
        over = max(box.x0 - extent.x0, extent.x1 - box.x1, box.y0 - extent.y0, extent.y1 - box.y1)
        if over > SPARE_PX:
            out.append(f"{text.get_text()!r} ({over:.0f} px out)")
    return out


def _data_lines(ax) -> list[Line2D]:
    """The axes' visible lines with data, leaving out axhline/axvline (drawn in axes units)."""
    return [
        line
        for line in ax.get_lines()
        if line.get_visible()
        and len(line.get_xdata()) > 0
        and not isinstance(line.get_transform(), BlendedGenericTransform)
    ]


def _style(line):
    """(linestyle, marker, alpha): what tells two lines of one colour apart."""
    linestyle = line.get_linestyle()
    linestyle = {"-": "solid", "--": "dashed", ":": "dotted", "-.": "dashdot"}.get(
        linestyle, linestyle
    )
    if linestyle == "None" or line.get_linewidth() == 0:
        linestyle = "none"
    marker = line.get_marker()
    marker = "none" if marker in (None, "None", "none", "", " ") else str(marker)
    return linestyle, marker, round(line.get_alpha() or 1.0, 2)


def _labelled(line) -> bool:
    return not line.get_label().startswith("_")


def _name(line, index):
    return repr(line.get_label()) if _labelled(line) else f"line {index}"


def lookalike_lines(fig) -> list[str]:
    """Pairs of lines in one axes that a reader cannot tell apart, and lines hidden under another."""
    found = []
    for ax_index, ax in enumerate(fig.axes):
        lines = _data_lines(ax)
        for i, a in enumerate(lines):
            for j in range(i + 1, len(lines)):
                b = lines[j]
                style_a, style_b = _style(a), _style(b)
                if style_a != style_b:
                    continue
                difference = colour_difference(a.get_color(), b.get_color())
                if difference < 1 and not (_labelled(a) and _labelled(b)):
                    continue  # one colour on purpose: parts of one series (no legend entries)
                if difference <= MIN_DELTA_E:
                    found.append(
                        f"axes {ax_index}: {_name(a, i)} and {_name(b, j)} are both {style_a} in "
                        f"colours {difference:.1f} apart (CIEDE2000; at least {MIN_DELTA_E:g})"
                    )
        for i, a in enumerate(lines):  # the same points drawn twice: the later line covers the
            for j in range(i + 1, len(lines)):  # earlier unless the earlier is much wider
                b = lines[j]
                if not _labelled(a):
                    continue  # only a legend entry is a curve a reader looks for
                xy_a, xy_b = np.asarray(a.get_xydata(), float), np.asarray(b.get_xydata(), float)
                if len(xy_a) < 2 or xy_a.shape != xy_b.shape:
                    continue
                span = np.nanmax(np.abs(xy_a), axis=0) + 1e-300  # (2,): x and y magnitude
                if not np.allclose(xy_a / span, xy_b / span, atol=1e-3, equal_nan=True):
                    continue
                shows = a.get_linewidth() >= 1.8 * b.get_linewidth() or (
                    _style(a)[1] != "none" and _style(a)[1] != _style(b)[1]
                )
                if not shows:
                    found.append(
                        f"axes {ax_index}: {_name(a, i)} is hidden under {_name(b, j)} "
                        "(the same points, drawn after it)"
                    )
    return found


def audit(fig) -> list[str]:
    return [f"text outside the figure: {s}" for s in spilled_texts(fig)] + lookalike_lines(fig)


# -- the figures, with inputs shaped and labelled as the lectures' ----------------------------------

G = 0  # every random input from seed 0


def _rand(*shape, seed=G):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed))


def _randn(*shape, seed=G):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _softmax_maps(*shape):
    return _randn(*shape).softmax(-1)


def ch00_table_map():
    from posenc_lib import sinusoidal_encoding
    from posenc_lib.viz.ch00_start import table_map

    return table_map(sinusoidal_encoding(64, 32))


def ch01_final_states():
    from posenc_lib.viz.ch01_order import final_states

    return final_states({"dog bites man": _randn(8), "man bites dog": _randn(8, seed=1)})


def ch01_sentence_maps():
    from posenc_lib.viz.ch01_order import sentence_maps

    return sentence_maps(
        {"dog bites man": _softmax_maps(3, 3), "man bites dog": _softmax_maps(3, 3)}
    )


def ch01_order_plot():
    from posenc_lib.analysis.ch01_order import reorder_experiment
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch01_order import OrderPlot

    result = reorder_experiment("dog bites man".split(), order=[2, 1, 0], pe_scale=1.0)
    title = tr('"man bites dog", s = 1: each bar against the same word in "dog bites man"')
    return OrderPlot(result, title=title).fig  # as section 5 of the lecture draws it


def ch01_attention_grid():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch01_order import attention_grid

    tokens = [["[CLS]", "dog", "bites", "man", "[SEP]"], ["[CLS]", "man", "bites", "dog", "[SEP]"]]
    return attention_grid(
        _softmax_maps(2, 2, 5, 5),
        tokens,
        row_titles=['"dog bites man"', '"man bites dog"'],
        col_titles=[
            tr("layer {layer}, head {head}: with positions", layer=0, head=3),
            tr("positions zeroed"),
        ],
    )


def ch02_similarity_map():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch02_naive import similarity_map

    cosines = torch.cos(torch.arange(64)[:, None] - torch.arange(64)[None, :] / 9.0)
    curve = torch.linspace(1, -0.1, 512)
    return similarity_map(cosines, curve, title=tr("MiniLM (trained)"))


def ch02_component_waves():
    from types import SimpleNamespace

    from posenc_lib.viz.ch02_naive import component_waves

    t = torch.arange(512.0)[:, None]
    scores = torch.cat([f(t / p) for p in (3, 7, 20, 60) for f in (torch.sin, torch.cos)], dim=1)
    pairs = [SimpleNamespace(first=2 * i, second=2 * i + 1, period=p) for i, p in
             enumerate((19.0, 44.0, 125.0, 377.0))]  # fmt: skip
    return component_waves(scores, pairs)


def ch02_norm_growth():
    from posenc_lib import binary_encoding, integer_encoding, normalized_encoding
    from posenc_lib.viz.ch02_naive import norm_growth

    n, d = 1000, 64
    return norm_growth(
        integer_encoding(n, d).norm(dim=-1),
        normalized_encoding(n, d).norm(dim=-1),
        binary_encoding(n, d).norm(dim=-1),
        (_randn(n, d) / math.sqrt(d)).norm(dim=-1),
    )


def ch02_normalized_gaps():
    from posenc_lib import normalized_encoding
    from posenc_lib.viz.ch02_naive import normalized_gaps

    return normalized_gaps({n: normalized_encoding(n, 1)[:, 0] for n in (5, 500)})


def _bits(n=256, width=8):
    from posenc_lib import binary_encoding

    return binary_encoding(n, width, dtype=torch.float64)


def ch02_binary_distances():
    from posenc_lib.viz.ch02_naive import binary_distances

    bits = _bits()
    steps = bits[1:] - bits[:-1]
    return binary_distances(bits, steps.abs().sum(-1), steps.norm(dim=-1))


def _smooth_bits(n=256, width=8):
    t = torch.arange(n, dtype=torch.float64)[:, None]
    j = torch.arange(width, dtype=torch.float64)[None, :]
    return 0.5 + 0.5 * torch.cos(2 * math.pi * (t - (3 * 2**j - 1) / 2) / 2 ** (j + 1))


def ch02_flip_rates_and_waves():
    from posenc_lib.viz.ch02_naive import flip_rates_and_waves

    bits = _bits()
    rates = (bits[1:] != bits[:-1]).double().mean(0)
    return flip_rates_and_waves(rates, bits, _smooth_bits())


def ch02_row_similarity():
    from posenc_lib import sinusoidal_encoding
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch02_naive import row_similarity

    cosines = {}
    for table, label in (
        (_randn(128, 8), tr("learned table, untrained")),
        (sinusoidal_encoding(128, 8), tr("sinusoidal (chapter 3)")),
    ):
        unit = table / table.norm(dim=-1, keepdim=True)
        cosines[label] = unit @ unit[40]
    return row_similarity(cosines, 40)


def ch02_decay_curves():
    from posenc_lib import (
        binary_encoding,
        integer_encoding,
        normalized_encoding,
        sinusoidal_encoding,
    )
    from posenc_lib.analysis.learned_table import cosine_by_offset
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch02_naive import decay_curves

    n, d = 1024, 64
    tables = {
        tr("integer"): integer_encoding(n, d, dtype=torch.float64)[1:],
        tr("normalized"): normalized_encoding(n, d, dtype=torch.float64)[1:],
        tr("binary"): binary_encoding(n, d, dtype=torch.float64)[1:],
        tr("learned (untrained)"): _randn(128, d).double(),
        tr("MiniLM (trained)"): _randn(512, 32).double() + torch.linspace(0, 3, 512)[:, None],
        tr("sinusoidal (ch. 3)"): sinusoidal_encoding(n, d, dtype=torch.float64),
    }
    return decay_curves({name: cosine_by_offset(table) for name, table in tables.items()})


def ch03_cross_terms_fade():
    from posenc_lib.analysis.ch03_add_concat import CrossTerms
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch03_add_concat import cross_terms_fade

    widths = [16, 64, 256, 1024]
    cross = CrossTerms(widths, [0.8 / w**0.5 for w in widths], [0.6 / w**0.5 for w in widths])
    return cross_terms_fade(
        cross, [0.79 / w**0.5 for w in widths], (384, 0.05, tr("MiniLM's trained tables (D = 384)"))
    )


def ch03_pairs_beside_sinusoids():
    from types import SimpleNamespace

    from posenc_lib import sinusoidal_encoding
    from posenc_lib.viz.ch03_sinusoid import pairs_beside_sinusoids

    t = torch.arange(512.0)[:, None]
    scores = torch.cat([f(t / p) for p in (3, 7, 20) for f in (torch.sin, torch.cos)], dim=1)
    pairs = [SimpleNamespace(first=2 * i, second=2 * i + 1, period=p) for i, p in
             enumerate((19.0, 44.0, 125.0))]  # fmt: skip
    return pairs_beside_sinusoids(
        scores, pairs, sinusoidal_encoding(512, 384), [(30, 18.9), (40, 42.7), (50, 117.2)]
    )


def ch03_bits_and_pairs():
    from posenc_lib.viz.ch03_sinusoid import bits_and_pairs

    t_fine = torch.linspace(0, 32, 800, dtype=torch.float64)
    waves = [(1 - torch.sin(2 * math.pi * (t_fine + 0.5) / 2 ** (j + 1))) / 2 for j in range(4)]
    return bits_and_pairs(_bits(), t_fine, waves, _smooth_bits())


def ch03_shift_and_turn():
    from posenc_lib import sinusoidal_encoding, sinusoidal_shift_matrix
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch03_sinusoid import shift_and_turn

    pair = sinusoidal_encoding(41, 16)[:, 2:4]
    return shift_and_turn(sinusoidal_shift_matrix(3, 16), pair, 3, tr("pair 1 (wavelength 19.9)"))


def _per_bin(values, edges, reduce):
    centres = (edges[:-1] * edges[1:]).double().sqrt()
    return centres, torch.stack(
        [reduce(values[a:b]) for a, b in zip(edges[:-1], edges[1:], strict=True)]
    )


BASES = (10.0, 100.0, 1000.0, 10000.0)


def ch03_closest_by_range():
    from posenc_lib.analysis.ch03_sinusoid import offset_distances
    from posenc_lib.viz.ch03_sinusoid import closest_by_range

    edges = torch.logspace(math.log10(2), math.log10(4096), 49).long().unique()
    ratios = {}
    for d in (8, 64):
        for base in BASES:
            dist = offset_distances(torch.arange(4096), d, base)
            ratios[d, base] = _per_bin(dist / dist[1], edges, torch.min)
    return closest_by_range(ratios, len(edges) - 1)


def ch03_similarity_by_range():
    from posenc_lib.analysis.ch03_sinusoid import dot_by_offset
    from posenc_lib.viz.ch03_sinusoid import similarity_by_range

    edges = torch.logspace(math.log10(2), math.log10(4096), 49).long().unique()
    curves = {
        base: _per_bin(dot_by_offset(torch.arange(4096), 64, base) / 32, edges, torch.mean)
        for base in BASES
    }
    return similarity_by_range(curves, 64)


def ch03_similarity_by_offset():
    from posenc_lib.analysis.ch03_sinusoid import dot_by_offset
    from posenc_lib.viz.ch03_sinusoid import similarity_by_offset

    k = torch.arange(-200, 201)
    return similarity_by_offset(k, {d: dot_by_offset(k, d) / (d / 2) for d in (64, 512)})


def ch03_variance_by_dimension():
    from posenc_lib import sinusoidal_encoding
    from posenc_lib.viz.ch03_sinusoid import variance_by_dimension

    return variance_by_dimension(sinusoidal_encoding(100, 64).var(0), 100)


def ch04_diagonal_maps():
    from posenc_lib import sinusoidal_encoding
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch04_relative import diagonal_maps

    pe = sinusoidal_encoding(24, 16)
    return diagonal_maps(
        {
            "<PE_i, PE_j>": pe @ pe.T,
            "p_i W_q . p_j W_k": (pe @ _randn(16, 16)) @ (pe @ _randn(16, 16, seed=1)).T,
            tr("a T5 bias (section 5)"): _randn(24, 24),
        }
    )


def ch04_shaw_position_term():
    from posenc_lib.viz.ch04_relative import shaw_position_term

    return shaw_position_term(_randn(12, 12), 3)


def ch04_term_maps():
    from posenc_lib.viz.ch04_relative import term_maps

    names = (
        "(a) content-content",
        "(b) content-position",
        "(c) global content",
        "(d) global position",
    )
    return term_maps({name: _randn(9, 9, seed=i) for i, name in enumerate(names)})


def ch04_bucket_staircases():
    from posenc_lib import t5_relative_position_bucket
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch04_relative import bucket_staircases

    span = torch.arange(-160, 161)
    staircases = {
        tr("bidirectional (encoder)"): t5_relative_position_bucket(span, bidirectional=True),
        tr("causal (decoder)"): t5_relative_position_bucket(span, bidirectional=False),
    }
    return bucket_staircases(span, staircases, max_distance=128)


def ch04_moved_scores():
    from posenc_lib.analysis.ch04_relative import RELATIVE, SCORERS, ShiftResult
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch04_relative import moved_scores

    shifts = list(range(20))
    results = {}
    for i, name in enumerate(SCORERS):
        moving = 0 if name in RELATIVE else 1
        scores = i + moving * _randn(20, 4, 4, seed=i).cumsum(0) * 0.1
        results[name] = ShiftResult(shifts, scores, 0.0)
    return moved_scores(results, query=2, key=1, ylabel=tr("score of sat -> cat"))


def ch04_cross_attention_maps():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch04_encdec import cross_attention_maps

    panels = {}
    for row in (tr("encoder without positions"), tr("encoder with positions")):
        for col in (tr("original order"), tr("input reversed")):
            panels[f"{row} | {col}"] = _softmax_maps(3, 6)
    return cross_attention_maps(
        panels, queries="die Katze sass".split(), keys="the cat sat on the mat".split()
    )


def ch05_bias_and_weights():
    from posenc_lib import alibi_bias
    from posenc_lib.analysis.ch05_alibi import biased_softmax
    from posenc_lib.viz.ch05_alibi import bias_and_weights

    bias = alibi_bias(8, 12)[0]
    return bias_and_weights(bias, biased_softmax(torch.zeros(12, 12), bias), "1/2")


def ch05_slope_ladders():
    from posenc_lib import alibi_slopes
    from posenc_lib.analysis.ch05_alibi import ladder_size
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch05_alibi import slope_ladders

    ladders = {h: (alibi_slopes(h), ladder_size(h)) for h in (8, 12, 16)}
    title = tr("12 heads: 8 on the ladder, 4 half a step above heads 1-4")
    return slope_ladders(ladders, labelled=12, title=title)


def ch05_head_biases():
    from posenc_lib import alibi_bias, alibi_slopes
    from posenc_lib.viz.ch05_alibi import head_biases

    slopes = alibi_slopes(8)
    return head_biases(alibi_bias(8, 24), math.log(10) / slopes, slopes)


def ch05_query_rows():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch05_alibi import query_rows

    rows = {
        tr("causal (paper = BLOOM = MPT)"): _randn(32, seed=1).softmax(-1),
        tr("no mask, +m j (BLOOM's bias in an encoder)"): _randn(32, seed=2).softmax(-1),
        tr("no mask, -m |i - j| (symmetric)"): _randn(32, seed=3).softmax(-1),
    }
    title = tr("query {query}'s attention, head {head} (m = 1/8), random content", query=20, head=3)
    return query_rows(rows, 20, title)


def ch05_far_share():
    from posenc_lib import alibi_slopes
    from posenc_lib.analysis.ch05_alibi import far_mass
    from posenc_lib.viz.ch05_alibi import far_share

    slopes = alibi_slopes(8)
    lengths = torch.unique(torch.logspace(7, 13, 25, base=2).round().long())
    shares = torch.stack([far_mass(slopes, int(t), 127) for t in lengths], dim=1)
    return far_share(lengths, shares, trained=128)


def ch05_needle_curves():
    from posenc_lib import alibi_slopes
    from posenc_lib.analysis.ch05_alibi import needle_weight
    from posenc_lib.viz.ch05_alibi import needle_curves

    far = torch.unique(torch.logspace(0, math.log10(2047), 60).round().long())
    return needle_curves(far, needle_weight(alibi_slopes(8), 2048, far, 5.0), 0.07, 5.0)


def ch06_turned_pairs():
    from posenc_lib.viz.ch06_rope import turned_pairs

    def turn(v, p):
        c, s = math.cos(0.3 * p), math.sin(0.3 * p)
        return torch.tensor([c * v[0] - s * v[1], s * v[0] + c * v[1]])

    return turned_pairs(
        torch.tensor([1.0, 0.5]), torch.tensor([0.2, -1.1]), turn, [(2, 0), (5, 3), (102, 100)],
        [-60.0, -60.0, -60.0],
    )  # fmt: skip


def ch06_score_maps():
    from posenc_lib.analysis.ch06_rope import score_matrix
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch06_rope import score_maps

    q, k = _randn(2, 16)
    return score_maps(
        {
            tr("rotated: depends on m - n"): score_matrix(q, k, 64),
            tr("added: depends on m and n"): _randn(64, 64),
        }
    )


def ch06_pair_layouts():
    from posenc_lib.analysis.ch06_rope import layout_permutation
    from posenc_lib.viz.ch06_rope import pair_layouts

    return pair_layouts(
        {s: layout_permutation(8, s, "interleaved") for s in ("interleaved", "half")}
    )


def ch06_logits_by_distance():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch06_rope import logits_by_distance

    return logits_by_distance(
        {tr("right layout"): _randn(64, 64), tr("mixed layouts"): _randn(64, 64, seed=1)}, 63, 40
    )


def ch06_score_ceilings():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch06_rope import score_ceilings

    edges = torch.logspace(0, 4, 31)
    decay = lambda a: 1 / (1 + torch.arange(30.0) / a)  # noqa: E731
    by_width = {tr("bound, D = {d}", d=d): decay(d / 8) for d in (32, 64, 128)}
    by_base = {tr("bound, base {base:.0e}", base=b): decay(math.log10(b)) for b in (1e2, 1e4, 5e5)}
    near = torch.tensor([1.0, 10.0, 100.0, 1000.0])
    return score_ceilings(edges, by_width, by_base, decay(3.0) * 0.5, near, 0.5 / (1 + near / 3))


def ch06_self_scores():
    from posenc_lib.viz.ch06_rope import self_scores

    positions = torch.arange(0, 2048, 16)
    curves = {f"mismatch {d:g}": torch.cos(positions * d) for d in (0.0, 1e-3, 1e-2)}
    return self_scores(positions, curves)


def ch06_time_curves():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch06_rope import time_curves

    lengths = (256, 512, 1024, 2048)
    times = {tr("RoPE on q and k"): [0.1, 0.2, 0.4, 0.8], tr("add an (H, T, T) bias"): [
        0.2, 0.8, 3.2, 12.8]}  # fmt: skip
    return time_curves(lengths, times, tr("at T = {T} the bias took {ratio:.0f}x as long",
                                          T=2048, ratio=16.0))  # fmt: skip


def ch06_shift_changes():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch06_beyond import shift_changes

    shifts = [1, 10, 100, 1000]
    return shift_changes(
        shifts,
        {
            tr("q, k turned"): [1e-16, 3e-16, 2e-16, 4e-16],
            tr("v turned too"): [0.2, 0.9, 1.1, 1.0],
            tr("v turned, output turned back"): [1e-7, 2e-7, 1e-7, 3e-7],
        },
    )


def ch06_wavelength_vs_base():
    from posenc_lib.analysis.ch06_beyond import slowest_wavelength
    from posenc_lib.analysis.ch08_config import published_table
    from posenc_lib.viz.ch06_beyond import wavelength_vs_base

    bases = torch.logspace(3, 7, 60, dtype=torch.float64)
    waves = torch.tensor([slowest_wavelength(128, float(b)) for b in bases])
    models = {row["model"]: (row["rope_theta"], row["max_position"]) for row in published_table()}
    return wavelength_vs_base(bases, waves, models)


def ch06_lag_curves():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch06_beyond import lag_curves

    lags = torch.arange(1, 41, dtype=torch.float64)
    return lag_curves(
        _rand(40),
        {
            tr("tuned pair (wavelength 10.5)"): torch.cos(2 * math.pi * lags / 10.5),
            tr("ladder (D = 64, base 10000)"): 1 / (1 + lags / 10),
        },
        10.5,
    )


def ch06_grid_score_maps():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch06_beyond import grid_score_maps

    return grid_score_maps(
        {
            tr("2-D RoPE: query (3, 4)"): _randn(6, 8),
            tr("1-D RoPE on the raster order"): _randn(6, 8, seed=1),
        }
    )


def _results():
    from posenc_lib.models.results import load_results

    return load_results()


def ch07_seed_bands_fair():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch07_extrapolation import seed_bands

    return seed_bands(
        _results(),
        {
            tr("sinusoidal: unscaled and x sqrt(d)"): ["sinusoidal", "sinusoidal-scaled"],
            tr("learned table: unscaled and x sqrt(d)"): ["learned", "learned-scaled"],
            tr("for comparison"): ["none", "rope", "alibi"],
        },
    )


def ch07_seed_bands_core():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch07_extrapolation import seed_bands

    six = ["none", "sinusoidal", "learned", "t5", "alibi", "rope"]
    return seed_bands(_results(), {tr("six position methods, three seeds each"): six})


def ch07_seed_bands_remedies():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch07_extrapolation import seed_bands

    return seed_bands(
        _results(),
        {
            tr("randomized positions"): ["rope", "rope-randomized", "alibi"],
            tr("a sliding window of W = L"): ["rope", "rope, window L", "alibi", "alibi, window L"],
            tr("a stretched learned table"): [
                "learned-scaled, interpolated",
                "learned-scaled, interpolated + fine-tuned",
                "learned, interpolated",
                "learned, interpolated + fine-tuned",
            ],
        },
    )


def ch07_perplexity_growth():
    from posenc_lib.analysis import ch07_extrapolation
    from posenc_lib.viz.ch07_extrapolation import perplexity_growth

    results = _results()
    ours_to_paper = {"sinusoidal-scaled": "sinusoidal", "t5": "t5bias", "alibi": "alibi",
                     "rope": "rotary"}  # fmt: skip
    return perplexity_growth(
        {n: results["rows"][n] for n in ours_to_paper},
        results["lengths"],
        results["L"],
        ch07_extrapolation.load_reference("L512"),
        ours_to_paper,
    )


def ch07_loss_by_position():
    from posenc_lib.viz.ch07_extrapolation import loss_by_position

    names = ("none", "sinusoidal", "sinusoidal-scaled", "learned", "t5", "alibi", "rope")
    x = torch.arange(64.0)
    binned = {}
    for i, name in enumerate(names):  # the lecture's shapes: flat to L = 64, then some climb
        climb = {"sinusoidal": 7.5, "sinusoidal-scaled": 4.5, "rope": 2.5}.get(name, 1.2)
        binned[name] = torch.where(x < 8, 1.0, climb) + 0.8 * _rand(64, seed=i)
    binned["learned"] = binned["learned"][:8]
    return loss_by_position(binned, 8, 64, 16)


def ch07_pair_wavelengths_and_scores():
    from posenc_lib.analysis import ch07_scaling
    from posenc_lib.viz.ch07_extrapolation import pair_wavelengths_and_scores

    waves = ch07_scaling.wavelengths(32, 10000.0)
    full = ch07_scaling.full_turn_pairs(32, 10000.0, 64)
    return pair_wavelengths_and_scores(waves, full, _randn(16, 512).cumsum(-1) * 0.05, 64, 1, 2)


def ch07_scaled_perplexity():
    from posenc_lib.analysis import ch07_scaling
    from posenc_lib.viz.ch07_extrapolation import scaled_perplexity

    results = _results()
    return scaled_perplexity(
        results["methods"]["rope"]["ppl"], results["scaled"], results["lengths"],
        ch07_scaling.METHODS,
    )  # fmt: skip


def ch07_finetuned_perplexity():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch07_extrapolation import finetuned_perplexity

    results = _results()
    plain, scaled, tuned = (results["methods"]["rope"]["ppl"], results["scaled"],
                            results["finetuned"])  # fmt: skip
    rows = {
        tr("plain (base model)"): plain,
        tr("PI, no fine-tuning"): scaled["linear"]["4"],
        tr("PI, 200 steps at 4L"): tuned["linear"]["ppl"],
        tr("YaRN, no fine-tuning"): scaled["yarn"]["4"],
        tr("YaRN, 200 steps at 4L"): tuned["yarn"]["ppl"],
        tr("plain, 200 steps at 4L"): tuned["default"]["ppl"],
        tr("ALiBi (for scale)"): results["methods"]["alibi"]["ppl"],
    }
    zoomed = (tr("PI, 200 steps at 4L"), tr("YaRN, 200 steps at 4L"), tr("plain, 200 steps at 4L"),
              tr("ALiBi (for scale)"))  # fmt: skip
    return finetuned_perplexity(rows, results["lengths"], zoomed)


def ch07_forward_times():
    from posenc_lib.viz.ch07_extrapolation import forward_times

    names = ("none", "sinusoidal", "t5", "alibi", "rope")
    rounds = {n: [1.0 + 0.1 * i + 0.01 * r for r in range(7)] for i, n in enumerate(names)}
    return forward_times(rounds, {n: sorted(t)[3] for n, t in rounds.items()})


def ch08_band_shares():
    from posenc_lib.analysis import ch08_heads as heads
    from posenc_lib.viz.ch08_heads import band_shares

    q, k = _randn(30, 9, 20, 64), _randn(30, 3, 20, 64, seed=1)
    return band_shares(heads.pair_shares(q, k, 100000.0))


def ch08_distance_profiles():
    from posenc_lib.analysis import ch08_heads as heads
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch08_heads import distance_profiles

    attn = torch.ones(2, 2, 64, 64).tril() * _rand(2, 2, 64, 64)
    attn = attn / attn.sum(-1, keepdim=True)
    profile = heads.attention_profile(attn, min_query=4, local=2, far=8)
    distances = torch.arange(64)
    return distance_profiles(
        profile, {tr("local"): (0, 1), tr("long-range"): (1, 0)}, distances,
        heads.decay_reference(distances),
    )  # fmt: skip


def ch08_cache_steps():
    from posenc_lib.viz.ch08_heads import cache_steps

    gaps = {"continue the cache": torch.full((20,), 3e-5), "restart at 0": torch.arange(1.0, 21.0)}
    texts = {"continue the cache": " the bread was fresh and warm", "restart at 0": " the the the"}
    return cache_steps(gaps, texts, "Once upon a time there was a baker who made bread every day")


def ch08_published_wavelengths():
    from posenc_lib.analysis.ch08_config import PUBLISHED_ROPE, published_wavelengths
    from posenc_lib.viz.ch08_layout import published_wavelengths as figure

    lengths = {e.model: e.config["max_position_embeddings"] for e in PUBLISHED_ROPE}
    return figure(published_wavelengths(), lengths)


def ch08_row_sources():
    from posenc_lib.analysis.ch06_rope import layout_permutation
    from posenc_lib.viz.ch08_layout import row_sources

    source = (torch.arange(2)[:, None] * 64 + layout_permutation(64)).flatten()
    return row_sources(source, head_dim=64, heads=2)


def ch08_attention_layouts():
    from posenc_lib.i18n import tr
    from posenc_lib.viz.ch08_layout import attention_layouts

    tokens = ["The", " capital", " of", " France", " is", " Paris", "."]
    own = torch.ones(7, 7).tril() * _rand(7, 7)
    wrong = torch.ones(7, 7).tril() * _rand(7, 7, seed=1)
    return attention_layouts(
        {tr("the model's own"): own / own.sum(-1, keepdim=True),
         tr("GGUF W, half (wrong)"): wrong / wrong.sum(-1, keepdim=True)},
        tokens,
    )  # fmt: skip


def ch08_angle_errors():
    from posenc_lib import rope_inv_freq
    from posenc_lib.analysis import ch08_precision
    from posenc_lib.viz.ch08_layout import angle_errors

    inv_freq = rope_inv_freq(64, 100000.0, dtype=torch.float64)[0]
    positions = torch.arange(1, 8192)
    worst = {
        r: ch08_precision.worst_angle_error(positions, inv_freq, r) for r in ch08_precision.RECIPES
    }
    return angle_errors(positions, worst)


def ch08_perplexity_by_position():
    from posenc_lib.viz.ch08_long import perplexity_by_position

    return perplexity_by_position()


def ch08_passkey_grid():
    from posenc_lib.viz.ch08_long import passkey_grid

    return passkey_grid()


def ch08_copy_losses():
    from posenc_lib.viz.ch08_long import copy_losses

    return copy_losses()


FIGURES = {name: fn for name, fn in dict(globals()).items() if name.startswith("ch0")}


@pytest.fixture(params=["en", "zh"])
def language(request):
    i18n.set_language(request.param)
    yield request.param
    i18n.set_language("en")


@pytest.mark.parametrize("name", sorted(FIGURES))
def test_every_figure_is_legible(name, language):
    fig = FIGURES[name]()
    try:
        problems = audit(fig)
    finally:
        plt.close(fig)
    assert not problems, f"{name} ({language}):\n  " + "\n  ".join(problems)


@pytest.mark.parametrize("name", sorted(DASHBOARDS))
def test_every_dashboard_is_legible_at_its_default_state(name, language):
    dashboard = DASHBOARDS[name]()
    try:
        problems = audit(dashboard.figure)
    finally:
        plt.close(dashboard.figure)
    assert not problems, f"{name} ({language}):\n  " + "\n  ".join(problems)


def test_every_figure_a_lecture_draws_is_audited():
    """A lecture's or deep dive's figure cell calls one viz function: each such function has a
    case above."""
    import ast
    import inspect
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    public = set()
    for module in sorted((root / "posenc_lib" / "viz").glob("ch*.py")):
        for node in ast.parse(module.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("_"):
                public.add(node.name)
    called = set()
    for notebook in sorted((root / "notebooks").glob("**/*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] == "code":
                source = "".join(cell["source"])
                called |= {n for n in public if re.search(rf"\b{n}\(", source)}
    audited = "\n".join(inspect.getsource(build) for build in FIGURES.values())
    dashboards = {"order_dashboard", "table_dashboard", "sinusoid_dashboard", "wave_dashboard",
                  "bucket_dashboard", "alibi_dashboard", "rope_dashboard", "scaling_dashboard",
                  "long_context_dashboard"}  # fmt: skip
    missing = sorted(n for n in called - dashboards if not re.search(rf"\b{n}\b", audited))
    assert missing == [], f"figure functions the lectures call with no case here: {missing}"


def test_the_audit_finds_spilled_text_lookalike_lines_and_a_hidden_curve():
    fig = new_figure(3, 2)
    ax = fig.subplots()
    ax.plot([0, 1], [0, 1], color="tab:red", label="a")
    ax.plot([0, 1], [1, 0], color="tab:brown", label="b")  # 16 apart in CIEDE2000
    ax.plot([0, 1], [0, 1], color="tab:blue", label="c")  # on top of a, as wide
    ax.set_ylabel("a label far longer than the axes are tall, so it leaves the canvas")
    try:
        problems = audit(fig)
    finally:
        plt.close(fig)
    assert any(p.startswith("text outside the figure: 'a label far") for p in problems)
    assert any("'a' and 'b' are both" in p for p in problems)
    assert any("'a' is hidden under 'c'" in p for p in problems)


def test_ciede2000_matches_the_published_test_pairs():
    # Sharma, Wu and Dalal (2005), Table 1, pairs 1, 7 and 17.
    pairs = [
        ((50.0, 2.6772, -79.7751), (50.0, 0.0, -82.7485), 2.0425),
        ((50.0, 0.0, 0.0), (50.0, -1.0, 2.0), 2.3669),
        ((50.0, 2.5, 0.0), (73.0, 25.0, -18.0), 27.1492),
    ]
    for lab_1, lab_2, expected in pairs:
        assert delta_e_2000(lab_1, lab_2) == pytest.approx(expected, abs=1e-4)
