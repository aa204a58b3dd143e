"""Each chapter's measurements, built on the math core (``posenc_lib``'s top-level modules).

One module per chapter (``chNN_*``), split where a chapter has two subjects (``ch03_tables``,
``ch04_buckets``, ``ch06_rotation``, ``ch07_scaling`` / ``ch07_extrapolation``); the measures
several chapters share (``toeplitz``: the diagonal spread); the yardstick every chapter scores
encodings with (``report``, shown by ``report_display``); and the learned-table analysis
(``learned_table``). Imports only the core; the models, figures, dashboards and checks import it.
"""
