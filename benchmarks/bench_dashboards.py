"""How fast does each dashboard answer a control change? Prints median and 90th percentile, in ms.

Runs inside a real Jupyter kernel with ``%matplotlib widget`` (ipympl), as a notebook would. For
each dashboard in ``posenc_lib.viz.registry.DASHBOARDS`` it sets the controls 50 times (every control in
turn, through its range) and times, for each change, everything the kernel does before the browser
can show the new picture:

    control.value = v            -> the math, the in-place figure update, the readout, and the
                                    new frame: with a browser connected the dashboard renders with
                                    Agg, diffs against the last frame, PNG-encodes the diff and
                                    sends it over the comm at once
    canvas.handle_json("draw")   -> only if the kernel asked the browser for a draw request
                                    instead (draw_idle): what the browser sends back

The browser's share (messages, decoding, repaint) is timed by ``bench_browser.py``. Target: median
<= 50 ms for every dashboard on the course's reference machine (2 CPU cores).

    python -m benchmarks.bench_dashboards        (or: make bench)
"""

from __future__ import annotations

import json
import sys

from jupyter_client.manager import start_new_kernel

CHANGES = 50

KERNEL_CODE = f"""
%matplotlib widget
import json, statistics, time
import matplotlib.pyplot as plt
from posenc_lib.viz.registry import DASHBOARDS

figures = {{}}
for name, make in DASHBOARDS.items():
    dashboard = make()
    canvas = dashboard.figure.canvas
    canvas._handle_message(canvas, {{"type": "initialized"}}, [])  # as a connected browser would
    canvas.manager.handle_json({{"type": "draw"}})  # the first full frame
    asked = []  # "draw" events the kernel sends the browser; it answers each with a draw request
    send_event = canvas.send_event
    canvas.send_event = lambda kind, **kw: asked.append(kind) if kind == "draw" else send_event(kind, **kw)
    times = []
    for control, value in dashboard.sweep({CHANGES}):
        start = time.perf_counter()
        dashboard.controls[control].value = value
        if asked:
            asked.clear()
            canvas.manager.handle_json({{"type": "draw"}})
        times.append(1000 * (time.perf_counter() - start))
    times.sort()
    figures[name] = (statistics.median(times), times[int(0.9 * len(times)) - 1], dashboard.changes)
    plt.close(dashboard.figure)
print("RESULT", json.dumps(figures))
"""


def main() -> int:
    manager, client = start_new_kernel(kernel_name="python3")
    output = []

    def collect(message):
        if message["msg_type"] == "stream":
            output.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            output.append("\n".join(message["content"]["traceback"]))

    try:
        client.execute_interactive(KERNEL_CODE, output_hook=collect, timeout=300)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    text = "".join(output)
    if "RESULT " not in text:
        print(text)
        return 1
    figures = json.loads(text.split("RESULT ", 1)[1].splitlines()[0])
    print(f"Dashboards, {CHANGES} control changes each, in a kernel with ipympl (ms):")
    print(f"{'dashboard':40s} {'median':>8s} {'p90':>8s}  target median <= 50")
    worst = 0.0
    for name, (median, p90, changes) in figures.items():
        assert changes == CHANGES, f"{name}: {changes} redraws for {CHANGES} changes"
        worst = max(worst, median)
        flag = "ok" if median <= 50 else "SLOW"
        print(f"{name:40s} {median:8.1f} {p90:8.1f}  {flag}")
    print(f"slowest median: {worst:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
