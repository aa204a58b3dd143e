"""The course as a static website: ``make site`` (or ``python -m tools.site``) -> ``build/site/``.

Every chapter's lecture, exercises and worked solutions become web pages with their committed
outputs (figures, printed numbers); nothing is re-executed, since nbval already proves the notebooks
run. Each lecture's dashboard is live on the site with no kernel: its frames are drawn at build
time by the dashboard's own code (``tools/site_frames.py``, on two processes while jupyter-book
builds the pages) into ``dashboards/``, and the page's controls show the frame stored for the
chosen values. The pages are built with jupyter-book 1.x (Sphinx and myst-nb), offline: no launch
buttons, no thebe, and MathJax served from the site itself (copied from the
``sphinx-mathjax-offline`` package) instead of a CDN. The folder has ``index.html`` at its top and
can be published as it is (any static web server, or opened from disk).

Code cells tagged ``hide-input`` (jupyter-book's tag, on cells whose only job is a figure) show
their output under a collapsed "Show code cell source". ``make site`` on a terminal shows a tqdm
bar as jupyter-book reads and writes each page.

jupyter-book wants its sources under one root, so they are staged in ``build/site-src/``: the
notebooks are copied (each lecture gains one cell linking its exercises and solutions; each
solutions page is titled as such), and ``_config.yml``, ``_toc.yml`` and the index page are
written. The index's chapter list comes from ``course.toml`` (title, question, times,
prerequisites, deep dives), from which the start page's map is rendered too, so the two cannot
disagree. A chapter's deep dives (``notebooks/deeper/NN_*.ipynb``) are pages of their own, listed
under their chapter as optional branches, with times.

Each lecture ends with its concept questions as a quiz (the cell ``quiz(CONCEPTS)``): its
committed output is plain HTML, each option a ``<details>`` that opens its feedback on a click, so
the page needs no kernel and no script. ``quizzes.md``, linked from the index, is the teachers'
page: every chapter's quiz in projector type, one question to a screen, rendered at build time
from the library (``posenc_lib.checks.quiz``).

After the build, ``site_audit.check_site`` looks for broken links, network loads, lost figures,
lost quizzes and frames over budget. The frames and the quizzes page import the library
(``site_frames``, ``quizzes_page``); the rest of this module reads notebooks.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from tqdm.auto import tqdm

from posenc_lib.checks.quiz import chapter_concepts, quiz
from posenc_lib.i18n import ENV, N_, _, get_language, in_language, tr
from tools import site_frames
from tools.site_audit import check_site

ROOT = Path(__file__).resolve().parent.parent
SITE_DIR = ROOT / "build" / "site"
SOURCE_DIR = ROOT / "build" / "site-src"
ZH_SOURCE_DIR = ROOT / "build" / "site-src-zh"
TITLE = N_("Positional encoding in Transformers")
ZH = "zh"  # the Chinese edition: its notebooks in zh/, its site in build/site/zh/
START = "00_start_here"
DEEPER = "deeper"  # notebooks/deeper/: the deep dives
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
# The parts of MathJax 3 the pages load: the TeX-to-HTML bundle, its fonts and output code, the TeX
# extensions it loads on demand, and its menu and accessibility parts (about 2 MB of the 24 MB).
MATHJAX_PARTS = ["tex-chtml.js", "output/chtml", "input/tex/extensions", "ui", "a11y"]
# Sphinx's line for each page it reads and writes, once its colours are taken off.
SPHINX_STEP = re.compile(r"(?:reading sources|writing output)\.\.\. \[\s*\d+%\] (\S+)")
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class DeepDive:
    """An optional branch beside a chapter's core: notebooks/deeper/<stem>.ipynb."""

    stem: str  # "02_what_training_learns"
    title: str
    question: str
    time: str  # "25 min"


@dataclass
class Chapter:
    """One row of the start page's map, and the notebooks that go with it."""

    key: str  # "01"
    stem: str  # "01_order_blindness"
    title: str
    question: str
    time: str  # core lecture + exercises: "55 + 45 min"
    before: str
    deeper: list[DeepDive] = field(default_factory=list)


@dataclass
class SiteBuild:
    """What ``build_site`` made: the folder, its pages, the seconds it took."""

    folder: Path
    pages: list[Path]
    seconds: float
    warnings: list[str]
    frames: list = field(default_factory=list)  # site_frames.Rendered, one per live dashboard


def course_map(root: Path = ROOT) -> list[Chapter]:
    """The chapters of ``course.toml`` that have a lecture notebook in ``root``, in order, in the
    language in use (``posenc_lib.i18n``), each with its deep dives that exist in ``root``."""
    from tools import course_plan

    start = root / "notebooks" / f"{START}.ipynb"
    cells = nbformat.read(start, as_version=4).cells if start.exists() else []
    if not any(c.id == course_plan.MAP_CELL for c in cells):
        raise ValueError(
            f"notebooks/{START}.ipynb has no map cell ({course_plan.MAP_CELL}): the start page "
            "shows the course's map, rendered from course.toml (python -m tools.authoring times)."
        )
    lang = ZH if get_language() == ZH else "en"
    unit = "分钟" if lang == ZH else "min"
    _pace, planned = course_plan.load()
    chapters = []
    for ch in planned:
        stem = ch.lecture.stem
        if ch.key == "00" or not (root / "notebooks" / f"{stem}.ipynb").exists():
            continue
        exercises = ch.exercises.minutes if ch.exercises else 0
        deeper = [
            DeepDive(d.stem, d.text("title", lang), d.text("question", lang), f"{d.minutes} {unit}")
            for d in ch.deeper
            if (root / "notebooks" / "deeper" / f"{d.stem}.ipynb").exists()
        ]
        chapters.append(
            Chapter(
                ch.key,
                stem,
                ch.text("title", lang),
                ch.text("question", lang),
                f"{ch.lecture.minutes} + {exercises} {unit}",
                ch.text("before", lang),
                deeper,
            )
        )
    if not chapters:
        raise ValueError(f"course.toml lists no chapter with a notebook in {root}/notebooks.")
    return chapters


def _link_cell(chapter: Chapter, root: Path) -> nbformat.NotebookNode:
    """The cell a staged lecture gains after its first: where its exercises and solutions are."""
    links = []
    if (root / "exercises" / f"{chapter.stem}.ipynb").exists():
        links.append(
            tr(
                "[exercises]({path}) (download the notebook and run it in JupyterLab: the checks "
                "answer as you go)",
                path=f"../exercises/{chapter.stem}.ipynb",
            )
        )
    if (root / "solutions" / f"{chapter.stem}.ipynb").exists():
        links.append(tr("[worked solutions]({path})", path=f"../solutions/{chapter.stem}.ipynb"))
    links.append(tr("[all chapters]({path})", path="../index.md"))
    return nbformat.v4.new_markdown_cell(tr("**On this site:** {links}.", links=" · ".join(links)))


def switch_html(page: str, language: str) -> str:
    """A link from ``page`` (its path in the site of ``language``, e.g. "notebooks/03_x.html") to
    the same page in the other edition: English at the site's top, Chinese in its zh/ folder."""
    depth = page.count("/")
    up = "../" * depth
    if language == ZH:
        return f'<a class="posenc-language" href="{up}../{page}" lang="en">English</a>'
    return f'<a class="posenc-language" href="{up}{ZH}/{page}" lang="zh">中文版</a>'


def _switch_cell(page: str, language: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_markdown_cell(switch_html(page, language))
    cell.metadata = {"tags": ["posenc-language"]}
    return cell


def _stage_notebook(
    source: Path,
    target: Path,
    chapter: Chapter | None,
    root: Path,
    live: dict | None = None,
    switch: str | None = None,
) -> None:
    """Copy a notebook into the book's sources; ``switch``: the language of the edition built
    when both are (each page then links to itself in the other), None when one is."""
    notebook = nbformat.read(source, as_version=4)
    kind = notebook.metadata.get("posenc", {}).get("kind")
    if kind == "lecture" and chapter is not None:
        notebook.cells.insert(1, _link_cell(chapter, root))
    if kind == "solutions" and notebook.cells:  # exercises and solutions share their first cell
        first = notebook.cells[0]
        old, new = _(" exercises — "), _(" solutions — ")
        title, _newline, rest = first.source.partition("\n")  # only the heading's words
        first.source = title.replace(old, new, 1) + _newline + rest
    if switch is not None:
        folder = "notebooks/deeper" if source.parent.name == DEEPER else source.parent.name
        page = f"{folder}/{source.stem}.html"
        notebook.cells.insert(1, _switch_cell(page, switch))
    for cell in notebook.cells:  # the test suite's markers mean nothing to a reader
        if cell.cell_type == "code":
            cell.source = re.sub(r"^# NBVAL_\w+[^\n]*\n?", "", cell.source, flags=re.MULTILINE)
    if kind == "lecture":
        notebook.cells = _with_live_dashboards(notebook.cells, source, live or {})
    target.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, target)


LIVE_NOTE = N_(
    "*On this site the dashboard above is a still picture. To move its controls, open "
    "`{path}` in JupyterLab (`make lab` in the course folder); to project it in class with no "
    "code, run `make demo CHAPTER={key}`.*"
)


# The live dashboard's words (tools/site_frames.py writes them under each dashboard): kept here, in
# a file tools.translate reads for tools.po, so the Chinese pages say them in Chinese.
LIVE_CAPTION = N_(
    "Live on this page: {live}. Each setting's picture and numbers were drawn when the site was "
    "built, by the same code as the dashboard in JupyterLab"
)
LIVE_VALUES = N_("{label} ({count} values, {first} to {last})")
LIVE_CHOICES = N_("{label} ({choices})")
LIVE_AND = N_("{first}, {then}")  # joins a control's few values: "16, 64" (Chinese: 16、64)
LIVE_WHERE = N_(
    "open {notebook} in JupyterLab (<code>make lab</code>) or run "
    "<code>make demo CHAPTER={key}</code>"
)
LIVE_FIXED = N_("{text}. Fixed here at {fixed}: to move those, and every slider step, {where}.")
LIVE_EVERY_STEP = N_("{text}. For every slider step, {where}.")
LIVE_DRAWN_FOR = N_("{summary} Drawn for {settings}. {readout}")
LIVE_SEPARATOR = N_("; ")  # between the live controls in the caption
# A lecture's note above its dashboard says that without a kernel the dashboard is a still
# picture; on the site it moves, so the site says which controls move it instead.
STILL_PICTURE_NOTE = re.compile(
    r"\n\n\*[(（][^\n]*(?:\n[^\n]+)*?(?:still picture|静态图)[\s\S]*?[)）]\*\s*$"
)
LIVE_HERE = N_(
    "*(On this page, move {controls}: the picture and the readout below change to the ones drawn "
    "for that setting when the site was built.)*"
)


def live_here_note(the_plan) -> str:
    """The sentence that replaces a lecture's still-picture note on the site: which controls move
    the dashboard below (``the_plan``: its ``site_frames.FramePlan``)."""
    names = [f"**{control.label}**" for control in the_plan.live]
    return _(LIVE_HERE).format(controls=_(", ").join(names))


def chapter_key(stem: str) -> str:
    """A lecture's chapter key as the dashboard registry writes it: "start", "01" ... "08"."""
    key = stem.split("_", 1)[0]
    return "start" if key == "00" else key


def _with_live_dashboards(cells: list, source: Path, live: dict) -> list:
    """The cells, each dashboard's output made live from its frames (``live``: chapter key ->
    ``site_frames.FramePlan``), or else followed by a note on where it is live."""
    out = []
    key = chapter_key(source.stem)
    for cell in cells:
        out.append(cell)
        outputs = cell.get("outputs", []) if cell.cell_type == "code" else []
        if not any(WIDGET_VIEW in o.get("data", {}) for o in outputs):
            continue
        path = f"notebooks/{source.name}"
        if key in live:
            before = out[-2] if len(out) > 1 else None
            if before is not None and before.cell_type == "markdown":
                note = "\n\n" + live_here_note(live[key])
                found = STILL_PICTURE_NOTE.search(before.source)
                if found:  # replaced as text: the note may hold a backslash
                    before.source = before.source[: found.start()] + note
            page = site_frames.widget_html(live[key], path)
            text = tr("{title} (live on this page: drawn at build time)", title=live[key].title)
            cell.outputs = [
                nbformat.v4.new_output("display_data", data={"text/html": page, "text/plain": text})
            ]
        else:
            out.append(nbformat.v4.new_markdown_cell(_(LIVE_NOTE).format(path=path, key=key)))
    return out


def index_page(
    chapters: list[Chapter], root: Path = ROOT, quizzes: bool = False, switch: str | None = None
) -> str:
    """The site's front page (MyST Markdown): what the course is, and the chapter list; with
    ``quizzes``, a line pointing teachers at the quizzes page; with ``switch`` (this edition's
    language), a link to the other edition."""
    rows = []
    for ch in chapters:
        extra = [
            f"[{label}]({folder}/{ch.stem}.ipynb)"
            for folder, label in (("exercises", _("exercises")), ("solutions", _("solutions")))
            if (root / folder / f"{ch.stem}.ipynb").exists()
        ]
        rows.append(
            f"| {int(ch.key)} | [{ch.title}](notebooks/{ch.stem}.ipynb) | {ch.question} | "
            f"{ch.time} | {ch.before} | {' · '.join(extra)} |"
        )
        for deep in ch.deeper:  # an optional branch beside the chapter's core
            link = f"[{deep.title}](notebooks/{DEEPER}/{deep.stem}.ipynb)"
            label = tr("↳ deep dive (optional): {link}", link=link)
            before = tr("chapter {number} core", number=int(ch.key))
            rows.append(f"| | {label} | {deep.question} | {deep.time} | {before} | |")
    return "\n".join(
        [
            f"# {_(TITLE)}",
            "",
            *([switch_html("index.html", switch), ""] if switch else []),
            _(
                "Why does a Transformer need to be told where each word is, and what are the ways "
                "of telling it? Each chapter below is a notebook: read it here with its figures "
                "and printed numbers, or run it in JupyterLab (`make lab` in the course folder) to "
                "move the dashboards' controls and check your answers to the exercises."
            ),
            "",
            tr(
                "Begin with [the start page]({path}): your setup, the map of the course, and the "
                "library every chapter uses.",
                path=f"notebooks/{START}.ipynb",
            ),
            "",
            _("| # | chapter | the question it answers | time | before it | exercises |"),
            "|---|---|---|---|---|---|",
            *rows,
            "",
            _(
                "Times: the core lecture + its exercises, from the course's plan (a reading-pace "
                "model calibrated on two timed cold reads). Rows marked ↳ are deep dives: optional "
                "branches beside their chapter, for the curious reader and the teacher."
            ),
            "",
            _(
                "Each chapter's dashboard moves here too: its main "
                "controls show pictures drawn when the site was built, by the course's own code; "
                "the page says which controls need JupyterLab (`make lab`) or `make demo`."
            ),
            "",
            *(
                [
                    tr(
                        "**For teachers:** [every chapter's quiz]({path}), in type large enough "
                        "for a projector: the room chooses, a click shows why an option is right "
                        "or wrong.",
                        path=f"{QUIZZES}.md",
                    ),
                    "",
                ]
                if quizzes
                else []
            ),
        ]
    )


QUIZZES = "quizzes"  # the teachers' page: quizzes.md -> quizzes.html


def quizzes_page(chapters: list[Chapter], root: Path = ROOT) -> str | None:
    """The teachers' page (MyST Markdown): every chapter's quiz in projector type, each in a raw
    HTML block rendered now from the library; None when no chapter has concept questions."""
    sections = []
    for ch in chapters:
        questions = chapter_concepts(ch.key)
        if not questions:
            continue
        graded = (
            tr("; the [exercises]({path}) grade them", path=f"exercises/{ch.stem}.ipynb")
            if (root / "exercises" / f"{ch.stem}.ipynb").exists()
            else ""
        )
        sections += [
            tr("## Chapter {number} · {title}", number=int(ch.key), title=ch.title),
            "",
            tr(
                "The questions that end [the lecture]({path}){graded}.",
                path=f"notebooks/{ch.stem}.ipynb",
                graded=graded,
            ),
            "",
            "```{raw} html",
            quiz(questions, projector=True).html(),
            "```",
            "",
        ]
    if not sections:
        return None
    return "\n".join(
        [
            _("# Quizzes for the classroom"),
            "",
            _(
                "Each chapter's concept questions, in type large enough for a projector and one "
                "question to a screen. Let the room choose, then click the option they chose: it "
                "opens why it is right or wrong; a numeric question opens its answer and the "
                "usual mistakes. Nothing here needs a kernel. With the course installed, "
                "`make demo CHAPTER=03 DEMO_ARGS=--quiz` shows one chapter's quiz alone."
            ),
            "",
            *sections,
        ]
    )


def _config(exclude: list[str]) -> str:
    """jupyter-book's _config.yml, as JSON (a subset of YAML): offline, nothing executed."""
    config = {
        "title": _(TITLE),
        "author": "the posenc course",
        "copyright": "the posenc course contributors (MIT licence)",
        "only_build_toc_files": True,
        "exclude_patterns": exclude,
        "execute": {"execute_notebooks": "off"},
        "launch_buttons": {"notebook_interface": "", "binderhub_url": "", "thebe": False},
        "repository": {"url": ""},
        "html": {
            "use_repository_button": False,
            "use_issues_button": False,
            "use_edit_page_button": False,
            "use_multitoc_numbering": False,
            "home_page_in_navbar": True,
        },
        "sphinx": {
            "config": {
                # A dashboard's output carries a widget view and a still PNG; with no kernel the
                # view would say "Loading widget...", so the site shows the PNG.
                "nb_mime_priority_overrides": [["html", WIDGET_VIEW, None]],
                "mathjax_path": "mathjax/tex-chtml.js",
                "html_show_sourcelink": False,
                # Sphinx's own words (search, "previous", "next") in the edition's language
                "language": "zh_CN" if get_language() == ZH else "en",
            },
        },
    }
    return json.dumps(config, indent=1, ensure_ascii=False) + "\n"


def _toc(chapters: list[Chapter], root: Path, quizzes: bool = False) -> str:
    lines = ["format: jb-book", "root: index", "chapters:", f"  - file: notebooks/{START}"]
    for ch in chapters:
        lines.append(f"  - file: notebooks/{ch.stem}")
        sections = [
            f"      - file: {folder}/{ch.stem}"
            for folder in ("exercises", "solutions")
            if (root / folder / f"{ch.stem}.ipynb").exists()
        ] + [f"      - file: notebooks/{DEEPER}/{deep.stem}" for deep in ch.deeper]
        if sections:
            lines += ["    sections:", *sections]
    if quizzes:
        lines.append(f"  - file: {QUIZZES}")
    return "\n".join(lines) + "\n"


def stage(
    source: Path,
    root: Path = ROOT,
    keys: list[str] | None = None,
    live: dict | None = None,
    switch: str | None = None,
) -> list[Chapter]:
    """Write the book's sources into ``source``: notebooks, index, _config.yml, _toc.yml.

    ``keys`` ('01', '03', ...) builds a subset of the chapters (the tests use it); None: all.
    ``live``: chapter key -> ``site_frames.FramePlan`` for the dashboards made live (None: none).
    ``switch``: this edition's language when both editions are built (pages link to each other).
    Texts of its own (index, links, notes) are in the language in use (``posenc_lib.i18n``).
    """
    chapters = course_map(root)
    if keys is not None:
        unknown = sorted(set(keys) - {ch.key for ch in chapters})
        if unknown:
            raise ValueError(
                f"No chapter {', '.join(unknown)} in the start page's map; it lists "
                f"{', '.join(ch.key for ch in chapters)}."
            )
        chapters = [ch for ch in chapters if ch.key in keys]
    if source.exists():
        shutil.rmtree(source)
    source.mkdir(parents=True)
    start = root / "notebooks" / f"{START}.ipynb"
    _stage_notebook(start, source / "notebooks" / f"{START}.ipynb", None, root, live, switch)
    for ch in chapters:
        for folder in ("notebooks", "exercises", "solutions"):
            path = root / folder / f"{ch.stem}.ipynb"
            if path.exists():
                _stage_notebook(path, source / folder / path.name, ch, root, live, switch)
        for deep in ch.deeper:
            path = root / "notebooks" / DEEPER / f"{deep.stem}.ipynb"
            _stage_notebook(path, source / "notebooks" / DEEPER / path.name, ch, root, live, switch)
    quizzes = quizzes_page(chapters, root)
    if quizzes is not None:
        (source / f"{QUIZZES}.md").write_text(quizzes, encoding="utf-8")
    index = index_page(chapters, root, quizzes=quizzes is not None, switch=switch)
    (source / "index.md").write_text(index, encoding="utf-8")
    (source / "_config.yml").write_text(
        _config(["_build", "**/.ipynb_checkpoints"]), encoding="utf-8"
    )
    (source / "_toc.yml").write_text(_toc(chapters, root, quizzes is not None), encoding="utf-8")
    return chapters


def _copy_mathjax(static: Path) -> None:
    """MathJax 3 from the sphinx-mathjax-offline package into the site's _static/mathjax/."""
    spec = importlib.util.find_spec("sphinx-mathjax-offline")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "The site serves MathJax itself, from the sphinx-mathjax-offline package, which is not "
            "installed: run `make setup` (it is in the test extra of pyproject.toml)."
        )
    mathjax = Path(spec.origin).parent / "static" / "mathjax"
    for part in MATHJAX_PARTS:
        origin, target = mathjax / part, static / "mathjax" / part
        if origin.is_dir():
            shutil.copytree(origin, target, dirs_exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(origin, target)


def _jupyter_book(source: Path, progress: bool | None) -> tuple[int, str]:
    """Run jupyter-book on the staged sources: (exit code, its log).

    A tqdm bar on stderr follows Sphinx's "reading sources... [ 4%] notebooks/01_..." and
    "writing output..." lines, two steps a page; ``progress`` True always, False never, None
    (the default) only on a terminal or in Jupyter, so a pipe or a log gets no bar.
    """
    book = shutil.which("jupyter-book", path=str(Path(sys.executable).parent)) or "jupyter-book"
    command = [book, "build", str(source), "--builder", "html", "--keep-going"]
    # The pages: the notebooks, the index and the quizzes page.
    pages = sum(1 for p in source.rglob("*") if p.suffix in (".ipynb", ".md"))
    log, quiet = [], None if progress is None else not progress
    bar = tqdm(total=2 * pages, desc="website", unit="step", disable=quiet)
    pipe = {
        "stdout": subprocess.PIPE,
        "stderr": subprocess.STDOUT,
        "text": True,
        "errors": "replace",
    }
    with bar, subprocess.Popen(command, **pipe) as run:
        for line in run.stdout:
            log.append(line)
            step = SPHINX_STEP.search(ANSI.sub("", line))
            if step:
                bar.set_postfix_str(step[1], refresh=False)
                bar.update(1)
    return run.returncode, "".join(log)


def build_site(
    out: Path = SITE_DIR,
    source: Path = SOURCE_DIR,
    keys: list[str] | None = None,
    root: Path | None = None,
    progress: bool | None = None,
    live: bool = True,
    language: str = "en",
    switch: bool = False,
) -> SiteBuild:
    """The site of one edition: English (``language`` "en", notebooks from the course folder) or
    Chinese ("zh", from its zh/ folder), its own texts, figures' frames and Sphinx's words in that
    language; ``switch``: both editions are built, English in ``out`` and Chinese in ``out``/zh,
    and every page links to itself in the other. See ``_build_site`` for the other arguments."""
    if root is None:
        root = ROOT / ZH if language == ZH else ROOT
    before = os.environ.get(ENV)
    os.environ[ENV] = language  # the frames are drawn in other processes
    try:
        with in_language(language):
            return _build_site(
                out, source, keys, root, progress, live, language if switch else None
            )
    finally:
        if before is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = before


def _build_site(
    out: Path,
    source: Path,
    keys: list[str] | None,
    root: Path,
    progress: bool | None,
    live: bool,
    switch: str | None,
) -> SiteBuild:
    """Stage the sources, build them with jupyter-book into ``out``; raise if the build fails.

    ``root``: the course folder to read (the tests build a copy); ``progress``: see
    ``_jupyter_book``; ``live``: draw the dashboards' frames (on two processes, while
    jupyter-book runs) and make each lecture's dashboard live; False: still pictures.
    """
    started = time.perf_counter()
    plans = {}
    if live:
        wanted = None if keys is None else ["start", *keys]
        plans = {p.key: p for p in site_frames.plans_for(wanted)}
    frames_dir = source.with_name(source.name + "-frames")
    job = None
    if plans:
        job = site_frames.FrameJob(list(plans.values()), frames_dir)
    try:
        stage(source, root, keys, plans, switch)
        code, log = _jupyter_book(source, progress)
        html = source / "_build" / "html"
        if code != 0 or not (html / "index.html").exists():
            raise RuntimeError(f"jupyter-book failed (exit {code}):\n{log[-4000:]}")
        rendered = job.wait() if job is not None else []
    except BaseException:
        if job is not None:
            job.cancel()
        raise
    _copy_mathjax(html / "_static")
    if job is not None:
        shutil.copytree(frames_dir, html / site_frames.FOLDER, dirs_exist_ok=True)
    if out.exists():
        shutil.rmtree(out)
    shutil.copytree(html, out)
    for leftover in (".buildinfo", ".doctrees"):
        path = out / leftover
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    warnings = [line for line in log.splitlines() if re.search(r"WARNING|ERROR", line)]
    pages = sorted(out.rglob("*.html"))
    pages = [p for p in pages if "_static" not in p.parts]
    return SiteBuild(out, pages, time.perf_counter() - started, warnings, rendered)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m tools.site",
        description="Build the course as a static website (offline) into build/site/.",
    )
    parser.add_argument("--out", type=Path, default=SITE_DIR, help="the folder to write")
    args = parser.parse_args(argv)
    print(
        "==> Building the course website with jupyter-book (committed outputs, offline) and "
        "drawing each dashboard's frames"
    )
    built = build_site(args.out, switch=True)
    print("==> 中文版 (the Chinese edition) into", args.out / ZH)
    chinese = build_site(args.out / ZH, ZH_SOURCE_DIR, language=ZH, switch=True)
    size = sum(p.stat().st_size for p in built.folder.rglob("*") if p.is_file())
    for line in built.warnings + chinese.warnings:
        print("   ", line)
    for r in built.frames + chinese.frames:
        print(
            f"    dashboard {r.key:>5}: {r.frames:4d} frames ({r.files} files), "
            f"{r.bytes / 1e6:.2f} MB, drawn in {r.seconds:.0f} s"
        )
    problems = check_site(built.folder, SOURCE_DIR, skip=(ZH,))
    problems += [f"{ZH}/{p}" for p in check_site(chinese.folder, ZH_SOURCE_DIR)]
    for problem in problems:
        print("    PROBLEM:", problem)
    if problems:
        raise SystemExit(f"The site in {built.folder} has {len(problems)} problems (above).")
    where = built.folder.relative_to(ROOT) if built.folder.is_relative_to(ROOT) else built.folder
    print(
        f"==> {len(built.pages)} + {len(chinese.pages)} pages (English + 中文), {size / 1e6:.1f} MB, "
        f"in {built.seconds + chinese.seconds:.0f} s: "
        f"{where}/index.html (publish the folder as it is, or open that file in a browser)"
    )


if __name__ == "__main__":
    main()
