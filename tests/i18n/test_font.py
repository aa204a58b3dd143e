"""Chinese figures render on any machine: the bundled font has every character, and is the one used.

The course ships a subset of Noto Sans CJK SC (posenc_lib/data/fonts). These tests take away every
other CJK font matplotlib knows, as on a fresh laptop, and render all the Chinese of the catalogs
with missing-glyph warnings turned into errors.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from fontTools.ttLib import TTFont

from posenc_lib import i18n
from tools import translate


def test_bundled_font_has_every_character_the_catalogs_use():
    cmap = TTFont(i18n.FONT)["cmap"].getBestCmap()
    used = set(translate.CJK_CHAR.findall(translate.chinese_text()))
    missing = sorted(c for c in used if ord(c) not in cmap)
    assert not missing, (
        f"{len(missing)} character(s) of the catalogs are not in the bundled font: {''.join(missing)}"
        " -- run python -m tools.translate font (needs Debian's fonts-noto-cjk) and commit the font"
    )


def test_font_is_small_and_licensed():
    assert i18n.FONT.stat().st_size < 3_000_000
    licence = (i18n.FONT.parent / "OFL.txt").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence


def _run(code: str, tmp_path) -> subprocess.CompletedProcess:
    prelude = f"import sys; sys.path.insert(0, {str(translate.ROOT)!r})\n"
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={"MPLCONFIGDIR": str(tmp_path), "MPLBACKEND": "Agg", "PATH": "/usr/bin:/bin"},
    )


NO_SYSTEM_CJK = """
    import warnings
    import matplotlib
    from matplotlib import font_manager
    from fontTools.ttLib import TTFont
    # a fresh laptop: no CJK font but ours (drop every font that has a common Chinese character)
    def has_cjk(path):
        try:
            return 0x4F4D in TTFont(path, fontNumber=0, lazy=True)["cmap"].getBestCmap()
        except Exception:
            return False
    font_manager.fontManager.ttflist = [
        f for f in font_manager.fontManager.ttflist if not has_cjk(f.fname)
    ]
    font_manager.fontManager._findfont_cached.cache_clear()
"""


def test_every_translated_message_renders_without_missing_glyphs(tmp_path):
    result = _run(
        NO_SYSTEM_CJK
        + """
    import posenc_lib
    posenc_lib.set_language("zh")
    import matplotlib.pyplot as plt
    from tools import translate
    text = "".join(sorted(set(translate.CJK_CHAR.findall(translate.chinese_text()))))
    warnings.simplefilter("error")
    fig, ax = plt.subplots()
    for start in range(0, len(text), 40):
        ax.text(0, start / max(len(text), 1), text[start : start + 40])
    ax.set_title("位置编码：RoPE 的底数 10000")
    fig.savefig("all.png")
    used = font_manager.fontManager._find_fonts_by_props(ax.title.get_fontproperties())
    print("FONTS", [str(p) for p in used])
    """,
        tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert str(i18n.FONT) in result.stdout, result.stdout


def test_without_the_bundled_font_a_glyph_would_be_missing(tmp_path):
    """The check above can fail: with the font not registered, the same title warns of a glyph."""
    result = _run(
        NO_SYSTEM_CJK
        + """
    import matplotlib.pyplot as plt
    warnings.simplefilter("error")
    fig, ax = plt.subplots()
    ax.set_title("位置编码")
    fig.savefig("none.png")
    """,
        tmp_path,
    )
    assert result.returncode != 0
    assert "missing from font" in result.stderr


def test_english_figures_keep_their_font():
    import matplotlib
    from matplotlib import font_manager

    import posenc_lib.viz  # noqa: F401  (registers the font)

    prop = font_manager.FontProperties(family=matplotlib.rcParams["font.family"])
    first = font_manager.fontManager._find_fonts_by_props(prop)[0]
    assert "DejaVuSans" in str(first)
