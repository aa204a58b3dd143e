"""The time limit of one call of a learner's function.

It counts the function's own work: the CPU time of the calling thread, minus the time spent
importing modules (a cold ``import transformers`` is not the answer's work; ``isolation.py`` keeps
that count). It is enforced with SIGALRM (Unix, main thread; elsewhere there is none), which fires
only when the budget could have run out; a generous wall-clock hard limit (``hard_limit``) stops a
call that waits or blocks instead of computing. If the function swallows the interrupt (``except
BaseException`` or a bare ``except:``) and goes on, it is interrupted again every REFIRE_SECONDS. A
loop that swallows *every* interrupt cannot be stopped from inside the process (Jupyter's stop
button cannot stop it either); a grader runs each submission in a child process it can kill. An
outer timer (a grader's, pytest-timeout's) is re-armed after.
"""

from __future__ import annotations

import signal
import threading
import time
from contextlib import contextmanager

REFIRE_SECONDS = 0.25  # after the time limit, interrupt again this often

# Taken at import, before any learner code runs: a submission that replaces it changes nothing.
_thread_time = time.thread_time


def hard_limit(cpu_seconds: float) -> float:
    """The wall-clock seconds after which a call is stopped, whatever its CPU time."""
    return max(20.0, 4 * cpu_seconds)


class _TimedOut(BaseException):
    """Raised inside a learner's function when it runs too long (a BaseException, so that
    ``except Exception`` in the learner's code does not swallow it). ``wall``: the hard limit."""

    def __init__(self, wall: bool = False):
        super().__init__()
        self.wall = wall


class _Clock:
    """The CPU time of this thread since ``start``, not counting the time spent in imports."""

    def __init__(self):
        self.start, self.imports, self.depth, self.entered = _thread_time(), 0.0, 0, 0.0

    def own(self) -> float:
        now = _thread_time()
        inside = now - self.entered if self.depth else 0.0
        return now - self.start - self.imports - inside


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
