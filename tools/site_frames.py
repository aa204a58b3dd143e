"""Live dashboards on the static website: every frame drawn at build time, looked up in the page.

The site has no kernel, so a dashboard cannot compute when a reader moves a control. Instead,
``make site`` drives each dashboard of ``viz/registry.py`` through a grid of control values with
``Dashboard.set`` (exactly what a slider move runs), saves each figure as a WebP file and each
readout as its HTML, and the page carries real controls (``<input type=range>``, ``<select>``,
checkboxes, each with a ``<label>``) and ``dashboards/posenc-live.js``, a few lines of plain
JavaScript that show the frame stored for the chosen values. No formula is written twice: the
JavaScript only looks frames up, and works opened from disk (``file://``) as well as served.

``PLANS`` says, per dashboard, which controls are live on the site and which of their values get a
frame: every value of the main control, a few of a second one where it matters; every other
control stays at the dashboard's default, and the page says so (they are live in JupyterLab and in
``make demo``). Frames for a dashboard are its grid's cartesian product, row-major, file
``f0012.webp`` for index 12; a frame identical to an earlier one is stored once.

Budgets (issue 22): a dashboard's frames under about 4 MB, the whole site under about 60 MB,
``make site`` under 3 minutes on 2 cores; ``render_all`` draws on two processes while jupyter-book
builds the pages. ``python -m tools.site_frames`` renders every dashboard into a folder and prints
the figures.

This is authoring (``tools/``): it imports the library; the library never imports it.
"""

from __future__ import annotations

import argparse
import hashlib
import html
import io
import itertools
import json
import os
import re
import shutil
import time
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path

SCRIPT = "posenc-live.js"
FOLDER = (
    "dashboards"  # in the site: dashboards/<key>/f0000.webp, frames.js; dashboards/posenc-live.js
)
MAX_DASHBOARD_BYTES = 4_000_000
WEBP = {"format": "WEBP", "lossless": True, "method": 2}  # sharp text; ~10-25 kB a frame

# Per dashboard (its chapter key in viz/registry.py): control -> the values that get frames. An
# int n is every n-th value of the control counted from its default (1: every value); a tuple
# lists the values (the default is added if missing). Controls not named stay at their default.
PLANS: dict[str, dict[str, int | tuple]] = {
    "start": {"position": 1, "base": (100.0, 10000.0)},
    "01": {"order": 1, "positions": 1, "causal": 1},
    "02": {"name": 1, "n_positions": (4, 8, 16, 32, 64, 128, 256), "position": (3, 31)},
    "03": {"base": 2, "d_model": (16, 64)},
    "04": {"num_buckets": 1, "bidirectional": 1},
    "05": {"head": (1, 2, 3, 4, 5, 6, 7, 8), "n_positions": (64, 256, 1024)},
    "06": {"m": 1},
    "07": {"method": 1, "factor": 1, "train_len": (16, 64, 256, 1024)},
    "08": {"method": 1, "window": 1},
}


@dataclass
class LiveControl:
    """One control as the site shows it: its choices (label, value) and the default's index."""

    name: str
    label: str
    kind: str  # "range", "select" or "checkbox"
    choices: list[tuple[str, object]]
    initial: int


@dataclass
class FramePlan:
    """What the site shows of one dashboard: its live controls, the fixed ones, the first frame."""

    key: str  # "03", or "start"
    name: str  # the DASHBOARDS name
    title: str
    summary: str  # what the figure shows, from the dashboard's docstring
    live: list[LiveControl]
    fixed: list[tuple[str, str]]  # (label, value shown) of the controls left at their default
    readout: str = ""  # the readout HTML at the defaults
    size: tuple[int, int] = (0, 0)  # the figure in pixels

    @property
    def count(self) -> int:
        n = 1
        for control in self.live:
            n *= len(control.choices)
        return n

    @property
    def initial(self) -> int:
        """The row-major index of the frame at every control's default."""
        flat = 0
        for control in self.live:
            flat = flat * len(control.choices) + control.initial
        return flat

    @property
    def folder(self) -> str:
        return f"{FOLDER}/{self.key}"


@dataclass
class Rendered:
    key: str
    frames: int
    files: int
    bytes: int
    seconds: float
    readouts: int
    errors: list[str] = field(default_factory=list)


def _kind(control) -> str:
    import ipywidgets as W

    if isinstance(control, W.Checkbox):
        return "checkbox"
    if isinstance(control, (W.Dropdown, W.ToggleButtons, W.RadioButtons)):
        return "select"
    return "range"


def _label(label: str, value) -> str:
    """A float choice's label with round digits (10,000 rather than 10000; 17.8 not 17.7828)."""
    if isinstance(value, float) and not isinstance(value, bool):
        return f"{value:,.0f}" if value >= 1000 and value == round(value) else f"{value:.3g}"
    return label


def _selected(choices, current, selector, name: str, key: str) -> tuple[list, int]:
    values = [v for _, v in choices]
    default = values.index(current)
    if isinstance(selector, int):
        keep = [i for i in range(len(values)) if (i - default) % selector == 0]
    else:
        missing = [v for v in selector if v not in values]
        if missing:
            raise ValueError(
                f"PLANS[{key!r}][{name!r}] lists {missing}, which the control cannot take; "
                f"its values run {values[0]} .. {values[-1]}."
            )
        keep = sorted({values.index(v) for v in selector} | {default})
    chosen = [(_label(choices[i][0], choices[i][1]), choices[i][1]) for i in keep]
    return chosen, keep.index(default)


def _summary(function) -> str:
    doc = (function.__doc__ or "").strip().split("\n\n")[0]
    doc = re.sub(r"^(Chapter \d+|Start page):\s*", "", " ".join(doc.split()))
    return doc.replace("``", "")


def _matplotlib_off_screen() -> None:
    import matplotlib

    matplotlib.use("agg")


def plan(key: str) -> FramePlan:
    """The frames the site shows for the dashboard of chapter ``key`` ("start", "01" ...)."""
    _matplotlib_off_screen()
    from posenc_lib.i18n import get_language
    from posenc_lib.viz.dashboard import _shown, choices
    from posenc_lib.viz.registry import DASHBOARDS, chapters

    names = chapters()
    if key not in names or key not in PLANS:
        raise ValueError(f"No dashboard plan for chapter {key!r}; PLANS has {', '.join(PLANS)}.")
    name = names[key]
    dash = DASHBOARDS[name]()
    unknown = sorted(set(PLANS[key]) - set(dash.controls))
    if unknown:
        raise ValueError(f"PLANS[{key!r}] names {unknown}, not controls of {name!r}.")
    live, fixed = [], []
    for control_name, control in dash.controls.items():
        label = control.description or control_name
        selector = PLANS[key].get(control_name)
        if selector is not None:
            chosen, initial = _selected(
                choices(control), control.value, selector, control_name, key
            )
            if len(chosen) > 1:
                live.append(LiveControl(control_name, label, _kind(control), chosen, initial))
                continue
        fixed.append((label, _shown(control)))
    width, height = dash.figure.canvas.get_width_height()
    # The docstring says what the figure shows, in English; another edition shows the title.
    summary = _summary(DASHBOARDS[name]) if get_language() == "en" else dash.shown_title
    result = FramePlan(key, name, dash.shown_title, summary, live, fixed, dash.readout.value)
    result.size = (width, height)
    _close(dash)
    return result


def _close(dash) -> None:
    import matplotlib.pyplot as plt

    plt.close(dash.figure)


def _frame_bytes(figure, drawn: bool) -> bytes:
    from PIL import Image

    canvas = figure.canvas
    if not drawn:
        canvas.draw()
    picture = Image.frombuffer("RGBA", canvas.get_width_height(), canvas.buffer_rgba())
    out = io.BytesIO()
    picture.convert("RGB").save(out, **WEBP)
    return out.getvalue()


def render(key: str, out: Path) -> Rendered:
    """Draw every frame of chapter ``key``'s plan into ``out/<key>/``: WebP files and frames.js.

    Walks the grid in row-major order, moving only the controls whose value changes with
    ``Dashboard.set``, as a reader's slider would; then draws the figure and keeps the readout.
    """
    started = time.perf_counter()
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:  # pragma: no cover - the course always has torch
        pass
    the_plan = plan(key)
    from posenc_lib.viz.registry import DASHBOARDS

    dash = DASHBOARDS[the_plan.name]()
    folder = out / the_plan.key
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    seen: dict[str, str] = {}  # digest -> file
    readouts: list[str] = []
    readout_index: dict[str, int] = {}
    frames, errors, total, written = [], [], 0, 0
    current: dict[str, object] = {}
    grid = itertools.product(*(range(len(c.choices)) for c in the_plan.live))
    for flat, indices in enumerate(grid):
        wanted = {c.name: c.choices[i][1] for c, i in zip(the_plan.live, indices, strict=True)}
        changed = {n: v for n, v in wanted.items() if current.get(n, object()) != v}
        before = dash.changes
        dash.set(**changed)
        current = wanted
        # A change redraws the figure (draw_idle draws at once off screen); else draw it here.
        data = _frame_bytes(dash.figure, drawn=dash.changes > before)
        digest = hashlib.sha1(data).hexdigest()
        name = f"f{flat:04d}.webp"
        if digest in seen and flat != the_plan.initial:
            name = seen[digest]
        else:
            seen.setdefault(digest, name)
            (folder / name).write_bytes(data)
            total += len(data)
            written += 1
        readout = dash.readout.value
        if readout.startswith('<span style="color: #b42318">'):  # a setting the math refused
            errors.append(f"{the_plan.key} {wanted}: {readout}")
        if readout not in readout_index:
            readout_index[readout] = len(readouts)
            readouts.append(readout)
        frames.append([name, readout_index[readout]])
    _close(dash)
    from posenc_lib.i18n import _
    from tools.site import LIVE_DRAWN_FOR

    data = {
        "summary": the_plan.summary,
        "alt": _(LIVE_DRAWN_FOR),  # {summary} {settings} {readout}, in the page's language
        "separator": _(", "),
        "fixed": [f"{label} = {shown}" for label, shown in the_plan.fixed],
        "controls": [
            {"id": _control_id(the_plan, c), "label": c.label, "labels": [x for x, _ in c.choices]}
            for c in the_plan.live
        ],
        "frames": frames,
        "readouts": readouts,
    }
    script = (
        "(window.posencFrames = window.posencFrames || {})"
        f"[{json.dumps(the_plan.key)}] = {json.dumps(data, ensure_ascii=False)};\n"
    )
    (folder / "frames.js").write_text(script, encoding="utf-8")
    total += len(script.encode("utf-8"))
    return Rendered(
        key,
        len(frames),
        written,
        total,
        time.perf_counter() - started,
        len(readouts),
        errors,
    )


def _control_id(the_plan: FramePlan, control: LiveControl) -> str:
    return f"posenc-{the_plan.key}-{control.name}".replace("_", "-")


def _worker_setup() -> None:
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ["MPLBACKEND"] = "agg"


class FrameJob:
    """Every plan's frames, drawn on ``workers`` processes in the background; ``wait`` collects.

    The largest plans start first, so the two processes finish together.
    """

    def __init__(self, plans: list[FramePlan], out: Path, workers: int = 2):
        self.out = out
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        ordered = sorted(plans, key=lambda p: -p.count)
        os.environ.setdefault("OMP_NUM_THREADS", "1")  # read by the spawned processes' torch
        self.pool = ProcessPoolExecutor(
            max_workers=max(1, min(workers, len(plans) or 1)),
            mp_context=get_context("spawn"),
            initializer=_worker_setup,
        )
        self.futures: list[Future] = [self.pool.submit(render, p.key, out) for p in ordered]

    def wait(self) -> list[Rendered]:
        try:
            results = [f.result() for f in self.futures]
        finally:
            self.pool.shutdown(cancel_futures=True)
        (self.out / SCRIPT).write_text(LIVE_JS, encoding="utf-8")
        return sorted(results, key=lambda r: list(PLANS).index(r.key))

    def cancel(self) -> None:
        self.pool.shutdown(cancel_futures=True)


def plans_for(keys: list[str] | None) -> list[FramePlan]:
    """The plans of the given chapter keys that have a dashboard (None: every dashboard)."""
    chosen = [k for k in PLANS if keys is None or k in keys]
    return [plan(k) for k in chosen]


CONTROL_STYLE = "display: inline-block; margin: 0 1.5em 0.3em 0; white-space: nowrap"


def widget_html(the_plan: FramePlan, notebook: str) -> str:
    """The page's live dashboard: labelled controls, the readout, the first frame, a caption.

    ``notebook``: the lecture's path in the course folder, for the note on where every control is
    live. Works without JavaScript too (the first frame and its readout, controls disabled).
    """
    base = f"../{the_plan.folder}/"
    parts = [
        f'<figure class="posenc-live" data-key="{html.escape(the_plan.key)}" '
        f'aria-label="{html.escape(the_plan.title)}">',
        f'<p class="posenc-live-title"><b>{html.escape(the_plan.title)}</b></p>',
        '<div class="posenc-live-controls">',
    ]
    span = f'<span class="posenc-live-control" style="{CONTROL_STYLE}">'
    for control in the_plan.live:
        cid = _control_id(the_plan, control)
        label = html.escape(control.label)
        current = html.escape(control.choices[control.initial][0])
        if control.kind == "checkbox":
            checked = " checked" if control.choices[control.initial][1] else ""
            parts.append(
                f'{span}<input type="checkbox" id="{cid}"{checked}> '
                f'<label for="{cid}">{label}</label></span>'
            )
        elif control.kind == "select":
            options = "".join(
                f'<option value="{i}"{" selected" if i == control.initial else ""}>'
                f"{html.escape(text)}</option>"
                for i, (text, _) in enumerate(control.choices)
            )
            parts.append(
                f'{span}<label for="{cid}">{label}</label> '
                f'<select id="{cid}">{options}</select></span>'
            )
        else:
            parts.append(
                f'{span}<label for="{cid}">{label}</label> '
                f'<input type="range" id="{cid}" min="0" max="{len(control.choices) - 1}" '
                f'step="1" value="{control.initial}" aria-valuetext="{current}"> '
                f'<output for="{cid}">{current}</output></span>'
            )
    parts.append("</div>")
    parts.append(f'<div class="posenc-live-readout" aria-live="polite">{the_plan.readout}</div>')
    settings = [f"{c.label} = {c.choices[c.initial][0]}" for c in the_plan.live]
    settings += [f"{label} = {shown}" for label, shown in the_plan.fixed]
    from posenc_lib.viz.dashboard import caption_text

    readout_text = caption_text(the_plan.readout)  # PE<sub>t</sub> as PEₜ, not "PEt"
    alt = alt_text(the_plan, settings, readout_text)
    width, height = the_plan.size
    parts.append(
        f'<img class="posenc-live-figure" src="{base}f{the_plan.initial:04d}.webp" '
        f'width="{width}" height="{height}" style="max-width: 100%; height: auto" '
        f'alt="{html.escape(alt)}">'
    )
    parts.append(f"<figcaption>{caption(the_plan, notebook)}</figcaption>")
    parts.append("</figure>")
    parts.append(f'<script src="{base}frames.js"></script>')
    parts.append(f'<script src="../{FOLDER}/{SCRIPT}"></script>')
    return "\n".join(parts)


def _values_note(control: LiveControl) -> str:
    import functools

    from posenc_lib.i18n import _
    from tools.site import LIVE_AND, LIVE_CHOICES, LIVE_VALUES

    labels = [label for label, _value in control.choices]
    if len(labels) <= 8:  # values joined by a word of the page's language: 100, 10,000
        joined = functools.reduce(lambda a, b: _(LIVE_AND).format(first=a, then=b), labels)
        return _(LIVE_CHOICES).format(label=html.escape(control.label), choices=html.escape(joined))
    return _(LIVE_VALUES).format(
        label=html.escape(control.label), count=len(labels), first=labels[0], last=labels[-1]
    )


def caption(the_plan: FramePlan, notebook: str) -> str:
    """Which controls are live on this page, which are not and where they are, in the language in
    use (the sentences are in tools/site.py, where tools.translate reads them)."""
    from posenc_lib.i18n import _
    from tools.site import LIVE_CAPTION, LIVE_EVERY_STEP, LIVE_FIXED, LIVE_SEPARATOR, LIVE_WHERE

    live = _(LIVE_SEPARATOR).join(_values_note(c) for c in the_plan.live)
    text = _(LIVE_CAPTION).format(live=live)
    where = _(LIVE_WHERE).format(
        notebook=f"<code>{html.escape(notebook)}</code>", key=html.escape(the_plan.key)
    )
    if the_plan.fixed:
        fixed = _(", ").join(f"{html.escape(a)} = {html.escape(b)}" for a, b in the_plan.fixed)
        return _(LIVE_FIXED).format(text=text, fixed=fixed, where=where)
    return _(LIVE_EVERY_STEP).format(text=text, where=where)


def alt_text(the_plan: FramePlan, settings: list[str], readout_text: str) -> str:
    """The figure's alt text: what it shows, the setting it was drawn for, the readout."""
    from posenc_lib.i18n import _
    from tools.site import LIVE_DRAWN_FOR

    return _(LIVE_DRAWN_FOR).format(
        summary=the_plan.summary, settings=_(", ").join(settings), readout=readout_text
    )


# Runs in the page: finds each dashboard's frames (dashboards/<key>/frames.js) and shows the one
# stored for the chosen values. It computes nothing of the course: it only looks frames up.
LIVE_JS = r"""/* posenc course: a dashboard's frames, drawn when the site was built, shown for
   the chosen values. Looks frames up only; every number and picture comes from the course's
   Python code. */
(function () {
  "use strict";
  function setup(root) {
    var data = (window.posencFrames || {})[root.getAttribute("data-key")];
    if (!data || root.getAttribute("data-ready")) return;
    root.setAttribute("data-ready", "1");
    var img = root.querySelector(".posenc-live-figure");
    var readout = root.querySelector(".posenc-live-readout");
    var folder = img.getAttribute("src").replace(/[^\/]*$/, "");
    var inputs = data.controls.map(function (c) { return document.getElementById(c.id); });
    var cache = {};
    function index(i) {
      var el = inputs[i];
      return el.type === "checkbox" ? (el.checked ? 1 : 0) : Number(el.value);
    }
    function preload(file) {
      if (cache[file]) return;
      cache[file] = new Image();
      cache[file].src = folder + file;
    }
    function flatOf(picks) {
      var flat = 0;
      for (var i = 0; i < picks.length; i++) {
        flat = flat * data.controls[i].labels.length + picks[i];
      }
      return flat;
    }
    function show() {
      var picks = inputs.map(function (_, i) { return index(i); });
      var settings = [];
      picks.forEach(function (k, i) {
        var c = data.controls[i], text = c.labels[k];
        settings.push(c.label + " = " + text);
        if (inputs[i].type === "range") {
          inputs[i].setAttribute("aria-valuetext", text);
          var out = root.querySelector('output[for="' + c.id + '"]');
          if (out) out.textContent = text;
        }
      });
      var frame = data.frames[flatOf(picks)];
      img.src = folder + frame[0];
      readout.innerHTML = data.readouts[frame[1]];
      img.alt = (data.alt || "{summary} Drawn for {settings}. {readout}")
        .replace("{summary}", data.summary)
        .replace("{settings}", settings.concat(data.fixed).join(data.separator || ", "))
        .replace("{readout}", readout.textContent);
      picks.forEach(function (k, i) {  // the neighbouring frames, so the next move is instant
        [k - 1, k + 1].forEach(function (j) {
          if (j < 0 || j >= data.controls[i].labels.length) return;
          var near = picks.slice(); near[i] = j;
          preload(data.frames[flatOf(near)][0]);
        });
      });
    }
    inputs.forEach(function (el) {
      el.addEventListener("input", show);
      el.addEventListener("change", show);
    });
    show();
  }
  function all() {
    Array.prototype.forEach.call(document.querySelectorAll(".posenc-live"), setup);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", all);
  else all();
})();
"""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.site_frames",
        description="Render every dashboard's frames for the website and print their sizes.",
    )
    parser.add_argument("--out", type=Path, default=Path("build/site-frames"))
    parser.add_argument("keys", nargs="*", help="chapter keys (start, 01 ...); default: all")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    job = FrameJob(plans_for(args.keys or None), args.out)
    for r in job.wait():
        print(
            f"{r.key:>5}: {r.frames:4d} frames, {r.files:4d} files, {r.bytes / 1e6:5.2f} MB, "
            f"{r.readouts:4d} readouts, {r.seconds:5.1f} s"
        )
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
