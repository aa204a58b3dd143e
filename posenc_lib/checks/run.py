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
import os
import random
import signal
import sys
import sysconfig
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
                if _GUARD.active:
                    _GUARD.switch_off()  # a module of the library imported by the answer
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


def resolve(names, lazy: bool = False) -> tuple:
    """The functions named ``package.module.function`` (or ``...Class.method``), with their code.

    lazy: a name outside this package whose module is not imported yet (transformers' T5 code, a
    cold import of seconds) is given back as the string itself, and is switched off during a call
    as soon as something imports it.
    """
    found = []
    for name in names:
        if lazy and not name.startswith(_PACKAGE_NAME + "."):
            loaded = _loaded(name)
            if loaded is None:
                found.append(name)
                continue
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


def _loaded(name: str):
    """The function ``name`` if its module is imported already (nothing is imported), else None."""
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        owner = sys.modules.get(".".join(parts[:cut]))
        if owner is not None:
            break
    else:
        return None
    for part in parts[cut:]:
        try:
            owner = vars(owner).get(part)
        except TypeError:
            return None
        if owner is None:
            return None
    return owner


# -- the whole library switched off -------------------------------------------------------------------
#
# While an answer runs, every function defined in a module of this package (module-level functions,
# methods of its classes, the private helpers of ``checks.chNN``) has its code replaced by a stub.
# The stub runs the real code when it is called by the library itself (a library function given in
# a case's arguments calls others), and raises the tutor's sentence when the learner's code calls
# it. The harness (``checks``, ``checks.run``, ``_sandbox``, ``grade``) is left alone; the functions
# in the case's arguments are left alone; references keep their own stub (always off).

_PACKAGE_NAME = __name__.split(".")[0]
_HERE = os.path.dirname(__file__)
_PACKAGE_DIR = os.path.dirname(_HERE)
_HARNESS = {
    f"{_PACKAGE_NAME}.checks": os.path.join(_HERE, "__init__.py"),
    f"{_PACKAGE_NAME}.checks.run": __file__,
    f"{_PACKAGE_NAME}.grading.sandbox": os.path.join(_PACKAGE_DIR, "grading", "sandbox.py"),
    f"{_PACKAGE_NAME}.grading.cli": os.path.join(_PACKAGE_DIR, "grading", "cli.py"),
}
_HARNESS_FILES = frozenset({*_HARNESS.values(), *(os.path.abspath(f) for f in _HARNESS.values())})
_PACKAGE_PREFIXES = tuple({_PACKAGE_DIR + os.sep, os.path.abspath(_PACKAGE_DIR) + os.sep})
_NEUTRAL = tuple(  # the standard library and installed packages (torch, functools...): looked past
    {
        os.path.abspath(path) + os.sep
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (path := sysconfig.get_paths().get(key))
    }
) + ("<frozen ",)
GUARD = "__posenc_guard__"  # the name a library stub calls, in its module's globals during a call


def _library_frame(frame) -> bool:
    """True when the code that called a library function is the library's own.

    Walks up from ``frame`` past the harness and past the standard library and installed packages
    (an ``nn.Module.__call__`` between two library functions): the first other frame decides.
    A library frame is one in a file of this package running in one of its modules' globals (as
    learned before the call: a submission that replaces a module in sys.modules changes nothing).
    """
    for _ in range(64):
        if frame is None:
            return False
        file = frame.f_code.co_filename
        if file not in _HARNESS_FILES:
            if file.startswith(_PACKAGE_PREFIXES):
                return id(frame.f_globals) in _GUARD.library_globals
            if not file.startswith(_NEUTRAL):
                return False
        frame = frame.f_back
    return False


@functools.cache
def _guard_code(key: str, free: int) -> types.CodeType:
    """A stub's code, with ``free`` free variables (a method using super() has one)."""
    names = [f"_v{i}" for i in range(free)]
    lines = ["def make():"]
    if names:
        lines.append(f"    {' = '.join(names)} = None")
    lines.append("    def switched_off(*args, **kwargs):")
    if names:
        lines.append(f"        ({', '.join(names)},)")
    lines += [f"        return {GUARD}({key!r}, args, kwargs)", "    return switched_off"]
    namespace: dict = {}
    exec(compile("\n".join(lines), __file__, "exec"), namespace)  # noqa: S102 - our own lines
    return namespace["make"]().__code__


def _functions_in(value, file: str):
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        for part in (value.fget, value.fset, value.fdel):
            yield from _functions_in(part, file)
        return
    if isinstance(value, types.ModuleType) or not callable(value):
        return
    while not isinstance(value, types.FunctionType):  # functools.wraps, functools.cache
        try:
            value = vars(value).get("__wrapped__")
        except TypeError:
            return
        if value is None:
            return
    if value.__code__.co_filename == file:
        yield value


def _module_functions(module) -> list:
    """The functions defined in ``module``: module level, and methods of its classes."""
    file, name = getattr(module, "__file__", None), module.__name__
    found = []
    if not file:
        return found
    for value in list(vars(module).values()):
        if isinstance(value, type):
            if value.__module__ == name:
                for attr in list(vars(value).values()):
                    found.extend(_functions_in(attr, file))
        else:
            found.extend(_functions_in(value, file))
    return found


class _Guard:
    """The library's functions, their real code, and which are switched off now."""

    def __init__(self):
        self.scanned: dict[int, tuple] = {}  # id(module) -> (module, [(function, code, key)])
        self.functions: dict[str, tuple] = {}  # key -> (function, the real code)
        self.clones: dict[str, types.FunctionType] = {}  # key -> a function running the real code
        self.harness: list[tuple] = []  # (harness function, its code): put back after each call
        self.seen_modules = -1
        self.active = False
        self.off: list[tuple] = []  # (function, real code) switched off in this call
        self.namespaces: list[dict] = []  # the lazy references' globals given the GUARD hook
        self.exempt: set[int] = set()
        self.skip: set[int] = set()
        self.pending: list[str] = []  # lazy references not imported yet
        self.references: list = []  # Reference objects switched off by the guard (lazy ones)
        self.used: list[str] = []
        self.flat: list[tuple] = []  # (function, real code, stub code), outside the harness
        self.layout: list[tuple] = []  # the checks modules: see _layout
        self.globals: list[dict] = []  # the globals of the functions in ``flat``
        self.library_globals: set[int] = set()  # ids of the package's modules' globals

    def scan(self) -> None:
        """Learn the functions of the package's modules imported since the last scan."""
        if len(sys.modules) == self.seen_modules:
            return
        self.seen_modules = len(sys.modules)
        for name, module in list(sys.modules.items()):
            if not (name == _PACKAGE_NAME or name.startswith(_PACKAGE_NAME + ".")):
                continue
            if module is None or id(module) in self.scanned:
                continue  # (kept by identity: replacing a module in sys.modules changes nothing)
            harness, entries = name in _HARNESS, []
            for function in _module_functions(module):
                if harness:
                    self.harness.append((function, function.__code__))
                    continue
                key = f"{function.__module__}.{function.__qualname__}"
                while key in self.functions and self.functions[key][0] is not function:
                    key += "'"
                self.functions.setdefault(key, (function, function.__code__))
                entries.append((function, self.functions[key][1], key))
            self.scanned[id(module)] = (module, entries)
        self.flat = [
            (function, code, _guard_code(key, len(code.co_freevars)))
            for _, entries in self.scanned.values()
            for function, code, key in entries
        ]
        self.globals = list({id(f.__globals__): f.__globals__ for f, _, _ in self.flat}.values())
        self.library_globals = {id(vars(module)) for module, _ in self.scanned.values()}
        prefix = f"{_PACKAGE_NAME}.checks"
        self.layout = [
            _layout(m) for m, _ in self.scanned.values() if m.__name__.startswith(prefix)
        ]

    def switch_off(self) -> None:
        """Switch off what is not off yet (called at the start, and after each import)."""
        self.scan()
        skip, off = self.exempt | self.skip, self.off
        for namespace in self.globals:  # (after an import: the new modules' too)
            namespace[GUARD] = _guard_hook
        for function, code, stub in self.flat:  # (one already off has the stub as its code)
            if function.__code__ is code and id(function) not in skip:
                function.__code__ = stub
                off.append((function, code))
        if self.pending:
            for name in list(self.pending):
                function = _loaded(name)
                if function is None:
                    continue
                self.pending.remove(name)
                try:
                    (ref,) = resolve([name])
                except ValueError:
                    continue
                ref.function.__globals__.setdefault(GUARD, _guard_hook)
                self.namespaces = [*self.namespaces, ref.function.__globals__]
                self.references.append(ref)
                ref.function.__code__ = _reference_code(ref.name)

    def restore(self) -> None:
        for function, code in self.off:
            function.__code__ = code
        for ref in self.references:
            ref.function.__code__ = ref.code
        for function, code in self.harness:
            if function.__code__ is not code:
                function.__code__ = code
        for namespace in (*self.globals, *self.namespaces):
            namespace.pop(GUARD, None)
        self.off, self.namespaces, self.references, self.pending = [], [], [], []


_GUARD = _Guard()


@functools.cache
def _reference_code(name: str) -> types.CodeType:
    namespace: dict = {}
    source = f"def switched_off(*args, **kwargs):\n    return {GUARD}({name!r}, None, None)\n"
    exec(compile(source, __file__, "exec"), namespace)  # noqa: S102 - our own two lines
    return namespace["switched_off"].__code__


def _guard_hook(key, args, kwargs):
    """What a switched-off library function does: its real work for the library, else a sentence."""
    entry = _GUARD.functions.get(key) if args is not None else None
    if entry is not None and _library_frame(sys._getframe(1)):
        clone = _GUARD.clones.get(key)
        function, code = entry
        if clone is None or clone.__defaults__ is not function.__defaults__:
            clone = types.FunctionType(
                code, function.__globals__, function.__name__, function.__defaults__,
                function.__closure__,
            )  # fmt: skip
            clone.__kwdefaults__ = function.__kwdefaults__
            clone.__qualname__ = function.__qualname__
            _GUARD.clones[key] = clone
        return clone(*args, **kwargs)
    _GUARD.used.append(key)
    raise RuntimeError(
        f"the library's `{key}` is switched off while your answer is checked: this exercise asks "
        "you to write it yourself."
    )


def _exempt(value, found: set, depth: int = 0) -> set:
    """The ids of the functions given in a case's arguments (they may be called)."""
    if depth > 3:
        return found
    if isinstance(value, types.MethodType):
        value = value.__func__
    if isinstance(value, functools.partial):
        _exempt(value.func, found, depth + 1)
        for item in (*value.args, *value.keywords.values()):
            _exempt(item, found, depth + 1)
    elif isinstance(value, types.FunctionType):
        found.add(id(value))
        wrapped = vars(value).get("__wrapped__")
        if wrapped is not None:
            _exempt(wrapped, found, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _exempt(item, found, depth + 1)
    elif isinstance(value, dict):
        for item in value.values():
            _exempt(item, found, depth + 1)
    return found


def _layout(module) -> tuple:
    """A checks module's namespace, its classes, its objects' attribute dicts, its module-level
    containers (the harness's own are left alone)."""
    namespace, classes, objects, data = vars(module), [], [], []
    harness = module.__name__ in _HARNESS
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue  # __builtins__ is a dict too
        if isinstance(value, type):
            if value.__module__ == module.__name__:
                classes.append(value)
        elif type(value) in (dict, list, set):
            if not harness:
                data.append(value)
        elif type(value).__module__.startswith(_PACKAGE_NAME + ".checks") and value is not _GUARD:
            if type(getattr(value, "__dict__", None)) is dict:
                objects.append(value.__dict__)
    return namespace, classes, objects, data


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
