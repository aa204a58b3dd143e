"""The dashboard machinery: controls wired to a measurement and a figure that redraws in place.

A dashboard is one function (in its chapter's module, ``viz/chNN_*.py``) returning a
``Dashboard``. Moving a control calls the measurement with every control's value, hands the
result to the figure's ``update`` (``set_data`` on existing artists) and asks the canvas to redraw;
nothing is re-created. Under ``%matplotlib widget`` the canvas is a live ipympl widget. Displayed,
a dashboard also carries a PNG of its figure, so a notebook read without a kernel (on GitHub, or in
a browser before the cells run) still shows the figure. Every dashboard is listed once, in
``viz/registry.py``.

Tests and benchmarks drive a dashboard without a browser: ``dash.set(order=...)`` or
``dash.controls["order"].value = ...`` runs exactly what a slider move runs.

Imports point one way: dashboards -> figures -> measurements -> math.
"""

from __future__ import annotations

import base64
import html
import io
import itertools
import re
from collections.abc import Callable, Iterator

import ipywidgets as W

from posenc_lib.i18n import _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable
from posenc_lib.viz.figures import compact_png, new_figure


class Dashboard:
    """Controls, a readout line and a figure; every control change redraws the figure in place.

    title: the dashboard's name (marked ``N_`` where it is defined: shown in the language in use).
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
        self.figure = new_figure(*figsize)
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
        heading = W.HTML(f"<b>{self.shown_title}</b>")
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
    def shown_title(self) -> str:
        """The title in the language in use (``title`` is the English, marked ``N_``)."""
        return translate(self.title)

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
                tr(
                    "{title} has no control named {unknown}; its controls are {controls}.",
                    title=self.shown_title,
                    unknown=", ".join(unknown),
                    controls=", ".join(self.controls),
                )
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
        settings = _(", ").join(
            f"{translate(c.description) if c.description else n} = {_shown(c)}"
            for n, c in self.controls.items()
        )
        readout = caption_text(self.readout.value)
        caption = tr("Still image. {settings}", settings=settings) + f"\n{readout}"
        text = self.figure.text(0.01, -0.02, caption, va="top", fontsize=9, wrap=True)
        try:
            self.figure.savefig(buffer, format="png", dpi=self.figure.dpi, bbox_inches="tight")
        finally:
            text.remove()
        return compact_png(buffer.getvalue())

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs) or {}
        bundle["image/png"] = base64.b64encode(self.png(caption=True)).decode("ascii")
        bundle["text/plain"] = tr(
            "{title} (a live dashboard: run the notebook in JupyterLab to move its controls)",
            title=self.shown_title,
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
        for _step in range(n_changes):
            name = next(names)
            value = next(cycles[name])
            while value == current[name]:
                value = next(cycles[name])
            current[name] = value
            yield name, value


# Unicode sub- and superscripts (DejaVu Sans, matplotlib's default font, has every one of them).
_SUBSCRIPTS = dict(
    zip("0123456789+-=()aehijklmnoprstuvx", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₕᵢⱼₖₗₘₙₒₚᵣₛₜᵤᵥₓ", strict=True)
)
_SUPERSCRIPTS = dict(zip("0123456789+-=()in", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁱⁿ", strict=True))


def caption_text(readout: str) -> str:
    """A readout's HTML as plain text for the still image's caption: PE<sub>t+k</sub> as PEₜ₊ₖ
    (or PE_(...) where a character has no subscript form), x<sup>2</sup> as x², entities as
    characters (&lang; as ⟨), other tags dropped.

    Stripping the tags alone would print PE<sub>t</sub> as "PEt", a different name. Unicode, not
    mathtext: a string with mathtext in it is drawn in the math font, which has no Chinese.
    """

    def script(table: dict, mark: str):
        def replace(match) -> str:
            inner = html.unescape(re.sub(r"<[^>]+>", "", match.group(1))).replace(" ", "")
            if all(c in table for c in inner):
                return "".join(table[c] for c in inner)
            return f"{mark}{inner}" if len(inner) == 1 else f"{mark}({inner})"

        return replace

    text = re.sub(r"<sub>(.*?)</sub>", script(_SUBSCRIPTS, "_"), readout)
    text = re.sub(r"<sup>(.*?)</sup>", script(_SUPERSCRIPTS, "^"), text)
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def _shown(control) -> str:
    """A control's value as a reader would name it: a dropdown's label, on/off for a checkbox."""
    if isinstance(control, W.Checkbox):
        return _("on") if control.value else _("off")
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.SelectionSlider)):
        return str(control.label)
    return f"{control.value:g}" if isinstance(control.value, float) else str(control.value)


def choices(control) -> list[tuple[str, object]]:
    """Every value a control can take, in order, as (label as a reader sees it, value) pairs.

    Sliders give each step from min to max, dropdowns and selection sliders their options,
    checkboxes off and on (labels in the language in use). The static website
    (tools/site_frames.py) renders a frame per choice.
    """
    if isinstance(control, W.Checkbox):
        return [(_("off"), False), (_("on"), True)]
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons, W.SelectionSlider)):
        return [(str(label), value) for label, value in control.options]
    if isinstance(control, (W.FloatLogSlider, W.IntSlider, W.FloatSlider)):
        count = round((control.max - control.min) / control.step) + 1
        steps = [control.min + k * control.step for k in range(count)]  # a log slider's exponents
        if isinstance(control, W.FloatLogSlider):
            values = [float(f"{control.base**s:.12g}") for s in steps]
        elif isinstance(control, W.IntSlider):
            values = [int(s) for s in steps]
        else:
            values = [float(f"{s:.12g}") for s in steps]
        return [(f"{v:g}" if isinstance(v, float) else str(v), v) for v in values]
    raise TypeError(f"no list of values for a {type(control).__name__} control")


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


# Controls as wide as their contents: a checkbox with room after it, and a dropdown as wide as its
# label and longest option, at any font size (a fixed width cut the chosen option off in the
# classroom demo, whose fonts are larger: tests/browser checks).
AUTO_WIDTH = W.Layout(width="auto", margin="0 16px 0 0")
FIT_WIDTH = W.Layout(width="auto")


def dropdown(description: str, options: list[tuple[str, object]], value) -> W.Dropdown:
    """A dropdown labelled in full and as wide as its longest option: ``options`` are
    (label, value) pairs."""
    return W.Dropdown(
        options=options,
        value=value,
        description=description,
        style={"description_width": "initial"},
        layout=FIT_WIDTH,
    )
