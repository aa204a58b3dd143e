"""The two editions agree digit for digit in every code cell, not only in the checked ones.

``test_zh_outputs.py`` compares the numbers of the cells marked ``# NBVAL_CHECK_OUTPUT``, the ones
nbval re-runs. A cell left unchecked (it prints the Python version, a timing, or digits that
depend on the processor) is compared by nothing, so its committed output can go stale in one
edition: the English start page printed 33 public names of posenc_lib and the Chinese one 35,
because the English had not been re-executed since two names were added. Here every unchecked
code cell's printed numbers, as a multiset (the Chinese may order a sentence differently), must
be the ones its English twin printed, in the lectures, the solutions and the exercises.

Both editions are executed on the same machine, so a number that depends on the processor still
agrees. Only cells that measure time differ from run to run; ``TIMED`` names them, with why.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from zh_text import chinese_notebooks, english_twin, numbers, printed_cells

from tools import translate

CHINESE = chinese_notebooks(translate.OUT)  # deep dives included

# (English notebook, cell id): cells whose numbers legitimately differ between two executions.
TIMED = {
    # the cost of the log and the direct form of the frequencies, in microseconds and milliseconds
    (
        "notebooks/deeper/03_variants_and_minilm.ipynb",
        "c69e392e",
    ): "timings of the two ways to build the table",
    # milliseconds per forward pass of five chapter-7 models, and their ratios to NoPE's
    (
        "notebooks/deeper/07_remedies_and_costs.ipynb",
        "3bf1c87c",
    ): "forward-pass timings and their ratios",
}


def _english(chinese: Path) -> Path:
    return english_twin(chinese, translate.OUT)


@pytest.mark.parametrize("chinese", CHINESE, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_unchecked_cells_print_the_english_numbers(chinese):
    english = _english(chinese)
    en, zh = printed_cells(english), printed_cells(chinese)
    name = _english(chinese).relative_to(translate.ROOT).as_posix()
    differ = [
        cell_id
        for cell_id, (checked, text) in en.items()
        if not checked
        and (name, cell_id) not in TIMED
        and numbers(text) != numbers(zh.get(cell_id, (False, ""))[1])
    ]
    assert not differ, (
        f"{name}: unchecked cells print other numbers than the English: {differ}; re-execute both "
        "editions (python -m tools.authoring execute EN ZH), or, for a timing, add the cell to "
        "TIMED with the reason"
    )


@pytest.mark.parametrize("where", sorted(TIMED), ids=lambda w: f"{w[0]}#{w[1]}")
def test_each_timed_cell_exists_unchecked_in_both_editions(where):
    english = translate.ROOT / where[0]
    chinese = translate.OUT / where[0]
    for path in (english, chinese):
        cells = printed_cells(path)
        assert where[1] in cells, f"{path}: no code cell {where[1]}; remove it from TIMED"
        assert not cells[where[1]][0], f"{path}#{where[1]} is checked by nbval: a timing never is"
