"""What the Chinese-edition tests share: a Chinese character, and the numbers a text prints.

Imported by the test files beside it (pytest puts this folder on the path, as for
tests/checks/chapter_checks.py).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

CJK = re.compile(r"[\u4e00-\u9fff]")  # a Chinese character (CJK Unified Ideographs)
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def chinese_notebooks(root: Path) -> list[Path]:
    """Every Chinese notebook under ``root`` (zh/): notebooks, exercises, solutions, and the deep
    dives in zh/notebooks/deeper/."""
    return sorted([*root.glob("*/*.ipynb"), *root.glob("notebooks/deeper/*.ipynb")])


def english_twin(chinese: Path, zh_root: Path) -> Path:
    """The English notebook a Chinese one is generated from: zh/X -> X."""
    return zh_root.parent / chinese.relative_to(zh_root)


def numbers(text: str) -> Counter:
    """The numbers in ``text``, as a multiset: the same in both languages, whatever their order."""
    return Counter(NUMBER.findall(text))


def printed_cells(path: Path) -> dict[str, tuple[bool, str]]:
    """Each code cell by id: whether nbval checks it, and its printed text (stream, text/plain)."""
    out = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] != "code":
            continue
        parts = []
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                parts.append("".join(o["text"]))
            elif "text/plain" in o.get("data", {}) and "text/html" not in o.get("data", {}):
                parts.append("".join(o["data"]["text/plain"]))
        checked = "NBVAL_CHECK_OUTPUT" in "".join(cell["source"])
        out[cell["id"]] = (checked, "".join(parts))
    return out
