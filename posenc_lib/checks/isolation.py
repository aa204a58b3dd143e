"""One call's isolation: the library switched off (``guard.py``), the question's references
switched off (``references.py``), the time spent importing not counted (``timing.py``), and
whatever the answer changed in the checks' modules and the random number generators put back.
"""

from __future__ import annotations

import builtins
import importlib
import random
from contextlib import contextmanager

import torch

from posenc_lib.checks.guard import _GUARD, _exempt
from posenc_lib.checks.references import Reference, _switched_off
from posenc_lib.checks.timing import _Clock, _thread_time


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
                if _GUARD.active:
                    _GUARD.switch_off()  # a module of the library imported by the answer
            clock.depth -= 1

    builtins.__import__ = timed_import
    try:
        yield
    finally:
        builtins.__import__ = original


class _State:
    """What an answer may change and must not keep: the checks modules' names (and their classes'
    and questions' attributes), the data the chapters keep at module level (emptied during the
    call: a cache of answers is not readable), the random number generators."""

    calls = 0

    def __init__(self, layout):
        self.torch_rng = torch.get_rng_state()
        self.random = random.getstate()
        # Each call draws from its own stream (an answer that adds noise differs between two
        # inputs, as it would in a notebook), and the learner's stream goes on unchanged after.
        _State.calls += 1
        torch.default_generator.manual_seed(0x5EED0000 + _State.calls)
        random.seed(0x5EED0000 + _State.calls)
        self.mappings, self.data = [], []
        for namespace, classes, objects, data in layout:
            for owner, mapping in (
                (None, namespace),
                *((None, attributes) for attributes in objects),
                *((cls, vars(cls)) for cls in classes),
            ):
                self.mappings.append((owner, mapping, mapping.copy(), [*map(id, mapping.values())]))
            for value in data:
                if value:
                    self.data.append((value, value.copy()))
                    value.clear()

    def restore(self) -> None:
        torch.set_rng_state(self.torch_rng)
        random.setstate(self.random)
        for cls, mapping, saved, ids in self.mappings:
            if [*map(id, mapping.values())] == ids and [*mapping] == [*saved]:
                continue
            if cls is None:
                mapping.clear()
                mapping.update(saved)
                continue
            for name in [n for n in mapping if n not in saved]:
                delattr(cls, name)
            for name, value in saved.items():
                if mapping.get(name, _State) is not value:
                    setattr(cls, name, value)
        for value, saved in self.data:
            value.clear()
            if isinstance(value, list):
                value.extend(saved)
            else:
                value.update(saved)


@contextmanager
def _library_off(references, args):
    """The whole library switched off for the block (see above); yields the names the answer
    reached. Nested calls (an answer calling ``call``) change nothing."""
    if _GUARD.active:
        yield []
        return
    _GUARD.scan()
    state = _State(_GUARD.layout)
    pending = [r for r in references if isinstance(r, str)]
    references = [r for r in references if isinstance(r, Reference)]
    _GUARD.active, _GUARD.used = True, []
    _GUARD.exempt = _exempt(args, set())
    _GUARD.skip = {id(r.function) for r in references}
    _GUARD.pending = pending
    import_module = importlib.import_module

    def imported(*a, **k):
        try:
            return import_module(*a, **k)
        finally:
            _GUARD.switch_off()

    try:
        with _switched_off(references) as used:
            _GUARD.switch_off()
            importlib.import_module = imported
            try:
                yield used
            finally:
                importlib.import_module = import_module
                used.extend(_GUARD.used)
    finally:
        _GUARD.restore()
        _GUARD.active, _GUARD.exempt, _GUARD.skip = False, set(), set()
        state.restore()
