"""The Chinese edition (中文版), generated from the English notebooks and the translation catalogs.

    python -m tools.translate sync      # add new English cells and messages to the catalogs
    python -m tools.translate build     # write zh/notebooks, zh/exercises, zh/solutions
    python -m tools.translate check     # list what is stale, missing or untranslated; exit 1 if any
    python -m tools.translate font      # re-make the bundled CJK font from Noto Sans CJK SC

The English notebooks are the source. Two kinds of catalog hold the Chinese:

* **Cells.** ``translations/zh/notebooks/NN_name.md`` holds a lecture's markdown cells and
  ``translations/zh/exercises/NN_name.md`` its exercises' and solutions' (they share cell ids). Each
  entry starts with ``<!-- cell ID en:FINGERPRINT -->``, FINGERPRINT being the first 12 hex digits
  of the SHA-256 of the English cell's source when the entry was translated; an entry not yet
  translated says ``untranslated`` after it and holds the English. An English cell edited after its
  translation no longer matches its fingerprint: the entry is stale until someone re-translates it
  and writes the new fingerprint (``sync`` prints it).
* **Messages.** ``posenc_lib/locale/zh/*.po``: the library's sentences (and the notebooks' printed
  sentences, ``tr("...")`` in a code cell), gettext catalogs whose ids are the English sentences.
  ``sync`` extracts them with Babel and updates the catalogs as gettext does: a sentence edited in
  English keeps its old translation marked fuzzy, which the tests count as stale.

A chapter's deep dives, ``notebooks/deeper/NN_slug.ipynb``, have their catalogs in
``translations/zh/notebooks/deeper/NN_slug.md`` and their Chinese twins in ``zh/notebooks/deeper/``;
``--only NN`` covers them with their chapter. Markdown cells tagged ``posenc-plan`` (a notebook's
time line, the start page's map) are in no catalog: ``build`` renders them in Chinese from
``course.toml`` (``tools/course_plan.py``), so a changed time makes no translation stale.

A Chinese notebook is its English notebook with every markdown cell replaced by its translation,
one code cell added before the first, ``posenc_lib.set_language("zh")``, and every other code cell
identical. Links out of the notebook folders (``../README.md``) are re-pointed one folder up.
``build`` keeps a code cell's outputs while its source is unchanged; run ``make notebooks-zh`` (or
``python -m tools.authoring execute zh/...``) after it to re-execute.
"""

from __future__ import annotations

import argparse
import ast
import copy
import hashlib
import io
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
LANG = "zh"
FOLDERS = ("notebooks", "exercises", "solutions")
CATALOGS = ROOT / "translations" / LANG
LOCALE = ROOT / "posenc_lib" / "locale" / LANG
OUT = ROOT / LANG
KEYWORDS = {"_": None, "N_": None, "tr": None}  # the marking functions of posenc_lib.i18n
TOOLS = ("site.py", "demo.py", "hub.py")  # the repository's tools whose pages speak both languages
LANGUAGE_CELL_ID = "zh-language"
# Markdown cells tagged so are rendered from course.toml in each language (a chapter's times, the
# start page's map): tools.authoring writes the English, build the Chinese; no catalog holds them,
# so a time that changes makes no translation stale.
PLAN_TAG = "posenc-plan"
# Cells nbval skips in the Chinese notebooks only: the identical code runs in the English notebook in
# the same test run, prints no checked output, and no later cell uses what it computes. Each costs a
# minute of the suite's 15 (cell id -> why).
NBVAL_SKIP_IN_ZH = {
    "ch08-long-live": "a passkey and a 2048-token perplexity on SmolLM2 (60 s on 2 cores)",
}
LANGUAGE_CELL = (
    'import posenc_lib\n\nposenc_lib.set_language("zh")  # 中文版：库的输出、图和检查的反馈都用中文'
)
MARKER = re.compile(r"^<!-- cell (?P<id>\S+) en:(?P<fp>[0-9a-f]{12})(?P<todo> untranslated)? -->$")
HEADER = (
    "<!-- 中文翻译 (Chinese translation) of {sources}. Each entry: the cell's id and the fingerprint"
    " of the English it translates. Edit the text below a marker; see tools/translate.py. -->"
)


def fingerprint(text: str) -> str:
    """The first 12 hex digits of the SHA-256 of ``text`` (an English cell's source)."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


# -- cell catalogs ----------------------------------------------------------------------------------


@dataclass
class Entry:
    cell_id: str
    fingerprint: str
    text: str
    translated: bool


def read_catalog(path: Path) -> dict[str, Entry]:
    """A cell catalog's entries by cell id (empty if the file does not exist)."""
    if not path.exists():
        return {}
    entries: dict[str, Entry] = {}
    current: Entry | None = None
    lines: list[str] = []

    def close():
        if current is not None:
            current.text = "\n".join(lines).strip("\n")
            if current.cell_id in entries:
                raise ValueError(f"{path}: cell {current.cell_id} appears twice.")
            entries[current.cell_id] = current

    for line in path.read_text(encoding="utf-8").splitlines():
        match = MARKER.match(line)
        if match:
            close()
            current = Entry(match["id"], match["fp"], "", not match["todo"])
            lines = []
        elif current is not None:
            lines.append(line)
    close()
    return entries


def write_catalog(path: Path, entries: list[Entry], sources: list[str]) -> None:
    parts = [HEADER.format(sources=", ".join(sources))]
    for e in entries:
        todo = "" if e.translated else " untranslated"
        parts.append(f"<!-- cell {e.cell_id} en:{e.fingerprint}{todo} -->\n{e.text}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")


ONLY: list[str] = []  # chapter numbers ("03") that sync and build restrict themselves to


DEEPER = "deeper"  # notebooks/deeper/NN_slug.ipynb: chapter NN's deep dives


def groups() -> list[tuple[Path, list[Path]]]:
    """(catalog, [English notebooks it translates]) for every English notebook (or ONLY's): a
    lecture's catalog is translations/zh/notebooks/NN_name.md, a deep dive's
    translations/zh/notebooks/deeper/NN_slug.md (``--only NN`` covers the chapter's deep dives)."""
    found = []
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        found.append((CATALOGS / "notebooks" / f"{nb.stem}.md", [nb]))
    for nb in sorted((ROOT / "notebooks" / DEEPER).glob("*.ipynb")):
        found.append((CATALOGS / "notebooks" / DEEPER / f"{nb.stem}.md", [nb]))
    for nb in sorted((ROOT / "solutions").glob("*.ipynb")):
        pair = [nb, ROOT / "exercises" / nb.name]
        found.append((CATALOGS / "exercises" / f"{nb.stem}.md", [p for p in pair if p.exists()]))
    return [g for g in found if not ONLY or g[0].stem[:2] in ONLY]


def markdown_cells(notebooks: list[Path]) -> dict[str, str]:
    """Every markdown cell's English source by id, over ``notebooks`` (shared ids agree)."""
    cells: dict[str, str] = {}
    for path in notebooks:
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown" or PLAN_TAG in cell.metadata.get("tags", []):
                continue  # a cell rendered from course.toml is written in Chinese, not translated
            if cells.get(cell.id, cell.source) != cell.source:
                raise ValueError(f"{path.name}: cell {cell.id} differs from the same id elsewhere.")
            cells[cell.id] = cell.source
    return cells


@dataclass
class Problem:
    catalog: Path
    cell_id: str
    kind: str  # "missing", "untranslated", "stale", "orphan"

    def __str__(self) -> str:
        where = self.catalog.relative_to(ROOT)
        return {
            "missing": f"{where}: cell {self.cell_id} has no entry (run python -m tools.translate sync)",
            "untranslated": f"{where}: cell {self.cell_id} is not translated yet",
            "stale": f"{where}: cell {self.cell_id} changed in English after its translation "
            "(re-translate it, then write the fingerprint sync prints)",
            "orphan": f"{where}: cell {self.cell_id} is no longer in the English notebook",
        }[self.kind]


def cell_problems() -> list[Problem]:
    problems = []
    for catalog, notebooks in groups():
        english = markdown_cells(notebooks)
        entries = read_catalog(catalog)
        for cell_id, source in english.items():
            entry = entries.get(cell_id)
            if entry is None:
                problems.append(Problem(catalog, cell_id, "missing"))
            elif not entry.translated:
                problems.append(Problem(catalog, cell_id, "untranslated"))
            elif entry.fingerprint != fingerprint(source):
                problems.append(Problem(catalog, cell_id, "stale"))
        problems += [Problem(catalog, i, "orphan") for i in entries if i not in english]
    return problems


def sync_cells() -> None:
    for catalog, notebooks in groups():
        english = markdown_cells(notebooks)
        entries = read_catalog(catalog)
        merged = []
        for cell_id, source in english.items():
            entry = entries.get(cell_id) or Entry(cell_id, fingerprint(source), source, False)
            if entry.translated and entry.fingerprint != fingerprint(source):
                print(
                    f"stale: {catalog.relative_to(ROOT)} cell {cell_id}: re-translate it, then "
                    f"replace en:{entry.fingerprint} by en:{fingerprint(source)}"
                )
            merged.append(entry)
        write_catalog(catalog, merged, [str(p.relative_to(ROOT)) for p in notebooks])


# -- Chinese notebooks ------------------------------------------------------------------------------

LINK = re.compile(r"(\]\(|<img src=\"|href=\")(?P<target>[^)\"#\s]+)")


def _repoint(text: str, folder: str) -> str:
    """Links to files outside the three notebook folders point one folder further up
    (``folder``: the English notebook's folder from the root, "notebooks" or "notebooks/deeper")."""

    def fix(match: re.Match) -> str:
        target = match["target"]
        if re.match(r"^[a-z]+:", target) or target.startswith("/"):
            return match[0]
        english = (ROOT / folder / target).resolve()
        try:
            inside = english.relative_to(ROOT).parts[0] in FOLDERS
        except ValueError:
            inside = False
        if inside:
            return match[0]
        return match[1] + "../" + target

    return LINK.sub(fix, text)


def translate_notebook(english: Path, entries: dict[str, Entry], previous: Path | None):
    """The Chinese notebook for ``english``: translated markdown, the language cell, same code."""
    nb = nbformat.read(english, as_version=4)
    old = {}
    if previous is not None and previous.exists():
        old = {c.id: c for c in nbformat.read(previous, as_version=4).cells}
    folder = english.parent.relative_to(ROOT).as_posix()
    cells = []
    for cell in nb.cells:
        cell = copy.deepcopy(cell)
        if cell.cell_type == "markdown" and PLAN_TAG in cell.metadata.get("tags", []):
            from tools import course_plan  # the times and the map, from course.toml, in Chinese

            cell.source = course_plan.render_cell(english, cell.id, LANG)
        elif cell.cell_type == "markdown":
            entry = entries.get(cell.id)
            if entry is not None and entry.translated:
                cell.source = _repoint(entry.text, folder)
        elif cell.cell_type == "code":
            if not any(c.cell_type == "code" for c in cells):
                cells.append(_language_cell(old.get(LANGUAGE_CELL_ID)))
            if cell.id in NBVAL_SKIP_IN_ZH:
                cell.metadata["tags"] = [*cell.metadata.get("tags", []), "nbval-skip"]
            before = old.get(cell.id)
            if before is not None and before.source == cell.source:
                cell.outputs, cell.execution_count = before.outputs, before.execution_count
            else:
                cell.outputs, cell.execution_count = [], None
        cells.append(cell)
    nb.cells = cells
    nb.metadata.setdefault("posenc", {})["language"] = LANG
    return nb


def _language_cell(before):
    cell = nbformat.v4.new_code_cell(LANGUAGE_CELL)
    cell.id = LANGUAGE_CELL_ID
    cell.metadata = {"tags": ["hide-input"]}
    if before is not None and before.source == LANGUAGE_CELL:
        cell.outputs, cell.execution_count = before.outputs, before.execution_count
    return cell


def targets() -> list[tuple[Path, Path, dict[str, Entry]]]:
    """(English notebook, its Chinese path, its catalog's entries) for every notebook."""
    found = []
    for catalog, notebooks in groups():
        entries = read_catalog(catalog)
        for nb in notebooks:
            found.append((nb, OUT / nb.relative_to(ROOT), entries))
    return found


def build() -> list[Path]:
    written = []
    for english, chinese, entries in targets():
        nb = translate_notebook(english, entries, chinese)
        chinese.parent.mkdir(parents=True, exist_ok=True)
        text = nbformat.writes(nb) + "\n"
        if not chinese.exists() or chinese.read_text(encoding="utf-8") != text:
            chinese.write_text(text, encoding="utf-8")
            written.append(chinese)
    for chinese in sorted([*OUT.glob("*/*.ipynb"), *OUT.glob(f"notebooks/{DEEPER}/*.ipynb")]):
        if not ONLY and chinese not in {c for _, c, _ in targets()}:
            chinese.unlink()
            written.append(chinese)
    return written


def sources(nb) -> list[tuple]:
    """What the generator decides in a notebook: each cell's id, type, source and tags."""
    return [(c.id, c.cell_type, c.source, c.metadata.get("tags", [])) for c in nb.cells]


# -- message catalogs -------------------------------------------------------------------------------


@dataclass
class Message:
    text: str
    where: str  # "posenc_lib/checks/ch03/smallest_base.py:120"


def _home(where: str) -> str:
    """The catalog a message belongs to: its chapter's (chNN.po), the core's (core.po), the
    tools' (tools.po), else common.po."""
    if where.startswith("tools/"):
        return "tools"
    if re.fullmatch(r"posenc_lib/[^/]+\.py(:\d+)?", where):
        return "core"  # the math core's messages (its input checks, bound)
    match = re.search(r"(?:/ch|^notebooks/(?:deeper/)?|^solutions/)(\d\d)", where)
    return f"ch{match[1]}" if match else "common"


def unmarked_calls(source: str, where: str) -> list[str]:
    """Marked messages gettext cannot find: an f-string, a ``+`` or a ``.format()`` inside ``_()``
    or ``tr()``, or anything but one literal string inside ``N_()``. (``_(name)`` is how a message
    marked ``N_()`` elsewhere is translated when shown, so a name is fine there.)"""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in KEYWORDS:
                arg = node.args[0] if node.args else None
                literal = isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                built = isinstance(arg, (ast.JoinedStr, ast.BinOp)) or (
                    isinstance(arg, ast.Call)
                    and isinstance(arg.func, ast.Attribute)
                    and arg.func.attr == "format"
                )
                if built or arg is None or (node.func.id == "N_" and not literal):
                    found.append(
                        f"{where}:{node.lineno}: {node.func.id}() needs one literal string "
                        "(no f-string, + or .format inside; fields go to tr's keywords)"
                    )
    return found


def _code_sources():
    """(where, Python source) for the library's files and the notebooks' code cells."""
    paths = sorted((ROOT / "posenc_lib").rglob("*.py")) + [ROOT / "tools" / f for f in TOOLS]
    for path in paths:
        if path.name != "i18n.py":
            yield str(path.relative_to(ROOT)), path.read_text(encoding="utf-8")
    for folder in ("notebooks", f"notebooks/{DEEPER}", "solutions"):
        for nb_path in sorted((ROOT / folder).glob("*.ipynb")):
            for cell in nbformat.read(nb_path, as_version=4).cells:
                if cell.cell_type == "code" and "tr(" in cell.source:
                    code = "\n".join(
                        "" if line.lstrip().startswith(("%", "!")) else line
                        for line in cell.source.splitlines()
                    )
                    yield f"{folder}/{nb_path.name}#{cell.id}", code


def extract() -> tuple[dict[str, list[Message]], list[str]]:
    """Every marked English message by catalog name, and every call gettext cannot extract."""
    from babel.messages.extract import extract as babel_extract

    messages: dict[str, dict[str, Message]] = {}
    errors: list[str] = []
    for where, source in _code_sources():
        errors += unmarked_calls(source, where)
        for line, text, _comments, _context in babel_extract(
            "python", io.BytesIO(source.encode()), keywords=KEYWORDS
        ):
            if isinstance(text, str) and text:
                home = _home(where)
                messages.setdefault(home, {}).setdefault(text, Message(text, f"{where}:{line}"))
    return {k: list(v.values()) for k, v in messages.items()}, errors


def read_po(path: Path):
    from babel.messages.pofile import read_po as babel_read_po

    with path.open("rb") as f:
        return babel_read_po(f, locale="zh_Hans_CN")


def sync_messages() -> None:
    """Update each chNN.po / common.po from the code, as msgmerge would (edited English: fuzzy)."""
    from babel.messages.catalog import Catalog
    from babel.messages.pofile import write_po

    extracted, errors = extract()
    for error in errors:
        print(error)
    LOCALE.mkdir(parents=True, exist_ok=True)
    for name in sorted(set(extracted) | {p.stem for p in LOCALE.glob("*.po")}):
        if ONLY and name[2:] not in ONLY and name not in ONLY:
            continue
        template = Catalog(locale="zh_Hans_CN", domain="posenc")
        for m in extracted.get(name, []):
            file, line = m.where.rsplit(":", 1)
            template.add(m.text, locations=[(file, int(line))])
        path = LOCALE / f"{name}.po"
        catalog = read_po(path) if path.exists() else Catalog(locale="zh_Hans_CN", domain="posenc")
        catalog.update(template, no_fuzzy_matching=False)
        catalog.obsolete.clear()
        text = io.BytesIO()  # written whole, so a failure never leaves a half-written catalog
        write_po(text, catalog, width=100, omit_header=True, sort_output=False)
        path.write_bytes(text.getvalue())


def message_problems() -> list[str]:
    """Messages with no translation, fuzzy (stale), orphaned, or whose fields differ."""
    extracted, errors = extract()
    problems = list(errors)
    wanted = {m.text: m for ms in extracted.values() for m in ms}
    have = {}
    if ONLY:
        keep = {f"ch{n}" for n in ONLY} | set(ONLY)
        problems = [e for e in problems if _home(e) in keep]
        wanted = {
            t: m
            for name, ms in extracted.items()
            if name in keep
            for t, m in ((m.text, m) for m in ms)
        }
    for path in sorted(LOCALE.glob("*.po")):
        for message in read_po(path):
            if message.id:  # a sentence in two chapters is in both catalogs; one translation
                have.setdefault(message.id, []).append((path.name, message))
    for text, m in wanted.items():
        found = have.get(text, [])
        done = [(name, x) for name, x in found if x.string and not x.fuzzy]
        if any(x.fuzzy for _name, x in found):
            problems.append(f"{m.where}: stale Chinese (the English changed) for {text!r}")
        elif not done:
            problems.append(f"{m.where}: no Chinese for {text!r}")
        elif len({x.string for _name, x in done}) > 1:
            names = ", ".join(name for name, _x in done)
            problems.append(f"{names}: {text!r} is translated differently; keep one")
        elif fields(text) != fields(done[0][1].string):
            problems.append(f"{done[0][0]}: the fields of {text!r} differ in Chinese")
    for text, found in have.items():
        for name, _message in found:
            if text not in wanted and (not ONLY or name[:-3] in keep):
                problems.append(
                    f"{name}: {text!r} is no longer in the code (run tools.translate sync)"
                )
    return problems


FIELD = re.compile(r"(?<!\{)\{([^{}]*)\}(?!\})")


def fields(text: str) -> list[str]:
    """A message's ``{name:spec}`` fields, sorted: a translation must keep all of them."""
    return sorted(FIELD.findall(text))


# -- the bundled font -------------------------------------------------------------------------------

NOTO_CJK = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # Debian's fonts-noto-cjk
CJK_CHAR = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]")


def chinese_text() -> str:
    """Every character of the Chinese catalogs (cells and messages) and the glossary."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(CATALOGS.rglob("*.md"))]
    texts += [p.read_text(encoding="utf-8") for p in sorted(LOCALE.glob("*.po"))]
    return "".join(texts)


def common_chinese() -> str:
    """The 3,755 characters of GB 2312 level 1 (the commonest), so most new text needs no new font."""
    chars = []
    for high in range(0xB0, 0xD8):
        for low in range(0xA1, 0xFF):
            try:
                chars.append(bytes([high, low]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return "".join(chars)


def make_font(source: Path = NOTO_CJK) -> Path:
    """Subset Noto Sans CJK SC to what the course needs, renamed so it never shadows a system font."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection

    from posenc_lib import i18n

    font = next(
        f
        for f in TTCollection(str(source)).fonts
        if f["name"].getDebugName(1) == "Noto Sans CJK SC"
    )
    options = subset.Options()
    options.layout_features, options.name_IDs, options.hinting = ["*"], ["*"], False
    subsetter = subset.Subsetter(options)
    text = common_chinese() + "".join(sorted(set(CJK_CHAR.findall(chinese_text()))))
    subsetter.populate(text=text + "，。：；？！“”‘’（）《》、…—·「」【】％＋－＝")
    subsetter.subset(font)
    for record in font["name"].names:
        if record.nameID in (1, 3, 4, 6, 16):
            old = record.toUnicode()
            new = old.replace("Noto Sans CJK SC", i18n.FONT_FAMILY).replace(
                "NotoSansCJKsc", i18n.FONT_FAMILY.replace(" ", "")
            )
            record.string = new
    font.save(str(i18n.FONT))
    return i18n.FONT


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.translate", description=__doc__.split("\n")[0]
    )
    parser.add_argument("command", choices=("sync", "build", "check", "font"))
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="NN",
        help="only chapter NN's catalogs and notebooks (01, 02, ...; 'common' for common.po)",
    )
    args = parser.parse_args(argv)
    ONLY[:] = args.only
    if args.command == "sync":
        sync_cells()
        sync_messages()
        return 0
    if args.command == "font":
        path = make_font()
        print(f"wrote {path.relative_to(ROOT)} ({path.stat().st_size:,} bytes)")
        return 0
    if args.command == "build":
        for path in build():
            print(f"wrote {path.relative_to(ROOT)}")
        return 0
    problems = [str(p) for p in cell_problems()] + message_problems()
    for p in problems:
        print(p)
    print(f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
