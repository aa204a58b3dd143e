"""The start page in Chinese (中文): its figure and its slider dashboard speak Chinese, with the same
numbers as in English."""

from __future__ import annotations

from zh_text import CJK

from posenc_lib import sinusoidal_encoding
from posenc_lib.i18n import in_language
from posenc_lib.viz.ch00_start import WavePlot, table_map


def test_table_map_in_chinese_with_the_same_numbers():
    table = sinusoidal_encoding(64, 32)
    english = table_map(table).axes[0]
    with in_language("zh"):
        chinese = table_map(table).axes[0]
    assert english.get_title() == "sinusoidal encoding, D = 32"
    assert CJK.search(chinese.get_title()) and "D = 32" in chinese.get_title()
    assert CJK.search(chinese.get_xlabel()) and CJK.search(chinese.get_ylabel())


def test_wave_plot_in_chinese():
    table = sinusoidal_encoding(64, 32)
    with in_language("zh"):
        plot = WavePlot((table, 30))
    titles = [ax.get_title() for ax in plot.axes]
    assert all(CJK.search(t) for t in titles)
    assert "30" in titles[1]
