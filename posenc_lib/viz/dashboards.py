"""Dashboards: controls wired to a math function and a figure that redraws in place.

Each dashboard is one function returning a ``Dashboard``. Moving a control calls the math function
with every control's value, hands the result to the figure's ``update`` (``set_data`` on existing
artists) and asks the canvas to redraw; nothing is re-created. Under ``%matplotlib widget`` the canvas
is a live ipympl widget. Displayed, a dashboard also carries a PNG of its figure, so a notebook read
without a kernel (on GitHub, or in a browser before the cells run) still shows the figure.

Tests and benchmarks drive a dashboard without a browser: ``dash.set(order=...)`` or
``dash.controls["order"].value = ...`` runs exactly what a slider move runs.

Imports point one way: widgets -> plotting -> math.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import math
import re
from collections.abc import Callable, Iterator

import ipywidgets as W

from posenc_lib import _validate as validate
from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.analysis.ch01_order import reorder_experiment
from posenc_lib.analysis.ch02_naive import TABLES, table_view
from posenc_lib.analysis.ch03_sinusoid import sinusoid_view
from posenc_lib.analysis.ch04_relative import bucket_view
from posenc_lib.analysis.ch05_alibi import MAX_VIEW_POSITIONS, alibi_view
from posenc_lib.analysis.ch06_rope import random_query_key, rotation_view, score_bound
from posenc_lib.analysis.ch07_scaling import METHODS as SCALING_METHODS
from posenc_lib.analysis.ch07_scaling import scaling_view
from posenc_lib.bounds import bound
from posenc_lib.models.results import load_results
from posenc_lib.viz import figures as plotting


class Dashboard:
    """Controls, a readout line and a figure; every control change redraws the figure in place.

    controls: name -> ipywidgets control; ``compute(**values)`` is called with every control's value.
    make_plot(result, fig) -> an object with ``update(result)``.
    readout(result) -> an HTML string shown above the figure.
    """

    def __init__(
        self,
        title: str,
        controls: dict[str, W.ValueWidget],
        compute: Callable,
        make_plot: Callable,
        readout: Callable,
        figsize: tuple[float, float],
    ):
        self.title = title
        self.controls = controls
        self._compute = compute
        self._readout = readout
        self.figure = plotting.new_figure(*figsize)
        self.result = compute(**self.values())
        self.plot = make_plot(self.result, self.figure)
        # Lay the figure out once, then freeze it: constrained layout on every redraw would cost
        # half of each redraw, and the axes need not move when a slider does.
        self.figure.draw_without_rendering()
        self.figure.set_layout_engine("none")
        self.readout = W.HTML(readout(self.result))
        self.changes = 0  # how many control changes have redrawn the figure
        canvas = self.figure.canvas
        if self.live:
            canvas.header_visible = False
            canvas.footer_visible = False
            canvas.toolbar_visible = False
            canvas.resizable = False
            figure_view = [canvas]
        else:  # a plain backend (tests, scripts): the figure is shown as the PNG fallback only
            figure_view = []
        controls_row = W.HBox(list(controls.values()), layout=W.Layout(flex_flow="row wrap"))
        heading = W.HTML(f"<b>{title}</b>")
        self.widget = W.VBox([heading, controls_row, self.readout, *figure_view])
        # CSS classes name the parts for the browser tests (tests/browser) and page styles.
        self.widget.add_class("posenc-dashboard")
        controls_row.add_class("posenc-controls")
        self.readout.add_class("posenc-readout")
        for name, control in controls.items():
            control.add_class(f"posenc-control-{name}")
        if self.live:
            canvas.add_class("posenc-figure")
        for control in controls.values():
            control.observe(self._on_change, names="value")

    @property
    def live(self) -> bool:
        """True under ``%matplotlib widget``: the canvas is an ipympl widget that redraws in place."""
        return isinstance(self.figure.canvas, W.DOMWidget)

    def values(self) -> dict:
        """The current value of every control, by name."""
        return {name: control.value for name, control in self.controls.items()}

    def set(self, **values) -> None:
        """Move controls by name, as a learner would; each change redraws the figure."""
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise ValueError(
                f"{self.title} has no control named {', '.join(unknown)}; "
                f"its controls are {', '.join(self.controls)}."
            )
        for name, value in values.items():
            self.controls[name].value = value

    def _on_change(self, _change) -> None:
        try:
            result = self._compute(**self.values())
        except ValueError as error:  # a setting the math refuses: say so, keep the last picture
            self.readout.value = f'<span style="color: #b42318">{html.escape(str(error))}</span>'
            return
        self.result = result
        self.plot.update(self.result)
        self.readout.value = self._readout(self.result)
        self._redraw()
        self.changes += 1

    def _redraw(self) -> None:
        """Show the changed figure.

        With a browser showing the live canvas (ipympl stops syncing its still image once a view
        says it is initialized), render and send the new frame now: ``draw_idle`` would ask the
        browser to ask the kernel back for it, one more round trip per change (about 10 ms of a
        key press's 80 in Chromium; benchmarks/bench_browser.py). Elsewhere (a notebook executed
        with no browser, a test) ``draw_idle`` costs nothing until someone looks.
        """
        canvas = self.figure.canvas
        if self.live and not getattr(canvas, "syncing_data_url", True):
            canvas.draw()
        else:
            canvas.draw_idle()

    def png(self, caption: bool = False) -> bytes:
        """The figure as it stands, as PNG bytes.

        With ``caption``, a line under the figure gives each control's value and the readout: the
        still image shown where widgets cannot run then says what it is a picture of.
        """
        buffer = io.BytesIO()
        if not caption:
            self.figure.savefig(buffer, format="png", dpi=self.figure.dpi)
            return buffer.getvalue()
        settings = ", ".join(
            f"{c.description or n} = {_shown(c)}" for n, c in self.controls.items()
        )
        readout = html.unescape(re.sub(r"<[^>]+>", "", self.readout.value))
        text = self.figure.text(
            0.01, -0.02, f"Still image. {settings}\n{readout}", va="top", fontsize=9, wrap=True
        )
        try:
            self.figure.savefig(buffer, format="png", dpi=self.figure.dpi, bbox_inches="tight")
        finally:
            text.remove()
        return plotting.compact_png(buffer.getvalue())

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        bundle["image/png"] = base64.b64encode(self.png(caption=True)).decode("ascii")
        bundle["text/plain"] = (
            f"{self.title} (a live dashboard: run the notebook in JupyterLab to move its controls)"
        )
        return bundle

    def sweep(self, n_changes: int) -> Iterator[tuple[str, object]]:
        """(control name, new value) pairs that move every control in turn, ``n_changes`` in all.

        Sliders step through their range, dropdowns through their options, checkboxes toggle; each
        pair differs from the control's value at that moment, so every step is a real change.
        """
        current = self.values()
        cycles = {name: _values_to_visit(c) for name, c in self.controls.items()}
        names = itertools.cycle(self.controls)
        for _ in range(n_changes):
            name = next(names)
            value = next(cycles[name])
            while value == current[name]:
                value = next(cycles[name])
            current[name] = value
            yield name, value


def _shown(control) -> str:
    """A control's value as a reader would name it: a dropdown's label, on/off for a checkbox."""
    if isinstance(control, W.Checkbox):
        return "on" if control.value else "off"
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.SelectionSlider)):
        return str(control.label)
    return f"{control.value:g}" if isinstance(control.value, float) else str(control.value)


def _values_to_visit(control) -> Iterator:
    if isinstance(control, W.Checkbox):
        return itertools.cycle([True, False])
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.SelectionSlider)):
        return itertools.cycle([value for _, value in control.options])
    if isinstance(control, (W.FloatLogSlider,)):
        lo, hi = control.min, control.max
        steps = [control.base ** (lo + (hi - lo) * k / 7) for k in range(8)]
        return itertools.cycle(steps + steps[-2:0:-1])
    if isinstance(control, (W.IntSlider, W.FloatSlider)):
        span = control.max - control.min
        steps = [control.min + span * k / 7 for k in range(8)]
        if isinstance(control, W.IntSlider):
            steps = [round(s) for s in steps]
        return itertools.cycle(steps + steps[-2:0:-1])
    raise TypeError(f"no sweep for a {type(control).__name__} control")


_AUTO = W.Layout(width="auto", margin="0 16px 0 0")
# A dropdown as wide as its label and longest option, at any font size (a fixed width cut the
# chosen option off in the classroom demo, whose fonts are larger: tests/browser checks).
_FIT = W.Layout(width="auto")

# -- the dashboards -----------------------------------------------------------------------------------


def order_dashboard(sentence: str = "dog bites man") -> Dashboard:
    """Chapter 1: reorder a sentence and watch attention's rows and columns move with the words.

    Controls: the word order; positions on/off and their strength; a causal mask.
    """
    words = tuple(sentence.split())
    orders = list(itertools.permutations(range(len(words))))
    if len(orders) > 24:
        raise ValueError(f"order_dashboard takes at most 4 words, got {len(words)}: {sentence!r}.")
    style = {"description_width": "initial"}
    controls = {
        "order": W.Dropdown(
            options=[(" ".join(words[i] for i in o), o) for o in orders],
            value=orders[-1],  # reversed: the still image then shows a real reordering
            description="word order",
            style=style,
            layout=_FIT,
        ),
        "positions": W.Checkbox(
            value=False, description="add position vectors", indent=False, layout=_AUTO
        ),
        # A log scale from 0.01 to 10**0.5 = 3.16 in quarter decades: it reaches every strength
        # the lecture measures (0.01, 0.1, 1), and the small ones are not crowded into one end.
        "strength": W.FloatLogSlider(
            value=1.0,
            base=10,
            min=-2,
            max=0.5,
            step=0.25,
            description="position strength",
            style=style,
            disabled=True,
        ),
        "causal": W.Checkbox(value=False, description="causal mask", indent=False, layout=_AUTO),
    }
    # The strength slider only means something with positions on: grey it out otherwise.
    W.dlink((controls["positions"], "value"), (controls["strength"], "disabled"), lambda on: not on)

    def compute(order, positions, strength, causal):
        return reorder_experiment(words, order, strength if positions else 0.0, causal)

    def readout(result):
        verdict = (
            "the outputs only moved with their words: attention cannot tell the order"
            if result.max_deviation < 1e-5
            else "the outputs changed: the model can tell the orders apart"
        )
        return (
            f"largest |Attn(PX) &minus; P&middot;Attn(X)|: <b>{bound(result.max_deviation)}</b>; "
            f"sentence vector (mean of outputs) changed by <b>{bound(result.pooled_gap)}</b> "
            f"&rarr; {verdict}"
        )

    return Dashboard(
        f'Reorder "{sentence}"', controls, compute, plotting.OrderPlot, readout, (9.6, 3.0)
    )


def wave_dashboard(n_positions: int = 64, d_model: int = 32) -> Dashboard:
    """Start page: a slider picks a position; the figure marks it and shows its sinusoidal vector."""
    style = {"description_width": "initial"}
    controls = {
        "position": W.IntSlider(
            value=3, min=0, max=n_positions - 1, description="position t", style=style
        ),
        "base": W.FloatLogSlider(
            value=10000, base=10, min=1, max=5, step=0.25, description="base", style=style
        ),
    }

    def compute(position, base):
        return sinusoidal_encoding(n_positions, d_model, base), position

    def readout(result):
        table, position = result
        values = ", ".join(f"{v:+.2f}" for v in table[position, :4].tolist())
        return f"PE<sub>{position}</sub> starts ({values}, ...)"

    return Dashboard(
        "Move the slider: the black line and the vector follow",
        controls,
        compute,
        plotting.WavePlot,
        readout,
        (8.0, 2.6),
    )


def table_dashboard(d_model: int = 8, max_positions: int = 256) -> Dashboard:
    """Chapter 2: pick a table and a sequence length; see the table and how far apart neighbours are.

    Controls: the table (integer, normalized, binary, and chapter 3's sinusoidal for comparison),
    the sequence length T, and a marked position. The readout gives the numbers the chapter asks
    about: the largest |value|, the shortest and longest neighbour step, the step from 2 to 3.
    """
    d_model = validate.even_int("d_model", d_model, "the sinusoidal table is built from pairs.")
    max_positions = validate.positive_int("max_positions", max_positions, maximum=2**d_model)
    if max_positions < 4:
        raise ValueError(f"max_positions must be at least 4, got {max_positions}.")
    style = {"description_width": "initial"}
    labels = {"integer": "integer t", "normalized": "normalized t/(T-1)", "binary": "binary bits"}
    labels["sinusoidal"] = "sinusoidal (chapter 3)"
    controls = {
        "name": W.Dropdown(
            options=[(labels.get(name, name), name) for name in TABLES],
            value="binary",
            description="table",
            style=style,
            layout=_FIT,
        ),
        "n_positions": W.IntSlider(
            value=min(64, max_positions),
            min=4,
            max=max_positions,
            description="sequence length T",
            style=style,
        ),
        "position": W.IntSlider(
            value=min(31, max_positions - 1),
            min=0,
            max=max_positions - 1,
            description="position t",
            style=style,
        ),
    }

    def compute(name, n_positions, position):
        return table_view(name, n_positions, d_model, position)

    def readout(view):
        steps = view.distances.tolist()  # (T-1,): step t is ||PE_t+1 - PE_t||, the right panel
        longest = max(range(len(steps)), key=steps.__getitem__)
        clamped = f" (slider past the end: showing t = {view.position})" if view.clamped else ""
        return (
            f"max |value| = <b>{view.max_abs:.3g}</b>; neighbour step "
            f"||PE(t+1) &minus; PE(t)|| (right panel): shortest "
            f"<b>{min(steps):.3g}</b>, longest <b>{steps[longest]:.3g}</b> (t = {longest} &rarr; "
            f"{longest + 1}, the panel's peak), longest / shortest "
            f"<b>{steps[longest] / max(min(steps), 1e-12):.3g}</b>; "
            f"||PE(3) &minus; PE(2)|| = <b>{steps[2]:.3g}</b>{clamped}"
        )

    def make_plot(view, fig):
        limits = {**plotting.TABLE_COLOUR_LIMITS, "integer": float(max_positions - 1)}
        return plotting.TablePlot(view, fig, 1.06 * d_model**0.5, limits)

    return Dashboard(
        "Naive position tables: values and neighbour steps",
        controls,
        compute,
        make_plot,
        readout,
        (9.6, 3.0),
    )


# Renard's R20 series of preferred numbers (ISO 3): 20 steps a decade, value k within 1.3% of
# 10^(k/20), so the steps are even on a log scale (x1.10 to x1.14), with labels of 3 digits at most.
_R20 = tuple(
    map(float, "1 1.12 1.25 1.4 1.6 1.8 2 2.24 2.5 2.8 3.15 3.55 4 4.5 5 5.6 6.3 7.1 8 9".split())
)


def _preferred_numbers(low: float, high: float) -> list[tuple[str, float]]:
    """(label, value) pairs of the R20 series from low to high, for a SelectionSlider on a log scale."""
    values = [round(m * 10**e, 6) for e in range(-3, 10) for m in _R20]
    return [(f"{v:,g}", v) for v in values if low <= v <= high]


def sinusoid_dashboard(n_positions: int = 128, horizon: int = 4096) -> Dashboard:
    """Chapter 3: base, d_model, a position t and an offset k; the table, PE_t, the dot product
    against every offset and the wavelength ladder follow, and the readout gives the numbers."""
    n_positions = validate.positive_int("n_positions", n_positions, maximum=1024)
    if n_positions < 8:
        raise ValueError(f"n_positions must be at least 8, got {n_positions}.")
    style = {"description_width": "initial"}
    reach = min(100, n_positions - 1)
    controls = {
        "base": W.SelectionSlider(  # even steps on a log scale, 20 a decade, with round labels
            options=_preferred_numbers(1.25, 1e5), value=10000.0, description="base", style=style
        ),
        "d_model": W.IntSlider(
            value=64, min=8, max=128, step=8, description="d_model", style=style
        ),
        "position": W.IntSlider(
            value=20, min=0, max=n_positions - 1, description="position t", style=style
        ),
        "offset": W.IntSlider(value=8, min=-reach, max=reach, description="offset k", style=style),
    }

    def compute(base, d_model, position, offset):
        d_model = max(2, 2 * round(d_model / 2))  # an even width, whatever a script sets
        return sinusoid_view(n_positions, d_model, base, position, offset, horizon)

    def readout(view):
        d, confusion = view.table.shape[1], view.confusion
        verdict = (
            f"first confusion at k = <b>{confusion.first_offset}</b>"
            if confusion.first_offset is not None
            else "none confused"
        )
        return (
            f"D = {d}: longest wavelength <b>{float(view.wavelengths[-1]):,.0f}</b> "
            f"(not 2&pi;&middot;base = {2 * math.pi * view.base:,.0f}); "
            f"&lang;PE<sub>t</sub>, PE<sub>t+k</sub>&rang; = <b>{view.dot:.2f}</b> of D/2 = "
            f"{d // 2} at k = {view.offset}, for every t; positions 0..{view.horizon - 1}: "
            f"closest non-neighbour dist(k)/dist(1) = <b>{confusion.margin:.2f}</b> "
            f"(k = {confusion.closest_offset}), {verdict}"
        )

    return Dashboard(
        "Sinusoidal encoding: base, width, position and offset",
        controls,
        compute,
        plotting.SinusoidPlot,
        readout,
        (9.6, 4.2),
    )


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
            value=True, description="bidirectional (encoder)", indent=False, layout=_AUTO
        ),
    }

    def compute(num_buckets, max_distance, bidirectional):
        return bucket_view(num_buckets, max_distance, bidirectional, n_positions)

    def readout(view):
        side = "each side" if view.bidirectional else "keys before the query"
        future = "" if view.bidirectional else "; every key after the query shares bucket 0"
        raised = (
            f" (max_distance raised to {view.max_distance}: it must exceed the exact range)"
            if view.raised
            else ""
        )
        return (
            f"{side}: distances 0..{view.exact - 1} get a bucket each, the last bucket starts at "
            f"distance <b>{view.last_start}</b>{future}; this {n_positions} &times; {n_positions} "
            f"bias uses <b>{view.used}</b> of {view.num_buckets} learned numbers{raised}"
        )

    return Dashboard(
        "T5 buckets: which offsets share a learned bias",
        controls,
        compute,
        plotting.BucketPlot,
        readout,
        (9.6, 3.0),
    )


def rope_dashboard(head_dim: int = 16, max_position: int = 127, seed: int = 0) -> Dashboard:
    """Chapter 6: rotate a query to position m and a key to n; watch one pair turn on the unit
    circle and the score follow m - n only.

    Controls: m, n, the base, and which pair to draw. q and k are fixed random vectors (``seed``).
    The readout gives the pair's angles and the score, which equals the curve at m - n.
    """
    d = validate.even_int("head_dim", head_dim, "RoPE rotates the dims in pairs.")
    top = validate.positive_int("max_position", max_position, maximum=4096)
    q, k = random_query_key(d, seed)  # (D,) each, float64
    style = {"description_width": "initial"}
    controls = {
        "m": W.IntSlider(value=10, min=0, max=top, description="query position m", style=style),
        "n": W.IntSlider(value=3, min=0, max=top, description="key position n", style=style),
        "base": W.FloatLogSlider(
            value=10000, base=10, min=1, max=6, step=0.25, description="base", style=style
        ),
        "pair": W.IntSlider(value=1, min=0, max=d // 2 - 1, description="pair i", style=style),
    }

    def compute(m, n, base, pair):
        return rotation_view(q, k, m, n, base, pair, max_offset=top)

    def readout(view):
        turn = math.remainder((view.m - view.n) * view.theta, 2 * math.pi)  # in [-pi, pi]
        at_offset = float(view.curve[view.m - view.n + top])
        return (
            f"pair {view.pair}: &theta; = {view.theta:.3g} rad per position; q turned by "
            f"m&theta; = {view.m * view.theta:.3g}, k by n&theta; = {view.n * view.theta:.3g}: "
            f"the angle between them changed by (m &minus; n)&theta; = {turn:+.3f} (mod 2&pi;). "
            f"Score &lang;R_m q, R_n k&rang; = <b>{view.score:.4f}</b>; the curve at "
            f"m &minus; n = {view.m - view.n}: <b>{at_offset:.4f}</b>"
        )

    def make_plot(view, fig):  # a fixed score axis: the largest score any offset can reach
        return plotting.RopePlot(view, fig, limit=1.05 * score_bound(q, k))

    return Dashboard(
        "RoPE: rotate q to m and k to n; the score depends on m - n only",
        controls,
        compute,
        make_plot,
        readout,
        (8.0, 2.8),
    )


def alibi_dashboard(max_heads: int = 64) -> Dashboard:
    """Chapter 5: the number of heads, one head and the sequence length -> every head's slope, that
    head's bias matrix, and the last query's attention weights on random content with and without
    ALiBi. The readout gives the head's slope, its window (the distance at which the bias costs a
    factor of 10) and how much of the weight stays inside it.
    """
    max_heads = validate.positive_int("max_heads", max_heads, maximum=2**16)
    style = {"description_width": "initial"}
    controls = {
        "num_heads": W.IntSlider(
            value=min(8, max_heads), min=1, max=max_heads, description="heads H", style=style
        ),
        "head": W.IntSlider(
            value=min(5, max_heads), min=1, max=max_heads, description="head h", style=style
        ),
        "n_positions": W.IntSlider(
            value=256, min=16, max=MAX_VIEW_POSITIONS, step=16, description="length T", style=style
        ),
    }

    def compute(num_heads, head, n_positions):
        return alibi_view(num_heads, head - 1, n_positions)  # the slider counts heads from 1

    def readout(view):
        slope = float(view.slopes[view.head])
        clamped = f" (only {view.num_heads} heads: showing the last)" if view.clamped else ""
        longer = view.window > len(view.weights_alibi)  # the window reaches past the first token
        beyond = " &ndash; longer than the sequence" if longer else ""
        return (
            f"head <b>{view.head + 1}</b> of {view.num_heads}{clamped}: m = 2^&minus;"
            f"{-math.log2(slope):.3g} = <b>{slope:.3g}</b>; weight &divide;10 every "
            f"<b>{view.window:.1f}</b> tokens{beyond}; last query's weight within that window: "
            f"<b>{view.near_alibi:.0%}</b> with ALiBi, <b>{view.near_content:.0%}</b> without"
        )

    return Dashboard(
        "ALiBi: slopes, one head's bias, and a row of attention",
        controls,
        compute,
        plotting.AlibiPlot,
        readout,
        (9.6, 3.0),
    )


def scaling_dashboard(results: dict | None = None) -> Dashboard:
    """Chapter 7: a RoPE scaling, its factor s, the base and the training length L -> each pair's
    wavelength against L, every method's new frequencies, YaRN's ramp and attention scale, and the
    experiment's perplexity curve for the chosen method and factor.

    ``results``: the experiment's results (default: ``extrapolation.load_results()``). The curves
    were measured for base 10000 and L = 64 (head_dim 32) only; the readout says so otherwise.
    """
    results = load_results() if results is None else results
    style = {"description_width": "initial"}
    labels = {"PI": "Position Interpolation", "NTK": "NTK-aware", "dynamic": "dynamic NTK"}
    controls = {
        "method": W.Dropdown(
            options=[(labels.get(m, m), m) for m in SCALING_METHODS],
            value="PI",
            description="scaling",
            style=style,
            layout=_FIT,
        ),
        "factor": W.ToggleButtons(
            options=[("s = 2", 2), ("s = 4", 4), ("s = 8", 8)],
            value=4,
            style={"button_width": "4em"},  # 52 px in JupyterLab; grows with the demo's font
        ),
        "base": W.FloatLogSlider(
            value=10000, base=10, min=2, max=6, step=0.25, description="base", style=style
        ),
        "train_len": W.IntSlider(
            value=64, min=16, max=1024, step=16, description="training length L", style=style
        ),
    }

    def compute(method, factor, base, train_len):
        return scaling_view(method, factor, base, train_len, results)

    def readout(view):
        n_pairs = len(view.wavelengths)
        ratios = view.ratios[view.method]
        text = (
            f"<b>{view.full_turn}</b> of {n_pairs} pairs turn a full circle within L = "
            f"{view.train_len}. {labels.get(view.method, view.method)}, s = {view.factor:g}: "
            f"pair 0's frequency &times;<b>{float(ratios[0]):.3g}</b>, the last pair's "
            f"&times;<b>{float(ratios[-1]):.3g}</b>"
        )
        if view.method == "YaRN":
            text += (
                f"; attention scale &radic;(1/t) = 0.1 ln s + 1 = <b>{view.attention_scale:.3f}</b> "
                f"(logits &times;{view.attention_scale**2:.3f})"
            )
        if view.method == "dynamic":
            text += (
                " (factor 1, as in the experiment: at length T its stretch is"
                " 1&middot;T/L &minus; (1 &minus; 1) = T/L, drawn at T = sL; one measured curve)"
            )
        if view.scaled is not None:
            text += (
                f". Perplexity at L / 8L: <b>{view.scaled[0]:.2f}</b> / <b>{view.scaled[-1]:.2f}</b>"
                f" (plain RoPE {view.plain[0]:.2f} / {view.plain[-1]:.2f})"
            )
        if view.finetuned is not None:
            text += f"; fine-tuned at 4L: <b>{view.finetuned[2]:.2f}</b> at 4L"
            if view.control is not None:
                text += f" (plain RoPE fine-tuned the same way: <b>{view.control[2]:.2f}</b>)"
        if not view.measured:
            text += (
                '. <span style="color: #b42318">The perplexity curves were measured for base '
                "10000 and L = 64 only: they do not change with these settings.</span>"
            )
        return text

    return Dashboard(
        "RoPE scalings: each pair's frequency, YaRN's ramp and the perplexity they give",
        controls,
        compute,
        plotting.ScalingPlot,
        readout,
        (9.6, 3.0),
    )


# Every dashboard of the course, by name: the benchmark and the tests loop over this.
DASHBOARDS: dict[str, Callable[[], Dashboard]] = {
    "start: sinusoidal position slider": wave_dashboard,
    "ch01: reorder a sentence": order_dashboard,
    "ch02: naive position tables": table_dashboard,
    "ch03: sinusoidal base, width and offset": sinusoid_dashboard,
    "ch04: T5 buckets and bias": bucket_dashboard,
    "ch05: ALiBi slopes, bias and attention": alibi_dashboard,
    "ch06: rotate q and k": rope_dashboard,
    "ch07: RoPE scalings, pair by pair": scaling_dashboard,
}
