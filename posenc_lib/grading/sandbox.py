"""The grader's child process: run one submission's cells and record what its functions return.

This module runs inside the child (see ``grader.py``) and nowhere else. The child:
1. starts its own session (so the parent can kill it and anything it starts), lowers its limits
   (memory, CPU seconds, file size), moves to a scratch folder and clears its environment;
2. runs the notebook's code cells one by one, each under a time limit, with stdout and stderr
   thrown away (a printed "all tests passed" reaches nobody), going on past a cell that fails;
3. calls each question's function on the grader's inputs through ``checks.run.call`` (taken before
   any learner code ran, so patching it changes nothing here), with the question's references
   (resolved before any learner code ran) switched off, and sends the outcomes to the parent,
   one question at a time, as bytes that the parent reads with ``torch.load(weights_only=True)``:
   plain tensors, numbers, strings, lists and dicts only, never a pickle of learner objects.
   A concept question's answer is a value, not a function: the child reads the variable
   (``answer_c1``) from the notebook's namespace and sends it without calling or comparing it
   (``encode_answer``: an exact str, int, float, bool or None, else only its type's name),
   before calling any function;
4. reports which of the library's and NumPy's / torch's comparison functions the cells replaced.

The parent judges the outcomes; nothing here decides a grade.
"""

from __future__ import annotations

import ast
import builtins
import io
import os
import resource
import sys
import types

import numpy as np
import torch

from posenc_lib import checks as _checks
from posenc_lib.checks import concepts as _concepts
from posenc_lib.checks import run as _run
from posenc_lib.i18n import tr

CELL_SECONDS = 20.0  # one cell's time limit
# What a submission may not replace unnoticed: (owner, attribute name).
WATCHED = [
    (np, "allclose"),
    (np, "isclose"),
    (np, "array_equal"),
    (np.testing, "assert_allclose"),
    (torch, "allclose"),
    (torch, "isclose"),
    (torch, "equal"),
    (torch.testing, "assert_close"),
    (torch.Tensor, "__eq__"),
    (torch.Tensor, "__bool__"),
    (builtins, "isinstance"),
    (builtins, "float"),
    (_run, "call"),
    (_run, "_plain"),
    (_run, "_time_limit"),
    *(
        (_checks.Question, name)
        for name in ("run", "judge", "evaluate", "check", "cases", "diagnose")
    ),
    *(
        (kind, name)
        for kind in (_concepts.Concept, _concepts.MultipleChoice, _concepts.Numeric)
        for name in ("run", "_judge", "read", "evaluate", "check", "cases")
        if name in vars(kind)
    ),
    (_checks, "Question"),
    (_checks, "Verdict"),
    (_concepts, "MultipleChoice"),
    (_concepts, "Numeric"),
]
QUESTION_METHODS = (
    "run",
    "judge",
    "_judge",
    "evaluate",
    "check",
    "cases",
    "diagnose",
    "diagnose_all",
    "read",
)
CHECK_CALLS = {"check", "hint", "solution", "ask"}
# Taken at import, before any learner code runs: what ``encode_answer`` reads a value with.
_type, _len, _TYPE_NAME = type, len, type.__dict__["__name__"]
_NUMPY_NUMBERS = dict(_concepts._NUMPY_NUMBERS)  # NumPy number type -> float or int
_ITEM = np.generic.item  # NumPy's own method: a NumPy scalar as a Python number


def limit_resources(memory_bytes: int, cpu_seconds: int, file_bytes: int = 64 * 2**20) -> None:
    """Cap this process: address space grows by at most memory_bytes, CPU time, file sizes."""
    in_use = _virtual_memory()
    for limit, value in (
        (resource.RLIMIT_AS, in_use + memory_bytes),
        (resource.RLIMIT_CPU, cpu_seconds),
        (resource.RLIMIT_FSIZE, file_bytes),
        (resource.RLIMIT_CORE, 0),
    ):
        soft, hard = resource.getrlimit(limit)
        if hard != resource.RLIM_INFINITY:
            value = min(value, hard)
        resource.setrlimit(limit, (value, hard))


def _virtual_memory() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 * 2**30


def is_check_cell(source: str) -> bool:
    """True when every statement of the cell is ``qN.check(...)``/``hint``/``solution``/``ask``/
    ``scorecard``.

    Such cells only show verdicts; the grader does its own checking, so it skips them (an edited
    check cell that does anything else is run like any other cell).
    """
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False

    def is_check(node) -> bool:
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            return False
        fn = node.value.func
        return (isinstance(fn, ast.Attribute) and fn.attr in CHECK_CALLS) or (
            isinstance(fn, ast.Name) and fn.id == "scorecard"
        )

    return bool(tree.body) and all(is_check(node) for node in tree.body)


def runnable(source: str) -> str:
    """A cell's source without IPython magics and shell escapes (lines starting % or !)."""
    if source.lstrip().startswith("%%"):
        return ""  # a cell magic: the whole cell is not Python
    return "\n".join(ln for ln in source.splitlines() if not ln.lstrip().startswith(("%", "!")))


def encode(value):
    """A plain value (from ``_run._plain``) as something ``torch.load(weights_only=True)`` reads."""
    if isinstance(value, torch.Tensor):
        if value.layout != torch.strided:
            return {"__sparse__": value.detach().cpu().to_dense()}
        return value.detach().cpu().clone()
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biufc":
            return {"__ndarray__": torch.from_numpy(np.array(value))}
        return {"__object__": f"NumPy array of {value.dtype}"}
    if isinstance(value, _run.TooMany):
        return {"__toomany__": True}
    if isinstance(value, _run.Collected):
        return {"__collected__": str(value.source), "items": [encode(v) for v in value]}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, complex):
        return {"__object__": "complex"}
    if isinstance(value, np.generic):
        if value.dtype.kind in "biuf":
            return {"__npscalar__": value.item(), "dtype": str(value.dtype)}
        return {"__object__": f"NumPy scalar of {value.dtype}"}
    if isinstance(value, (list, tuple)):
        items = [encode(v) for v in value]
        return {"__tuple__": items} if isinstance(value, tuple) else items
    return {"__object__": type(value).__name__}


def encode_answer(value):
    """A concept question's answer as the child sends it, read without running learner code: an
    exact str (at most ``MAX_TEXT + 1`` characters: longer is judged "a long text" either way),
    int, float, bool or None; anything else (a list, a str subclass, an object with a rigged
    ``__eq__``) as ``{"__object__": its type's name}``, which the parent's sentence names. A NumPy
    float or int (exactly that type, ``np.log(10) / 0.25``) is sent as the Python number it holds,
    as ``Numeric.read`` reads it in a notebook."""
    kind = _type(value)
    if kind in _NUMPY_NUMBERS:
        number = _ITEM(value)
        return number if _type(number) is _NUMPY_NUMBERS[kind] else {"__object__": "NumPy scalar"}
    if not (kind is str or kind is int or kind is float or kind is bool or value is None):
        return {"__object__": _TYPE_NAME.__get__(kind)}  # (not a name its metaclass makes up)
    if kind is str and _len(value) > _concepts.MAX_TEXT:
        return value[: _concepts.MAX_TEXT + 1]
    return value


def _quiet() -> None:
    """Send this process's stdout and stderr to nowhere (file descriptors and Python objects)."""
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    sys.stdout = io.TextIOWrapper(os.fdopen(1, "wb", closefd=False))
    sys.stderr = io.TextIOWrapper(os.fdopen(2, "wb", closefd=False))


def child_main(conn, job: dict) -> None:
    """Entry point in the child. ``job``: cells, chapter module name, seed, scratch, limits."""
    os.setsid()
    limit_resources(job["memory_bytes"], job["cpu_seconds"])
    os.chdir(job["scratch"])
    os.environ.clear()
    os.environ.update(
        {
            "HOME": job["scratch"],
            "TMPDIR": job["scratch"],
            "MPLBACKEND": "Agg",
            "PATH": "/usr/bin:/bin",
            "POSENC_CACHE": job["model_cache"],  # chapter 8's model, converted by the parent
            # The grader's language (posenc_lib.i18n reads it): the child's sentences and figures.
            job.get("language_variable", "POSENC_LANG"): job.get("language", "en"),
        }
    )
    torch.set_num_threads(1)
    _quiet()
    send = _sender(conn)
    call, time_limit = _run.call, _run._time_limit  # taken before learner code runs
    TimedOut = _run._TimedOut  # noqa: N806 - the class, taken before learner code runs
    chapter = sys.modules[job["module"]]
    questions = list(chapter.QUESTIONS)
    references = {q.name: _run.resolve(q.references, lazy=True) for q in questions}
    _run._GUARD.scan()  # the library's real code, learned before any learner code runs
    watched = [*WATCHED, *_reference_bindings(references)]
    originals = [(owner, name, getattr(owner, name)) for owner, name in watched]
    chapter_names = {
        name: value for name, value in vars(chapter).items() if not name.startswith("__")
    }
    cases = {q.name: q.cases(seed=0) + q.cases(seed=job["seed"]) for q in questions}
    concept = {q.name for q in questions if isinstance(q, _concepts.Concept)}

    main = types.ModuleType("__main__")
    sys.modules["__main__"] = main
    failed_cells = []
    for number, source in enumerate(job["cells"], start=1):
        code = runnable(source)
        if not code.strip() or is_check_cell(code):
            continue
        seconds = job.get("cell_seconds", CELL_SECONDS)
        try:
            compiled = compile(code, f"<cell {number}>", "exec")
            with time_limit(seconds):
                exec(compiled, main.__dict__)  # noqa: S102 - running the submission is the job
        except TimedOut:
            failed_cells.append(
                tr(
                    "cell {number}: did not finish within {seconds:g} s; stopped",
                    number=number,
                    seconds=seconds,
                )
            )
        except BaseException as error:  # noqa: BLE001 - a failing cell must not stop the rest
            failed_cells.append(
                tr("cell {number}: {error}", number=number, error=_run._describe(error))
            )
    send({"kind": "cells", "failed": failed_cells[:20]})

    # The concept questions' answers first: read as the cells left them, before any learner
    # function runs (a function cannot change them, and one that ends the process loses only the
    # questions still to come).
    for question in sorted(questions, key=lambda q: q.name not in concept):
        if question.name in concept:  # a value: read, never called
            missing = question.function not in main.__dict__
            value = None if missing else encode_answer(main.__dict__[question.function])
            outcomes = [] if missing else [["returned", value, ""]]
            send({"kind": "question", "name": question.name, "missing": missing,
                  "outcomes": outcomes})  # fmt: skip
            continue
        fn = main.__dict__.get(question.function)
        if fn is None:
            send({"kind": "question", "name": question.name, "missing": True, "outcomes": []})
            continue
        outcomes = []
        for case in cases[question.name]:
            try:
                outcome = call(fn, case.args, question.timeout, references[question.name])
            except BaseException as error:  # noqa: BLE001 - KeyboardInterrupt from learner code
                outcome = _run.Outcome("raised", error=_run._describe(error))
            outcomes.append([outcome.kind, encode(outcome.value), outcome.error])
            if outcome.kind != "returned" or isinstance(outcome.value, _run.TooMany):
                break
        send({"kind": "question", "name": question.name, "missing": False, "outcomes": outcomes})

    replaced = [
        f"{getattr(owner, '__qualname__', getattr(owner, '__name__', owner))}.{name}"
        for owner, name, original in originals
        if getattr(owner, name, None) is not original
    ]
    if sys.modules.get(job["module"]) is not chapter:
        replaced.append(job["module"])
    replaced += [
        f"{job['module']}.{name}"
        for name, value in chapter_names.items()
        if vars(chapter).get(name) is not value
    ]
    replaced += [
        f"{q.name}.{method}" for q in questions for method in QUESTION_METHODS if method in vars(q)
    ]
    send({"kind": "done", "replaced": replaced})
    conn.close()
    os._exit(0)  # skip atexit hooks a submission may have registered


def _reference_bindings(references: dict) -> list[tuple]:
    """(owner, attribute) pairs a submission may not replace: each reference's code and its name in
    the module that defines it."""
    pairs = []
    for refs in references.values():
        for ref in refs:
            if not isinstance(ref, _run.Reference):
                continue  # a lazy reference: not imported yet
            pairs.append((ref.function, "__code__"))
            module = sys.modules.get(ref.function.__module__)
            if module is not None and getattr(module, ref.function.__name__, None) is ref.function:
                pairs.append((module, ref.function.__name__))
    return pairs


def _sender(conn):
    def send(message) -> None:
        buffer = io.BytesIO()
        torch.save(message, buffer)
        conn.send_bytes(buffer.getvalue())

    return send
