"""Every chapter's concept questions through the real grader, each known-wrong answer included.

``test_concepts.py`` shows that every wrong option and every named mistake fails the notebook's
check; ``test_concepts_grading.py`` takes chapter 1 through every grader path. Here each chapter's
exercises notebook, cut to its imports and its answer cells (no coding answers, so the batch stays
short), is graded once with the right answers and once per round of wrong ones (round k sets each
question to its k-th wrong option or named mistake): the grader gives the right answers their
points and fails every known-wrong answer with the very sentence the check gives.
"""

import importlib
from pathlib import Path

import nbformat
import pytest

from posenc_lib.checks import FAIL, PASS
from posenc_lib.checks.concepts import MultipleChoice
from posenc_lib.grading.grader import grade_all

ROOT = Path(__file__).resolve().parents[2]
SEED = 11
CHAPTERS = [f"{n:02d}" for n in range(1, 9)]


def _concepts(chapter):
    # the exercises' own concept questions where a chapter has them (chapter 5), else the quiz's
    module = importlib.import_module(f"posenc_lib.checks.ch{chapter}")
    return getattr(module, "EXERCISE_CONCEPTS", module.CONCEPTS)


def _wrong_values(question):
    if isinstance(question, MultipleChoice):
        return [c.key for c in question.choices if c.key != question.answer]
    return [m.value for m in question.mistakes]


def _right(question):
    return question.answer if isinstance(question, MultipleChoice) else question.value


def _answers(chapter):
    """name -> {question name: value}: "right", then "wrong-k" for every round k."""
    concepts = _concepts(chapter)
    rounds = max(len(_wrong_values(q)) for q in concepts)
    answers = {"right": {q.name: _right(q) for q in concepts}}
    for k in range(rounds):
        answers[f"wrong-{k}"] = {
            q.name: _wrong_values(q)[k % len(_wrong_values(q))] for q in concepts
        }
    return answers


def _notebook(chapter, values):
    """The chapter's exercises notebook: its first code cell (the imports) and its answer cells."""
    (path,) = ROOT.glob(f"exercises/{chapter}_*.ipynb")
    notebook = nbformat.read(path, as_version=4)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    kept = [code[0]]
    for cell in code[1:]:
        name = next((n for n in values if cell.source.startswith(f"answer_{n} =")), None)
        if name is not None:
            cell.source = f"answer_{name} = {values[name]!r}"
            kept.append(cell)
    assert len(kept) == 1 + len(values), f"{path.name}: an answer cell is missing"
    notebook.cells = kept
    return nbformat.writes(notebook)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    folder = tmp_path_factory.mktemp("every-chapter")
    paths, keys = [], []
    for chapter in CHAPTERS:
        for name, values in _answers(chapter).items():
            path = folder / f"{chapter}-{name}.ipynb"
            path.write_text(_notebook(chapter, values), encoding="utf-8")
            paths.append((path, path.stem))
            keys.append((chapter, name))
    rows = grade_all(paths, SEED, timeout=60.0, workers=2)
    return dict(zip(keys, rows, strict=True))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_known_wrong_answer_fails_the_grader_as_it_fails_the_check(graded, chapter):
    for name, values in _answers(chapter).items():
        row = graded[(chapter, name)]
        assert row.status == "ok", (chapter, name, row.reason)
        verdicts = {v.question: v for v in row.verdicts}
        for q in _concepts(chapter):
            got, want = verdicts[q.name], q.evaluate(values[q.name])
            if name == "right":
                assert got.status == PASS and got.points == q.points, (chapter, q.name, got)
            else:
                assert got.status == FAIL and got.points == 0, (chapter, name, q.name)
            assert got.message == want.message, (chapter, name, q.name, values[q.name])
