"""The course's plan (``course.toml``): chapters, their core lectures, deep dives and exercises, and
the minutes of each, from a reading-pace model. Every time the course states is rendered from it.

    python -m tools.authoring times   # recompute the minutes, print them everywhere (both languages)

Where the minutes appear, each rendered from the plan (``render_cell``), never typed:

* each lecture's, deep dive's and solutions/exercises notebook's **time cell**, a markdown cell
  tagged ``posenc-plan`` right after the notebook's first cell (id ``chNN-time``,
  ``chNN-<slug>-time``, ``chNN-exercises-time``);
* the start page's **map** (``ch00-map-table``: core chapters in order, deep dives as optional
  branches, with times) and its own time (``ch00-time``);
* the README, between ``<!-- course.toml: times -->`` and ``<!-- /course.toml -->``.

A tagged cell is in no translation catalog: ``tools.translate build`` renders its Chinese from the
plan too, so a changed time makes no translation stale. The model's constants are fitted to the
cold readers' estimates recorded in ``course.toml`` (``fit_pace``), which documents them.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field, fields
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "course.toml"
README = ROOT / "README.md"
PLAN_TAG = "posenc-plan"
README_BEGIN, README_END = "<!-- course.toml: times -->", "<!-- /course.toml -->"
MAP_CELL, START_TIME_CELL = "ch00-map-table", "ch00-time"
LANG_DIRS = (("en", ""), ("zh", "zh"))
NBVAL = re.compile(r"^\s*# NBVAL_\w+")


@dataclass
class Entry:
    """One notebook of the plan."""

    path: str  # from the root: "notebooks/02_naive_encodings.ipynb"
    minutes: int
    run_s: float = 0.0
    title: str = ""  # a deep dive's, in English and Chinese
    title_zh: str = ""
    question: str = ""
    question_zh: str = ""

    @property
    def stem(self) -> str:
        return Path(self.path).stem

    def text(self, name: str, lang: str) -> str:
        return getattr(self, f"{name}_zh") if lang == "zh" else getattr(self, name)


@dataclass
class Chapter:
    key: str
    title: str
    title_zh: str
    question: str
    question_zh: str
    before: str
    before_zh: str
    lecture: Entry
    exercises: Entry | None = None
    deeper: list[Entry] = field(default_factory=list)

    def text(self, name: str, lang: str) -> str:
        return getattr(self, f"{name}_zh") if lang == "zh" else getattr(self, name)

    def entries(self) -> list[Entry]:
        return [self.lecture, *self.deeper, *([self.exercises] if self.exercises else [])]


def load(path: Path = PLAN) -> tuple[dict, list[Chapter]]:
    """(the pace constants, the chapters in order)."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    chapters = []
    for ch in data["chapter"]:
        ch = dict(ch)
        lecture = Entry(**ch.pop("lecture"))
        exercises = Entry(**ch.pop("exercises")) if "exercises" in ch else None
        deeper = [Entry(**d) for d in ch.pop("deeper", [])]
        chapters.append(Chapter(**ch, lecture=lecture, exercises=exercises, deeper=deeper))
    return data["pace"], chapters


def chapter_of(path: Path | str, chapters: list[Chapter]) -> tuple[Chapter, Entry]:
    """The chapter and plan entry of an English notebook (a path from the root or absolute; a
    Chinese twin, zh/..., and exercises/NN_x, whose entry is its solutions', map to theirs)."""
    rel = Path(path)
    if rel.is_absolute():
        rel = rel.relative_to(ROOT)
    rel = rel.as_posix().removeprefix("zh/").replace("exercises/", "solutions/", 1)
    for ch in chapters:
        for entry in ch.entries():
            if entry.path == rel:
                return ch, entry
    raise KeyError(f"{rel} is not in course.toml: add it to its chapter there")


# -- the reading-pace model ---------------------------------------------------------------------------


@dataclass
class Features:
    """What a notebook asks of a reader, as the model counts it."""

    words: int  # prose: whitespace-separated tokens of the markdown cells holding a letter or digit
    code_lines: int  # non-blank lines of the code cells, nbval's marks left out
    figures: int  # PNG outputs (a dashboard's still included)
    coding_questions: int = 0  # exercise notebooks: check cells that are not concept questions
    concept_questions: int = 0  # lines `answer_cN = ...`


def features(path: Path) -> Features:
    notebook = nbformat.read(path, as_version=4)
    words = lines = figures = checks = concepts = 0
    for cell in notebook.cells:  # plan cells count: a reader reads the map (their word counts
        if cell.cell_type == "markdown":  # never depend on the minutes they print)
            text = re.sub(r"<!--.*?-->", " ", cell.source, flags=re.S)
            words += sum(1 for token in text.split() if re.search(r"\w", token))
        elif cell.cell_type == "code":
            lines += sum(1 for ln in cell.source.splitlines() if ln.strip() and not NBVAL.match(ln))
            figures += sum("image/png" in o.get("data", {}) for o in cell.get("outputs", []))
            checks += ".check(" in cell.source
            concepts += len(re.findall(r"^\s*answer_c\d+\s*=", cell.source, flags=re.M))
    kind = notebook.metadata.get("posenc", {}).get("kind")
    if kind in ("solutions", "exercises"):
        return Features(words, lines, figures, max(checks - concepts, 0), concepts)
    return Features(words, lines, figures)


def model_minutes(feats: Features, run_s: float, pace: dict) -> float:
    """The reading-pace model's minutes (course.toml says what each constant is and how few timed
    reads they rest on)."""
    return (
        feats.words / pace["words_per_minute"]
        + feats.code_lines * pace["seconds_per_code_line"] / 60
        + feats.figures * pace["seconds_per_figure"] / 60
        + run_s / 60
        + feats.coding_questions * pace["minutes_per_coding_question"]
        + feats.concept_questions * pace["minutes_per_concept_question"]
    )


@dataclass
class Fit:
    """The pace constants fitted to the cold readers' estimates in course.toml's [[calibration]]."""

    words_per_minute: float
    seconds_per_code_line: float
    minutes_per_coding_question: float
    rms: float  # minutes, over the estimates
    estimates: int


# A calibration record's counts: every field the model reads of a notebook, then its run time.
RECORDED = (*(f.name for f in fields(Features)), "run_s")


def read_as(record: dict) -> tuple[Features, float]:
    """What a calibration record's reader read: its notebook's counts and run time as recorded with
    the estimate (``record_calibration`` writes them), so editing the notebook later (a core cut to
    fit its hour) moves neither the fit nor the constants held to it."""
    missing = [key for key in RECORDED if key not in record]
    if missing:
        raise ValueError(
            f"course.toml's calibration record for {record.get('path')} lacks {', '.join(missing)}:"
            " record the notebook as it was read (tools.course_plan.record_calibration)"
        )
    counts = Features(*(int(record[key]) for key in RECORDED[:-1]))
    return counts, float(record["run_s"])


def record_calibration(path: str, minutes: float, read: str, plan: Path = PLAN,
                       root: Path = ROOT) -> str:  # fmt: skip
    """A [[calibration]] entry for ``path`` as it is now (what a reader has just read), as TOML."""
    _, chapters = load(plan)
    _, entry = chapter_of(path, chapters)
    feats = features(root / path)
    values = {**vars(feats), "run_s": entry.run_s}
    lines = [f'path = "{path}"', f"minutes = {minutes:g}", f'read = "{read}"']
    lines += [f"{key} = {values[key]:g}" for key in RECORDED]
    return "[[calibration]]\n" + "\n".join(lines) + "\n"


def fit_pace(path: Path = PLAN) -> Fit:
    """Least squares over the recorded estimates, with two unknowns: the reading speed (a code line
    read in the time of ``words_per_code_line`` words: the ratio an earlier fit found) and the
    minutes a coding question takes; a figure's seconds, a concept question's minute and the
    measured run time are held fixed."""
    import torch  # the course's own dependency; only the fit needs it

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    pace, chapters = load(path)
    rows, targets = [], []
    for record in data.get("calibration", []):
        chapter_of(record["path"], chapters)  # a notebook the plan lists (raises if not)
        feats, run_s = read_as(record)  # the notebook as the reader read it, not as it is now
        fixed = (
            feats.figures * pace["seconds_per_figure"] / 60
            + run_s / 60
            + feats.concept_questions * pace["minutes_per_concept_question"]
        )
        rows.append([feats.words + pace["words_per_code_line"] * feats.code_lines,
                     feats.coding_questions])  # fmt: skip
        targets.append(record["minutes"] - fixed)
    if len(rows) < 3:
        raise ValueError(f"{path.name} records {len(rows)} estimates: the fit needs at least 3")
    a = torch.tensor(rows, dtype=torch.float64)  # (n, 2): word-equivalents, coding questions
    y = torch.tensor(targets, dtype=torch.float64)  # (n,) minutes left to explain
    minutes_per_word, per_question = torch.linalg.lstsq(a, y[:, None]).solution.flatten().tolist()
    rms = float(((a @ torch.tensor([minutes_per_word, per_question], dtype=torch.float64) - y) ** 2)
                .mean().sqrt())  # fmt: skip
    wpm = 1 / minutes_per_word
    return Fit(wpm, pace["words_per_code_line"] * 60 / wpm, per_question, rms, len(rows))


def calibrated(path: Path = PLAN) -> int:
    """How many cold readers' estimates the pace constants are fitted to."""
    return len(tomllib.loads(path.read_text(encoding="utf-8")).get("calibration", []))


def round5(minutes: float) -> int:
    """To the nearest 5 minutes (halves up), at least 5."""
    return max(5, int(math.floor(minutes / 5 + 0.5)) * 5)


def modelled(entry: Entry, pace: dict, root: Path = ROOT) -> int:
    return round5(model_minutes(features(root / entry.path), entry.run_s, pace))


# -- rendering --------------------------------------------------------------------------------------


def _minutes(m: int, lang: str) -> str:
    return f"{m} 分钟" if lang == "zh" else f"{m} min"


def _deep_dive_links(ch: Chapter, lang: str, prefix: str) -> str:
    if lang == "zh":
        return "；".join(
            f"[{d.title_zh}]({prefix}{d.stem}.ipynb)，约 {d.minutes} 分钟" for d in ch.deeper
        )
    return "; ".join(
        f"[{d.title}]({prefix}{d.stem}.ipynb), about {d.minutes} minutes" for d in ch.deeper
    )


def time_line(ch: Chapter, entry: Entry, lang: str) -> str:
    """The time cell of a lecture, deep dive or exercise notebook."""
    zh = lang == "zh"
    if ch.key == "00":
        return (
            f"**用时**：环境就绪后约 {entry.minutes} 分钟。"
            if zh
            else f"**Time**: about {entry.minutes} minutes, once your setup runs."
        )
    if entry is ch.lecture:
        exercises = f"`exercises/{ch.lecture.stem}.ipynb`"
        if zh:
            text = (
                f"**用时**：核心讲义约 {entry.minutes} 分钟，练习（{exercises}）另需 "
                f"{ch.exercises.minutes} 分钟。"
            )
            if ch.deeper:
                text += (
                    f"可选的深入阅读（不读也能学完本章）：{_deep_dive_links(ch, lang, 'deeper/')}。"
                )
            return text
        text = (
            f"**Time**: about {entry.minutes} minutes, plus {ch.exercises.minutes} for the "
            f"exercises ({exercises})."
        )
        if ch.deeper:
            text += (
                " Deep dives beside this chapter, optional (the core and its exercises never "
                f"need them): {_deep_dive_links(ch, lang, 'deeper/')}."
            )
        return text
    if entry is ch.exercises:
        return (
            f"**用时**：约 {entry.minutes} 分钟。"
            if zh
            else f"**Time**: about {entry.minutes} minutes."
        )
    back = f"../{ch.lecture.stem}.ipynb"
    if zh:
        return (
            f"**用时**：约 {entry.minutes} 分钟。这是第 {int(ch.key)} 章的深入阅读，可选；"
            f"[回到核心讲义]({back})。"
        )
    return (
        f"**Time**: about {entry.minutes} minutes. A deep dive of chapter {int(ch.key)}, optional; "
        f"[back to the core lecture]({back})."
    )


def map_table(chapters: list[Chapter], lang: str) -> str:
    """The start page's map: core chapters in order, deep dives as optional branches (↳)."""
    zh = lang == "zh"
    readers = calibrated()
    start = next(ch for ch in chapters if ch.key == "00")
    if zh:
        head = "| # | 章节 | 要回答的问题 | 用时（核心讲义 + 练习） | 先修 |"
    else:
        head = "| # | chapter | the question it answers | time (core + exercises) | before it |"
    rows = [head, "|---|---|---|---|---|"]
    for ch in chapters:
        if ch.key == "00":
            continue
        time = f"{ch.lecture.minutes} + {ch.exercises.minutes if ch.exercises else 0}"
        rows.append(
            f"| {int(ch.key)} | {ch.text('title', lang)} | {ch.text('question', lang)} | "
            f"{_minutes_pair(time, lang)} | {ch.text('before', lang)} |"
        )
        for d in ch.deeper:
            label = "↳ 深入阅读（可选）：" if zh else "↳ deep dive (optional): "
            before = f"第 {int(ch.key)} 章的核心讲义" if zh else f"chapter {int(ch.key)}'s core"
            rows.append(
                f"| | {label}[{d.text('title', lang)}](deeper/{d.stem}.ipynb) | "
                f"{d.text('question', lang)} | {_minutes(d.minutes, lang)} | {before} |"
            )
    core = sum(
        ch.lecture.minutes + (ch.exercises.minutes if ch.exercises else 0) for ch in chapters
    )
    deep = sum(d.minutes for ch in chapters for d in ch.deeper)
    if zh:
        note = (
            f"核心路径（本页、各章核心讲义和练习）共约 {core:,} 分钟（约 {core / 60:.0f} 小时），"
            f"可选的深入阅读另有约 {deep} 分钟；"
            f"本页约需 {start.lecture.minutes} 分钟，不含配置环境的时间。所有用时都出自 "
            "`course.toml`，由一个阅读速度模型估算（文字的词数、代码行数、图的数量和 notebook "
            f"的实测运行时间），模型的常数拟合自 {readers} 份初次通读者的估计（他们独自学习，"
            "并非真正计时）；练习的用时估得更粗略。"
        )
    else:
        note = (
            f"The core path (this page, each chapter's core lecture and exercises) is about "
            f"{core:,} minutes ({core / 60:.0f} hours), the optional deep dives (↳) about {deep} "
            "minutes more; this page takes about "
            f"{start.lecture.minutes} minutes, setup not counted. Every time comes from "
            "`course.toml`, estimated by a reading-pace model (prose words, code lines, figures, "
            "the notebook's measured run time) whose constants are fitted to "
            f"{readers} cold readers' estimates (readers working alone, not timed learners); the "
            "exercise times are rougher."
        )
    return "\n".join(rows) + "\n\n" + note


def _minutes_pair(pair: str, lang: str) -> str:
    return f"{pair} 分钟" if lang == "zh" else f"{pair} min"


def readme_block(chapters: list[Chapter]) -> str:
    rows = [
        "| chapter | core lecture | exercises | deep dives (optional) |",
        "|---|---|---|---|",
    ]
    for ch in chapters:
        deep = "; ".join(f"`deeper/{d.stem}` {d.minutes} min" for d in ch.deeper) or "—"
        ex = f"{ch.exercises.minutes} min" if ch.exercises else "—"
        rows.append(f"| `{ch.lecture.stem}` | {ch.lecture.minutes} min | {ex} | {deep} |")
    return (
        f"{README_BEGIN}\n"
        "Times, for a learner working alone (from `course.toml`: a reading-pace model fitted to "
        f"{calibrated()} cold readers' estimates, so take them as estimates):\n\n"
        + "\n".join(rows)
        + f"\n{README_END}"
    )


def render_cell(notebook: Path | str, cell_id: str, lang: str = "en", path: Path = PLAN) -> str:
    """The source of the plan cell ``cell_id`` of ``notebook`` (English path) in ``lang``."""
    _pace, chapters = load(path)
    if cell_id == MAP_CELL:
        return map_table(chapters, lang)
    ch, entry = chapter_of(notebook, chapters)
    return time_line(ch, entry, lang)


def time_cell_id(ch: Chapter, entry: Entry) -> str:
    if ch.key == "00":
        return START_TIME_CELL
    if entry is ch.lecture:
        return f"ch{ch.key}-time"
    if entry is ch.exercises:
        return f"ch{ch.key}-exercises-time"
    return f"ch{ch.key}-{entry.stem[3:].replace('_', '-')}-time"


def plan_cell(cell_id: str, source: str):
    cell = nbformat.v4.new_markdown_cell(source)
    cell.id = cell_id
    cell.metadata = {"tags": [PLAN_TAG]}
    return cell


def update_minutes(path: Path = PLAN, root: Path = ROOT, only: list[str] = ()) -> list[str]:
    """Rewrite each entry's ``minutes`` in course.toml to the model's (``only``: those chapters');
    return what changed."""
    pace, chapters = load(path)
    text = path.read_text(encoding="utf-8")
    changed = []
    for ch in chapters:
        if only and ch.key not in only:
            continue
        for entry in ch.entries():
            new = modelled(entry, pace, root)
            if new != entry.minutes:
                changed.append(f"{entry.path}: {entry.minutes} -> {new} min")
                text = set_field(text, entry.path, "minutes", new)
    path.write_text(text, encoding="utf-8")
    return changed


def set_field(text: str, notebook: str, name: str, value) -> str:
    """course.toml's text with ``name = value`` set on the line of ``notebook``'s entry."""
    pattern = re.compile(rf'^(.*path = "{re.escape(notebook)}".*?\b{name} = )[\d.]+', re.M)
    text, count = pattern.subn(lambda m: f"{m[1]}{value}", text)
    if count != 1:
        raise ValueError(f"course.toml: no one line holds {notebook}'s {name}")
    return text


def record_run_time(notebook: Path, seconds: float, path: Path = PLAN) -> bool:
    """Write a notebook's measured run time into course.toml (English notebooks in it only)."""
    try:
        rel = notebook.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return False
    text = path.read_text(encoding="utf-8")
    if rel.startswith("zh/") or f'path = "{rel}"' not in text or "run_s" not in _line(text, rel):
        return False
    path.write_text(set_field(text, rel, "run_s", round(seconds)), encoding="utf-8")
    return True


def _line(text: str, rel: str) -> str:
    return next(ln for ln in text.splitlines() if f'path = "{rel}"' in ln)


def _put_cell(nb, cell_id: str, source: str, after: int = 0) -> None:
    """Set the plan cell ``cell_id``'s source, adding it after cell ``after`` if missing."""
    for cell in nb.cells:
        if cell.id == cell_id:
            cell.source = source
            cell.metadata.setdefault("tags", [])
            if PLAN_TAG not in cell.metadata["tags"]:
                cell.metadata["tags"].append(PLAN_TAG)
            return
    nb.cells.insert(after + 1, plan_cell(cell_id, source))


def render_notebooks(root: Path = ROOT, path: Path = PLAN, only: list[str] = ()) -> list[Path]:
    """Write every plan cell into the English notebooks and, where they exist, their Chinese twins
    (the same cells ``tools.translate build`` writes); ``only``: those chapters' notebooks and the
    start page's map. Return the notebooks changed."""
    from tools.authoring import render

    _pace, chapters = load(path)
    written = []
    for ch in chapters:
        if only and ch.key not in (*only, "00"):
            continue
        for entry in ch.entries():
            cell_id = time_cell_id(ch, entry)
            paths = [entry.path]
            if entry is ch.exercises:  # exercises/NN is written from solutions/NN (authoring)
                paths.append(entry.path.replace("solutions/", "exercises/", 1))
            pairs = [(lang, root / pre / rel) for rel in paths for lang, pre in LANG_DIRS]
            for lang, nb_path in pairs:
                if not nb_path.exists():
                    continue
                nb = nbformat.read(nb_path, as_version=4)
                before = render(nb)
                if lang == "zh" and not any(c.id == cell_id for c in nb.cells):
                    continue  # the twin gains the cell from tools.translate build
                _put_cell(nb, cell_id, time_line(ch, entry, lang))
                if ch.key == "00":
                    heading = "## 课程地图" if lang == "zh" else "## The map"
                    where = next(
                        (i for i, c in enumerate(nb.cells) if c.source.startswith(heading)), None
                    )
                    if where is not None or any(c.id == MAP_CELL for c in nb.cells):
                        _put_cell(nb, MAP_CELL, map_table(chapters, lang), where or 0)
                if render(nb) != before:
                    nb_path.write_text(render(nb), encoding="utf-8")
                    written.append(nb_path)
    return written


def render_readme(readme: Path = README, path: Path = PLAN) -> bool:
    _pace, chapters = load(path)
    text = readme.read_text(encoding="utf-8")
    start, end = text.find(README_BEGIN), text.find(README_END)
    if start < 0 or end < 0:
        raise ValueError(f"README.md has no {README_BEGIN} ... {README_END} block")
    new = text[:start] + readme_block(chapters) + text[end + len(README_END) :]
    if new != text:
        readme.write_text(new, encoding="utf-8")
    return new != text


def render_all(only: list[str] = ()) -> list[Path]:
    """Recompute the minutes (course.toml), then print them into every notebook and the README
    (``only``: chapters "03", ...: just theirs, and the start page's map and the README, which
    list every chapter)."""
    written: list[Path] = []
    for _ in range(3):  # a time line written for the first time adds its own words to the count:
        changed = update_minutes(only=only)  # recount until the minutes stand still
        for line in changed:
            print(line)
        written += [p for p in render_notebooks(only=only) if p not in written]
        if not changed:
            break
    if render_readme():
        written.append(README)
    return written
