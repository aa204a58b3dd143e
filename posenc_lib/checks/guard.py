"""The whole library switched off while an answer runs, but for the library's own calls.

Every function defined in a module of this package (module-level functions, methods of its classes,
the private helpers of ``checks.chNN``) has its code replaced by a stub. The stub runs the real code
when it is called by the library itself (a library function given in a case's arguments calls
others), and raises the tutor's sentence when the learner's code calls it. The harness is left
alone (``is_harness``); the functions in the case's arguments are left alone (``exempt``);
references keep their own stub (always off).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import sysconfig
import types

from posenc_lib.checks.references import PACKAGE_NAME, _loaded, resolve
from posenc_lib.i18n import tr

_PACKAGE_DIR = os.path.dirname(os.path.dirname(__file__))
_PACKAGE_PREFIXES = tuple({_PACKAGE_DIR + os.sep, os.path.abspath(_PACKAGE_DIR) + os.sep})
_NEUTRAL = tuple(  # the standard library and installed packages (torch, functools...): looked past
    {
        os.path.abspath(path) + os.sep
        for key in ("stdlib", "platstdlib", "purelib", "platlib")
        if (path := sysconfig.get_paths().get(key))
    }
) + ("<frozen ",)
GUARD = "__posenc_guard__"  # the name a library stub calls, in its module's globals during a call
_CHAPTER = re.compile(r"ch\d+$")  # a chapter's questions: checks.ch01 (a module or a package)


def is_harness(module: str) -> bool:
    """True for the code that runs and judges answers, whose functions are never switched off.

    By folder: every module of ``grading/``, and every module of ``checks/`` but the chapters'
    questions (``checks.chNN`` and the modules of a ``checks/chNN/`` package), which are library
    code like any other: their helpers may compute an answer. Code the chapters share lives in
    the harness (``draws``, ``diagnosis``, ``answers``), so it holds no answer.
    """
    parts = module.split(".")
    if parts[0] != PACKAGE_NAME or len(parts) < 2:
        return False
    if parts[1] == "grading":
        return True
    return parts[1] == "checks" and not (len(parts) > 2 and _CHAPTER.match(parts[2]))


@functools.cache
def _harness_file(file: str) -> bool:
    """True when ``file`` is a source file of a harness module."""
    for prefix in _PACKAGE_PREFIXES:
        if file.startswith(prefix) and file.endswith(".py"):
            module = ".".join([PACKAGE_NAME, *file[len(prefix) : -3].split(os.sep)])
            return is_harness(module.removesuffix(".__init__"))
    return False


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
        if not _harness_file(file):
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
            if not (name == PACKAGE_NAME or name.startswith(PACKAGE_NAME + ".")):
                continue
            if module is None or id(module) in self.scanned:
                continue  # (kept by identity: replacing a module in sys.modules changes nothing)
            harness, entries = is_harness(name), []
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
        prefix = f"{PACKAGE_NAME}.checks"
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
        tr(
            "the library's `{name}` is switched off while your answer is checked: this exercise "
            "asks you to write it yourself.",
            name=key,
        )
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
    harness = is_harness(module.__name__)
    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue  # __builtins__ is a dict too
        if isinstance(value, type):
            if value.__module__ == module.__name__:
                classes.append(value)
        elif type(value) in (dict, list, set):
            if not harness:
                data.append(value)
        elif type(value).__module__.startswith(PACKAGE_NAME + ".checks") and value is not _GUARD:
            if type(getattr(value, "__dict__", None)) is dict:
                objects.append(value.__dict__)
    return namespace, classes, objects, data
