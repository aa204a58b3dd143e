"""Running a learner's function: on copies of the inputs, under a time limit, and never letting
anything it does (raise, hang, return a strange object) escape as a traceback.

``call(fn, args)`` returns an ``Outcome``. The value inside is made plain while the time limit
still runs: tensor subclasses become plain tensors, iterators become lists (at most MAX_ITEMS), so
judging it later never runs learner code.

The time limit is SIGALRM (Unix, main thread; elsewhere there is none). If the function swallows
the interrupt (``except BaseException`` or a bare ``except:``) and goes on, it is interrupted
again every REFIRE_SECONDS. A loop that swallows *every* interrupt cannot be stopped from inside
the process (Jupyter's stop button cannot stop it either); a grader runs each submission in a
child process it can kill. An outer timer (a grader's, pytest-timeout's) is re-armed after.
"""

from __future__ import annotations

import copy
import inspect
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

NOT_ATTEMPTED = "not attempted"
MAX_ITEMS = 100_000  # items read from a returned iterator
REFIRE_SECONDS = 0.25  # after the time limit, interrupt again this often


@dataclass
class Outcome:
    """What a learner's function did on one input."""

    kind: str  # "returned", "raised", "not attempted" or "timed out"
    value: object = None  # the return value, made plain, when kind == "returned"
    error: str = ""  # "TypeError: ...", when kind == "raised"


class _TimedOut(BaseException):
    """Raised inside a learner's function when it runs too long (a BaseException, so that
    ``except Exception`` in the learner's code does not swallow it)."""


class TooMany:
    """Stands for an iterator that yielded more than MAX_ITEMS items."""


@contextmanager
def _time_limit(seconds: float | None):
    """Interrupt the block after ``seconds`` with _TimedOut (main thread, Unix; else no limit)."""
    usable = (
        seconds is not None
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def on_alarm(_signum, _frame):
        signal.setitimer(signal.ITIMER_REAL, REFIRE_SECONDS)  # one-shot, re-armed each time
        raise _TimedOut

    started = time.monotonic()
    outer_handler = signal.signal(signal.SIGALRM, on_alarm)
    outer_delay, outer_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
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


def _plain(value, depth: int = 0):
    """``value`` without learner-defined behaviour: plain tensors, lists for iterators."""
    if isinstance(value, torch.Tensor):
        return torch.Tensor.as_subclass(value, torch.Tensor).detach()
    if isinstance(value, np.ndarray) or value is None:
        return value
    for kind in (bool, int, float, complex, str, bytes):
        if isinstance(value, kind):
            return kind(value)  # an int subclass becomes an int
    if isinstance(value, np.generic) or depth >= 2 or not hasattr(value, "__iter__"):
        return value
    items = []
    for item in value:  # lists, tuples, sets, ranges, dicts (keys), generators...
        if len(items) == MAX_ITEMS:
            return TooMany()
        items.append(_plain(item, depth + 1))
    return tuple(items) if isinstance(value, tuple) else items


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


def call(fn, args: tuple, timeout: float | None = 5.0) -> Outcome:
    """Call ``fn(*args)`` on copies of ``args``; record the result, the error or the timeout.

    A NotImplementedError raised by ``fn`` itself means "not attempted" (the stub); one raised
    deeper (a typo'd method, an unsupported torch op) is reported as an error.
    """
    args = copy.deepcopy(args)  # a function that edits its input in place cannot spoil later calls
    dtype, device = torch.get_default_dtype(), torch.get_default_device()
    try:
        with _time_limit(timeout):
            value = _plain(fn(*args))
    except _TimedOut:
        return Outcome("timed out")
    except KeyboardInterrupt:
        raise  # the learner pressed stop: stop
    except NotImplementedError as error:
        if _raised_by(fn, error):
            return Outcome(NOT_ATTEMPTED)
        return Outcome("raised", error=_describe(error))
    except BaseException as error:  # noqa: BLE001 - any learner error becomes a sentence
        return Outcome("raised", error=_describe(error))
    finally:  # the learner may have changed torch's defaults; later checks need them back
        torch.set_default_dtype(dtype)
        if torch.get_default_device() != device:
            # None, not "cpu": setting any device installs a mode that every later torch call
            # then passes through in Python (measured: x + 1 on 3 numbers, 2.2 -> 3.4 us).
            torch.set_default_device(None if device.type == "cpu" else device)
    return Outcome("returned", value)
