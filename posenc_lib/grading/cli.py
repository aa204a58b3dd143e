"""Grade a class: ``python -m posenc_lib.grading.cli SUBMISSION_OR_FOLDER... --out grades.csv``.

Each submission (an exercises notebook) runs in its own child process, in a scratch folder, with a
wall-clock timeout, memory, CPU and file-size limits and an empty environment (``_sandbox.py``). The
child only runs the learner's cells and calls their functions on the grader's inputs: the public ones
and hidden ones drawn from ``--seed``. The parent, which never runs learner code, judges what came
back with the same ``Question.judge`` that ``check()`` uses in the notebook, so a student reads the
same sentences in the feedback as in class. Replacing ``np.allclose`` or the checks in the child
changes nothing in the parent; it is reported as ``tampered``.

The chapter is read from the notebook's ``metadata.posenc.chapter`` (not the file name). Every
submission gets one row, whatever it does: ``status`` is ok, error, timeout, invalid or tampered.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import multiprocessing
import os
import pkgutil
import secrets
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
import warnings
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import import_module
from multiprocessing import spawn
from pathlib import Path

import numpy as np
import torch

from posenc_lib import checks
from posenc_lib.checks.run import KINDS, Collected, Outcome, TooMany
from posenc_lib.grading import sandbox as _sandbox

STATUSES = ("ok", "error", "timeout", "invalid", "tampered")
MAX_MESSAGE_BYTES = 64 * 2**20  # one question's outcomes, as sent by the child
MAX_NOTEBOOK_BYTES = 20 * 2**20


def chapters() -> dict[str, str]:
    """Chapter number -> checks module name, for every ``posenc_lib/checks/chNN.py``."""
    found = {}
    for info in pkgutil.iter_modules(checks.__path__):
        if info.name.startswith("ch") and info.name[2:].isdigit():
            found[info.name[2:]] = f"{checks.__name__}.{info.name}"
    return dict(sorted(found.items()))


@dataclass
class Row:
    """One submission's result: a line of the grade sheet and its feedback file."""

    submission: str
    chapter: str = ""
    status: str = "ok"
    score: int = 0
    max_score: int = 0
    verdicts: list = field(default_factory=list)  # checks.Verdict per question
    reason: str = ""  # why the status is not ok
    failed_cells: list = field(default_factory=list)
    seconds: float = 0.0

    def feedback(self) -> dict:
        return {
            "submission": self.submission,
            "chapter": self.chapter,
            "status": self.status,
            "score": self.score,
            "max_score": self.max_score,
            "reason": self.reason,
            "cells_that_failed": self.failed_cells,
            "questions": [
                {
                    "question": v.question,
                    "status": v.status,
                    "points": v.points,
                    "max_points": v.max_points,
                    "message": v.message,
                }
                for v in self.verdicts
            ],
        }


class Invalid(Exception):
    """The file is not a gradable notebook; the message says why."""


def read_submission(path: Path, known: dict[str, str]) -> tuple[str, list[str]]:
    """(chapter, code cell sources) of a notebook file, or Invalid with the reason."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            raise Invalid(f"the file is larger than {MAX_NOTEBOOK_BYTES // 2**20} MB")
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise Invalid("the file cannot be read: it is not UTF-8 text") from None
    except OSError as error:
        why = error.strerror or "it cannot be opened"
        raise Invalid(f"the file cannot be read: {why[:1].lower()}{why[1:]}") from None
    except ValueError:
        raise Invalid("the file is not a notebook: it is not valid JSON") from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise Invalid("the file is not a notebook: it has no list of cells")
    meta = notebook.get("metadata")
    posenc = meta.get("posenc") if isinstance(meta, dict) else None
    chapter = posenc.get("chapter") if isinstance(posenc, dict) else None
    if not isinstance(chapter, str) or chapter not in known:
        raise Invalid(
            "the notebook does not say which chapter it is (metadata.posenc.chapter is "
            f"{chapter!r}; expected one of {', '.join(known)}): hand in the exercises notebook "
            "of the course, edited in place"
        )
    cells = []
    for cell in notebook["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            if not isinstance(source, str):
                raise Invalid("a code cell's source is not text")
            cells.append(source)
    return chapter, cells


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

    def __init__(self, seed: int, timeout: float = 60.0, memory_mb: int = 2048):
        self.seed, self.timeout, self.memory_bytes = seed, timeout, memory_mb * 2**20
        self.known = chapters()
        self.modules = {ch: import_module(name) for ch, name in self.known.items()}
        self.context = multiprocessing.get_context("forkserver")
        # The forkserver imports torch and the checks once; each child is a fork of it, so a
        # submission starts in milliseconds and runs the library as it was when grading began.
        self.context.set_forkserver_preload(["torch", _sandbox.__name__, *self.known.values()])
        self._start_lock = threading.Lock()
        self._live: set = set()

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
            row.status, row.reason = (
                "error",
                (
                    "the grader itself failed on this notebook (not the notebook's fault); please "
                    "report it with the notebook"
                ),
            )
            traceback.print_exception(error, file=sys.stderr)  # the details, for the teacher
        row.seconds = time.perf_counter() - started
        return row

    def _run(self, row: Row, cells: list[str]) -> None:
        module = self.modules[row.chapter]
        questions = {q.name: q for q in module.QUESTIONS}
        row.max_score = sum(q.points for q in questions.values())
        scratch = tempfile.mkdtemp(prefix="posenc-grade-")
        receive, send = self.context.Pipe(duplex=False)
        job = {
            "cells": cells,
            "module": self.known[row.chapter],
            "seed": self.seed,
            "scratch": scratch,
            "memory_bytes": self.memory_bytes,
            "cpu_seconds": int(self.timeout) + 5,
            "cell_seconds": min(_sandbox.CELL_SECONDS, self.timeout / 3),
        }
        process = self.context.Process(target=_sandbox.child_main, args=(send, job), daemon=True)
        with self._start_lock, _without_main_module():
            process.start()
        send.close()
        self._live.add(process)
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
                (
                    "the grading channel was garbled: the notebook sent something that is not a "
                    "grading result"
                ),
            )
        finally:
            timed_out = not done and time.monotonic() >= deadline
            self._stop(process)
            receive.close()
            shutil.rmtree(scratch, ignore_errors=True)
        self._judge(row, questions, messages)
        if row.status != "ok":
            return
        if timed_out:
            row.status = "timeout"
            row.reason = f"the notebook did not finish within {self.timeout:g} s"
        elif not done:
            row.status = "error"
            code = process.exitcode
            row.reason = (
                f"the notebook ended the grading process (exit code {code}) before grading "
                "finished: look for sys.exit, os._exit or a crash in your cells or functions"
            )
        else:
            replaced = messages[-1].get("replaced", [])
            if replaced:
                row.status = "tampered"
                row.reason = "the notebook replaced " + ", ".join(map(str, replaced[:10]))

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
                    name, checks.FAIL, "not graded: the notebook stopped first.", 0, question.points
                )
            elif message.get("missing"):
                verdict = checks.Verdict(
                    name,
                    checks.NOT_ATTEMPTED,
                    f"there is no function `{question.function}` in the notebook.",
                    0,
                    question.points,
                )
            else:
                cases = question.cases(seed=0) + question.cases(seed=self.seed)
                outcomes = [_outcome(o) for o in message.get("outcomes", [])][: len(cases)]
                verdict = question.judge(cases, outcomes)
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
        for process in list(self._live):
            self._stop(process)


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
        return Outcome("raised", error="an unreadable result")
    kind, value, error = raw
    if kind not in KINDS:
        return Outcome("raised", error="an unreadable result")
    return Outcome(kind, decode(value), str(error)[:300])


# -- the grade sheet ----------------------------------------------------------------------------------


def _cell(value) -> str:
    """A CSV cell that a spreadsheet will not run as a formula."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def write_sheet(rows: list[Row], path: Path) -> None:
    """grades.csv: submission, chapter, status, score, max_score, then one column per question."""
    names = sorted({v.question for r in rows for v in r.verdicts}, key=lambda n: (len(n), n))
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(["submission", "chapter", "status", "score", "max_score", *names])
    for row in rows:
        points = {v.question: v.points for v in row.verdicts}
        writer.writerow(
            [_cell(row.submission), row.chapter, row.status, row.score, row.max_score]
            + [points.get(n, "") for n in names]
        )
    _write_atomically(path, buffer.getvalue())


def write_feedback(rows: list[Row], folder: Path) -> None:
    """One JSON file per submission, named after it."""
    folder.mkdir(parents=True, exist_ok=True)
    used = set()
    for row in rows:
        stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in Path(row.submission).stem)
        name, n = stem or "submission", 1
        while name in used:
            n += 1
            name = f"{stem}-{n}"
        used.add(name)
        text = json.dumps(row.feedback(), ensure_ascii=False, indent=1)
        _write_atomically(folder / f"{name}.json", text)


def _write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # a new file
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)


def submissions(paths: list[Path]) -> list[tuple[Path, str]]:
    """(file, name on the sheet) for files named on the command line, and for every .ipynb under
    folders named there (named by their path inside the folder)."""
    found = []
    for path in paths:
        if path.is_dir():
            # One folder: names relative to it. Several: keep each folder's name in front, so that
            # solutions/01.ipynb and exercises/01.ipynb do not share a row name.
            root = path if len(paths) == 1 else path.parent
            found += [
                (p, str(p.relative_to(root)))
                for p in sorted(path.rglob("*.ipynb"))
                if ".ipynb_checkpoints" not in p.parts
            ]
        else:
            found.append((path, str(path)))
    return found


def _progress(done: int, total: int, started: float, stream) -> None:
    width = 30
    filled = width * done // max(total, 1)
    seconds = time.perf_counter() - started
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}  {seconds:.0f} s")
    stream.flush()


def grade_all(paths, seed, timeout=60.0, workers=2, memory_mb=2048, progress=None) -> list[Row]:
    """Grade every submission; rows in the order given. ``progress(done, total)`` after each.

    paths: files, or (file, name on the sheet) pairs.
    """
    paths = [p if isinstance(p, tuple) else (Path(p), str(p)) for p in paths]
    grader = Grader(seed, timeout, memory_mb)
    # Every file is read before any submission runs: a submission that rewrites another
    # student's file on disk changes nothing.
    contents = [grader.read(p) for p, _ in paths]
    rows: list[Row | None] = [None] * len(paths)
    done = 0
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = {
                pool.submit(grader.grade, p, n, c): i
                for i, ((p, n), c) in enumerate(zip(paths, contents, strict=True))
            }
            for future in _as_completed(futures):
                rows[futures[future]] = future.result()
                done += 1
                if progress:
                    progress(done, len(paths))
    finally:
        grader.stop_all()
    return rows  # type: ignore[return-value]


def _as_completed(futures):
    from concurrent.futures import as_completed

    return as_completed(futures)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib.grading.cli",
        description="Grade exercise notebooks; write a grade sheet (CSV) and feedback (JSON).",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="notebooks, or folders of notebooks")
    parser.add_argument("--out", type=Path, default=Path("grades.csv"), help="the grade sheet")
    parser.add_argument("--json", type=Path, help="a folder for one feedback file per submission")
    parser.add_argument(
        "--seed", type=int, help="secret seed of the hidden inputs (default: random)"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per submission")
    parser.add_argument("--workers", type=int, default=2, help="submissions graded at once")
    parser.add_argument("--memory-mb", type=int, default=2048, help="memory per submission")
    args = parser.parse_args(argv)
    if args.workers < 1 or args.timeout <= 0 or args.memory_mb < 256:
        parser.error("--workers must be >= 1, --timeout > 0 and --memory-mb >= 256")
    paths = submissions(args.paths)
    if not paths:
        parser.error("no notebooks found in " + ", ".join(map(str, args.paths)))
    seed = args.seed if args.seed is not None else 1 + secrets.randbelow(2**31 - 2)
    if args.seed is None:
        print(f"Hidden inputs from seed {seed} (pass --seed {seed} to grade the same way again).")
    started = time.perf_counter()
    rows = grade_all(
        paths,
        seed,
        args.timeout,
        args.workers,
        args.memory_mb,
        progress=lambda d, t: _progress(d, t, started, sys.stderr),
    )
    sys.stderr.write("\n")
    write_sheet(rows, args.out)
    if args.json:
        write_feedback(rows, args.json)
    seconds = time.perf_counter() - started
    counts = {s: sum(r.status == s for r in rows) for s in STATUSES}
    print(
        f"Graded {len(rows)} submissions in {seconds:.1f} s: {counts['ok']} ok, "
        f"{counts['error']} failed to run, {counts['timeout']} timed out, "
        f"{counts['invalid']} invalid, {counts['tampered']} tampered. Sheet: {args.out}"
    )
    for row in rows:
        if row.status != "ok":
            print(f"  {row.submission}: {row.status}: {row.reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
