"""Validation at the library's door: bad input gets a sentence, not a traceback from deep inside.

Every public function calls these on its arguments first, so a learner who passes ``d_model=7``
to an encoding built from sin/cos *pairs* reads why 7 cannot work, instead of a shape error
three calls down.
"""

from __future__ import annotations

import math
import numbers
import operator

import torch

# Sizes beyond these are mistakes, not experiments: refuse them before torch tries to allocate.
MAX_SIZE = 2**31 - 1  # any one length, width, head count or position
MAX_TABLE_VALUES = 2**31  # values in one table: 8 GiB of float32
INTEGER_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def show(value) -> str:
    """repr(value), shortened so a 400-digit number does not flood the message."""
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-10:]} ({len(text)} characters)"


def whole_int(name: str, value, maximum: int = MAX_SIZE, kind: str = "a whole number") -> int:
    """Return ``value`` as an int if it is a whole number with |value| <= maximum (negatives allowed)."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be {kind}, got the boolean {value!r}.")
    try:
        as_int = operator.index(value)
    except TypeError:
        raise ValueError(
            f"{name} must be {kind}, got {show(value)} of type {type(value).__name__}."
        ) from None
    if abs(as_int) > maximum:
        bound = f"at most {maximum}" if as_int > 0 else f"at least -{maximum}"
        raise ValueError(f"{name} must be {bound}, got {show(as_int)}.")
    return as_int


def positive_int(name: str, value, why: str = "", maximum: int = MAX_SIZE) -> int:
    """Return ``value`` as an int if it is a whole number in [1, maximum], else raise ValueError."""
    as_int = whole_int(name, value, maximum, kind="a positive whole number")
    if as_int < 1:
        raise ValueError(f"{name} must be at least 1, got {as_int}.{' ' + why if why else ''}")
    return as_int


def even_int(name: str, value, why: str) -> int:
    """Return ``value`` as an int if it is a positive even number, else raise ValueError."""
    as_int = positive_int(name, value)
    if as_int % 2:
        raise ValueError(f"{name} must be even, got {as_int}: {why}")
    return as_int


def real_number(name: str, value) -> float:
    """Return ``value`` as a finite float (a Python or NumPy real number), else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            f"{name} must be a real number, got {show(value)} of type {type(value).__name__}."
        )
    try:
        as_float = float(value)
    except OverflowError:
        raise ValueError(f"{name} is too large to be a float: {show(value)}.") from None
    if not math.isfinite(as_float):
        raise ValueError(f"{name} must be a finite number, got {as_float}.")
    return as_float


def positive_float(name: str, value, minimum: float = 0.0, inclusive: bool = False) -> float:
    """Return ``value`` as a finite float above ``minimum`` (or equal to it if inclusive)."""
    as_float = real_number(name, value)
    if not (as_float >= minimum if inclusive else as_float > minimum):
        relation = "at least" if inclusive else "greater than"
        raise ValueError(f"{name} must be a finite number {relation} {minimum:g}, got {value!r}.")
    return as_float


def boolean(name: str, value) -> bool:
    """Raise ValueError unless ``value`` is True or False (not 1, not "no")."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {show(value)}.")
    return value


def tensor(name: str, value, min_rank: int = 1, max_rank: int | None = None, shape_hint: str = ""):
    """Raise ValueError unless ``value`` is a torch.Tensor whose rank lies in [min_rank, max_rank]."""
    hint = f" (expected shape {shape_hint})" if shape_hint else ""
    if not isinstance(value, torch.Tensor):
        raise ValueError(f"{name} must be a torch.Tensor{hint}, got {type(value).__name__}.")
    if value.dim() < min_rank or (max_rank is not None and value.dim() > max_rank):
        if max_rank == min_rank:
            allowed = f"{min_rank}"
        elif max_rank is None:
            allowed = f"{min_rank} or more"
        else:
            allowed = f"{min_rank} to {max_rank}"
        raise ValueError(
            f"{name} must have {allowed} dimensions{hint}, got shape {tuple(value.shape)}."
        )
    return value


def float_tensor(name: str, value, min_rank: int = 1, max_rank: int | None = None, shape_hint=""):
    """A tensor (as ``tensor``) that also holds real floating-point numbers."""
    tensor(name, value, min_rank, max_rank, shape_hint)
    if not value.dtype.is_floating_point:
        raise ValueError(
            f"{name} must hold real floating-point numbers (e.g. float32), got dtype {value.dtype}."
        )
    return value


def integer_tensor(name: str, value, what: str = "whole numbers"):
    """Raise ValueError unless ``value`` is a tensor of an integer dtype (bool excluded)."""
    tensor(name, value, min_rank=0)
    if value.dtype not in INTEGER_DTYPES:
        raise ValueError(f"{name} must hold {what} (an integer tensor), got dtype {value.dtype}.")
    return value


def table_dtype(dtype, device) -> None:
    """Raise ValueError unless ``dtype`` is a floating torch.dtype and ``device`` names a device."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(
            f"dtype must be a floating-point torch.dtype such as torch.float32, got {show(dtype)}."
        )
    if device is not None:
        try:
            torch.device(device)
        except (RuntimeError, TypeError):
            raise ValueError(
                f"device must name a torch device such as 'cpu', got {show(device)}."
            ) from None


def table_size(what: str, *dims: int) -> None:
    """Refuse a table of more than MAX_TABLE_VALUES values before anything is allocated."""
    count = math.prod(dims)
    if count > MAX_TABLE_VALUES:
        raise ValueError(
            f"{what} would hold {count:.3g} values ({count * 4 / 2**30:.3g} GiB in float32); "
            f"the limit is {MAX_TABLE_VALUES:.3g}. Ask for fewer positions or dims."
        )


def choice(name: str, value, allowed) -> str:
    """Raise ValueError unless ``value`` is one of ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {options}; got {show(value)}.")
    return value
