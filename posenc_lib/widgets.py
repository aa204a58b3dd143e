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
import re
from collections.abc import Callable, Iterator

import ipywidgets as W

from . import plotting
from .absolute import sinusoidal_encoding
from .toy import reorder_experiment


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
        self.figure.canvas.draw_idle()
        self.changes += 1

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
        return buffer.getvalue()

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
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons)):
        return str(control.label)
    return f"{control.value:g}" if isinstance(control.value, float) else str(control.value)


def _values_to_visit(control) -> Iterator:
    if isinstance(control, W.Checkbox):
        return itertools.cycle([True, False])
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons)):
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
            layout=W.Layout(width="240px"),
        ),
        "positions": W.Checkbox(
            value=False, description="add position vectors", indent=False, layout=_AUTO
        ),
        "strength": W.FloatSlider(
            value=1.0,
            min=0.1,
            max=2.0,
            step=0.1,
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
            f"largest |Attn(PX) &minus; P&middot;Attn(X)| = <b>{result.max_deviation:.1e}</b>; "
            f"sentence vector (mean of outputs) changed by <b>{result.pooled_gap:.1e}</b> "
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


# Every dashboard of the course, by name: the benchmark and the tests loop over this.
DASHBOARDS: dict[str, Callable[[], Dashboard]] = {
    "start: sinusoidal position slider": wave_dashboard,
    "ch01: reorder a sentence": order_dashboard,
}
