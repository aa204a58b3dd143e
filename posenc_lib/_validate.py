"""Checks at the library's door: bad input gets a sentence, not a traceback from deep inside.

Every public function calls these on its arguments first, so a learner who passes ``d_model=7`` to an
encoding built from sin/cos *pairs* reads why 7 cannot work, instead of a shape error three calls down.
"""

from __future__ import annotations

import operator

import torch


def positive_int(name: str, value, why: str = "") -> int:
    """Return ``value`` as an int if it is a whole number >= 1, else raise ValueError."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a positive whole number, got the boolean {value!r}.")
    try:
        as_int = operator.index(value)
    except TypeError:
        raise ValueError(
            f"{name} must be a positive whole number, got {value!r} of type {type(value).__name__}."
        ) from None
    if as_int < 1:
        raise ValueError(f"{name} must be at least 1, got {as_int}.{' ' + why if why else ''}")
    return as_int


def even_int(name: str, value, why: str) -> int:
    """Return ``value`` as an int if it is a positive even number, else raise ValueError."""
    as_int = positive_int(name, value)
    if as_int % 2:
        raise ValueError(f"{name} must be even, got {as_int}: {why}")
    return as_int


def positive_float(name: str, value, minimum: float = 0.0, inclusive: bool = False) -> float:
    """Return ``value`` as a float if it is a finite number above ``minimum`` (or equal if inclusive)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        and not hasattr(value, "__float__")
    ):
        raise ValueError(f"{name} must be a number, got {value!r}.")
    as_float = float(value)
    ok = as_float >= minimum if inclusive else as_float > minimum
    if not ok or as_float != as_float or as_float in (float("inf"), float("-inf")):
        relation = "at least" if inclusive else "greater than"
        raise ValueError(f"{name} must be a finite number {relation} {minimum:g}, got {value!r}.")
    return as_float


def tensor(name: str, value, min_rank: int = 1, max_rank: int | None = None, shape_hint: str = ""):
    """Raise ValueError unless ``value`` is a torch.Tensor whose rank lies in [min_rank, max_rank]."""
    hint = f" (expected shape {shape_hint})" if shape_hint else ""
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor{hint}, got {type(value).__name__}.")
    if value.dim() < min_rank or (max_rank is not None and value.dim() > max_rank):
        allowed = f"{min_rank}" if max_rank == min_rank else f"{min_rank} or more"
        if max_rank is not None and max_rank != min_rank:
            allowed = f"{min_rank} to {max_rank}"
        raise ValueError(
            f"{name} must have {allowed} dimensions{hint}, got shape {tuple(value.shape)}."
        )
    return value


def choice(name: str, value, allowed) -> str:
    """Raise ValueError unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}; got {value!r}.")
    return value
