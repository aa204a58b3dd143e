"""Key press -> repainted figure, in a real browser: median and 90th percentile per dashboard, in ms.

Serves every chapter's demo page with Voila (``tools.demo``), opens each in headless Chromium
(Debian's ``/usr/bin/chromium``, driven by Playwright) and presses keys on its controls, as a
teacher does at the projector: arrow keys on a focused slider (right and left in turn), Space on a
checkbox, the down and up arrows on a dropdown, Enter on a toggle button. After a warm-up, every
keyboard control is pressed in turn, ``PRESSES`` times in all, and each press is timed in the page:

    start   performance.now() in a keydown listener on window (capture phase), the first script
            that sees the key;
    end     the first animation frame after the new picture is drawn: ipympl decodes each frame
            it receives into an offscreen canvas, then copies it onto the visible canvas with
            drawImage. A wrapper around CanvasRenderingContext2D.drawImage notes that copy and
            asks for requestAnimationFrame; the frame's callback runs just before the browser
            paints it, and its performance.now() is the end.

The wait between presses (until no frame has come for ``QUIET_MS``) keeps presses from queueing.
Where the time goes is timed on the same clock: ``png`` is key -> the frame's PNG arriving in the
page (the widget message to the kernel, the math, the draw request, Agg, PNG encoding, the
websocket; ``bench_dashboards.py`` times the kernel's share alone), ``decode`` is PNG arrival -> the
image decoded, ``paint`` is decoded -> the frame painted; ``KB`` is the PNG's size.

Each dashboard is a line plot or not, decided from its figure: a line plot's axes hold lines and
markers only (no images, colour meshes or bars). Targets: median < 150 ms for every dashboard,
< 100 ms for line plots.

    python -m benchmarks.bench_browser        (from the repository root, which holds tools/;
                                              or: make bench; needs chromium and playwright)
"""

from __future__ import annotations

import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import ipywidgets as W
import matplotlib.pyplot as plt

from posenc_lib.viz.registry import DASHBOARDS
from tools.browser import chromium_path, launch_offline
from tools.demo import chapters, voila_server, write_demos

WARMUP = 6
PRESSES = 40
QUIET_MS = 150
TARGET_MS, LINE_TARGET_MS = 150.0, 100.0
SLIDERS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider)

# Per key press: [key time, PNG arrival, decoded, painted, PNG bytes], all performance.now() ms.
INSTRUMENT = """
window.__bench = {key: 0, png: 0, bytes: 0, decoded: 0, frames: [], last: 0};
(() => {
  const b = window.__bench;
  window.addEventListener('keydown', () => { b.key = performance.now(); }, true);
  const objectURL = URL.createObjectURL;
  URL.createObjectURL = function (blob) {
    if (blob && blob.type === 'image/png') { b.png = performance.now(); b.bytes = blob.size; }
    return objectURL.call(this, blob);
  };
  const drawImage = CanvasRenderingContext2D.prototype.drawImage;
  CanvasRenderingContext2D.prototype.drawImage = function (...args) {
    const out = drawImage.apply(this, args);
    if (args[0] instanceof HTMLImageElement) b.decoded = performance.now();
    if (this.canvas.isConnected && args[0] instanceof HTMLCanvasElement) {
      const row = [b.key, b.png, b.decoded, 0, b.bytes];
      b.last = performance.now();
      requestAnimationFrame(() => { row[3] = performance.now(); b.frames.push(row); });
    }
    return out;
  };
})();
"""


def is_line_plot(dashboard) -> bool:
    """True when the figure's axes hold only lines and markers: no images, meshes, bars."""
    axes = dashboard.figure.axes
    plain = all(not ax.images and not ax.collections and not ax.containers for ax in axes)
    return plain and any(ax.lines for ax in axes)


class Presser:
    """The keyboard moves of one dashboard, kept in step with a copy of it in this process (so a
    slider at its end turns back, and a control another switches off is left alone)."""

    def __init__(self, page, dashboard):
        self.page, self.model = page, dashboard
        self.names = [n for n, c in dashboard.controls.items() if self._movable(c)]
        self.turn = 0

    @staticmethod
    def _movable(control) -> bool:
        return isinstance(control, (*SLIDERS, W.Checkbox, W.Dropdown, W.ToggleButtons))

    def press(self) -> None:
        """Press one key on the next enabled control; the value it moves to is a real change."""
        for _ in range(len(self.names)):
            name = self.names[self.turn % len(self.names)]
            self.turn += 1
            if not self.model.controls[name].disabled:
                break
        control = self.model.controls[name]
        root = self.page.locator(f".posenc-control-{name}")
        if isinstance(control, SLIDERS):
            log = isinstance(control, W.FloatLogSlider)
            position = round(math.log(control.value, control.base), 10) if log else control.value
            up = position + control.step <= control.max + 1e-9
            target = round(position + (control.step if up else -control.step), 10)
            root.locator(".noUi-handle").focus()
            self.page.keyboard.press("ArrowRight" if up else "ArrowLeft")
            value = control.base**target if log else type(control.value)(target)
        elif isinstance(control, W.Checkbox):
            root.locator("input[type=checkbox]").focus()
            self.page.keyboard.press("Space")
            value = not control.value
        else:
            values = [v for _, v in control.options]
            index = values.index(control.value)
            step = 1 if index + 1 < len(values) else -1
            if isinstance(control, W.Dropdown):
                root.locator("select").focus()
                self.page.keyboard.press("ArrowDown" if step == 1 else "ArrowUp")
            else:
                root.locator("button").nth(index + step).focus()
                self.page.keyboard.press("Enter")
            value = values[index + step]
        self.model.set(**{name: value})


def measure(page, dashboard) -> list[list[float]]:
    """WARMUP + PRESSES key presses; for each measured one, [key, png, decoded, painted, bytes]."""
    presser = Presser(page, dashboard)
    rows = []
    for n in range(WARMUP + PRESSES):
        count = page.evaluate("window.__bench.frames.length")
        presser.press()
        page.wait_for_function(
            "([n, quiet]) => window.__bench.frames.length > n"
            " && performance.now() - window.__bench.last > quiet",
            arg=[count, QUIET_MS],
            timeout=20_000,
        )
        frames = page.evaluate("window.__bench.frames")[count:]
        first = next(f for f in frames if f[3] > f[0])  # the first frame painted after the key
        if n >= WARMUP:
            rows.append(first)
    return rows


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def main() -> int:
    chromium = chromium_path()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        sync_playwright = None
    if chromium is None or sync_playwright is None:
        print("bench_browser: skipped, needs Debian's chromium and playwright (see .ci/run)")
        return 0
    work = Path(tempfile.mkdtemp(prefix="posenc-bench-"))
    names = chapters()
    pages = {names[key]: path for key, path in write_demos(work).items()}
    results = []
    try:
        with (
            # 30 s, not less: a page slow to connect must find its kernel (tests/browser/conftest.py)
            voila_server(work, work / "voila.log", idle_kernel_seconds=30) as base,
            sync_playwright() as p,
        ):
            context = launch_offline(p, str(work / "profile"), chromium)
            context.add_init_script(INSTRUMENT)
            for name, make in DASHBOARDS.items():
                dashboard = make()
                page = context.new_page()
                page.goto(f"{base}voila/render/{pages[name].name}")
                page.wait_for_function("window.__bench.frames.length > 0", timeout=60_000)
                page.wait_for_timeout(500)
                size = page.evaluate(
                    "() => { const c = document.querySelector('.posenc-figure canvas');"
                    " return [c.width, c.height]; }"
                )
                rows = measure(page, dashboard)
                page.close()
                results.append((name, is_line_plot(dashboard), size, rows))
                plt.close(dashboard.figure)
            context.close()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(
        f"Key press -> repainted figure in Chromium (Voila demo pages), {PRESSES} presses each "
        f"after {WARMUP} warm-up (ms); {os.cpu_count()} CPUs, load average {load}:"
    )
    header = f"{'dashboard':40s} {'kind':9s} {'canvas':>8s} {'median':>7s} {'p90':>6s}"
    print(f"{header} {'target':>7s}  {'':4s} {'png':>5s} {'decode':>6s} {'paint':>5s} {'KB':>5s}")
    failed = 0
    for name, line, (width, height), rows in results:
        total = [r[3] - r[0] for r in rows]
        png = statistics.median(r[1] - r[0] for r in rows)
        decode = statistics.median(r[2] - r[1] for r in rows)
        paint = statistics.median(r[3] - r[2] for r in rows)
        kb = statistics.median(r[4] for r in rows) / 1024
        median, p90 = statistics.median(total), _pct(total, 0.9)
        target = LINE_TARGET_MS if line else TARGET_MS
        verdict = "pass" if median < target else "FAIL"
        failed += verdict == "FAIL"
        kind = "line plot" if line else "image"
        print(
            f"{name:40s} {kind:9s} {f'{width}x{height}':>8s} {median:7.1f} {p90:6.1f} "
            f"{f'< {target:.0f}':>7s}  {verdict:4s} {png:5.1f} {decode:6.1f} {paint:5.1f} {kb:5.1f}"
        )
    print(f"{len(results) - failed} of {len(results)} dashboards meet their target.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
