"""Figures and dashboards, one module per chapter: chapter 5's figures and its dashboard are in
``viz/ch05_alibi.py``. Each chapter module imports its measurements (``posenc_lib.analysis``) and
the two shared modules below; the layers contract (pyproject.toml) keeps checks out.

- ``figures``: the toolkit every figure uses (``show``, ``new_figure``, ``points``, ``DPI``,
  colour maps, ``projector_style`` for the classroom demo).
- ``dashboard``: the ``Dashboard`` class, controls wired to a measurement and a figure.
- ``ch00_start`` .. ``ch07_extrapolation``: each chapter's figures and dashboard.
- ``registry``: ``DASHBOARDS``, every dashboard by name (the demo, benchmarks and tests read it).
"""

from posenc_lib.i18n import use_cjk_font

# Chinese labels (set_language("zh") or POSENC_LANG=zh) draw with the course's own CJK font, so a
# figure never shows empty boxes, whatever fonts the machine has; English figures are unchanged.
use_cjk_font()
