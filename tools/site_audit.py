"""What is wrong with a built website: ``check_site`` lists it, one sentence a problem.

Every local href and src must point at a file of the site; no script or stylesheet may come from
the network (links in the text to papers may); every notebook's page must show at least as many
pictures as the notebook has (PNG outputs, live dashboards) and every option of its quiz (each a
``<details>`` of ``posenc_lib.checks.quiz``, which the page must keep); each live dashboard's frames
(``dashboards/<key>/``) stay under ``DASHBOARD_BYTES`` and the whole site under ``SITE_BYTES``
(issue 22's budgets).
``python -m tools.site`` runs it after each build.
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat

DASHBOARD_BYTES = 4_000_000  # one dashboard's frames, in dashboards/<key>/
SITE_BYTES = 60_000_000  # the whole folder


class _References(HTMLParser):
    """Every (tag, attribute, value, rel) of a page whose attribute is a href or src."""

    def __init__(self):
        super().__init__()
        self.found: list[tuple[str, str, str, str]] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        for name in ("href", "src"):
            if values.get(name):
                self.found.append((tag, name, values[name], values.get("rel") or ""))


def references(page: Path) -> list[tuple[str, str, str, str]]:
    """(tag, attribute, value, rel) for every href and src in an HTML page."""
    parser = _References()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser.found


def png_outputs(notebook: Path) -> int:
    """How many pictures a notebook's cells carry: image/png outputs (figures and dashboard stills)
    and the live dashboards the site staged in their place (an HTML output with a first frame)."""
    cells = nbformat.read(notebook, as_version=4).cells
    outputs = [o.get("data", {}) for c in cells for o in c.get("outputs", [])]
    live = 'class="posenc-live"'
    return sum("image/png" in data or live in data.get("text/html", "") for data in outputs)


QUIZ_ITEM = '<details class="posenc-quiz-'  # one per option, one per numeric answer


def quiz_items(notebook: Path) -> int:
    """How many clickable quiz items (options and numeric answers) a notebook's outputs carry."""
    cells = nbformat.read(notebook, as_version=4).cells
    outputs = [o.get("data", {}) for c in cells for o in c.get("outputs", [])]
    return sum(str(data.get("text/html", "")).count(QUIZ_ITEM) for data in outputs)


def check_site(folder: Path, source: Path, skip: tuple[str, ...] = ()) -> list[str]:
    """What is wrong with a built site, one sentence each; an empty list when nothing is.

    Every local href and src must point at a file of the site; no script or stylesheet may come
    from the network (links in the text to papers may); every notebook's page must show at least
    as many pictures (embedded, or files that exist) as the notebook has PNG outputs and live
    dashboards, and every option of its quiz; frames and site within their budgets.
    """
    problems = []
    for page in sorted(folder.rglob("*.html")):
        if "_static" in page.parts or page.relative_to(folder).parts[0] in skip:
            continue  # skip: sub-sites audited on their own (the Chinese edition in zh/)
        name = page.relative_to(folder).as_posix()
        images = 0
        for tag, attr, value, rel in references(page):
            parts = urlsplit(value)
            if parts.scheme in ("http", "https") or value.startswith("//"):
                if tag in ("script", "img") or (tag == "link" and "icon" not in rel):
                    problems.append(f"{name}: <{tag} {attr}> loads {value} from the network")
                continue
            if parts.scheme in ("data", "mailto", "javascript") or not parts.path:
                images += tag == "img" and parts.scheme == "data"
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                problems.append(f"{name}: <{tag} {attr}={value!r}> points at a missing file")
            elif tag == "img":
                images += 1
        notebook = source / page.relative_to(folder).with_suffix(".ipynb")
        if notebook.exists() and images < (expected := png_outputs(notebook)):
            problems.append(f"{name}: {images} pictures shown, but its notebook has {expected}")
        if notebook.exists() and (expected := quiz_items(notebook)):
            shown = page.read_text(encoding="utf-8").count(QUIZ_ITEM)
            if shown < expected:
                problems.append(
                    f"{name}: {shown} quiz options shown, but its notebook's quiz has {expected}"
                )
    return problems + _over_budget(folder)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def _over_budget(folder: Path) -> list[str]:
    problems = []
    frames = folder / "dashboards"
    for dashboard in sorted(p for p in frames.iterdir() if p.is_dir()) if frames.is_dir() else []:
        if (size := _size(dashboard)) > DASHBOARD_BYTES:
            problems.append(
                f"dashboards/{dashboard.name}: its frames take {size / 1e6:.1f} MB, over the "
                f"{DASHBOARD_BYTES / 1e6:.0f} MB a dashboard may (tools/site_frames.py, PLANS)"
            )
    if (size := _size(folder)) > SITE_BYTES:
        problems.append(f"the site takes {size / 1e6:.1f} MB, over {SITE_BYTES / 1e6:.0f} MB")
    return problems
