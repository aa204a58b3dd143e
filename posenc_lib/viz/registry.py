"""Every dashboard of the course, by name, in one place: the classroom demo (tools/demo.py), the
benchmarks and the tests read ``DASHBOARDS``. A new dashboard is a function in its chapter's
module (``viz/chNN_*.py``) and one line here; the name's prefix before ":" is its chapter's key
(``start``, ``ch01`` .. ``ch08``), which ``make demo CHAPTER=NN`` uses. The names are keys, in
English; they are marked ``N_`` so that what shows one (the demo) can show it translated.
"""

from __future__ import annotations

from collections.abc import Callable

from posenc_lib.i18n import N_
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
    N_("start: sinusoidal position slider"): wave_dashboard,
    N_("ch01: reorder a sentence"): order_dashboard,
    N_("ch02: naive position tables"): table_dashboard,
    N_("ch03: sinusoidal base, width and offset"): sinusoid_dashboard,
    N_("ch04: T5 buckets and bias"): bucket_dashboard,
    N_("ch05: ALiBi slopes, bias and attention"): alibi_dashboard,
    N_("ch06: rotate q and k"): rope_dashboard,
    N_("ch07: RoPE scalings, pair by pair"): scaling_dashboard,
    N_("ch08: a real LLM past 8,192 tokens"): long_context_dashboard,
}


def chapters() -> dict[str, str]:
    """Chapter key ('start', '01' ... '08') -> the DASHBOARDS name of its dashboard."""
    return {name.split(":", 1)[0].removeprefix("ch"): name for name in DASHBOARDS}
