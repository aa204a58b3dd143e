"""Submissions for the grader's attack suite: chapter 1's solutions notebook, edited.

A correct notebook scores ``FULL``; each attack adds, removes or replaces a cell and says what it
should score instead (``attack_submissions``). Imported by name by the tests in this folder
(``test_grader.py``, ``test_sandbox.py``, ``test_cli.py``, ``test_submissions.py``).
"""

from pathlib import Path

import nbformat

from posenc_lib.checks.ch01 import QUESTIONS

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions" / "01_order_blindness.ipynb"
FULL = sum(q.points for q in QUESTIONS)  # the coding questions and the concept questions
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
    assert set(os.environ) == {"HOME", "TMPDIR", "MPLBACKEND", "PATH", "POSENC_CACHE", "POSENC_LANG"}, sorted(os.environ)
    assert os.environ["POSENC_LANG"] == "en"  # the grader's language (posenc-grade --lang)
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


def solutions_with(first=None, last=None, replace=None, drop=None):
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


def attack_submissions(sheet: Path, canary: Path):
    """name -> (notebook text, expected status, expected score, {question: points} or None)."""
    wrong = ("attention", WRONG_ATTENTION)
    return {
        "correct solution": (solutions_with(), "ok", FULL, None),
        "patch numpy and torch comparisons": (
            solutions_with(
                first="import numpy as np\nnp.allclose = lambda *a, **k: True\n"
                "np.isclose = lambda *a, **k: True\ntorch.allclose = lambda *a, **k: True",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "patch tensor equality": (
            solutions_with(first="torch.Tensor.__eq__ = lambda a, b: True", replace=wrong),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "redefine check": (
            solutions_with(
                first="q1.check = lambda *a, **k: print('q1 ✓ correct (3/3 points)')\n"
                "def check(*args, **kwargs):\n    return True",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "redefine the grading modules": (
            solutions_with(
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
            solutions_with(
                first="import posenc_lib.checks.ch01 as ch\nch.q1 = None\nch.QUESTIONS = ()",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "sys.exit in a cell": (solutions_with(first="import sys\nsys.exit(0)"), "ok", FULL, None),
        "SystemExit and KeyboardInterrupt in cells": (
            solutions_with(first="raise SystemExit(3)", last="raise KeyboardInterrupt"),
            "ok",
            FULL,
            None,
        ),
        "os._exit before the functions": (
            solutions_with(first="import os\nos._exit(0)"),
            "error",
            0,
            None,
        ),
        "KeyboardInterrupt inside a function": (
            solutions_with(
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
            solutions_with(
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
            solutions_with(
                replace=(
                    "unchanged_rows",
                    "import os\ndef unchanged_rows(T, i, j):\n    os._exit(0)",
                )
            ),
            "error",
            FULL - 2,
            {"q5": 0},
        ),
        "infinite loop in a cell": (
            solutions_with(first="while True:\n    pass"),
            "ok",
            FULL,
            None,
        ),
        "infinite loop that swallows every interrupt": (
            solutions_with(
                first="while True:\n    try:\n        while True:\n            pass\n"
                "    except BaseException:\n        pass"
            ),
            "timeout",
            0,
            None,
        ),
        "endless loop inside a function": (
            solutions_with(
                replace=(
                    "attention",
                    "def attention(x, w_q, w_k, w_v):\n    while True:\n        pass",
                )
            ),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "memory bomb at once": (
            solutions_with(first="x = bytearray(64 * 2**30)"),
            "ok",
            FULL,
            None,
        ),
        "memory bomb that grows": (
            solutions_with(first="blocks = []\nwhile True:\n    blocks.append(bytearray(2**26))"),
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
            solutions_with(
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
            solutions_with(
                first="import os, time\nif os.fork() == 0:\n    time.sleep(3)\n"
                f"    open({str(canary)!r}, 'w').write('late')\n    os._exit(0)"
            ),
            "ok",
            FULL,
            None,
        ),
        "rewrite another submission's file": (
            solutions_with(
                first=f"open({str(sheet.parent / 'unscaled-scores.ipynb')!r}, 'w').write('{{}}')"
            ),
            "ok",
            FULL,
            None,
        ),
        "check cells deleted": (
            solutions_with(drop=lambda c: ".check(" in c.source),
            "ok",
            FULL,
            None,
        ),
        "check cells edited": (
            solutions_with().replace("q1.check(attention)", 'print(\\"q1 ✓ correct\\")'),
            "ok",
            FULL,
            None,
        ),
        "invalid JSON": ('{"cells": [', "invalid", 0, None),
        "a JSON list": ("[1, 2, 3]", "invalid", 0, None),
        "an empty notebook": (nbformat.writes(nbformat.v4.new_notebook()), "invalid", 0, None),
        "a function missing": (
            solutions_with(drop=lambda c: "def permutation_matrix(" in c.source),
            "ok",
            FULL - 2,
            {"q2": 0},
        ),
        "a wrong signature": (
            solutions_with(replace=("attention", "def attention(x, w_q):\n    return x @ w_q")),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
        "a tensor subclass that claims equality": (
            solutions_with(
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
            solutions_with(
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
            solutions_with(replace=("attention", SANDBOX_CHECKS)),
            "ok",
            FULL,
            None,
        ),
        "patch only the runner's call": (
            solutions_with(
                first="import posenc_lib.checks.run as r\n"
                "r.call = lambda fn, args, timeout=None: r.Outcome('returned', None)",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "replace the chapter module in sys.modules": (
            solutions_with(
                first="import sys, types\nsys.modules['posenc_lib.checks.ch01'] = types.ModuleType('x')",
                replace=wrong,
            ),
            "tampered",
            FULL - 3,
            {"q1": 0},
        ),
        "send a pickle down the grading channel": (
            solutions_with(
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
            solutions_with(replace=("attention", CORRECT_ATTENTION + "\nq1.check(attention)")),
            "ok",
            FULL,
            None,
        ),
        "an atexit hook": (
            solutions_with(
                first="import atexit\natexit.register(lambda: open("
                f"{str(sheet.parent / 'atexit-canary')!r}, 'w').write('x'))"
            ),
            "ok",
            FULL,
            None,
        ),
        "unscaled scores": (
            solutions_with(replace=("attention", UNSCALED_ATTENTION)),
            "ok",
            FULL - 3,
            {"q1": 0},
        ),
    }
