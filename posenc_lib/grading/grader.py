"""The grader: each submission run in its own child process, judged in this one.

Each submission (an exercises notebook) runs in a child forked from one forkserver, in a scratch
folder, with a wall-clock timeout, memory, CPU and file-size limits and an empty environment
(``sandbox.py``). The child only runs the learner's cells and calls their functions on the
grader's inputs: the public ones and hidden ones drawn from the seed. This process, which never
runs learner code, judges what came back with the same ``Question.judge`` that ``check()`` uses in
the notebook, so a student reads the same sentences in the feedback as in class. Replacing
``np.allclose`` or the checks in the child changes nothing here; it is reported as ``tampered``.

``grade_all`` grades a class, a few submissions at once, with a tqdm progress bar (its widget
inside Jupyter); ``Grader.grade`` grades one and returns its ``sheet.Row``, never raising.
"""

from __future__ import annotations

import atexit
import io
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from importlib import import_module
from multiprocessing import spawn
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from posenc_lib import checks
from posenc_lib.checks.run import KINDS, Collected, Outcome, TooMany
from posenc_lib.grading import sandbox as _sandbox
from posenc_lib.grading.sheet import Row
from posenc_lib.grading.submissions import Invalid, chapters, read_submission
from posenc_lib.i18n import ENV, _, get_language, in_language, tr
from posenc_lib.models.smollm import cache_dir

MAX_MESSAGE_BYTES = 64 * 2**20  # one question's outcomes, as sent by the child


def decode(value):
    """The inverse of ``_sandbox.encode``, on data loaded with ``torch.load(weights_only=True)``."""
    if isinstance(value, dict):
        if "__ndarray__" in value:
            return value["__ndarray__"].numpy()
        if "__toomany__" in value:
            return TooMany()
        if isinstance(value.get("__sparse__"), torch.Tensor):
            return value["__sparse__"].to_sparse()  # for the type policy's sentence
        if "__npscalar__" in value:
            try:
                dtype = np.dtype(str(value.get("dtype"))[:20])
                if dtype.kind in "biuf" and isinstance(value["__npscalar__"], (bool, int, float)):
                    return dtype.type(value["__npscalar__"])
            except (TypeError, ValueError, OverflowError):
                pass
            return _Opaque("NumPy scalar")
        if "__collected__" in value and isinstance(value.get("items"), list):
            collected = Collected(decode(v) for v in value["items"])
            collected.source = str(value["__collected__"])[:20]
            return collected
        if "__tuple__" in value:
            return tuple(decode(v) for v in value["__tuple__"])
        return _Opaque(str(value.get("__object__", "object")))
    if isinstance(value, list):
        return [decode(v) for v in value]
    return value


class _Opaque:
    """Stands for an object the child could not send (a learner's own class): only its type name."""

    def __init__(self, name: str):
        self.__class__ = type(name[:60] or "object", (_Opaque,), {})


class Grader:
    """Grades submissions with one forkserver; ``grade(path)`` returns a Row and never raises."""

    def __init__(
        self, seed: int, timeout: float = 60.0, memory_mb: int = 2048, language: str | None = None
    ):
        """language: "en" or "zh", the language of the child processes (default: the one in use);
        the verdicts are worded in this process, in the language in use when ``grade`` runs
        (``grade_all`` switches to ``language`` for the whole class)."""
        self.seed, self.timeout, self.memory_bytes = seed, timeout, memory_mb * 2**20
        with in_language(language or get_language()):
            self.language = get_language()  # (a spelling such as "zh_CN" checked and normalized)
        self.known = chapters()
        self.modules = {ch: import_module(name) for ch, name in self.known.items()}
        self.context = multiprocessing.get_context("forkserver")
        # The forkserver imports torch and the checks once; each child is a fork of it, so a
        # submission starts in milliseconds and runs the library as it was when grading began.
        self.context.set_forkserver_preload(["torch", _sandbox.__name__, *self.known.values()])
        self._start_lock = threading.Lock()
        self._prepared: set[str] = set()  # chapters whose prepare() has run (chapter 8: the model)
        self._live: set = set()
        self._stopping = False  # set by stop_all: a child started after it is stopped at once

    def read(self, path: Path):
        """(chapter, cells), or the Invalid saying why the file cannot be graded."""
        try:
            return read_submission(path, self.known)
        except Invalid as error:
            return error

    def grade(self, path: Path, name: str | None = None, content=None) -> Row:
        """Grade one submission. ``content``: what ``read`` returned for it, read earlier."""
        row = Row(name or str(path))
        started = time.perf_counter()
        try:
            content = self.read(path) if content is None else content
            if isinstance(content, Invalid):
                raise content
            row.chapter, cells = content
            self._run(row, cells)
        except Invalid as error:
            row.status, row.reason = "invalid", str(error)
        except Exception as error:  # noqa: BLE001 - a grader bug must not lose the row
            cause = f"{type(error).__name__}: {error}".strip()[:300]
            row.grader_failed = True  # graded again when a run resumes (cli.py)
            row.status, row.reason = (
                "error",
                tr(
                    "the grader itself failed on this notebook (not the notebook's fault): "
                    "{cause}; please report it with the notebook",
                    cause=cause,
                ),
            )
            print(
                f"{row.submission}: {row.reason}", file=sys.stderr
            )  # one sentence, then the details
            traceback.print_exception(error, file=sys.stderr)
        row.seconds = time.perf_counter() - started
        return row

    def _run(self, row: Row, cells: list[str]) -> None:
        module = self.modules[row.chapter]
        with self._start_lock:
            if row.chapter not in self._prepared and hasattr(module, "prepare"):
                module.prepare()  # once per chapter, in the parent: e.g. convert chapter 8's model
            self._prepared.add(row.chapter)
        questions = {q.name: q for q in module.QUESTIONS}
        row.max_score = sum(q.points for q in questions.values())
        scratch = tempfile.mkdtemp(prefix="posenc-grade-")
        try:
            self._run_in(row, questions, cells, module, scratch)
        finally:  # on success, on a failure of the grader's own and on Ctrl-C alike
            shutil.rmtree(scratch, ignore_errors=True)

    def _run_in(self, row: Row, questions: dict, cells: list[str], module, scratch: str) -> None:
        receive, send = self.context.Pipe(duplex=False)
        job = {
            "cells": cells,
            "module": self.known[row.chapter],
            "seed": self.seed,
            "scratch": scratch,
            # Chapter 8's converted model, read by the child (whose HOME is its scratch folder).
            "model_cache": str(cache_dir().parent),
            # A chapter whose checks run a model of the library's own (chapter 8's LLM) adds that
            # model's memory to the limit: --memory-mb stays what the learner's code may take.
            "memory_bytes": self.memory_bytes + getattr(module, "LIBRARY_MEMORY_MB", 0) * 2**20,
            "cpu_seconds": int(self.timeout) + 5,
            "cell_seconds": min(_sandbox.CELL_SECONDS, self.timeout / 3),
            "language": self.language,  # the child's $POSENC_LANG (its sentences, its figures)
            "language_variable": ENV,
        }
        process = self.context.Process(target=_sandbox.child_main, args=(send, job), daemon=True)
        with self._start_lock, _without_main_module(), _short_socket_folder():
            process.start()
            self._live.add(process)
        send.close()
        if self._stopping:  # the run was stopped (Ctrl-C) while this child started
            self._stop(process)
        messages, deadline, done = [], time.monotonic() + self.timeout, False
        try:
            while not done:
                left = deadline - time.monotonic()
                if left <= 0 or not receive.poll(left):
                    break
                try:
                    data = receive.recv_bytes(MAX_MESSAGE_BYTES)
                except (EOFError, OSError):
                    break  # the child ended (or sent something too large)
                with warnings.catch_warnings():  # torch warns about pickle protocols; not ours
                    warnings.simplefilter("ignore")
                    message = torch.load(io.BytesIO(data), weights_only=True)
                messages.append(message)
                done = isinstance(message, dict) and message.get("kind") == "done"
        except Exception:  # noqa: BLE001 - a garbled message
            row.status, row.reason = (
                "tampered",
                _(
                    "the grading channel was garbled: the notebook sent something that is not a "
                    "grading result"
                ),
            )
        finally:
            timed_out = not done and time.monotonic() >= deadline
            self._stop(process)
            receive.close()
        self._judge(row, questions, messages)
        if row.status != "ok":
            return
        if timed_out:
            row.status = "timeout"
            row.reason = tr(
                "the notebook did not finish within {seconds:g} s", seconds=self.timeout
            )
        elif not done:
            row.status = "error"
            code = process.exitcode
            row.reason = tr(
                "the notebook ended the grading process (exit code {code}) before grading "
                "finished: look for sys.exit, os._exit or a crash in your cells or functions",
                code=code,
            )
        else:
            replaced = messages[-1].get("replaced", [])
            if replaced:
                row.status = "tampered"
                row.reason = tr(
                    "the notebook replaced {names}", names=", ".join(map(str, replaced[:10]))
                )

    def _judge(self, row: Row, questions: dict, messages: list) -> None:
        got = {}
        for message in messages:
            if not isinstance(message, dict):
                continue
            if message.get("kind") == "cells":
                row.failed_cells = [str(x)[:300] for x in message.get("failed", [])][:20]
            if message.get("kind") == "question" and message.get("name") in questions:
                got[message["name"]] = message
        for name, question in questions.items():
            message = got.get(name)
            if message is None:
                verdict = checks.Verdict(
                    name,
                    checks.FAIL,
                    _("not graded: the notebook stopped first."),
                    0,
                    question.points,
                )
            elif message.get("missing") and isinstance(question, checks.Concept):
                verdict = question.missing()  # no variable answer_cN in the notebook
            elif message.get("missing"):
                verdict = checks.Verdict(
                    name,
                    checks.NOT_ATTEMPTED,
                    tr(
                        "there is no function `{function}` in the notebook.",
                        function=question.function,
                    ),
                    0,
                    question.points,
                )
            else:
                public = question.cases(seed=0)
                cases = public + question.cases(seed=self.seed)
                outcomes = [_outcome(o) for o in message.get("outcomes", [])][: len(cases)]
                verdict = question.judge(cases, outcomes)
                if verdict.status == checks.FAIL and len(outcomes) >= len(public):
                    # What the notebook's own check showed: the public inputs alone.
                    if question.judge(public, outcomes[: len(public)]).passed:
                        row.hidden_only.append(name)
            row.verdicts.append(verdict)
        row.score = sum(v.points for v in row.verdicts)

    def _stop(self, process) -> None:
        if process.pid is not None:
            try:
                os.killpg(process.pid, signal.SIGKILL)  # the child and anything it started
            except (ProcessLookupError, PermissionError):
                pass
        process.kill()
        process.join(5)
        self._live.discard(process)

    def stop_all(self) -> None:
        self._stopping = True
        for process in list(self._live):
            self._stop(process)


# A Unix socket's path holds at most 104 (macOS) to 108 (Linux) bytes. The forkserver listens on one
# in multiprocessing's temporary folder, made under $TMPDIR; a long $TMPDIR (pytest's under xdist,
# a network home) leaves no room, and every child then fails with "AF_UNIX path too long".
SOCKET_FOLDER_MAX = 60
_short_folder: list[str] = []


@contextmanager
def _short_socket_folder():
    """While the forkserver starts: multiprocessing's temporary folder in a short path of its own
    (under /tmp, removed at exit) when the usual one would be too long for its socket."""
    config = multiprocessing.process.current_process()._config  # no public way to set this
    current = config.get("tempdir") or tempfile.gettempdir()
    if len(current) <= SOCKET_FOLDER_MAX:
        yield
        return
    if not _short_folder:
        roots = [r for r in ("/tmp", "/var/tmp") if os.path.isdir(r) and os.access(r, os.W_OK)]
        if not roots:
            raise OSError(
                f"the temporary folder {current!r} is too long for the grader's socket and there "
                "is no writable /tmp: set TMPDIR to a short folder"
            )
        _short_folder.append(tempfile.mkdtemp(prefix="posenc-mp-", dir=roots[0]))
        atexit.register(shutil.rmtree, _short_folder[0], True)
    had = "tempdir" in config
    saved = config.get("tempdir")
    config["tempdir"] = _short_folder[0]
    try:
        yield
    finally:
        if had:
            config["tempdir"] = saved
        else:
            config.pop("tempdir", None)


@contextmanager
def _without_main_module():
    """Start a child without re-running the parent's ``__main__`` in it.

    multiprocessing makes each child import the parent's main script or module first (so that
    functions defined there can be unpickled). The child runs ``_sandbox.child_main`` only, so
    that import is wasted time, and with ``python - < script`` it even fails; the preparation data
    is given without it, for the duration of one ``start()`` (under the grader's start lock).
    """
    original = spawn.get_preparation_data

    def without_main(name):
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    spawn.get_preparation_data = without_main
    try:
        yield
    finally:
        spawn.get_preparation_data = original


def _outcome(raw) -> Outcome:
    if not (isinstance(raw, list) and len(raw) == 3 and isinstance(raw[0], str)):
        return Outcome("raised", error=_("an unreadable result"))
    kind, value, error = raw
    if kind not in KINDS:
        return Outcome("raised", error=_("an unreadable result"))
    return Outcome(kind, decode(value), str(error)[:300])


def grade_all(
    paths,
    seed,
    timeout=60.0,
    workers=2,
    memory_mb=2048,
    progress: bool | None = None,
    language: str | None = None,
    done=None,
) -> list[Row]:
    """Grade every submission; rows in the order given.

    paths: files, or (file, name on the sheet) pairs. progress: a tqdm bar on stderr (a widget
    inside Jupyter) as submissions finish; True always, False never, None (the default) only on
    a terminal or in Jupyter, so a pipe or a log file gets no bar. language: "en" or "zh", the
    language of the feedback (default: the one in use, ``posenc_lib.get_language()``).
    done: called as ``done(index, row)`` in the calling thread as each submission finishes (the
    command writes its journal and sheet there); what it raises stops the run, as Ctrl-C does:
    the submissions not started are dropped and those running are stopped at once.
    """
    paths = [p if isinstance(p, tuple) else (Path(p), str(p)) for p in paths]
    grader = Grader(seed, timeout, memory_mb, language)
    with in_language(grader.language):  # the feedback's words; restored after
        return _grade_all(grader, paths, workers, progress, done)


def _grade_all(grader: Grader, paths, workers, progress, done=None) -> list[Row]:
    # Every file is read before any submission runs: a submission that rewrites another
    # student's file on disk changes nothing.
    contents = [grader.read(p) for p, _ in paths]
    rows: list[Row | None] = [None] * len(paths)
    bar = tqdm(
        total=len(paths),
        desc=_("grading"),
        unit=_("notebook"),
        file=sys.stderr,
        disable=None if progress is None else not progress,
    )
    pool = ThreadPoolExecutor(max_workers=workers)
    try:
        with bar:
            futures = {
                pool.submit(grader.grade, p, n, c): i
                for i, ((p, n), c) in enumerate(zip(paths, contents, strict=True))
            }
            for future in as_completed(futures):
                rows[futures[future]] = future.result()
                bar.update(1)
                if done is not None:
                    done(futures[future], rows[futures[future]])
    finally:
        # Not `with pool`: on Ctrl-C that would wait for every queued submission to be graded.
        pool.shutdown(wait=False, cancel_futures=True)
        grader.stop_all()
    return rows  # type: ignore[return-value]
