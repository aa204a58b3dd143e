"""Running a learner's function: on copies of the inputs, under a time limit, with the question's
library references switched off, and never letting anything it does (raise, hang, return a strange
object, change its inputs) escape as a traceback.

``call(fn, args, timeout, references)`` returns an ``Outcome``. The value inside is made plain
while the time limit still runs: tensor subclasses become plain tensors, iterators become lists (at
most MAX_ITEMS, remembering what they were), so judging it later never runs learner code.

The pieces: ``timing.py`` (the time limit: the function's own CPU time, imports not counted, and a
wall-clock hard limit), ``references.py`` (the question's references switched off), ``guard.py``
(the whole library switched off but for its own calls; which modules are the harness),
``isolation.py`` (one call's isolation, and the state put back after).
"""

from __future__ import annotations

import copy
import inspect
import math
import types
from dataclasses import dataclass

import numpy as np
import torch

from posenc_lib.checks.guard import _GUARD, _exempt, is_harness  # noqa: F401 - the grader's
from posenc_lib.checks.isolation import _imports_not_counted, _library_off
from posenc_lib.checks.references import Reference, resolve
from posenc_lib.checks.timing import _Clock, _Limit, _time_limit, _TimedOut, hard_limit
from posenc_lib.i18n import tr

NOT_ATTEMPTED = "not attempted"
RETURNED, RAISED = "returned", "raised"
TOO_SLOW = "too slow"  # used more CPU time than the question allows
TIMED_OUT = "timed out"  # still running at the wall-clock hard limit
CHANGED_INPUT = "changed its input"  # error: the argument it modified, e.g. "`x`"
SHORTCUT = "used the library"  # error: the dotted name of the reference it called
KINDS = (RETURNED, RAISED, NOT_ATTEMPTED, TOO_SLOW, TIMED_OUT, CHANGED_INPUT, SHORTCUT)
MAX_ITEMS = 100_000  # items read from a returned iterator

# Taken at import, before any learner code runs: a submission that replaces them changes nothing.
_tensor_equal, _array_equal = torch.equal, np.array_equal
_isnan, _nan_to_num = torch.isnan, torch.nan_to_num


@dataclass
class Outcome:
    """What a learner's function did on one input."""

    kind: str  # one of KINDS
    value: object = None  # the return value, made plain, when kind == "returned"
    error: str = ""  # "TypeError: ..." (raised), the argument (changed its input), the reference


class TooMany:
    """Stands for an iterator that yielded more than MAX_ITEMS items."""


class Collected(list):
    """The items of an iterable that was not a list or a tuple; ``source`` says what it was."""

    source = "iterator"


# -- side effects ------------------------------------------------------------------------------------


def _same(a, b) -> bool:
    """True when ``a`` (an argument after the call) is still exactly ``b`` (a copy made before)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        if (a.dtype, a.shape, a.device) != (b.dtype, b.shape, b.device):
            return False
        if a.is_floating_point() or a.is_complex():
            return _tensor_equal(_nan_to_num(a), _nan_to_num(b)) and _tensor_equal(
                _isnan(a), _isnan(b)
            )
        return _tensor_equal(a, b)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and _array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, (bool, int, complex, str, bytes, type(None))):
        return a == b
    return True  # functions and other objects are passed as they are: nothing to compare


def _argument(fn, index: int) -> str:
    """The name of ``fn``'s parameter at ``index``, in backquotes, or "argument 2"."""
    try:
        parameters = list(inspect.signature(fn).parameters.values())
        if index < len(parameters) and parameters[index].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            return f"`{parameters[index].name}`"
    except BaseException:  # noqa: BLE001 - a signature that cannot be read
        pass
    return tr("argument {number}", number=index + 1)


# -- calling ---------------------------------------------------------------------------------------


def _plain(value, depth: int = 0):
    """``value`` without learner-defined behaviour: plain tensors, lists for iterators."""
    if isinstance(value, torch.Tensor):
        with torch._C.DisableTorchFunctionSubclass():
            if value.layout != torch.strided:  # sparse: kept sparse, for the type policy to name
                return value.detach().to_dense().to_sparse()
        return torch.Tensor.as_subclass(value, torch.Tensor).detach()
    if isinstance(value, (np.ndarray, np.generic)) or value is None:
        return value  # NumPy scalars stay themselves (np.float64 is a float subclass)
    for kind in (bool, int, float, complex, str, bytes):
        if isinstance(value, kind):
            return kind(value)  # an int subclass becomes an int
    if depth >= 2 or not hasattr(value, "__iter__"):
        return value
    items = []
    for item in value:  # lists, tuples, sets, ranges, dicts (keys), generators...
        if len(items) == MAX_ITEMS:
            return TooMany()
        items.append(_plain(item, depth + 1))
    if isinstance(value, tuple):
        return tuple(items)
    if isinstance(value, list):
        return items
    collected = Collected(items)
    collected.source = _source(value)
    return collected


def _source(value) -> str:
    if isinstance(value, (set, frozenset)):
        return "set"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, range):
        return "range"
    if isinstance(value, types.GeneratorType):
        return "generator"
    return "iterator"


def _describe(error: BaseException) -> str:
    try:
        text = str(error).strip()
        first = text.splitlines()[0] if text else ""
    except BaseException:  # noqa: BLE001 - an exception whose message itself fails
        first = ""
    return f"{type(error).__name__}: {first}"[:300].rstrip(": ")


def _raised_by(fn, error: BaseException) -> bool:
    """True when ``error`` was raised in ``fn``'s own body (not in something it called)."""
    code = getattr(inspect.unwrap(getattr(fn, "__func__", fn)), "__code__", None)
    tb = error.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_code is code


def _run_once(fn, args, timeout, clock) -> Outcome:
    limit = _Limit()
    try:
        with _time_limit(None if timeout is None else hard_limit(timeout), timeout, clock) as limit:
            value = _plain(fn(*args))
    except _TimedOut as stop:
        return Outcome(TIMED_OUT if stop.wall else TOO_SLOW)
    except KeyboardInterrupt:
        raise  # the learner pressed stop: stop
    except NotImplementedError as error:
        if _raised_by(fn, error):
            return Outcome(NOT_ATTEMPTED)
        return Outcome(RAISED, error=_describe(error))
    except BaseException as error:  # noqa: BLE001 - any learner error becomes a sentence
        if limit.fired:  # it swallowed the interrupt, then raised something else
            return Outcome(TIMED_OUT if limit.fired == "wall" else TOO_SLOW)
        return Outcome(RAISED, error=_describe(error))
    if limit.fired:  # it swallowed the interrupt and returned
        return Outcome(TIMED_OUT if limit.fired == "wall" else TOO_SLOW)
    return Outcome(RETURNED, value)


def call(fn, args: tuple, timeout: float | None = 5.0, references=()) -> Outcome:
    """Call ``fn(*args)`` on copies of ``args``; record the result, the error or the timeout.

    timeout: seconds of CPU time the call may use (imports not counted); the wall-clock hard limit
    is ``hard_limit(timeout)``. references: ``Reference``s (or dotted names) switched off during
    the call. A NotImplementedError raised by ``fn`` itself means "not attempted" (the stub); one
    raised deeper (a typo'd method, an unsupported torch op) is reported as an error. An answer
    that calls a reference, or changes an argument in place, gets that outcome whatever it returned.
    """
    references = tuple(r for r in references if isinstance(r, Reference)) + resolve(
        (r for r in references if isinstance(r, str)), lazy=True
    )
    args = copy.deepcopy(args)  # a function that edits its input in place cannot spoil later calls
    before = copy.deepcopy(args)
    dtype, device = torch.get_default_dtype(), torch.get_default_device()
    clock = _Clock()
    try:
        with _library_off(references, args) as used, _imports_not_counted(clock):
            outcome = _run_once(fn, args, timeout, clock)
    finally:  # the learner may have changed torch's defaults; later checks need them back
        torch.set_default_dtype(dtype)
        if torch.get_default_device() != device:
            # None, not "cpu": setting any device installs a mode that every later torch call
            # then passes through in Python (measured: x + 1 on 3 numbers, 2.2 -> 3.4 us).
            torch.set_default_device(None if device.type == "cpu" else device)
    if used:
        return Outcome(SHORTCUT, error=used[0])
    if outcome.kind in (RETURNED, RAISED):
        for index, (after, original) in enumerate(zip(args, before, strict=True)):
            if not _same(after, original):
                return Outcome(CHANGED_INPUT, error=_argument(fn, index))
    return outcome
