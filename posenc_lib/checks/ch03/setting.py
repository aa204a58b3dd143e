"""Chapter 3's exercises: the notebook they belong to, and what their questions share."""

from __future__ import annotations

import functools

import torch

# Results of slow case-building steps, by function and arguments. A module-level dict, not
# functools.lru_cache: the harness empties the checks' module-level containers while an answer
# runs, so no answer can read a cached result (an lru_cache would answer a call from its cache).
_MEMO: dict = {}


def _memo(fn):
    @functools.wraps(fn)
    def cached(*args):
        key = (fn.__name__, args)
        if key not in _MEMO:
            _MEMO[key] = fn(*args)
        return _MEMO[key]

    return cached


NOTEBOOK = "03_sinusoidal.ipynb"
F64 = torch.float64


def _table(n, d, base, *, exponent="2i/d", start=0, first=torch.sin, second=torch.cos):
    """A (T, D) float64 sinusoidal table, or one of its usual wrong variants."""
    t = torch.arange(start, start + n, dtype=F64)[:, None]  # (T, 1)
    if exponent == "per column":  # column j uses base ** (j / D): the cos columns run a bit slower
        columns = torch.arange(d, dtype=F64)  # (D,)
        angles = t / base ** (columns / d)  # (T, D)
        table = torch.empty(n, d, dtype=F64)
        table[:, 0::2], table[:, 1::2] = first(angles[:, 0::2]), second(angles[:, 1::2])
        return table
    i = torch.arange(d // 2, dtype=F64)  # (D/2,)
    power = {"2i/d": 2 * i / d, "i/d": i / d, "t2t": i / max(d // 2 - 1, 1)}[exponent]
    angles = t / base**power  # (T, D/2)
    return torch.stack((first(angles), second(angles)), -1).reshape(n, d)  # (T, D)
