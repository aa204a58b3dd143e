"""The grader against an attack suite: every submission gets its right row and no unearned points.

All submissions are graded in one batch (two workers, one forkserver) at module scope; each test
then reads its own row. Submissions are chapter 1's solutions notebook with a cell added, removed
or replaced, so a correct notebook scores 12 and each attack says what it should score instead.
"""

import csv
import json
import os
import re
import time
from pathlib import Path

import nbformat
import pytest

from posenc_lib.checks.ch01 import q1
from posenc_lib.grading.cli import main
from posenc_lib.grading.grader import Grader, grade_all
from posenc_lib.grading.sheet import write_sheet
from posenc_lib.grading.submissions import chapters, read_submission

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "01_order_blindness.ipynb"
FULL = 12
TIMEOUT = 20.0  # per submission: an endless function uses 5 s of CPU, slower on a busy machine
SEED = 1234

WRONG_ATTENTION = """
def attention(x, w_q, w_k, w_v):
    return torch.zeros(x.shape[0], w_v.shape[1])
"""
CORRECT_ATTENTION = """
def attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / w_k.shape[1] ** 0.5, -1) @ v
"""
SANDBOX_CHECKS = """
import os, resource
def attention(x, w_q, w_k, w_v):
    assert set(os.environ) == {"HOME", "TMPDIR", "MPLBACKEND", "PATH"}, sorted(os.environ)
    assert os.getcwd() == os.path.expanduser("~") == os.environ["TMPDIR"]
    assert os.path.basename(os.getcwd()).startswith("posenc-grade-")
    assert resource.getrlimit(resource.RLIMIT_FSIZE)[0] == 64 * 2**20
    assert resource.getrlimit(resource.RLIMIT_CPU)[0] <= 20 + 5
    assert resource.getrlimit(resource.RLIMIT_AS)[0] != resource.RLIM_INFINITY
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T / w_k.shape[1] ** 0.5, -1) @ v
"""
UNSCALED_ATTENTION = """
def attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return torch.softmax(q @ k.T, dim=-1) @ v
"""


def _solutions():
    return nbformat.read(SOLUTIONS, as_version=4)


def _with(first=None, last=None, replace=None, drop=None):
    """The solutions notebook with a cell put first, last, in place of a function, or dropped."""
    notebook = _solutions()
    cells = notebook.cells
    if replace:
        name, source = replace
        index = next(i for i, c in enumerate(cells) if f"def {name}(" in c.source)
        cells[index] = nbformat.v4.new_code_cell(source)
    if drop:
        cells[:] = [c for c in cells if not drop(c)]
    code_start = next(i for i, c in enumerate(cells) if c.cell_type == "code")
    if first:
        cells.insert(code_start + 1, nbformat.v4.new_code_cell(first))  # after the imports
    if last:
        cells.append(nbformat.v4.new_code_cell(last))
    return nbformat.writes(notebook)


def _exercise(path):
    return path.read_text(encoding="utf-8")


def _attacks(sheet: Path, canary: Path):
    """name -> (notebook text, expected status, expected score, {question: points} or None)."""
    wrong = ("attention", WRONG_ATTENTION)
    return {
        "correct solution": (_with(), "ok", FULL, None),
        "patch numpy and torch comparisons": (
            _with(
                first="import numpy as np\nnp.allclose = lambda *a, **k: True\n"
                "np.isclose = lambda *a, **k: True\ntorch.allclose = lambda *a, **k: True",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "patch tensor equality": (
            _with(first="torch.Tensor.__eq__ = lambda a, b: True", replace=wrong),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "redefine check": (
            _with(
                first="q1.check = lambda *a, **k: print('q1 ✓ correct (3/3 points)')\n"
                "def check(*args, **kwargs):\n    return True",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "redefine the grading modules": (
            _with(
                first="import posenc_lib.checks as c\nimport posenc_lib.grading.grader as g\n"
                "c.Question.judge = lambda self, cases, outcomes: None\ng.Grader = None\n"
                "import posenc_lib.checks.run as r\n"
                "r.call = lambda fn, args, timeout=None: r.Outcome('returned', None)",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "replace the question object": (
            _with(
                first="import posenc_lib.checks.ch01 as ch\nch.q1 = None\nch.QUESTIONS = ()",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "sys.exit in a cell": (_with(first="import sys\nsys.exit(0)"), "ok", FULL, None),
        "SystemExit and KeyboardInterrupt in cells": (
            _with(first="raise SystemExit(3)", last="raise KeyboardInterrupt"),
            "ok",
            FULL,
            None,
        ),
        "os._exit before the functions": (
            _with(first="import os\nos._exit(0)"),
            "error",
            0,
            None,
        ),
        "KeyboardInterrupt inside a function": (
            _with(
                replace=(
                    "attention",
                    "def attention(x, w_q, w_k, w_v):\n    raise KeyboardInterrupt",
                )
            ),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "sys.exit inside a function": (
            _with(
                replace=(
                    "attention",
                    "import sys\ndef attention(x, w_q, w_k, w_v):\n    sys.exit(1)",
                )
            ),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "os._exit inside the last function": (
            _with(
                replace=(
                    "unchanged_rows",
                    "import os\ndef unchanged_rows(T, i, j):\n    os._exit(0)",
                )
            ),
            "error",
            FULL - 2,
            {"q5": 0},
        ),
        "infinite loop in a cell": (_with(first="while True:\n    pass"), "ok", FULL, None),
        "infinite loop that swallows every interrupt": (
            _with(
                first="while True:\n    try:\n        while True:\n            pass\n"
                "    except BaseException:\n        pass"
            ),
            "timeout",
            0,
            None,
        ),
        "endless loop inside a function": (
            _with(
                replace=(
                    "attention",
                    "def attention(x, w_q, w_k, w_v):\n    while True:\n        pass",
                )
            ),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "memory bomb at once": (_with(first="x = bytearray(64 * 2**30)"), "ok", FULL, None),
        "memory bomb that grows": (
            _with(first="blocks = []\nwhile True:\n    blocks.append(bytearray(2**26))"),
            "ok",
            FULL,
            None,
        ),
        "fake all-passed lines": (
            _exercise(ROOT / "exercises" / "01_order_blindness.ipynb").replace(
                '"import math',
                '"print(\\"q1 ✓ correct (3/3 points)\\\\ntotal: 12/12 points\\")\\nimport math',
                1,
            ),
            "ok",
            0,
            None,
        ),
        "write the grade sheet and the cwd": (
            _with(
                first=f"open({str(sheet)!r}, 'w').write('submission,score\\nme,999\\n')\n"
                "open('grades.csv', 'w').write('me,999')\nimport os\n"
                "open(os.path.expanduser('~/note'), 'w').write('x')",
                replace=wrong,
            ),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "a process left behind": (
            _with(
                first="import os, time\nif os.fork() == 0:\n    time.sleep(3)\n"
                f"    open({str(canary)!r}, 'w').write('late')\n    os._exit(0)"
            ),
            "ok",
            FULL,
            None,
        ),
        "rewrite another submission's file": (
            _with(
                first=f"open({str(sheet.parent / 'unscaled-scores.ipynb')!r}, 'w').write('{{}}')"
            ),
            "ok",
            FULL,
            None,
        ),
        "check cells deleted": (_with(drop=lambda c: ".check(" in c.source), "ok", FULL, None),
        "check cells edited": (
            _with().replace("q1.check(attention)", 'print(\\"q1 ✓ correct\\")'),
            "ok",
            FULL,
            None,
        ),
        "invalid JSON": ('{"cells": [', "invalid", 0, None),
        "a JSON list": ("[1, 2, 3]", "invalid", 0, None),
        "an empty notebook": (nbformat.writes(nbformat.v4.new_notebook()), "invalid", 0, None),
        "a function missing": (
            _with(drop=lambda c: "def permutation_matrix(" in c.source),
            "ok",
            FULL - 2,
            {"q2": 0},
        ),
        "a wrong signature": (
            _with(replace=("attention", "def attention(x, w_q):\n    return x @ w_q")),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "a tensor subclass that claims equality": (
            _with(
                replace=(
                    "attention",
                    "class Liar(torch.Tensor):\n"
                    "    def __eq__(self, other):\n        return True\n"
                    "    @classmethod\n"
                    "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n"
                    "        if func in (torch.allclose, torch.equal):\n            return True\n"
                    "        return super().__torch_function__(func, types, args, kwargs or {})\n"
                    "def attention(x, w_q, w_k, w_v):\n"
                    "    return torch.zeros(x.shape[0], w_v.shape[1]).as_subclass(Liar)",
                )
            ),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "answers hard-coded for the public inputs": (
            _with(
                replace=(
                    "attention",
                    "from posenc_lib.checks.ch01 import q1 as _q\n"
                    "_known = {tuple(c.args[0].shape): c for c in _q.cases(0)}\n"
                    "def attention(x, w_q, w_k, w_v):\n"
                    "    if tuple(x.shape) in _known:\n"
                    "        q, k, v = x @ w_q, x @ w_k, x @ w_v\n"
                    "        return torch.softmax(q @ k.T / w_k.shape[1] ** 0.5, -1) @ v\n"
                    "    return torch.zeros(x.shape[0], w_v.shape[1])",
                )
            ),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "the sandbox: empty environment, scratch folder as home, limits set": (
            _with(replace=("attention", SANDBOX_CHECKS)),
            "ok",
            FULL,
            None,
        ),
        "patch only the runner's call": (
            _with(
                first="import posenc_lib.checks.run as r\n"
                "r.call = lambda fn, args, timeout=None: r.Outcome('returned', None)",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "replace the chapter module in sys.modules": (
            _with(
                first="import sys, types\nsys.modules['posenc_lib.checks.ch01'] = types.ModuleType('x')",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "send a pickle down the grading channel": (
            _with(
                first="import gc, pickle\nfrom multiprocessing.connection import Connection\n"
                "class Boom:\n    def __reduce__(self):\n"
                f"        return (open, ({str(sheet.parent / 'pickle-canary')!r}, 'w'))\n"
                "for obj in gc.get_objects():\n    if isinstance(obj, Connection):\n"
                "        try:\n            obj.send_bytes(pickle.dumps(Boom()))\n"
                "        except Exception:\n            pass"
            ),
            "tampered",
            0,
            None,
        ),
        "a check call in the same cell as the function": (
            _with(replace=("attention", CORRECT_ATTENTION + "\nq1.check(attention)")),
            "ok",
            FULL,
            None,
        ),
        "an atexit hook": (
            _with(
                first="import atexit\natexit.register(lambda: open("
                f"{str(sheet.parent / 'atexit-canary')!r}, 'w').write('x'))"
            ),
            "ok",
            FULL,
            None,
        ),
        "unscaled scores": (
            _with(replace=("attention", UNSCALED_ATTENTION)),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("submissions")
    sheet, canary = folder / "grades.csv", folder / "canary.txt"
    attacks = _attacks(sheet, canary)
    paths = []
    for name, (text, *_) in attacks.items():  # the last one is a target of an earlier one
        path = folder / (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + ".ipynb")
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    exercises = sorted((ROOT / "exercises").glob("*.ipynb"))
    rows = grade_all(paths + exercises, SEED, timeout=TIMEOUT, workers=2, memory_mb=512)
    write_sheet(rows, sheet)
    time.sleep(4)  # longer than the process left behind would wait before writing
    by_name = dict(zip(attacks, rows, strict=False))
    return attacks, by_name, rows[len(attacks) :], exercises, sheet, canary


ATTACK_NAMES = list(_attacks(Path("/x"), Path("/y")))


@pytest.mark.parametrize("name", ATTACK_NAMES)
def test_each_submission_ends_with_its_right_row(graded, name):
    attacks, rows, *_ = graded
    _, status, score, points = attacks[name]
    row = rows[name]
    assert (row.status, row.score) == (status, score), (row.reason, [str(v) for v in row.verdicts])
    if status != "invalid":
        assert row.chapter == "01" and row.max_score == FULL
        for question, expected in (points or {}).items():
            assert next(v.points for v in row.verdicts if v.question == question) == expected


def test_every_shipped_exercise_grades_to_zero_and_ok(graded):
    *_, exercise_rows, exercises, _, _ = graded
    assert len(exercise_rows) == len(exercises) >= 1
    for path, row in zip(exercises, exercise_rows, strict=True):
        assert (row.status, row.score) == ("ok", 0), (path.name, row.reason)
        assert row.chapter == path.name[:2] and row.max_score > 0
        assert all(v.status == "not attempted" for v in row.verdicts)


def test_the_sheet_has_one_row_per_submission_and_nothing_written_by_them(graded):
    attacks, _, exercise_rows, _, sheet, canary = graded
    with sheet.open(encoding="utf-8") as handle:
        lines = list(csv.reader(handle))
    assert lines[0][:5] == ["submission", "chapter", "status", "score", "max_score"]
    assert lines[0][5:10] == ["q1", "q2", "q3", "q4", "q5"]
    assert len(lines) == 1 + len(attacks) + len(exercise_rows)
    assert not any("999" in cell for line in lines for cell in line)
    assert not canary.exists(), "a process a submission started outlived its grading"
    assert not (sheet.parent / "pickle-canary").exists(), "the parent unpickled learner data"
    assert not (sheet.parent / "atexit-canary").exists(), "a submission's atexit hook ran"


def test_feedback_gives_the_sentences_check_gives(graded):
    _, rows, *_ = graded
    namespace = {}
    exec("import torch\n" + UNSCALED_ATTENTION, namespace)
    in_class = q1.evaluate(namespace["attention"]).message
    assert "not scaled" in in_class
    feedback = rows["unscaled scores"].feedback()
    assert feedback["questions"][0]["message"] == in_class
    assert rows["a wrong signature"].verdicts[0].message.startswith("`attention` raised TypeError")


def test_the_reason_says_what_happened(graded):
    _, rows, *_ = graded
    assert "os._exit" in rows["os._exit before the functions"].reason
    assert "did not finish within" in rows["infinite loop that swallows every interrupt"].reason
    assert "np.allclose" in rows["patch numpy and torch comparisons"].reason.replace("numpy", "np")
    assert "metadata.posenc.chapter" in rows["an empty notebook"].reason
    assert "call" in rows["patch only the runner's call"].reason
    assert "ch01" in rows["replace the chapter module in sys.modules"].reason
    assert "garbled" in rows["send a pickle down the grading channel"].reason
    assert "not valid JSON" in rows["invalid JSON"].reason
    assert rows["memory bomb at once"].failed_cells[0].startswith("cell 2: MemoryError")


def test_a_renamed_file_is_graded_by_its_metadata(tmp_path):
    path = tmp_path / "homework final (1).txt"
    path.write_text(_with(), encoding="utf-8")
    chapter, cells = read_submission(path, chapters())
    assert chapter == "01" and any("def attention(" in c for c in cells)


def test_the_command_writes_the_sheet_and_feedback(tmp_path, capsys):
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "=cmd().ipynb").write_text(_with(), encoding="utf-8")
    (tmp_path / "in" / "broken.ipynb").write_text("not json", encoding="utf-8")
    for name in ("+a", "-b", "@c"):  # more names a spreadsheet would run as formulas
        (tmp_path / "in" / f"{name}.ipynb").write_text("{}", encoding="utf-8")
    out, feedback = tmp_path / "grades.csv", tmp_path / "feedback"
    code = main([str(tmp_path / "in"), "--out", str(out), "--json", str(feedback), "--seed", "7"])
    assert code == 0
    printed, errors = capsys.readouterr()
    assert "Graded 5 submissions" in printed and "1 ok" in printed and "4 invalid" in printed
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["status"] for r in rows] == ["invalid", "invalid", "ok", "invalid", "invalid"]
    names = [r["submission"] for r in rows]  # none starts a formula in a spreadsheet
    assert names == ["'+a.ipynb", "'-b.ipynb", "'=cmd().ipynb", "'@c.ipynb", "broken.ipynb"]
    rows = [r for r in rows if r["status"] == "ok"]
    assert rows[0]["score"] == str(FULL)
    files = sorted(p.name for p in feedback.iterdir())
    assert files == ["-b.json", "_a.json", "_c.json", "_cmd__.json", "broken.json"]
    data = json.loads((feedback / "_cmd__.json").read_text(encoding="utf-8"))
    assert data["score"] == FULL and len(data["questions"]) == 5
    # stdout is the seed line (none: --seed given) and the summary; stderr is not a terminal here,
    # so no progress bar either.
    assert printed.startswith("Graded 5 submissions") and errors == ""


def test_a_class_shows_a_tqdm_bar_when_asked_and_none_in_a_pipe(tmp_path, capsys):
    from tqdm.auto import tqdm

    from posenc_lib.grading import grader

    assert grader.tqdm is tqdm  # tqdm.auto: the widget inside Jupyter, text on a terminal
    paths = []
    for n in range(3):  # invalid files: graded without starting a child
        paths.append(tmp_path / f"{n}.ipynb")
        paths[-1].write_text("{}", encoding="utf-8")
    rows = grade_all(paths, SEED, progress=True)
    printed, errors = capsys.readouterr()
    assert [r.status for r in rows] == ["invalid"] * 3
    assert printed == "" and "grading: 100%" in errors and "3/3" in errors
    for progress in (None, False):  # None: a bar only on a terminal; pytest's stderr is not one
        grade_all(paths, SEED, progress=progress)
        assert capsys.readouterr() == ("", "")


def test_the_grader_finds_every_chapter_with_checks():
    found = chapters()
    assert "01" in found
    solutions = {p.name[:2] for p in (ROOT / "solutions").glob("*.ipynb")}
    assert solutions <= set(found)


def test_bad_arguments_get_a_message(capsys):
    with pytest.raises(SystemExit):
        main(["nowhere-at-all", "--workers", "0"])
    assert "--workers must be >= 1" in capsys.readouterr().err


def test_the_child_cannot_see_the_parents_environment(tmp_path):
    os.environ["POSENC_SECRET_FOR_TEST"] = "42"
    try:
        source = (
            "import os\n"
            "def attention(x, w_q, w_k, w_v):\n"
            "    assert 'POSENC_SECRET_FOR_TEST' not in os.environ\n"
            "    q, k, v = x @ w_q, x @ w_k, x @ w_v\n"
            "    return torch.softmax(q @ k.T / w_k.shape[1] ** 0.5, -1) @ v"
        )
        path = tmp_path / "env.ipynb"
        path.write_text(_with(replace=("attention", source)), encoding="utf-8")
        row = Grader(seed=3, timeout=TIMEOUT).grade(path)
        assert row.score == FULL, [str(v) for v in row.verdicts]
    finally:
        del os.environ["POSENC_SECRET_FOR_TEST"]


def test_submissions_from_several_folders_keep_their_folder_in_the_name(tmp_path):
    from posenc_lib.grading.submissions import submissions

    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "01.ipynb").write_text("{}", encoding="utf-8")
    names = [name for _, name in submissions([tmp_path / "a", tmp_path / "b"])]
    assert names == ["a/01.ipynb", "b/01.ipynb"]
    assert [name for _, name in submissions([tmp_path / "a"])] == ["01.ipynb"]


def test_what_a_submission_prints_reaches_nobody(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "loud.ipynb"
    loud = CORRECT_ATTENTION.replace("    q, k, v", "    print('LEAKED-MARKER')\n    q, k, v")
    path.write_text(
        _with(first="import sys\nprint('LEAKED-MARKER')\nprint('LEAKED-MARKER', file=sys.stderr)",
              replace=("attention", loud)),
        encoding="utf-8",
    )  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "posenc_lib.grading", str(path), "--out", str(tmp_path / "g.csv")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1 ok" in done.stdout
    assert "LEAKED-MARKER" not in done.stdout + done.stderr
    assert (tmp_path / "g.csv").read_text(encoding="utf-8").splitlines()[1].split(",")[3] == "12"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.csv", "loud.ipynb"]  # cwd untouched
    assert "grading:" not in done.stderr  # the progress bar: on a terminal only, not in a pipe


def test_the_command_runs_as_posenc_grade_and_as_the_cli_module(tmp_path):
    import shutil
    import subprocess
    import sys

    (tmp_path / "empty.ipynb").write_text("{}", encoding="utf-8")
    script = shutil.which("posenc-grade", path=str(Path(sys.executable).parent))
    for command in ([script] if script else []) + [
        [sys.executable, "-m", "posenc_lib.grading.cli"]
    ]:
        command = [command] if isinstance(command, str) else command
        done = subprocess.run(
            [*command, "empty.ipynb", "--out", "g.csv", "--seed", "1"],
            capture_output=True, text=True, timeout=120, cwd=tmp_path,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        assert done.stdout.startswith("Graded 1 submissions") and "1 invalid" in done.stdout
        assert done.stderr == ""


# -- every chapter, end to end: the worked solutions, the type policy, side effects, shortcuts -----

POLICY_SEEDS = (1234, 77, 31337)  # the worked solutions earn full marks on each
INTERNAL_NAMES = re.compile(r"_TimedOut|SwitchedOff|TooMany|Collected|Outcome|_Opaque|Traceback")


def _chapter_module(chapter):
    from importlib import import_module

    return import_module(chapters()[chapter])


def _filled(chapter, replace=None, first=None):
    """chapter's exercises notebook with every answer cell holding the worked solution, or the
    source in ``replace`` (function name -> cell source); ``first`` goes after the imports."""
    from posenc_lib.checks import solution_code

    path = next((ROOT / "exercises").glob(f"{chapter}_*.ipynb"))
    notebook = nbformat.read(path, as_version=4)
    functions = [q.function for q in _chapter_module(chapter).QUESTIONS]
    for cell in notebook.cells:
        for name in functions:
            if cell.cell_type == "code" and f"def {name}(" in cell.source:
                cell.source = (replace or {}).get(name) or solution_code(path.name, name)
    if first:
        start = next(i for i, c in enumerate(notebook.cells) if c.cell_type == "code")
        notebook.cells.insert(start + 1, nbformat.v4.new_code_cell(first))
    return nbformat.writes(notebook)


NUMPY_ATTENTION = """
def attention(x, w_q, w_k, w_v):
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    return (torch.softmax(q @ k.T / w_k.shape[1] ** 0.5, -1) @ v).numpy()
"""
IN_PLACE_POSITIONS = """
def add_positions(x):
    t = torch.arange(x.shape[0], dtype=x.dtype)[:, None]  # (T, 1)
    x += 0.1 * t  # changes the caller's tensor
    return x
"""
DECREASING_ROWS = """
def unchanged_rows(T, i, j):
    if i == j:
        return list(range(T))[::-1]
    return [t for t in range(T) if t < min(i, j) or t > max(i, j)][::-1]
"""
LIBRARY_ATTENTION = """
def attention(x, w_q, w_k, w_v):
    return self_attention(x, w_q, w_k, w_v)[0]
"""
LIBRARY_SLOPES = """
import posenc_lib.alibi
def alibi_slopes(num_heads):
    return posenc_lib.alibi.alibi_slopes(num_heads).tolist()
"""

CHECKS_HELPER_GAP = """
def equivariance_gap(f, x, order):
    from posenc_lib.checks.ch01 import _gap  # the checks' own helper: off while graded
    return _gap(f, x, order)
"""


def _t5_with_a_cold_import():
    from posenc_lib.checks import solution_code

    head, body = solution_code("04_relative_bias.ipynb", "t5_bucket").split("\n", 1)
    return head + "\n    import transformers.models.t5.modeling_t5  # cold: seconds of CPU\n" + body


def _policy_attacks():
    """name -> (chapter, notebook text, {question: points} of the questions that lose points)."""
    return {
        "near miss: a NumPy array for a tensor": (
            "01",
            _filled("01", {"attention": NUMPY_ATTENTION}),
            {"q1": 0},
        ),
        "near miss: rows in decreasing order": (
            "01",
            _filled("01", {"unchanged_rows": DECREASING_ROWS}),
            {"q5": 0},
        ),
        "side effect: the input changed in place": (
            "01",
            _filled("01", {"add_positions": IN_PLACE_POSITIONS}),
            {"q4": 0},
        ),
        "shortcut: a reference imported into the notebook": (
            "01",
            _filled(
                "01",
                {"attention": LIBRARY_ATTENTION},
                first="from posenc_lib import self_attention",
            ),
            {"q1": 0},
        ),
        "shortcut: a reference through its module": (
            "05",
            _filled("05", {"alibi_slopes": LIBRARY_SLOPES}),
            {"q1": 0},
        ),
        "shortcut: a helper of the checks module": (
            "01",
            _filled("01", {"equivariance_gap": CHECKS_HELPER_GAP}),
            {"q3": 0},
        ),
        "a slow import inside a right answer": (
            "04",
            _filled("04", {"t5_bucket": _t5_with_a_cold_import()}),
            {},
        ),
    }


@pytest.fixture(scope="module")
def policy_graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("policy")
    attacks = _policy_attacks()
    paths = []
    for name, (_, text, _) in attacks.items():
        path = folder / (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + ".ipynb")
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    solved = []
    for chapter in chapters():
        path = folder / f"solved-{chapter}.ipynb"
        path.write_text(_filled(chapter), encoding="utf-8")
        solved.append(path)
    rows = grade_all(paths + solved, POLICY_SEEDS[0], timeout=60.0, workers=2)
    by_seed = {POLICY_SEEDS[0]: rows[len(paths) :]}
    for seed in POLICY_SEEDS[1:]:
        by_seed[seed] = grade_all(solved, seed, timeout=60.0, workers=2)
    return attacks, dict(zip(attacks, rows, strict=False)), by_seed


@pytest.mark.parametrize("seed", POLICY_SEEDS)
def test_every_worked_solution_earns_full_marks_from_the_grader(policy_graded, seed):
    *_, by_seed = policy_graded
    for row in by_seed[seed]:
        failed = [str(v) for v in row.verdicts if not v.passed]
        assert (row.status, row.score) == ("ok", row.max_score), (row.submission, failed)
        assert row.failed_cells == [], row.failed_cells


@pytest.mark.parametrize("name", list(_policy_attacks()))
def test_near_misses_side_effects_and_shortcuts_earn_nothing(policy_graded, name):
    attacks, rows, _ = policy_graded
    _, _, lost = attacks[name]
    row = rows[name]
    points = {v.question: v.points for v in row.verdicts}
    full = {v.question: v.max_points for v in row.verdicts}
    assert row.status == "ok", row.reason
    assert points == {**full, **lost}, [str(v) for v in row.verdicts]


def test_the_feedback_names_the_near_miss_the_side_effect_and_the_shortcut(policy_graded):
    _, rows, _ = policy_graded

    def message(name, question):
        return next(v.message for v in rows[name].verdicts if v.question == question)

    assert "returned a NumPy array, but the question asks for a torch tensor" in message(
        "near miss: a NumPy array for a tensor", "q1"
    )
    assert "not in increasing order" in message("near miss: rows in decreasing order", "q5")
    assert "changed its argument `x` in place" in message(
        "side effect: the input changed in place", "q4"
    )
    shortcut = message("shortcut: a reference imported into the notebook", "q1")
    assert "`posenc_lib.attention.self_attention` is switched off" in shortcut
    assert "write `alibi_slopes` yourself" in message(
        "shortcut: a reference through its module", "q1"
    )
    helper = message("shortcut: a helper of the checks module", "q3")
    assert "`posenc_lib.checks.ch01.equivariance._gap` is switched off" in helper, helper


def test_feedback_never_shows_an_internal_name(graded, policy_graded):
    _, attack_rows, exercise_rows, *_ = graded
    _, policy_rows, by_seed = policy_graded
    rows = [*attack_rows.values(), *exercise_rows, *policy_rows.values()]
    rows += [row for seed_rows in by_seed.values() for row in seed_rows]
    for row in rows:
        feedback = row.feedback()
        if row.status == "tampered":  # the reason lists what the notebook itself replaced
            feedback.pop("reason")
        text = json.dumps(feedback)
        assert not INTERNAL_NAMES.search(text), (row.submission, text[:2000])
    stopped = attack_rows["infinite loop in a cell"].failed_cells
    assert stopped and "did not finish within" in stopped[0], stopped
