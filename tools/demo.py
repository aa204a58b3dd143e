"""Classroom demo mode: a chapter's dashboards as a web page with no code, for projecting in class.

``make demo CHAPTER=03`` (or ``python -m tools.demo 03``) writes a small notebook holding only
that chapter's dashboard, with large fonts, and serves it with Voila on localhost: Voila runs the
notebook in a live kernel and shows only its outputs, so every slider works and no code is seen.
``make demo CHAPTER=03 DEMO_ARGS=--quiz`` (``python -m tools.demo 03 --quiz``) serves the
chapter's concept questions instead, in projector type, one to a screen: the class votes, then a
click on an option shows why it is right or wrong (``posenc_lib.checks.quiz``).
``make demo`` with no chapter serves a page listing every chapter's demo and quiz, and a folder
``zh/`` with the same in Chinese (中文版); ``DEMO_ARGS="--lang zh"`` serves a chapter's in Chinese.

The notebooks are written to ``build/demo/`` each time (they are generated, not committed).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from posenc_lib.checks.quiz import chapter_concepts
from posenc_lib.i18n import LANGUAGES, _, get_language, in_language, tr
from posenc_lib.viz.registry import chapters

ROOT = Path(__file__).resolve().parent.parent
DEMO_DIR = ROOT / "build" / "demo"

# Projector-sized page: bigger widget labels and readouts; on wide screens the browser enlarges the
# figure (zoom), so the kernel still renders and sends the same pixels on every redraw and moving a
# slider costs no more time. The picture is a little softer, and readable from the back of a room.
CSS = """
body, .jp-OutputArea-output, .widget-label, .widget-readout, .widget-html-content,
.widget-dropdown select, .widget-toggle-button, .jupyter-widgets { font-size: 20px !important; }
.widget-label, .widget-checkbox label { min-width: 9em !important; font-size: 20px !important; }
.widget-readout { margin-left: 0.6em !important; min-width: 4.5em !important; }
.widget-hslider { width: 34em !important; }
.widget-html-content { line-height: 1.4 !important; }
.posenc-readout, .posenc-readout .widget-html-content { font-size: 26px !important; }
.widget-checkbox input[type=checkbox] { transform: scale(1.6); margin-right: 0.5em; }
h1 { font-size: 34px; }
/* The browser enlarges the figure (the kernel sends no more pixels per redraw); only as far as
   the screen's width and height both allow, so the figure's bottom stays on screen. */
@media (min-width: 1150px) and (min-height: 850px) { .jupyter-matplotlib-figure { zoom: 1.25; } }
@media (min-width: 1400px) and (min-height: 900px) { .jupyter-matplotlib-figure { zoom: 1.5; } }
@media (min-width: 1800px) and (min-height: 1000px) { .jupyter-matplotlib-figure { zoom: 1.8; } }
"""


def chapter_key(chapter: str) -> str:
    """'3', '03', 'ch03' or 'start' -> '03' / 'start'; a clear error for anything else."""
    text = str(chapter).strip().lower().removeprefix("ch")
    if text.isdigit():
        text = f"{int(text):02d}"
    known = chapters()
    if text not in known:
        raise SystemExit(
            f"There is no chapter {chapter!r} with a dashboard. Choose one of: {', '.join(known)} "
            "(for example: make demo CHAPTER=03)."
        )
    return text


def _cell(source: str, hidden_output: bool = False) -> dict:
    return {
        "id": "demo-" + hashlib.sha1(source.encode()).hexdigest()[:8],  # the same on every run
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"tags": ["remove-output"] if hidden_output else []},
        "outputs": [],
        "source": source,
    }


def _chinese_titles() -> dict[str, str]:
    """Chapter key -> its title in the Chinese start page's map (the Chinese edition's words)."""
    from tools.site import ROOT as SITE_ROOT
    from tools.site import course_map

    try:
        return {ch.key: ch.title for ch in course_map(SITE_ROOT / "zh")}
    except (OSError, ValueError):
        return {}


def page_title(key: str) -> str:
    """A chapter demo's heading and browser-tab title: 'Chapter 3 · Sinusoidal base, ...', in
    the language in use (in Chinese, the chapter's title from the Chinese start page)."""
    name = chapters()[key].split(":", 1)[1].strip()
    name = f"{name[:1].upper()}{name[1:]}"
    if key == "start":
        return tr("Start page · {name}", name=name)
    if get_language() == "zh":  # the chapter's own title, as the Chinese start page gives it
        name = _chinese_titles().get(key, name)
    return tr("Chapter {number} · {name}", number=int(key), name=name)


def _language_line(language: str) -> str:
    """The notebook line that makes the library speak ``language`` (nothing for English)."""
    return "" if language == "en" else f"import posenc_lib\nposenc_lib.set_language({language!r})\n"


def demo_notebook(chapter: str, language: str = "en") -> dict:
    """The demo notebook of one chapter, as nbformat JSON: a title, the CSS, the dashboard;
    ``language``: "en" or "zh", the language of its title, labels and readouts."""
    key = chapter_key(chapter)
    name = chapters()[key]
    with in_language(language):
        title = page_title(key)
    setup = (
        _language_line(language) + "%matplotlib widget\n"
        "import torch\n"
        "torch.set_num_threads(1)  # a dashboard's tensors are tiny: one thread is fastest\n"
        "from IPython.display import HTML, display\n"
        "from posenc_lib.viz.figures import projector_style\n"
        "from posenc_lib.viz.registry import DASHBOARDS\n"
        "projector_style()\n"
        f"display(HTML({json.dumps('<style>' + CSS + '</style>')}))\n"
        f"display(HTML({json.dumps(f'<h1>{title}</h1>')}))"
    )
    show = f"DASHBOARDS[{name!r}]().widget"
    return {
        "cells": [_cell(setup), _cell(show)],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "title": title,  # the browser tab's title (Voila's template reads it)
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


# The quiz page: the quiz sets its own type size (posenc_lib.checks.quiz, projector=True).
QUIZ_CSS = "body { font-size: 20px; } h1 { font-size: 34px; }"


def quiz_title(key: str) -> str:
    """A chapter quiz's heading and browser-tab title: 'Chapter 3 · Check your understanding'."""
    return tr("Chapter {number} · Check your understanding", number=int(key))


def quiz_notebook(chapter: str, language: str = "en") -> dict:
    """The quiz notebook of one chapter, as nbformat JSON: a title, then its concept questions in
    projector type (``quiz(CONCEPTS, projector=True)``), each option's feedback a click away."""
    key = chapter_key(chapter)
    if not chapter_concepts(key):
        with_quiz = ", ".join(quiz_chapters()) or "none yet"
        raise SystemExit(
            f"The {'start page' if key == 'start' else f'chapter {key}'} has no concept questions "
            f"to show as a quiz. Chapters with a quiz: {with_quiz} "
            "(for example: make demo CHAPTER=03 DEMO_ARGS=--quiz)."
        )
    with in_language(language):
        title = quiz_title(key)
        intro = _(
            "Let the room choose, then click the option they chose: it opens why it is right or "
            "wrong. A numeric question opens its answer and the usual mistakes."
        )
    setup = (
        _language_line(language) + "from IPython.display import HTML, display\n"
        f"from posenc_lib.checks.ch{key} import CONCEPTS\n"
        "from posenc_lib.checks.quiz import quiz\n"
        f"display(HTML({json.dumps('<style>' + QUIZ_CSS + '</style>')}))\n"
        f"display(HTML({json.dumps(f'<h1>{title}</h1><p>{intro}</p>')}))"
    )
    return {
        "cells": [_cell(setup), _cell("quiz(CONCEPTS, projector=True)")],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
            "title": title,
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def quiz_chapters() -> list[str]:
    """The chapters ("01" ...) that have concept questions, so a quiz, in order."""
    return [key for key in chapters() if chapter_concepts(key)]


def quiz_path(key: str, folder: Path = DEMO_DIR) -> Path:
    """Where a chapter's quiz notebook is written: ``chNN_quiz.ipynb``, beside its dashboard's
    ``chNN_...ipynb`` in the demo's list."""
    return folder / f"ch{key}_quiz.ipynb"


def write_quizzes(folder: Path = DEMO_DIR, language: str = "en") -> dict[str, Path]:
    """Write every chapter's quiz notebook (``chNN_quiz.ipynb``) into ``folder``, removing the
    quiz of a chapter that no longer has one; returns chapter key -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {key: quiz_path(key, folder) for key in quiz_chapters()}
    for stale in set(folder.glob("ch[0-9][0-9]_quiz.ipynb")) - set(paths.values()):
        stale.unlink()
    for key, path in paths.items():
        path.write_text(json.dumps(quiz_notebook(key, language), indent=1) + "\n")
    return paths


def write_demos(folder: Path = DEMO_DIR, language: str = "en") -> dict[str, Path]:
    """Write every chapter's demo notebook, and every chapter's quiz (``write_quizzes``), into
    ``folder`` (and, for English, the Chinese ones into ``folder``/zh, so the demo's list offers
    both languages); returns chapter key -> the demo notebook's path in ``language``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, name in chapters().items():
        slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
        path = folder / f"{slug}.ipynb"
        path.write_text(json.dumps(demo_notebook(key, language), indent=1) + "\n")
        paths[key] = path
    write_quizzes(folder, language)
    if language == "en":
        write_demos(folder / "zh", "zh")
    return paths


def voila_command(
    target: Path, port: int, open_browser: bool, *, idle_kernel_seconds: int = 60
) -> list[str]:
    """The Voila command line that serves ``target`` (a notebook, or a folder of them)."""
    voila = shutil.which("voila", path=str(Path(sys.executable).parent)) or "voila"
    return [
        voila,
        str(target),
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        f"--Voila.open_browser={open_browser}",
        # The class sees no code and no traceback (a failing cell says only that it failed);
        # the terminal that started the demo logs the traceback.
        "--VoilaConfiguration.show_tracebacks=False",
        "--VoilaConfiguration.strip_sources=True",
        "--theme=light",
        # A busy port is an error, not a silent move to the next one: the address printed is
        # the address served.
        "--Voila.port_retries=0",
        # Each page load starts a kernel (~300 MB); one whose page was closed or reloaded is shut
        # down after idle_kernel_seconds idle. The page on the projector stays connected: kept.
        f"--MappingKernelManager.cull_idle_timeout={idle_kernel_seconds}",
        f"--MappingKernelManager.cull_interval={max(1, idle_kernel_seconds // 3)}",
    ]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def voila_server(
    target: Path, log: Path, *, idle_kernel_seconds: int = 60, timeout: float = 60.0
) -> Iterator[str]:
    """Serve ``target`` with Voila on a free local port; yields the base URL once it answers.

    Voila runs in its own process group, its output going to ``log``; on the way out it is sent
    SIGTERM (it then shuts its kernels down), and SIGKILL if it has not stopped within 20 s.
    """
    port = _free_port()
    command = voila_command(target, port, False, idle_kernel_seconds=idle_kernel_seconds)
    with open(log, "wb") as sink:
        server = subprocess.Popen(
            command, cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                with urllib.request.urlopen(base, timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    tail = log.read_text(errors="replace")[-2000:]
                    raise RuntimeError(
                        f"Voila did not start: {' '.join(command)}\n{tail}"
                    ) from None
                time.sleep(0.3)
        yield base
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGTERM)
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=5)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.demo",
        description="Serve a chapter's dashboards, or its quiz, with no code, for projecting in class.",
    )
    parser.add_argument("chapter", nargs="?", help="01 .. 08 or start; omit for a list of all")
    parser.add_argument("--port", type=int, default=8866)
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    parser.add_argument(
        "--quiz",
        action="store_true",
        help="serve the chapter's concept questions as a quiz instead of its dashboard",
    )
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default="en",
        help="the language of the page: en (English) or zh (中文); the list offers both",
    )
    args = parser.parse_args(argv)
    paths = write_demos(DEMO_DIR)  # and the quizzes, and the Chinese ones in zh/
    folder = DEMO_DIR if args.lang == "en" else DEMO_DIR / args.lang
    if args.lang != "en":
        paths = write_demos(folder, args.lang)
    quizzes = {key: quiz_path(key, folder) for key in quiz_chapters()}
    target = DEMO_DIR
    if args.chapter:
        key = chapter_key(args.chapter)
        if args.quiz:
            quiz_notebook(key)  # a chapter with no quiz: a sentence naming those with one
        target = quizzes[key] if args.quiz else paths[key]
    url = f"http://127.0.0.1:{args.port}/"
    if not args.chapter:
        names = "\n".join(
            f"    {key:>5}  {name.split(':', 1)[1].strip()}"
            + ("  (and its quiz)" if key in quizzes else "")
            for key, name in chapters().items()
        )
        print(
            "==> Chapters (one at a time: make demo CHAPTER=03; a chapter's quiz: "
            f"make demo CHAPTER=03 DEMO_ARGS=--quiz; in Chinese: DEMO_ARGS='--lang zh', or the "
            f"list's zh/ folder):\n{names}"
        )
    shown = target.relative_to(ROOT) if target.is_relative_to(ROOT) else target
    print(f"==> Serving {shown} with Voila at {url} (Ctrl-C to stop)", flush=True)
    try:
        subprocess.run(voila_command(target, args.port, not args.no_browser), check=False)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
