"""The course's two languages: English, the source, and Chinese (中文), read from gettext catalogs.

Every sentence the library shows a learner is written in English in the code and marked where it
is shown: ``_("...")`` for a sentence made at the moment it is shown, ``tr("... {x:.3f}", x=x)``
for one with numbers in it (the numbers are formatted by the same format spec in every language,
so they print identically), and ``N_("...")`` for one defined at import time (a question's title,
its hints, a concept question's options), which the code that shows it passes through ``_()``.

The translations are gettext catalogs (``posenc_lib/locale/zh/*.po``), edited as text and read
with Babel; the English sentence itself is each message's id, so a sentence edited in English no
longer finds its old translation (``tests/i18n`` fails on it, as stale). ``tools/translate.py``
extracts the marked sentences and keeps the catalogs in step.

The language is English unless ``set_language("zh")`` is called or the environment variable
``POSENC_LANG`` is ``zh`` (the Chinese notebooks call the first; the demo, the website and the
grader set the second).
"""

from __future__ import annotations

import contextlib
import functools
import gettext
import io
import os
from pathlib import Path

LANGUAGES = ("en", "zh")
ENV = "POSENC_LANG"
LOCALE_DIR = Path(__file__).parent / "locale"

FONT = Path(__file__).parent / "data" / "fonts" / "PosencNotoSansSC-Regular.otf"
FONT_FAMILY = "Posenc Noto Sans SC"  # a subset of Noto Sans CJK SC (OFL), see data/fonts/OFL.txt

_chosen: list[str] = []  # the language set_language chose, if it was called


def _normalize(language: object, where: str) -> str:
    """'en' or 'zh' for the spellings people use (zh, zh_CN, zh-Hans, cn, en_US...)."""
    if isinstance(language, str):
        key = language.strip().lower().replace("-", "_")
        if key in ("zh", "cn", "chinese", "中文") or key.startswith(("zh_", "zh.")):
            return "zh"
        if key in ("en", "english", "c", "posix") or key.startswith(("en_", "en.")):
            return "en"
    raise ValueError(
        f"{where} got {language!r}; the course speaks {' and '.join(repr(x) for x in LANGUAGES)}: "
        'use "en" for English or "zh" for Chinese (中文).'
    )


def set_language(language: str) -> None:
    """Make the library speak ``language``: "en" (English) or "zh" (Chinese, 中文).

    It switches the checks' verdicts, hints and named mistakes, the concept questions, the
    dashboards' labels, figure titles and axes, the chapters' printed sentences and the grader's
    feedback. Numbers print the same in both languages.
    """
    _chosen[:] = [_normalize(language, "set_language")]
    if _chosen[0] == "zh":
        use_cjk_font()


def use_cjk_font() -> None:
    """Let matplotlib draw Chinese on any machine: the course's own CJK font, after the default.

    The font (a subset of Noto Sans CJK SC, shipped with the package) is registered and added last
    to ``font.family``: Latin letters and digits keep the default font, so English figures do not
    change, and each character the default lacks falls back to it (matplotlib >= 3.6 falls back
    glyph by glyph through the families of ``font.family``), whatever fonts the system has.
    """
    import matplotlib
    from matplotlib import font_manager

    if not any(f.name == FONT_FAMILY for f in font_manager.fontManager.ttflist):
        font_manager.fontManager.addfont(str(FONT))
    families = list(matplotlib.rcParams["font.family"])
    if FONT_FAMILY not in families:
        matplotlib.rcParams["font.family"] = [*families, FONT_FAMILY]


def get_language() -> str:
    """The language in use: set_language's choice, else $POSENC_LANG, else English."""
    if _chosen:
        return _chosen[0]
    env = os.environ.get(ENV, "").strip()
    return _normalize(env, f"The environment variable {ENV}") if env else "en"


@functools.cache
def _translations(language: str) -> gettext.NullTranslations:
    """Every catalog of ``language`` merged into one gettext object (English: none needed)."""
    if language == "en":
        return gettext.NullTranslations()
    from babel.messages.catalog import Catalog
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    merged = Catalog(locale="zh_Hans_CN", domain="posenc")
    for path in sorted((LOCALE_DIR / language).glob("*.po")):
        with path.open("rb") as f:
            for message in read_po(f):
                if message.id and message.string and not message.fuzzy:
                    merged.add(message.id, message.string, context=message.context)
    compiled = io.BytesIO()
    write_mo(compiled, merged)
    compiled.seek(0)
    return gettext.GNUTranslations(compiled)


def _(message: str) -> str:
    """``message`` in the language in use (itself in English, or when it has no translation)."""
    return _translations(get_language()).gettext(message)


def N_(message: str) -> str:
    """Mark ``message`` for translation where it is defined; translate it with ``_`` when shown."""
    return message


def tr(message: str, /, **values: object) -> str:
    """``message`` translated, then its ``{name:spec}`` fields filled from ``values``.

    tr("largest difference {gap:.2e}", gap=0.5) -> "largest difference 5.00e-01", or in Chinese
    "最大差值 5.00e-01": the translation keeps every field, so the numbers print alike.
    """
    return _(message).format(**values)


@contextlib.contextmanager
def in_language(language: str):
    """A context manager: the library speaks ``language`` inside the ``with`` block."""
    before = list(_chosen)
    set_language(language)
    try:
        yield
    finally:
        _chosen[:] = before
