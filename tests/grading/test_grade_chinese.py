"""The grader grades the Chinese notebooks (中文版) exactly like the English, and speaks Chinese.

A Chinese notebook is its English one with translated markdown and one more code cell first,
``posenc_lib.set_language("zh")`` (``tools/translate.py``), and ``metadata.posenc.language ==
"zh"``: the same code, so the same marks. ``posenc-grade --lang zh`` (or ``$POSENC_LANG=zh``)
words the feedback and the report in Chinese; the points do not depend on the language.
"""

import csv
import json
import re
from pathlib import Path

import nbformat

from posenc_lib.grading.cli import main
from posenc_lib.i18n import get_language

ROOT = Path(__file__).resolve().parents[2]
NAME = "01_order_blindness.ipynb"
CJK = re.compile(r"[\u4e00-\u9fff]")


def chinese_solutions(tmp_path: Path) -> Path:
    """zh/solutions/01 as built (by ``tools.translate build``), else one generated here."""
    built = ROOT / "zh" / "solutions" / NAME
    if built.exists():
        return built
    from tools.translate import translate_notebook

    path = tmp_path / "zh" / NAME
    path.parent.mkdir()
    nbformat.write(translate_notebook(ROOT / "solutions" / NAME, {}, None), path)
    return path


def grade(tmp_path: Path, language: str, *notebooks: Path) -> tuple[dict, dict, str]:
    """(points per question, feedback JSON) per submission name, and the Markdown report."""
    folder = tmp_path / f"in-{language}"
    folder.mkdir()
    for name, source in notebooks:
        (folder / name).write_bytes(source.read_bytes())
    out, feedback, report = (
        tmp_path / f"{language}.csv",
        tmp_path / f"feedback-{language}",
        tmp_path / f"class-{language}.md",
    )
    code = main([str(folder), "--out", str(out), "--json", str(feedback), "--seed", "11",
                 "--report", str(report), "--lang", language])  # fmt: skip
    assert code == 0
    with out.open(encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    points = {row[0]: row[3:] for row in rows[1:]}  # score, max, then one column per question
    files = {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in feedback.iterdir()}
    return points, files, report.read_text(encoding="utf-8")


def test_the_chinese_solutions_get_the_same_points_with_chinese_feedback(tmp_path):
    english, chinese = ROOT / "solutions" / NAME, chinese_solutions(tmp_path)
    nb = nbformat.read(chinese, as_version=4)
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert nb.metadata["posenc"]["language"] == "zh" and first_code.id == "zh-language"
    submissions = (("en.ipynb", english), ("zh.ipynb", chinese))
    points, feedback, report = grade(tmp_path, "zh", *submissions)
    assert points["en.ipynb"] == points["zh.ipynb"], points
    assert points["zh.ipynb"][0] == points["zh.ipynb"][1]  # full marks: the worked solutions
    zh = feedback["zh"]
    assert zh["status"] == "ok" and zh["cells_that_failed"] == []
    messages = [q["message"] for q in zh["questions"]]
    assert messages and all(CJK.search(m) for m in messages), messages
    assert report.startswith("# 班级报告：2 份提交") and "第 01 章" in report
    assert get_language() == "en"  # --lang switched the language for the command only
    # The same class in English: the same points, English feedback.
    english_points, english_feedback, english_report = grade(tmp_path, "en", *submissions)
    assert english_points == points
    assert english_feedback["zh"]["questions"][0]["message"] == "well done."
    assert english_report.startswith("# Class report: 2 submissions")
