"""Running a learner's function: on copies of the inputs, under a time limit, with the question's
library references switched off, and never letting anything it does (raise, hang, return a strange
object, change its inputs) escape as a traceback.

``call(fn, args, timeout, references)`` returns an ``Outcome``. The value inside is made plain
while the time limit still runs: tensor subclasses become plain tensors, iterators become lists (at
most MAX_ITEMS, remembering what they were), so judging it later never runs learner code.

The time limit counts the function's own work: the CPU time of the calling thread, minus the time
spent importing modules (a cold ``import transformers`` is not the answer's work). It is enforced
with SIGALRM (Unix, main thread; elsewhere there is none), which fires only when the budget could
have run out; a generous wall-clock hard limit (``hard_limit``) stops a call that waits or blocks
instead of computing. If the function swallows the interrupt (``except BaseException`` or a bare
``except:``) and goes on, it is interrupted again every REFIRE_SECONDS. A loop that swallows
*every* interrupt cannot be stopped from inside the process (Jupyter's stop button cannot stop it
either); a grader runs each submission in a child process it can kill. An outer timer (a grader's,
pytest-timeout's) is re-armed after.

While the function runs, the library functions that answer the question (``Question.references``)
have their code replaced by a stub that records the call and raises: however the learner reaches
them (``posenc_lib.X``, ``posenc_lib.module.X``, a name imported into the notebook, a closure, a
default argument), they are switched off. Their code is put back after the call, whatever happened.
"""

from __future__ import annotations

import builtins
import copy
import functools
import importlib
import inspect
import math
import signal
import threading
import time
import types
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

NOT_ATTEMPTED = "not attempted"
RETURNED, RAISED = "returned", "raised"
TOO_SLOW = "too slow"  # used more CPU time than the question allows
TIMED_OUT = "timed out"  # still running at the wall-clock hard limit
CHANGED_INPUT = "changed its input"  # error: the argument it modified, e.g. "`x`"
SHORTCUT = "used the library"  # error: the dotted name of the reference it called
KINDS = (RETURNED, RAISED, NOT_ATTEMPTED, TOO_SLOW, TIMED_OUT, CHANGED_INPUT, SHORTCUT)
MAX_ITEMS = 100_000  # items read from a returned iterator
REFIRE_SECONDS = 0.25  # after the time limit, interrupt again this often
HOOK = "__posenc_switched_off__"  # the name a stub calls, put in its module's globals for a call

# Taken at import, before any learner code runs: a submission that replaces them changes nothing.
_tensor_equal, _array_equal, _thread_time = torch.equal, np.array_equal, time.thread_time
_isnan, _nan_to_num = torch.isnan, torch.nan_to_num


def hard_limit(cpu_seconds: float) -> float:
    """The wall-clock seconds after which a call is stopped, whatever its CPU time."""
    return max(20.0, 4 * cpu_seconds)


@dataclass
class Outcome:
    """What a learner's function did on one input."""

    kind: str  # one of KINDS
    value: object = None  # the return value, made plain, when kind == "returned"
    error: str = ""  # "TypeError: ..." (raised), the argument (changed its input), the reference


class _TimedOut(BaseException):
    """Raised inside a learner's function when it runs too long (a BaseException, so that
    ``except Exception`` in the learner's code does not swallow it). ``wall``: the hard limit."""

    def __init__(self, wall: bool = False):
        super().__init__()
        self.wall = wall


class TooMany:
    """Stands for an iterator that yielded more than MAX_ITEMS items."""


class Collected(list):
    """The items of an iterable that was not a list or a tuple; ``source`` says what it was."""

    source = "iterator"


# -- the time limit ---------------------------------------------------------------------------------


class _Clock:
    """The CPU time of this thread since ``start``, not counting the time spent in imports."""

    def __init__(self):
        self.start, self.imports, self.depth, self.entered = _thread_time(), 0.0, 0, 0.0

    def own(self) -> float:
        now = _thread_time()
        inside = now - self.entered if self.depth else 0.0
        return now - self.start - self.imports - inside


@contextmanager
def _imports_not_counted(clock: _Clock):
    """Time spent importing modules goes to ``clock.imports`` while the block runs."""
    original = builtins.__import__

    def timed_import(*args, **kwargs):
        clock.depth += 1
        if clock.depth == 1:
            clock.entered = _thread_time()
        try:
            return original(*args, **kwargs)
        finally:
            if clock.depth == 1:
                clock.imports += _thread_time() - clock.entered
            clock.depth -= 1

    builtins.__import__ = timed_import
    try:
        yield
    finally:
        builtins.__import__ = original


class _Limit:
    """What the time limit did: ``fired`` is None, "cpu" or "wall"."""

    fired: str | None = None


@contextmanager
def _time_limit(seconds: float | None, cpu_seconds: float | None = None, clock=None):
    """Interrupt the block with _TimedOut after ``seconds`` of wall-clock time, or once ``clock``
    counts more than ``cpu_seconds`` of CPU time (main thread, Unix; else no limit). Yields a
    ``_Limit`` that remembers whether it fired (a function may swallow the interrupt and return)."""
    limit = _Limit()
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield limit
        return
    started = time.monotonic()
    if cpu_seconds is not None and clock is None:
        clock = _Clock()

    def next_check() -> float:
        """Seconds until a limit could be reached: CPU time grows no faster than the clock."""
        left = seconds - (time.monotonic() - started)
        if cpu_seconds is not None:
            left = min(left, cpu_seconds - clock.own())
        return max(left, 0.01)

    def on_alarm(_signum, _frame):
        wall = time.monotonic() - started >= seconds
        if wall or (cpu_seconds is not None and clock.own() > cpu_seconds):
            signal.setitimer(signal.ITIMER_REAL, REFIRE_SECONDS)  # one-shot, re-armed each time
            limit.fired = "wall" if wall else "cpu"
            raise _TimedOut(wall)
        signal.setitimer(signal.ITIMER_REAL, next_check())  # not yet: look again when it could be

    outer_handler = signal.signal(signal.SIGALRM, on_alarm)
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, next_check())
    try:
        yield limit
    finally:
        while True:  # an alarm landing right here must not skip the clean-up below
            try:
                signal.setitimer(signal.ITIMER_REAL, 0)
                break
            except _TimedOut:
                continue
        signal.signal(
            signal.SIGALRM, outer_handler if outer_handler is not None else signal.SIG_DFL
        )
        if outer_delay > 0:  # someone else's timer was running: give it back what is left
            left = max(outer_delay - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)


# -- references switched off ------------------------------------------------------------------------


@dataclass(frozen=True)
class Reference:
    """A library function a question asks the learner to write: its dotted name and its code."""

    name: str
    function: types.FunctionType
    code: types.CodeType


def resolve(names) -> tuple[Reference, ...]:
    """The functions named ``package.module.function`` (or ``...Class.method``), with their code."""
    found = []
    for name in names:
        parts = name.split(".")
        for cut in range(len(parts) - 1, 0, -1):  # the longest importable prefix is the module
            try:
                owner = importlib.import_module(".".join(parts[:cut]))
                break
            except ImportError:
                continue
        else:
            raise ValueError(f"cannot import a module from the reference {name!r}")
        for part in parts[cut:]:
            owner = vars(owner)[part] if isinstance(owner, type) else getattr(owner, part)
        function = inspect.unwrap(owner)
        if not isinstance(function, types.FunctionType) or function.__code__.co_freevars:
            raise ValueError(f"the reference {name!r} is not a plain Python function")
        found.append(Reference(name, function, function.__code__))
    return tuple(found)


@functools.cache
def _stub_code(name: str) -> types.CodeType:
    namespace: dict = {}
    source = f"def switched_off(*args, **kwargs):\n    return {HOOK}({name!r})\n"
    exec(source, namespace)  # noqa: S102 - our own two lines
    return namespace["switched_off"].__code__


@contextmanager
def _switched_off(references):
    """Within the block, each reference records its name in the yielded list and raises."""
    used: list[str] = []

    def hook(name):
        used.append(name)
        raise RuntimeError(  # a plain error: the call is recorded whatever the answer does with it
            f"the library's `{name}` is switched off while your answer is checked: this exercise "
            "asks you to write it yourself."
        )

    added = []
    try:
        for ref in references:
            if HOOK not in ref.function.__globals__:
                ref.function.__globals__[HOOK] = hook
                added.append(ref.function.__globals__)
            ref.function.__code__ = _stub_code(ref.name)
        yield used
    finally:
        for ref in references:
            ref.function.__code__ = ref.code
        for namespace in added:
            namespace.pop(HOOK, None)


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
    return f"argument {index + 1}"


# -- calling ---------------------------------------------------------------------------------------


def _plain(value, depth: int = 0):
    """``value`` without learner-defined behaviour: plain tensors, lists for iterators."""
    if isinstance(value, torch.Tensor):
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
        r for r in references if isinstance(r, str)
    )
    args = copy.deepcopy(args)  # a function that edits its input in place cannot spoil later calls
    before = copy.deepcopy(args)
    dtype, device = torch.get_default_dtype(), torch.get_default_device()
    clock = _Clock()
    try:
        with _switched_off(references) as used, _imports_not_counted(clock):
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
