"""A question's references (the library functions it asks the learner to write) switched off.

While the learner's function runs, each reference has its code replaced by a stub that records the
call and raises: however the learner reaches it (``posenc_lib.X``, ``posenc_lib.module.X``, a name
imported into the notebook, a closure, a default argument), it is switched off. Its code is put
back after the call, whatever happened.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import sys
import types
from contextlib import contextmanager
from dataclasses import dataclass

from posenc_lib.i18n import tr

HOOK = "__posenc_switched_off__"  # the name a stub calls, put in its module's globals for a call
PACKAGE_NAME = __name__.split(".")[0]


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
        if lazy and not name.startswith(PACKAGE_NAME + "."):
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
            tr(
                "the library's `{name}` is switched off while your answer is checked: this "
                "exercise asks you to write it yourself.",
                name=name,
            )
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
