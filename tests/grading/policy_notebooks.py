"""Submissions for the grader's policy tests: every chapter's exercises notebook, filled in.

``filled`` puts the worked solution in every answer cell, or another source for some functions;
``policy_submissions`` lists near misses of the type asked for, side effects and shortcuts through
the library, each with the points it should lose. Imported by name by ``test_grader.py``.
"""

import nbformat
from attack_notebooks import ROOT

from posenc_lib.grading.submissions import chapters

POLICY_SEEDS = (1234, 77, 31337)  # the worked solutions earn full marks on each


def _chapter_module(chapter):
    from importlib import import_module

    return import_module(chapters()[chapter])


def filled(chapter, replace=None, first=None):
    """chapter's exercises notebook with every answer cell holding the worked solution, or the
    source in ``replace`` (function name -> cell source); ``first`` goes after the imports. A
    concept question's ``answer_cN = None`` gets the right answer."""
    from posenc_lib.checks import Concept, MultipleChoice, solution_code

    path = next((ROOT / "exercises").glob(f"{chapter}_*.ipynb"))
    notebook = nbformat.read(path, as_version=4)
    questions = _chapter_module(chapter).QUESTIONS
    functions = [q.function for q in questions if not isinstance(q, Concept)]
    right = {
        q.function: q.answer if isinstance(q, MultipleChoice) else q.value
        for q in questions
        if isinstance(q, Concept)
    }
    for cell in notebook.cells:
        for name in functions:
            if cell.cell_type == "code" and f"def {name}(" in cell.source:
                cell.source = (replace or {}).get(name) or solution_code(path.name, name)
        for name, value in right.items():
            if cell.cell_type == "code" and cell.source.startswith(f"{name} ="):
                cell.source = f"{name} = {value!r}"
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


# Known-wrong answers that once earned credit (tests/checks/test_ch06.py and test_ch08.py hold them
# too, judged on every hidden draw): the grader must give them nothing.
ABS_SPREAD = """
def offset_spread(rotate, q, k, offset, positions):
    scores = [abs(float(rotate(q, p + offset) @ rotate(k, p))) for p in positions]
    return max(scores) - min(scores)
"""


def _rope_ignoring_attention_factor():
    """Chapter 8's q1 with YaRN's scale always 0.1 ln s + 1, whatever attention_factor says."""
    from posenc_lib.checks import solution_code

    code = solution_code("08_real_model.ipynb", "rope_from_config")
    given = 'scale = rope.get("attention_factor") or 0.1 * math.log(s) + 1'
    assert given in code, "the worked solution's YaRN scale line changed: update this test"
    return code.replace(given, "scale = 0.1 * math.log(s) + 1")


def policy_submissions():
    """name -> (chapter, notebook text, {question: points} of the questions that lose points)."""
    return {
        "near miss: a NumPy array for a tensor": (
            "01",
            filled("01", {"attention": NUMPY_ATTENTION}),
            {"q1": 0},
        ),
        "near miss: rows in decreasing order": (
            "01",
            filled("01", {"unchanged_rows": DECREASING_ROWS}),
            {"q5": 0},
        ),
        "side effect: the input changed in place": (
            "01",
            filled("01", {"add_positions": IN_PLACE_POSITIONS}),
            {"q4": 0},
        ),
        "shortcut: a reference imported into the notebook": (
            "01",
            filled(
                "01",
                {"attention": LIBRARY_ATTENTION},
                first="from posenc_lib import self_attention",
            ),
            {"q1": 0},
        ),
        "shortcut: a reference through its module": (
            "05",
            filled("05", {"alibi_slopes": LIBRARY_SLOPES}),
            {"q1": 0},
        ),
        "shortcut: a helper of the checks module": (
            "01",
            filled("01", {"equivariance_gap": CHECKS_HELPER_GAP}),
            {"q3": 0},
        ),
        "known wrong: the spread of |score|": (
            "06",
            filled("06", {"offset_spread": ABS_SPREAD}),
            {"q2": 0},
        ),
        "known wrong: YaRN's attention_factor ignored": (
            "08",
            filled("08", {"rope_from_config": _rope_ignoring_attention_factor()}),
            {"q1": 0},
        ),
        "a slow import inside a right answer": (
            "04",
            filled("04", {"t5_bucket": _t5_with_a_cold_import()}),
            {},
        ),
    }
