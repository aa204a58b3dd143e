"""Every dashboard of the course, by name, in one place: the classroom demo (tools/demo.py), the
benchmarks and the tests read ``DASHBOARDS``. A new dashboard is a function in its chapter's
module (``viz/chNN_*.py``) and one line here; the name's prefix before ":" is its chapter's key
(``start``, ``ch01`` .. ``ch08``), which ``make demo CHAPTER=NN`` uses.
"""

from __future__ import annotations

from collections.abc import Callable

from posenc_lib.viz.ch00_start import wave_dashboard
from posenc_lib.viz.ch01_order import order_dashboard
from posenc_lib.viz.ch02_naive import table_dashboard
from posenc_lib.viz.ch03_sinusoid import sinusoid_dashboard
from posenc_lib.viz.ch04_relative import bucket_dashboard
from posenc_lib.viz.ch05_alibi import alibi_dashboard
from posenc_lib.viz.ch06_rope import rope_dashboard
from posenc_lib.viz.ch07_extrapolation import scaling_dashboard
from posenc_lib.viz.ch08_long import long_context_dashboard
from posenc_lib.viz.dashboard import Dashboard

DASHBOARDS: dict[str, Callable[[], Dashboard]] = {
    "start: sinusoidal position slider": wave_dashboard,
    "ch01: reorder a sentence": order_dashboard,
    "ch02: naive position tables": table_dashboard,
    "ch03: sinusoidal base, width and offset": sinusoid_dashboard,
    "ch04: T5 buckets and bias": bucket_dashboard,
    "ch05: ALiBi slopes, bias and attention": alibi_dashboard,
    "ch06: rotate q and k": rope_dashboard,
    "ch07: RoPE scalings, pair by pair": scaling_dashboard,
    "ch08: a real LLM past 8,192 tokens": long_context_dashboard,
}


def chapters() -> dict[str, str]:
    """Chapter key ('start', '01' ... '08') -> the DASHBOARDS name of its dashboard."""
    return {name.split(":", 1)[0].removeprefix("ch"): name for name in DASHBOARDS}
