"""The answer types a question asks for, and the one home of turning a learner's value into one.

``Question.returns`` names a kind (FLOAT, INT, TENSOR, INT_TENSOR, INDEX_LIST, FLOATS); the type
policy (``type_problem``) fails a value one conversion away from it with a sentence naming the
conversion. A question's ``diagnose`` reads the value with ``as_tensor``, ``as_number``, ``as_int``,
``as_index_list`` or ``as_floats`` (each gives the value, or a sentence saying why it is not usable)
and compares it with ``close``, ``near`` or ``same_number``.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from posenc_lib.checks.run import Collected, TooMany
from posenc_lib.i18n import N_, _, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

# -- the type policy: the type a question asks for is the type it accepts -----------------------------
#
# ``Question.returns`` names what the learner's function returns: one of the kinds below, or a tuple
# of them for a function that returns a pair. A value one conversion away from it (a NumPy array
# for a tensor, a 0-d tensor for a float, a list for a tensor, a tensor for a list, an unsorted
# list...) fails before any judging, with a sentence naming the conversion: the same words in every
# chapter. Anything further off is left to ``diagnose``, whose ``as_*`` helpers below say what
# they wanted.

FLOAT = "float"  # a Python float (an int is a number too)
INT = "int"  # a Python int
TENSOR = "tensor"  # a torch tensor of floats
INT_TENSOR = "int tensor"  # a torch tensor of integers
INDEX_LIST = "index list"  # a list of Python ints in increasing order, each once
FLOATS = "floats"  # a list of Python floats, or a 1-D float tensor

ASKED = {  # (English, marked N_: shown with ``asked``)
    FLOAT: N_("a Python float"),
    INT: N_("a Python int"),
    TENSOR: N_("a torch tensor of floats"),
    INT_TENSOR: N_("a torch tensor of integers"),
    INDEX_LIST: N_("a list of ints in increasing order, each once"),
    FLOATS: N_("a list of Python floats (or a 1-D float tensor)"),
}
_FROM_NUMPY = N_("return torch.from_numpy(x), or build it with torch from the start")
_TO_TENSOR = N_(
    "convert it with torch.tensor (torch.stack for a list of tensors), or build it with torch "
    "from the start"
)


def asked(kind) -> str:
    """What a question asks for (``ASKED[kind]``) in the language in use."""
    return translate(ASKED[kind])


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _container(value) -> str:
    if isinstance(value, Collected):
        return tr("a {type}", type=value.source)
    return _("a tuple") if isinstance(value, tuple) else _("a list")


def _near_miss(value, kind) -> tuple[str, str] | None:
    """(what ``value`` is, the conversion that gives ``kind``) when one conversion away, else None.

    Both in the language in use.
    """
    if isinstance(value, torch.Tensor) and value.layout != torch.strided and kind in ASKED:
        return _("a sparse tensor"), _("return x.to_dense()")
    if isinstance(kind, tuple):  # a pair (or more): a tuple of the kinds, item by item
        if isinstance(value, list) and len(value) == len(kind):
            return _("a list"), _("return a tuple, as in `return a, b`")
        return None
    if kind in (FLOAT, INT):
        word = "float" if kind == FLOAT else "int"
        if isinstance(value, torch.Tensor) and value.numel() == 1 and not value.is_complex():
            shape = _("a 0-d tensor") if value.dim() == 0 else _("a one-element tensor")
            return shape, tr("return x.item() or {word}(x)", word=word)
        if isinstance(value, np.generic) and value.dtype.kind in "biuf":
            described = tr("a NumPy scalar (numpy.{dtype})", dtype=value.dtype)
            return described, tr("return {word}(x)", word=word)
        if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "biuf":
            return _("a one-element NumPy array"), tr("return {word}(x)", word=word)
        if isinstance(value, (list, tuple)) and len(value) == 1 and _is_number(value[0]):
            described = tr("{container} of one number", container=_container(value))
            return described, _("return the number itself, x[0]")
        if kind == INT and isinstance(value, float) and value.is_integer():
            return tr("a float ({value!r})", value=value), _("return int(x)")
        return None
    if kind in (TENSOR, INT_TENSOR):
        if isinstance(value, np.ndarray):
            return _("a NumPy array"), translate(_FROM_NUMPY)
        if isinstance(value, (list, tuple)):
            if isinstance(value, tuple) and len(value) > 1 and isinstance(value[0], torch.Tensor):
                return None  # more than was asked for: as_tensor says so
            return _container(value), translate(_TO_TENSOR)
        if isinstance(value, torch.Tensor) and not value.is_complex():
            floating = value.dtype.is_floating_point
            if kind == TENSOR and not floating:
                if value.dtype == torch.bool:
                    held = tr("a tensor of booleans ({dtype})", dtype=value.dtype)
                else:
                    held = tr("a tensor of integers ({dtype})", dtype=value.dtype)
                return held, _("return x.float(), or build it with a float dtype from the start")
            if kind == INT_TENSOR and floating:  # (a True/False mask is not a near miss)
                return tr("a tensor of floats ({dtype})", dtype=value.dtype), _("return x.long()")
        return None
    if kind in (INDEX_LIST, FLOATS):
        if isinstance(value, (torch.Tensor, np.ndarray)) and value.ndim != 1:
            return None  # not a flat list of anything: a shape problem, for diagnose
        if isinstance(value, torch.Tensor):
            if kind == FLOATS and not value.is_complex():
                if value.dtype.is_floating_point:
                    return None
                held = tr("a tensor of integers ({dtype})", dtype=value.dtype)
                return held, _("return x.float()")
            return _("a tensor"), _("return x.tolist()")
        if isinstance(value, np.ndarray):
            return _("a NumPy array"), _("return x.tolist()")
        if isinstance(value, Collected) and value.source == "set" and kind == INDEX_LIST:
            return _("a set"), _("return sorted(x)")
        if isinstance(value, (tuple, Collected)):
            return _container(value), _("return list(x)")
        if not isinstance(value, list) or not value:
            return None
        if kind == FLOATS:
            if all(isinstance(v, torch.Tensor) and v.numel() == 1 for v in value):
                return _("a list of tensors"), _("return [float(v) for v in x]")
            if all(isinstance(v, np.generic) for v in value):
                return _("a list of NumPy numbers"), _("return [float(v) for v in x]")
            return None
        if all(isinstance(v, torch.Tensor) and v.numel() == 1 for v in value):
            return _("a list of tensors"), _("return [int(i) for i in x]")
        if all(isinstance(v, np.integer) for v in value):
            return _("a list of NumPy integers"), _("return [int(i) for i in x]")
        if all(isinstance(v, float) and v.is_integer() for v in value):
            return _("a list of floats"), _("return [int(i) for i in x]")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            return None
        twice = sorted({v for v in value if value.count(v) > 1})
        if twice:
            described = tr("a list that holds {item} more than once", item=twice[0])
            return described, _("return sorted(set(x))")
        if value != sorted(value):
            return _("a list that is not in increasing order"), _("return sorted(x)")
        return None
    return None


def type_problem(value, returns, function: str) -> str | None:
    """The policy's sentence when ``function`` returned a near miss of ``returns``, else None."""
    if returns is None:
        return None
    missed = _near_miss(value, returns)
    if missed:
        what, fix = missed
        wanted = _("a tuple") if isinstance(returns, tuple) else asked(returns)
        return tr(
            "`{function}` returned {what}, but the question asks for {asked}: {fix}.",
            function=function,
            what=what,
            asked=wanted,
            fix=fix,
        )
    if isinstance(returns, tuple) and isinstance(value, tuple) and len(value) == len(returns):
        for number, (item, kind) in enumerate(zip(value, returns, strict=True), start=1):
            missed = _near_miss(item, kind)
            if missed:
                what, fix = missed
                return tr(
                    "Item {number} of the tuple `{function}` returned is {what}, but the question "
                    "asks for {asked} there: {fix}.",
                    number=number,
                    function=function,
                    what=what,
                    asked=asked(kind),
                    fix=fix,
                )
    return None


def _sentence(value, kind, what: str) -> str | None:
    """The policy's words for a near miss, about ``what`` (e.g. "The output")."""
    missed = _near_miss(value, kind)
    if missed is None:
        return None
    described, fix = missed
    return tr(
        "{what} is {described}, but the question asks for {asked}: {fix}.",
        what=translate(what),
        described=described,
        asked=asked(kind),
        fix=fix,
    )


# -- helpers for judging values ----------------------------------------------------------------------


def as_tensor(value, what: str, shape: tuple | None = None):
    """(value as a float64 tensor, None), or (None, a sentence saying why it is not usable).

    Accepts a torch tensor only (of any real dtype: ``Question.returns`` says which); the type
    policy's sentence for a NumPy array or a list.
    """
    if isinstance(value, TooMany):
        return None, tr(
            "{what} should be a tensor, but your function returned an endless iterator.",
            what=translate(what),
        )
    if isinstance(value, np.ndarray) and value.dtype.kind == "c":
        return None, _complex(what, value)
    if not isinstance(value, torch.Tensor):
        if isinstance(value, tuple) and len(value) > 1 and isinstance(value[0], torch.Tensor):
            return None, tr(
                "{what} should be one tensor, but your function returned a tuple of "
                "{count} things; return only the tensor asked for.",
                what=translate(what),
                count=len(value),
            )
        near = _sentence(value, TENSOR, what)
        return None, near or tr(
            "{what} should be a torch tensor, but your function returned {kind}.",
            what=translate(what),
            kind=kind_of(value),
        )
    if value.is_complex():
        return None, _complex(what, value)
    if shape is not None and tuple(value.shape) != tuple(shape):
        return None, tr(
            "{what} should have shape {shape}, but yours has shape {got}.",
            what=translate(what),
            shape=tuple(shape),
            got=tuple(value.shape),
        )
    value = value.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(value).all()):
        return None, tr(
            "{what} contains NaN or infinite values: look for a division by zero, a log of 0, "
            "or a softmax over -inf everywhere.",
            what=translate(what),
        )
    return value, None


def _complex(what: str, value) -> str:
    return tr(
        "{what} should hold real numbers, but yours is complex ({dtype}).",
        what=translate(what),
        dtype=value.dtype,
    )


def as_number(value, what: str):
    """(value as a float, None), or (None, a sentence saying why it is not one number).

    Accepts a Python float or int; the type policy's sentence for a tensor or a NumPy number.
    """
    near = _sentence(value, FLOAT, what)
    if near:
        return None, near
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return None, tr(
            "{what} should be one number, but your function returned an array of shape "
            "{shape}; reduce it to a single value (e.g. with .max()).",
            what=translate(what),
            shape=tuple(value.shape),
        )
    if not _is_number(value):
        return None, tr(
            "{what} should be a number, but your function returned {kind}.",
            what=translate(what),
            kind=kind_of(value),
        )
    value = float(value)
    if not math.isfinite(value):
        return None, tr(
            "{what} should be a finite number, but yours is {value}.",
            what=translate(what),
            value=value,
        )
    return value, None


def as_int(value, what: str):
    """(value, None) for a Python int, or (None, a sentence saying why it is not one)."""
    near = _sentence(value, INT, what)
    if near:
        return None, near
    if isinstance(value, float) and math.isfinite(value):
        return None, tr(
            "{what} should be a whole number, but yours is {value:g}.",
            what=translate(what),
            value=value,
        )
    if isinstance(value, (torch.Tensor, np.ndarray)):
        return None, tr(
            "{what} should be one number (an int), but your function returned an array of shape "
            "{shape}.",
            what=translate(what),
            shape=tuple(value.shape),
        )
    if not isinstance(value, int) or isinstance(value, bool):
        return None, tr(
            "{what} should be an int, but your function returned {kind}.",
            what=translate(what),
            kind=kind_of(value),
        )
    return value, None


def _list_problem(value, kind: str, what: str) -> str | None:
    """The sentence for a value that is no list (of ints for INDEX_LIST, of floats for FLOATS) at
    first sight (an endless iterator, or the type policy's near miss of ``kind``), else None."""
    if isinstance(value, TooMany):
        if kind == INDEX_LIST:
            sentence = N_(
                "{what} should be a list of ints, but your function returned an endless iterator."
            )
        else:
            sentence = N_(
                "{what} should be a list of floats, but your function returned an endless iterator."
            )
        return translate(sentence).format(what=translate(what))
    return _sentence(value, kind, what)


def as_index_list(value, what: str, size: int | None = None, outside=None):
    """(a list of ints, None), or (None, a sentence): the policy's increasing list, each once.

    size, outside: every index must lie in 0 .. size - 1; ``outside(the indices that do not, in
    increasing order)`` gives the sentence when one does not.
    """
    near = _list_problem(value, INDEX_LIST, what)
    if near:
        return None, near
    if _is_number(value) or isinstance(value, bool):
        return None, tr(
            "{what} should be a list of ints (e.g. [0, 1, 2]), not one number.",
            what=translate(what),
        )
    if not isinstance(value, list):
        return None, tr(
            "{what} should be a list of ints, but your function returned {kind}.",
            what=translate(what),
            kind=kind_of(value),
        )
    if value and all(isinstance(v, bool) for v in value):
        return None, tr(
            "{what} is a True/False mask; return the indices themselves, e.g. "
            "[i for i in range(n) if ...].",
            what=translate(what),
        )
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None, tr("{what} should hold plain ints, one per index.", what=translate(what))
    beyond = [] if size is None else sorted(v for v in value if not 0 <= v < size)
    if beyond:
        return None, outside(beyond)
    return list(value), None


def as_floats(value, what: str, length: int | None = None):
    """(a float64 tensor, None) from a list of floats or a 1-D float tensor, or (None, a sentence)."""
    near = _list_problem(value, FLOATS, what)
    if near:
        return None, near
    if isinstance(value, list):
        if not all(_is_number(v) for v in value):
            return None, tr(
                "{what} should hold plain numbers (Python floats), one per item.",
                what=translate(what),
            )
        value = torch.tensor(value, dtype=torch.float64)
    got, problem = as_tensor(value, what)
    if problem:
        return None, problem
    if got.dim() != 1 or (length is not None and got.numel() != length):
        if length is None:
            return None, tr(
                "{what} should be numbers in one flat list, but yours has shape {shape}.",
                what=translate(what),
                shape=tuple(got.shape),
            )
        return None, tr(
            "{what} should be {length} numbers in one flat list, but yours has shape {shape}.",
            what=translate(what),
            length=length,
            shape=tuple(got.shape),
        )
    return got, None


def close(a: torch.Tensor, b: torch.Tensor, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    """True when two tensors agree to float32 accuracy (shapes must match)."""
    return a.shape == b.shape and bool(torch.allclose(a, b.to(a.dtype), rtol=rtol, atol=atol))


def near(got: torch.Tensor, want: torch.Tensor, tol: float = 2e-4) -> bool:
    """Equal to ``tol`` relative to the size of the largest value of ``want`` (shapes must match)."""
    if got.shape != want.shape:
        return False
    scale = 1.0 + float(want.abs().max()) if want.numel() else 1.0
    return bool(((got - want).abs() <= tol * scale).all())


def same_number(
    got: float, want: float, rtol: float = 1e-4, atol: float = 1e-6, floor: float = 0.0
) -> bool:
    """True when |got - want| <= rtol * max(|want|, floor) + atol.

    floor: a size below which the tolerance stops shrinking (``floor=1`` with ``atol=0``: an
    absolute ``rtol`` for numbers under 1, a relative one above).
    """
    return abs(got - want) <= rtol * max(abs(want), floor) + atol


def not_finite(value) -> bool:
    """True when ``value`` reads as numbers (a tensor, a list, a number) and one is NaN or inf."""
    try:
        tensor = torch.as_tensor(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError):
        return False
    return not bool(torch.isfinite(tensor).all())


def kind_of(value) -> str:
    """What a value is, in words: "a NumPy array of int64 values", "an endless iterator"."""
    if value is None:
        return "None"
    if isinstance(value, np.ndarray):
        return tr("a NumPy array of {dtype} values", dtype=value.dtype)
    if isinstance(value, np.generic):
        return tr("a NumPy scalar (numpy.{dtype})", dtype=value.dtype)
    if isinstance(value, TooMany):
        return _("an endless iterator")
    if isinstance(value, Collected):
        return tr("a {type}", type=value.source)
    name = type(value).__name__ or _("nameless object")
    return tr("an {type}", type=name) if name[0] in "aeiou" else tr("a {type}", type=name)
