"""The tests every chapter's exercise checks must pass, written once.

Each ``tests/checks/test_chNN.py`` keeps what is its own (the known-wrong answers, the chapter's
special cases) and takes these from here:

    globals().update(standard_tests(QUESTIONS, SOLUTIONS, STUBS, WRONG, points=10))

- the worked solutions pass on the public inputs and on hidden seeds 1-5;
- the exercise stubs are "not attempted", for no points;
- every known-wrong answer fails, with the sentence that names its mistake, and never a traceback
  or a tensor's repr (which would show the expected values);
- every known-wrong answer also fails every hidden draw a grader makes (seeds 1-20), judged as the
  grader judges it (its outcomes sent as the grader's child sends them), so its grade does not
  depend on the teacher's seed (a known-wrong answer fails the public inputs too, so the grader,
  which judges the public and the hidden inputs together, fails it on every seed);
- no sentence a known-wrong answer gets (public inputs and a hidden draw) contains one of the
  question's ``answer_keys``, the worked solution's key expressions and numbers: a verdict names the
  mistake and where to look, the fix is for the hints and ``solution()``;
- every question has at least six known-wrong answers, and the points add up;
- broken functions (None, raising, NaN, any object, an endless iterator, a hang) get a sentence;
- the type policy: the worked answer, one conversion away from the type the question asks for
  (a NumPy array, a list, a 0-d tensor, an unsorted list...), fails with the policy's sentence;
- an answer that computes the right result and then changes its input in place fails, naming the
  argument;
- an answer that calls the question's library reference fails with the shortcut sentence, however
  it reaches the reference (module attribute, a name in the notebook, a closure);
- an answer that calls a private helper of its own checks module fails with the shortcut sentence;
  one that patches the checks module's judging helpers (``close``, the question's ``diagnose``)
  and returns a wrong answer fails, and the patches are gone after the check.

The tests that change a right answer run the worked solution once per public input (``_answers``)
and hand back its stored results, so they cost milliseconds per question.
"""

import contextlib
import difflib
import functools
import importlib
import inspect
import io
import re
import sys
import types
from pathlib import Path

import nbformat
import numpy as np
import pytest
import torch

from posenc_lib.checks import (
    FAIL,
    FLOAT,
    FLOATS,
    INDEX_LIST,
    INT,
    INT_TENSOR,
    NOT_ATTEMPTED,
    PASS,
    TENSOR,
)
from posenc_lib.checks.concepts import Concept
from posenc_lib.checks.diagnosis import leaked
from posenc_lib.checks.run import _exempt, resolve
from posenc_lib.grading import grader, sandbox

# A named mistake after the lead "Close, but " must not bring a second "but".
DOUBLE_BUT = re.compile(r"\bClose, but\b.*\bbut\b")
# A hint must add something to its question: at most this share of its text may be found, in runs
# of 12 or more characters, in the question's statement (the solutions notebook's markdown).
MAX_REPEATED_SHARE = 0.8
_SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions"


def _plain(text: str) -> str:
    """Lower-case words and numbers only: markdown, LaTeX and punctuation aside."""
    for latex in ("\\texttt", "\\lfloor", "\\rfloor", "\\cdot"):
        text = text.replace(latex, " ")
    text = re.sub(r"[`$*\\{}]", "", text.lower().replace("\\_", "_"))
    return " ".join(re.sub(r"[^0-9a-z_]+", " ", text).split())


def question_statement(question) -> str:
    """The markdown cell of the solutions notebook that asks ``question`` ("## Question ...")."""
    notebook = nbformat.read(_SOLUTIONS / question.notebook, as_version=4)
    for cell in notebook.cells:
        source = cell.source.lstrip()
        if cell.cell_type == "markdown" and source.startswith("## Question"):
            if f"`{question.function}(" in source:
                return cell.source
    return ""  # (a question asked in code or over several cells: nothing to compare with)


def repeated_share(hint: str, statement: str) -> float:
    """The share of ``hint`` found in ``statement``: 1.0 when it is contained whole."""
    hint, statement = _plain(hint), _plain(statement)
    if not hint or hint in statement:
        return 1.0 if hint else 0.0
    matcher = difflib.SequenceMatcher(None, hint, statement, autojunk=False)
    found = sum(block.size for block in matcher.get_matching_blocks() if block.size >= 12)
    return found / len(hint)


def _hang(*args):
    while True:
        pass


HIDDEN_SEEDS = range(1, 21)  # the seeds a grader might draw, as far as the tests go
MIN_WRONG = 6  # known-wrong answers per question

BROKEN = {
    "none": (lambda *a: None, "returned None"),
    "raises": (lambda *a: 1 / 0, "raised ZeroDivisionError"),
    "nan": (lambda *a: float("nan"), ""),
    "object": (lambda *a: object(), ""),
    "endless": (lambda *a: iter(range(10**9)), ""),
    "hangs": (_hang, "of CPU time"),
}


def _floats(v):
    return v.tolist() if isinstance(v, torch.Tensor) else list(v)


# Near misses of each kind of answer: name -> the conversion of a right answer.
NEAR_MISSES = {
    FLOAT: {
        "0-d tensor": torch.tensor,
        "one-element tensor": lambda v: torch.tensor([v]),
        "numpy float64": np.float64,
        "numpy float32": np.float32,
        "numpy array": np.array,
    },
    INT: {"0-d tensor": torch.tensor, "numpy int64": np.int64, "float": float},
    TENSOR: {
        "numpy array": lambda v: v.numpy(),
        "list": lambda v: v.tolist(),
        "integer dtype": lambda v: v.long(),
    },
    INT_TENSOR: {
        "numpy array": lambda v: v.numpy(),
        "list": lambda v: v.tolist(),
        "float dtype": lambda v: v.float(),
    },
    INDEX_LIST: {
        "tensor": torch.tensor,
        "numpy array": lambda v: np.array(v, dtype=np.int64),
        "tuple": tuple,
        "set": set,
        "decreasing": lambda v: sorted(v, reverse=True),
        "duplicated": lambda v: v + v[:1],
        "numpy ints": lambda v: [np.int64(i) for i in v],
    },
    FLOATS: {
        "numpy array": lambda v: np.array(_floats(v)),
        "tensors": lambda v: [torch.tensor(x) for x in _floats(v)],
        "tuple": lambda v: tuple(_floats(v)),
        "numpy floats": lambda v: [np.float64(x) for x in _floats(v)],
    },
}


def _near_misses(returns) -> dict:
    """name -> conversion of a right answer of type ``returns`` (item by item for a tuple)."""
    if not isinstance(returns, tuple):
        return NEAR_MISSES[returns]
    found = {"list instead of a tuple": list}
    for index, kind in enumerate(returns):
        for name, convert in NEAR_MISSES[kind].items():
            found[f"item {index + 1}: {name}"] = functools.partial(_item, index, convert)
    return found


def _item(index, convert, value):
    return tuple(convert(v) if i == index else v for i, v in enumerate(value))


@functools.cache
def _answers(question, solution):
    """The worked solution's answers on the public inputs, computed once per test session."""
    return [solution(*case.args) for case in question.cases(0)]


def _replaying(question, solution, change):
    """A function that returns change(stored right answer) for each public input, in order."""
    answers = iter(_answers(question, solution))

    @functools.wraps(solution)  # the same signature: messages name its parameters
    def answer(*args):
        return change(next(answers), args)

    return answer


def _mutable(args) -> int | None:
    """The index of the first argument an answer could change in place, or None."""
    for index, arg in enumerate(args):
        if isinstance(arg, torch.Tensor) and arg.numel() > 0 or isinstance(arg, (list, dict)):
            return index
    return None


def _change_in_place(arg) -> None:
    if isinstance(arg, torch.Tensor):
        if arg.dtype == torch.bool:
            arg.logical_not_()
        else:
            arg.add_(1)
    elif isinstance(arg, list):
        arg.append(arg[0] if arg else 0)
    else:
        arg["changed"] = True


def _routes(reference: str):
    """Answers that reach ``reference`` in three ways a learner might, by name."""
    parts = reference.split(".")
    for cut in range(len(parts) - 1, 0, -1):  # the longest importable prefix is the module
        try:
            module = importlib.import_module(".".join(parts[:cut]))
            break
        except ImportError:
            continue
    owner_path = parts[cut:]

    def lookup():  # posenc_lib.module.function, read at call time
        found = module
        for part in owner_path:
            found = getattr(found, part)
        return found

    def via_module(*args):
        return lookup()(*args)

    namespace = {"reference": lookup()}  # `from posenc_lib.module import function` in a notebook
    exec("def via_notebook(*args):\n    return reference(*args)\n", namespace)

    def closure(found):
        def via_closure(*args):
            return found(*args)

        return via_closure

    return {
        "module attribute": via_module,
        "notebook name": namespace["via_notebook"],
        "closure": closure(lookup()),
    }


def _private_helper(question):
    """A private module-level function of the chapter's checks that the question's module holds
    (its own, or one it imports from the chapter's ``setting``), not given in its cases."""
    module = sys.modules[type(question).__module__]
    chapter = ".".join(module.__name__.split(".")[:3])  # posenc_lib.checks.chNN
    given = set().union(*(_exempt(case.args, set()) for case in question.cases(0)))
    for name, value in vars(module).items():
        if (
            name.startswith("_")
            and not name.startswith("__")
            and isinstance(value, types.FunctionType)
            and (value.__module__ + ".").startswith(chapter + ".")
            and id(value) not in given
        ):
            return f"{value.__module__}.{name}", value
    raise AssertionError(f"{module.__name__} has no private helper")


class _Refused(AssertionError):
    pass


@contextlib.contextmanager
def _read_only(question):
    """``question`` with every attribute write or delete refused while the block runs."""

    def refuse(self, name, *value):
        raise _Refused(f"{type(self).__name__} wrote {name!r} on itself while judging")

    original = type(question)
    question.__class__ = type(
        original.__name__, (original,), {"__setattr__": refuse, "__delattr__": refuse}
    )
    try:
        yield
    finally:
        object.__setattr__(question, "__class__", original)


def judged_as_graded(question, fn, cases):
    """The verdict on ``fn`` for ``cases`` as the grader reaches it: the outcomes encoded as its
    child sends them, loaded with ``torch.load(weights_only=True)``, decoded and judged."""
    raw = [[o.kind, sandbox.encode(o.value), o.error] for o in question.run(fn, cases)]
    buffer = io.BytesIO()
    torch.save(raw, buffer)
    buffer.seek(0)
    outcomes = [grader._outcome(r) for r in torch.load(buffer, weights_only=True)]
    return question.judge(cases, outcomes)


def _wrong(value):
    """A right answer made wrong: a constant tensor, a number moved by one, one index more."""
    if isinstance(value, tuple):
        return tuple(_wrong(v) for v in value)
    if isinstance(value, torch.Tensor):
        return torch.full_like(value, 0.5 if value.is_floating_point() else 7)
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, list):
        if value and all(isinstance(v, float) for v in value):
            return [v + 1 for v in value]
        return sorted(set(value) | {max(value, default=-1) + 1000})
    return object()


def concept_tests(questions, quiz, exercise_concepts, lecture, wrong) -> dict:
    """The shared tests of one chapter's concept questions, by name, for the module's globals.

    questions: the graded ones (coding and concept); quiz: the lecture's ``CONCEPTS``, never graded;
    exercise_concepts: the graded concept questions; lecture: the core's file name, no suffix;
    wrong: [(question, a known-wrong answer, a fragment of the sentence it gets), ...].
    """

    def test_the_exercises_ask_other_concept_questions_than_the_lecture_quiz():
        assert questions[-len(exercise_concepts) :] == exercise_concepts
        assert not set(map(id, quiz)) & set(map(id, questions))  # the quiz is never graded
        assert not {q.prompt for q in quiz} & {q.prompt for q in exercise_concepts}
        path = _SOLUTIONS.parent / "notebooks" / f"{lecture}.ipynb"
        assert "quiz(CONCEPTS)" in path.read_text(encoding="utf-8")  # the lecture keeps its quiz

    def test_every_graded_concept_question_has_known_wrong_answers():
        assert {id(q) for q, _, _ in wrong} == set(map(id, exercise_concepts))

    @pytest.mark.parametrize(
        "question, answer, fragment", wrong, ids=[f"{q.name}-{f}" for q, _, f in wrong]
    )
    def test_a_known_wrong_concept_answer_fails_naming_its_mistake(question, answer, fragment):
        verdict = question.evaluate(answer)
        assert verdict.status == FAIL and fragment in verdict.message, verdict.message

    return {name: f for name, f in locals().items() if name.startswith("test_")}


def standard_tests(questions, solutions, stubs, wrong, points) -> dict:
    """The shared test functions for one chapter, by name, for the test module's globals.

    solutions, stubs: function name -> the worked solution / the exercise stub.
    wrong: question name -> [(known-wrong function, fragment its sentence must contain), ...].
    points: the chapter's total for its coding questions (``questions`` may hold its concept
    questions too: they are left out here).
    """
    # The coding questions: a concept question (a letter or a number, no function) has its own
    # tests, for every chapter at once, in test_concepts.py.
    questions = [q for q in questions if not isinstance(q, Concept)]
    by_name = {q.name: q for q in questions}
    each_question = pytest.mark.parametrize("question", questions, ids=lambda q: q.name)

    @each_question
    def test_the_worked_solutions_pass_on_public_and_hidden_inputs(question):
        fn = solutions[question.function]
        for seed in range(6):
            cases = question.cases(seed)
            verdict = question.judge(cases, question.run(fn, cases))
            assert verdict.status == PASS, (seed, verdict.message)

    @each_question
    def test_judging_stores_nothing_on_the_question(question):
        # The grader judges several submissions at once, in threads, with one question object:
        # a judgement that stored state on it (and a second thread's overwrote it) failed right
        # answers at random. Judged with every write to the object refused, each verdict holds.
        answers = [solutions[question.function], *(fn for fn, _ in wrong[question.name])]
        for fn in answers:
            cases = question.cases(1)
            outcomes = question.run(fn, cases)
            expected = question.judge(cases, outcomes)
            with _read_only(question):
                verdict = question.judge(cases, outcomes)
            assert (verdict.status, verdict.message) == (expected.status, expected.message)
        assert expected.status == FAIL and answers  # (the known-wrong ones ran too)

    @each_question
    def test_the_exercise_stubs_are_not_attempted(question, capsys):
        verdict = question.check(stubs[question.function])
        assert verdict.status == NOT_ATTEMPTED and verdict.points == 0

    @pytest.mark.parametrize(
        "name, index", [(name, i) for name, fns in wrong.items() for i in range(len(fns))]
    )
    def test_known_wrong_answers_fail_with_a_sentence_that_names_the_mistake(name, index, capsys):
        question, (fn, fragment) = by_name[name], wrong[name][index]
        verdict = question.check(fn)
        assert verdict.status == FAIL and verdict.points == 0
        assert fragment in verdict.message, verdict.message
        assert "Traceback" not in verdict.message and "tensor(" not in verdict.message
        sentence = verdict.message.split(" (Input: ")[0]  # (an input may be "Toeplitz but for ...")
        assert not DOUBLE_BUT.search(sentence), verdict.message  # "Close, but ..., but ..."

    @pytest.mark.parametrize(
        "name, index", [(name, i) for name, fns in wrong.items() for i in range(len(fns))]
    )
    def test_known_wrong_answers_fail_on_every_hidden_draw(name, index):
        question, (fn, _) = by_name[name], wrong[name][index]
        for seed in HIDDEN_SEEDS:
            verdict = judged_as_graded(question, fn, question.cases(seed))
            assert verdict.status == FAIL and verdict.points == 0, (seed, verdict.message)

    @pytest.mark.parametrize(
        "name, index", [(name, i) for name, fns in wrong.items() for i in range(len(fns))]
    )
    def test_known_wrong_answers_are_not_told_the_answer(name, index):
        question, (fn, _) = by_name[name], wrong[name][index]
        for seed in (0, 1):
            cases = question.cases(seed)
            message = question.judge(cases, question.run(fn, cases)).message
            assert not leaked(message, question.answer_keys), (seed, message)

    @each_question
    def test_no_hint_repeats_its_question(question):
        statement = question_statement(question)
        for number, hint in enumerate(question.hints, 1):
            share = repeated_share(hint, statement)
            assert share < MAX_REPEATED_SHARE, (question.name, number, share, hint)

    @each_question
    def test_every_question_declares_its_answer_keys(question):
        keys = question.answer_keys
        assert keys and all(isinstance(k, str) and k.strip() for k in keys), question.name

    def test_every_question_has_at_least_six_known_wrong_answers():
        assert set(wrong) == set(by_name)
        short = {name: len(fns) for name, fns in wrong.items() if len(fns) < MIN_WRONG}
        assert not short, f"fewer than {MIN_WRONG} known-wrong answers: {short}"
        assert sum(q.points for q in questions) == points

    @each_question
    @pytest.mark.parametrize("fn, fragment", list(BROKEN.values()), ids=list(BROKEN))
    def test_broken_functions_get_a_tutor_sentence(question, fn, fragment, monkeypatch, capsys):
        monkeypatch.setattr(question, "timeout", 0.2)
        verdict = question.check(fn)
        assert verdict.status == FAIL and fragment in verdict.message and verdict.message
        assert "Traceback" not in capsys.readouterr().out

    @each_question
    def test_every_question_names_its_type_and_references(question):
        assert question.returns is not None
        assert isinstance(question.references, tuple)
        for ref in resolve(question.references, lazy=True):  # each names a plain function
            name = ref if isinstance(ref, str) else ref.name  # (a third party's: not imported yet)
            assert name.startswith(("posenc_lib.", "transformers.")) and ".checks." not in name

    @pytest.mark.parametrize(
        "question, miss",
        [(q, name) for q in questions for name in _near_misses(q.returns)],
        ids=lambda x: x if isinstance(x, str) else x.name,
    )
    def test_a_near_miss_of_the_type_asked_for_fails_with_the_policy_sentence(
        question, miss, capsys
    ):
        convert = _near_misses(question.returns)[miss]
        answer = _replaying(question, solutions[question.function], lambda v, _: convert(v))
        verdict = question.check(answer)
        assert verdict.status == FAIL and verdict.points == 0, (miss, verdict.message)
        assert "the question asks for" in verdict.message, (miss, verdict.message)
        assert "Traceback" not in verdict.message and "tensor(" not in verdict.message

    changing = [q for q in questions if _mutable(q.cases(0)[0].args) is not None]

    @pytest.mark.parametrize("question", changing, ids=lambda q: q.name)
    def test_an_answer_that_changes_its_input_fails_and_names_the_argument(question, capsys):
        solution = solutions[question.function]
        index = _mutable(question.cases(0)[0].args)

        def change(value, args):
            _change_in_place(args[index])
            return value

        verdict = question.check(_replaying(question, solution, change))
        name = list(inspect.signature(solution).parameters)[index]
        assert verdict.status == FAIL and verdict.points == 0, verdict.message
        assert f"changed its argument `{name}` in place" in verdict.message, verdict.message

    @pytest.mark.parametrize(
        "question, reference, route",
        [
            (q, ref, route)
            for q in questions
            for ref in q.references
            if ref.startswith("posenc_lib.")  # (transformers': once, in test_framework.py)
            for route in ("module attribute", "notebook name", "closure")
        ],
        ids=lambda x: x if isinstance(x, str) else x.name,
    )
    def test_calling_the_library_reference_fails_with_the_shortcut_sentence(
        question, reference, route, capsys
    ):
        (ref,) = resolve([reference])
        verdict = question.check(_routes(reference)[route])
        assert verdict.status == FAIL and verdict.points == 0, verdict.message
        assert f"write `{question.function}` yourself" in verdict.message, verdict.message
        assert f"`{reference}` is switched off" in verdict.message, verdict.message
        assert ref.function.__code__ is ref.code  # switched back on after the check

    @each_question
    def test_calling_a_private_helper_of_the_checks_fails_with_the_shortcut_sentence(
        question, capsys
    ):
        name, helper = _private_helper(question)
        code = helper.__code__

        def answer(*args):
            return helper(*args)

        verdict = question.check(answer)
        assert verdict.status == FAIL and verdict.points == 0, verdict.message
        assert f"write `{question.function}` yourself" in verdict.message, verdict.message
        assert f"`{name}` is switched off" in verdict.message, verdict.message
        assert helper.__code__ is code  # switched back on after the check

    @each_question
    def test_patching_the_checks_judges_nothing_and_is_undone(question, capsys):
        module = sys.modules[type(question).__module__]
        before = dict(vars(module)), dict(vars(type(question))), dict(vars(question))

        def patch(value, _):
            module.close = lambda *a, **k: True
            module.QUESTIONS = ()
            type(question).diagnose = lambda self, case, value: None
            type(question).diagnose_all = lambda self, cases, values: None
            question.diagnose = lambda case, value: None
            return _wrong(value)

        verdict = question.check(_replaying(question, solutions[question.function], patch))
        assert verdict.status == FAIL and verdict.points == 0, verdict.message
        after = dict(vars(module)), dict(vars(type(question))), dict(vars(question))
        for old, new in zip(before, after, strict=True):
            assert old.keys() == new.keys() and all(new[k] is v for k, v in old.items())

    return {name: value for name, value in locals().items() if name.startswith("test_")}


def answer_functions(notebook_path):
    """The functions a chapter notebook defines (its answer cells), executed in a fresh namespace.

    Runs every code cell except the checks (``.check(``, ``scorecard(``) and IPython magics, so a
    test gets the solutions notebook's worked answers, or the exercises notebook's untouched stubs.
    """
    import nbformat

    namespace = {"__name__": "chapter_answers"}
    for cell in nbformat.read(notebook_path, as_version=4).cells:
        if cell.cell_type != "code" or ".check(" in cell.source or "scorecard(" in cell.source:
            continue
        source = "\n".join(ln for ln in cell.source.splitlines() if not ln.startswith("%"))
        exec(compile(source, str(notebook_path), "exec"), namespace)
    return namespace
