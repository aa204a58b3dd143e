"""Validation at the library's door: bad input gets a sentence, not a traceback from deep inside.

Every public function calls these on its arguments first, so a learner who passes ``d_model=7``
to an encoding built from sin/cos *pairs* reads why 7 cannot work, instead of a shape error
three calls down.

The sentences speak the language in use (posenc_lib.i18n). A caller's fragment (``why``, ``kind``,
``what``) is an English phrase marked ``N_("...")`` where it is written and translated here, when
the sentence is built; ``name`` is an argument's name, code, and is never translated.
"""

from __future__ import annotations

import math
import numbers
import operator

import torch

from posenc_lib.i18n import N_, _, tr

# Sizes beyond these are mistakes, not experiments: refuse them before torch tries to allocate.
MAX_SIZE = 2**31 - 1  # any one length, width, head count or position
MAX_TABLE_VALUES = 2**31  # values in one table: 8 GiB of float32
INTEGER_DTYPES = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def show(value) -> str:
    """repr(value), shortened so a 400-digit number does not flood the message."""
    text = repr(value)
    if len(text) <= 40:
        return text
    return tr(
        "{start}...{end} ({count} characters)", start=text[:20], end=text[-10:], count=len(text)
    )


def whole_int(name: str, value, maximum: int = MAX_SIZE, kind: str = N_("a whole number")) -> int:
    """Return ``value`` as an int if it is a whole number with |value| <= maximum (negatives allowed).

    kind: what the number must be, an English phrase marked N_() ("a positive whole number").
    """
    if isinstance(value, bool):
        raise ValueError(
            tr(
                "{name} must be {kind}, got the boolean {value!r}.",
                name=name,
                kind=_(kind),
                value=value,
            )
        )
    try:
        as_int = operator.index(value)
    except TypeError:
        raise ValueError(
            tr(
                "{name} must be {kind}, got {value} of type {type}.",
                name=name,
                kind=_(kind),
                value=show(value),
                type=type(value).__name__,
            )
        ) from None
    if abs(as_int) > maximum:
        if as_int > 0:
            message = tr(
                "{name} must be at most {maximum}, got {value}.",
                name=name,
                maximum=maximum,
                value=show(as_int),
            )
        else:
            message = tr(
                "{name} must be at least -{maximum}, got {value}.",
                name=name,
                maximum=maximum,
                value=show(as_int),
            )
        raise ValueError(message)
    return as_int


def positive_int(name: str, value, why: str = "", maximum: int = MAX_SIZE) -> int:
    """Return ``value`` as an int if it is a whole number in [1, maximum], else raise ValueError.

    why: the reason it must be positive, a sentence marked N_() where it is written.
    """
    as_int = whole_int(name, value, maximum, kind=N_("a positive whole number"))
    if as_int < 1:
        if why:
            message = tr(
                "{name} must be at least 1, got {value}. {why}", name=name, value=as_int, why=_(why)
            )
        else:
            message = tr("{name} must be at least 1, got {value}.", name=name, value=as_int)
        raise ValueError(message)
    return as_int


def even_int(name: str, value, why: str) -> int:
    """Return ``value`` as an int if it is a positive even number, else raise ValueError.

    why: the reason it must be even, a sentence marked N_() where it is written.
    """
    as_int = positive_int(name, value)
    if as_int % 2:
        raise ValueError(
            tr("{name} must be even, got {value}: {why}", name=name, value=as_int, why=_(why))
        )
    return as_int


def real_number(name: str, value) -> float:
    """Return ``value`` as a finite float (a Python or NumPy real number), else raise ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(
            tr(
                "{name} must be a real number, got {value} of type {type}.",
                name=name,
                value=show(value),
                type=type(value).__name__,
            )
        )
    try:
        as_float = float(value)
    except OverflowError:
        raise ValueError(
            tr("{name} is too large to be a float: {value}.", name=name, value=show(value))
        ) from None
    if not math.isfinite(as_float):
        raise ValueError(
            tr("{name} must be a finite number, got {value}.", name=name, value=as_float)
        )
    return as_float


def positive_float(name: str, value, minimum: float = 0.0, inclusive: bool = False) -> float:
    """Return ``value`` as a finite float above ``minimum`` (or equal to it if inclusive)."""
    as_float = real_number(name, value)
    if inclusive and not as_float >= minimum:
        raise ValueError(
            tr(
                "{name} must be a finite number at least {minimum:g}, got {value!r}.",
                name=name,
                minimum=minimum,
                value=value,
            )
        )
    if not inclusive and not as_float > minimum:
        raise ValueError(
            tr(
                "{name} must be a finite number greater than {minimum:g}, got {value!r}.",
                name=name,
                minimum=minimum,
                value=value,
            )
        )
    return as_float


def boolean(name: str, value) -> bool:
    """Raise ValueError unless ``value`` is True or False (not 1, not "no")."""
    if not isinstance(value, bool):
        raise ValueError(
            tr("{name} must be True or False, got {value}.", name=name, value=show(value))
        )
    return value


def tensor(name: str, value, min_rank: int = 1, max_rank: int | None = None, shape_hint: str = ""):
    """Raise ValueError unless ``value`` is a torch.Tensor whose rank lies in [min_rank, max_rank].

    shape_hint: the expected shape, code such as "(..., T, D)" (not translated).
    """
    hint = tr(" (expected shape {shape})", shape=shape_hint) if shape_hint else ""
    if not isinstance(value, torch.Tensor):
        raise ValueError(
            tr(
                "{name} must be a torch.Tensor{hint}, got {type}.",
                name=name,
                hint=hint,
                type=type(value).__name__,
            )
        )
    if value.dim() < min_rank or (max_rank is not None and value.dim() > max_rank):
        if max_rank == min_rank:
            message = N_("{name} must have {low} dimensions{hint}, got shape {shape}.")
        elif max_rank is None:
            message = N_("{name} must have {low} or more dimensions{hint}, got shape {shape}.")
        else:
            message = N_("{name} must have {low} to {high} dimensions{hint}, got shape {shape}.")
        raise ValueError(
            tr(message, name=name, low=min_rank, high=max_rank, hint=hint, shape=tuple(value.shape))
        )
    return value


def float_tensor(name: str, value, min_rank: int = 1, max_rank: int | None = None, shape_hint=""):
    """A tensor (as ``tensor``) that also holds real floating-point numbers."""
    tensor(name, value, min_rank, max_rank, shape_hint)
    if not value.dtype.is_floating_point:
        raise ValueError(
            tr(
                "{name} must hold real floating-point numbers (e.g. float32), got dtype {dtype}.",
                name=name,
                dtype=value.dtype,
            )
        )
    return value


def integer_tensor(name: str, value, what: str = N_("whole numbers")):
    """Raise ValueError unless ``value`` is a tensor of an integer dtype (bool excluded).

    what: what the numbers are, an English phrase marked N_() ("token ids").
    """
    tensor(name, value, min_rank=0)
    if value.dtype not in INTEGER_DTYPES:
        raise ValueError(
            tr(
                "{name} must hold {what} (an integer tensor), got dtype {dtype}.",
                name=name,
                what=_(what),
                dtype=value.dtype,
            )
        )
    return value


def table_dtype(dtype, device) -> None:
    """Raise ValueError unless ``dtype`` is a floating torch.dtype and ``device`` names a device."""
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise ValueError(
            tr(
                "dtype must be a floating-point torch.dtype such as torch.float32, got {value}.",
                value=show(dtype),
            )
        )
    if device is not None:
        try:
            torch.device(device)
        except (RuntimeError, TypeError):
            raise ValueError(
                tr(
                    "device must name a torch device such as 'cpu', got {value}.",
                    value=show(device),
                )
            ) from None


def table_size(what: str, *dims: int, **fields) -> None:
    """Refuse a table of more than MAX_TABLE_VALUES values before anything is allocated.

    what: the table, an English phrase marked N_() ("the causal mask"); its ``{name}`` fields, if
    any, are filled from ``fields`` once translated: ``table_size(N_("a ({n}, {d}) table"), n, d,
    n=n, d=d)``, so nothing is formatted unless the table is refused.
    """
    count = math.prod(dims)
    if count > MAX_TABLE_VALUES:
        raise ValueError(
            tr(
                "{what} would hold {count:.3g} values ({gib:.3g} GiB in float32); "
                "the limit is {limit:.3g}. Ask for fewer positions or dims.",
                what=_(what).format(**fields) if fields else _(what),
                count=count,
                gib=count * 4 / 2**30,
                limit=MAX_TABLE_VALUES,
            )
        )


def choice(name: str, value, allowed) -> str:
    """Raise ValueError unless ``value`` is one of ``allowed``."""
    if not isinstance(value, str) or value not in allowed:
        options = ", ".join(repr(a) for a in allowed)
        raise ValueError(
            tr(
                "{name} must be one of {options}; got {value}.",
                name=name,
                options=options,
                value=show(value),
            )
        )
    return value
