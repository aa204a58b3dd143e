"""What the grader is handed: the notebook files, and what each one holds.

``submissions`` lists the files named on the command line (and every ``.ipynb`` under the folders
named there) with the name each gets on the grade sheet. ``read_submission`` reads one file into
its chapter (from ``metadata.posenc.chapter``, not the file name) and its code cells, or raises
``Invalid`` with a sentence the teacher can pass on. Nothing here runs a submission.
"""

from __future__ import annotations

import json
import pkgutil
from pathlib import Path

from posenc_lib import checks
from posenc_lib.i18n import _, tr

MAX_NOTEBOOK_BYTES = 20 * 2**20


class Invalid(Exception):
    """The file is not a gradable notebook; the message says why."""


def chapters() -> dict[str, str]:
    """Chapter number -> checks module name, for every ``posenc_lib/checks/chNN.py``."""
    found = {}
    for info in pkgutil.iter_modules(checks.__path__):
        if info.name.startswith("ch") and info.name[2:].isdigit():
            found[info.name[2:]] = f"{checks.__name__}.{info.name}"
    return dict(sorted(found.items()))


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


def read_submission(path: Path, known: dict[str, str]) -> tuple[str, list[str]]:
    """(chapter, code cell sources) of a notebook file, or Invalid with the reason."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            raise Invalid(tr("the file is larger than {mb} MB", mb=MAX_NOTEBOOK_BYTES // 2**20))
        notebook = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise Invalid(_("the file cannot be read: it is not UTF-8 text")) from None
    except OSError as error:
        why = error.strerror or _("it cannot be opened")
        why = f"{why[:1].lower()}{why[1:]}"
        raise Invalid(tr("the file cannot be read: {why}", why=why)) from None
    except ValueError:
        raise Invalid(_("the file is not a notebook: it is not valid JSON")) from None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise Invalid(_("the file is not a notebook: it has no list of cells"))
    meta = notebook.get("metadata")
    posenc = meta.get("posenc") if isinstance(meta, dict) else None
    chapter = posenc.get("chapter") if isinstance(posenc, dict) else None
    if not isinstance(chapter, str) or chapter not in known:
        raise Invalid(
            tr(
                "the notebook does not say which chapter it is (metadata.posenc.chapter is "
                "{chapter!r}; expected one of {known}): hand in the exercises notebook "
                "of the course, edited in place",
                chapter=chapter,
                known=", ".join(known),
            )
        )
    cells = []
    for cell in notebook["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            source = "".join(source) if isinstance(source, list) else source
            if not isinstance(source, str):
                raise Invalid(_("a code cell's source is not text"))
            cells.append(source)
    return chapter, cells
