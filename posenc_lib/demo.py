"""Classroom demo mode: a chapter's dashboards as a web page with no code, for projecting in class.

``make demo CHAPTER=03`` (or ``python -m posenc_lib.demo 03``) writes a small notebook holding only
that chapter's dashboard, with large fonts, and serves it with Voila on localhost: Voila runs the
notebook in a live kernel and shows only its outputs, so every slider works and no code is seen.
``make demo`` with no chapter serves a page listing every chapter's demo.

The notebooks are written to ``build/demo/`` each time (they are generated, not committed).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .widgets import DASHBOARDS

ROOT = Path(__file__).resolve().parent.parent
DEMO_DIR = ROOT / "build" / "demo"

# Projector-sized text: bigger widget labels and readouts, and bigger figure text.
CSS = """
body, .jp-OutputArea-output, .widget-label, .widget-readout, .widget-html-content,
.widget-dropdown select, .widget-toggle-button, .jupyter-widgets { font-size: 20px !important; }
.widget-label { min-width: 9em !important; }
.widget-hslider { width: 34em !important; }
.widget-html-content { line-height: 1.4 !important; }
h1 { font-size: 34px; }
"""
FONT_SCALE = 1.5  # matplotlib text sizes x this


def chapters() -> dict[str, str]:
    """Chapter key ('start', '01' ... '07') -> the DASHBOARDS name of its dashboard."""
    keys = {}
    for name in DASHBOARDS:
        prefix = name.split(":", 1)[0]
        keys[prefix.removeprefix("ch")] = name
    return keys


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
        "id": f"demo-{abs(hash(source)) % 10**8:08d}",
        "cell_type": "code",
        "execution_count": None,
        "metadata": {"tags": ["remove-output"] if hidden_output else []},
        "outputs": [],
        "source": source,
    }


def demo_notebook(chapter: str) -> dict:
    """The demo notebook of one chapter, as nbformat JSON: a title, the CSS, the dashboard."""
    key = chapter_key(chapter)
    name = chapters()[key]
    title = name.split(":", 1)[1].strip()
    setup = (
        "%matplotlib widget\n"
        "import matplotlib as mpl\n"
        "from IPython.display import HTML, display\n"
        "from posenc_lib.widgets import DASHBOARDS\n"
        f"for key in [k for k in mpl.rcParams if k.endswith('size') and 'font' in k or "
        "k.endswith('labelsize') or k.endswith('titlesize')]:\n"
        "    value = mpl.rcParams[key]\n"
        f"    if isinstance(value, (int, float)):\n        mpl.rcParams[key] = value * {FONT_SCALE}\n"
        f"display(HTML({json.dumps('<style>' + CSS + '</style>')}))\n"
        f"display(HTML({json.dumps(f'<h1>{title}</h1>')}))"
    )
    show = f"DASHBOARDS[{name!r}]().widget"
    return {
        "cells": [_cell(setup), _cell(show)],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def write_demos(folder: Path = DEMO_DIR) -> dict[str, Path]:
    """Write every chapter's demo notebook into ``folder``; returns chapter key -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for key, name in chapters().items():
        slug = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
        path = folder / f"{slug}.ipynb"
        path.write_text(json.dumps(demo_notebook(key), indent=1) + "\n")
        paths[key] = path
    return paths


def voila_command(target: Path, port: int, open_browser: bool) -> list[str]:
    """The Voila command line that serves ``target`` (a notebook, or a folder of them)."""
    voila = shutil.which("voila", path=str(Path(sys.executable).parent)) or "voila"
    return [
        voila,
        str(target),
        f"--port={port}",
        "--Voila.ip=127.0.0.1",
        f"--Voila.open_browser={open_browser}",
        "--VoilaConfiguration.show_tracebacks=True",
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib.demo",
        description="Serve a chapter's dashboards with no code, for projecting in class.",
    )
    parser.add_argument("chapter", nargs="?", help="01 .. 07 or start; omit for a list of all")
    parser.add_argument("--port", type=int, default=8866)
    parser.add_argument("--no-browser", action="store_true", help="do not open a browser")
    args = parser.parse_args(argv)
    paths = write_demos()
    target = paths[chapter_key(args.chapter)] if args.chapter else DEMO_DIR
    url = f"http://127.0.0.1:{args.port}/"
    print(
        f"==> Serving {target.relative_to(ROOT)} with Voila at {url} (Ctrl-C to stop)", flush=True
    )
    try:
        subprocess.run(voila_command(target, args.port, not args.no_browser), check=False)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
