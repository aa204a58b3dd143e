"""The notebooks as files: exercises in sync with solutions, executed and light, readable without
a kernel, and each chapter's first cell runnable from anywhere in the repository."""

import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools.authoring import (
    BEGIN,
    END,
    NBVAL_MARK,
    _drop_duplicate_images,
    course_notebooks,
    exercise_pairs,
    exercises_from,
    render,
    stub_out,
)

ROOT = Path(__file__).resolve().parents[2]
KINDS = {
    "notebooks": "lecture",
    "notebooks/deeper": "deeper",  # a chapter's deep dives, beside its core lecture
    "solutions": "solutions",
    "exercises": "exercises",
}
ALL = [p for folder in KINDS for p in sorted((ROOT / folder).glob("*.ipynb"))]
WIDGET = "application/vnd.jupyter.widget-view+json"


def _read(path):
    return nbformat.read(path, as_version=4)


def _name(path):
    return f"{path.parent.name}/{path.name}"


@pytest.mark.parametrize("source, target", list(exercise_pairs()), ids=lambda p: p.name)
def test_committed_exercises_are_what_make_exercises_writes(source, target):
    expected = render(exercises_from(_read(source), source.name))
    assert target.exists(), f"{_name(target)} is missing: run `make exercises`"
    assert target.read_text(encoding="utf-8") == expected, (
        f"{_name(target)} is not in sync with {_name(source)}: run `make exercises` and commit"
    )


def test_every_solutions_notebook_has_an_exercises_notebook_and_back():
    solutions = {p.name for p in (ROOT / "solutions").glob("*.ipynb")}
    assert solutions == {p.name for p in (ROOT / "exercises").glob("*.ipynb")}
    assert solutions <= {p.name for p in (ROOT / "notebooks").glob("*.ipynb")}


@pytest.mark.parametrize("path", ALL, ids=_name)
def test_metadata_names_the_chapter_and_kind(path):
    meta = _read(path).metadata.get("posenc", {})
    assert meta.get("kind") == KINDS[path.parent.relative_to(ROOT).as_posix()]
    assert meta.get("chapter") == path.name[:2]


@pytest.mark.parametrize("path", [p for p in ALL if p.parent.name != "exercises"], ids=_name)
def test_lectures_and_solutions_are_committed_executed_and_light(path):
    notebook = _read(path)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "run `make notebooks` and commit"
    assert not any(o.output_type == "error" for c in code for o in c.outputs)
    assert not any(o.get("name") == "stderr" for c in code for o in c.outputs)  # no warnings
    assert "widgets" not in notebook.metadata  # PNG fallbacks instead of widget state
    assert not any("execution" in c.metadata for c in notebook.cells)  # no timestamps
    assert path.stat().st_size < 400_000, f"{_name(path)} is {path.stat().st_size} bytes"


@pytest.mark.parametrize("path", [p for p in ALL if p.parent.name != "exercises"], ids=_name)
def test_cells_marked_for_nbval_print_text_only(path):
    # nbval compares every output field of a marked cell: a figure there would fail the comparison
    # (ipympl's HTML copy is dropped from the committed file), so figures go in unmarked cells.
    for cell in _read(path).cells:
        if cell.cell_type == "code" and NBVAL_MARK in cell.source:
            assert not any("image/png" in o.get("data", {}) for o in cell.outputs), cell.source[:80]


@pytest.mark.parametrize("path", sorted((ROOT / "solutions").glob("*.ipynb")), ids=_name)
def test_solutions_mark_every_check_so_nbval_compares_its_verdict(path):
    checks = [c for c in _read(path).cells if c.cell_type == "code" and ".check(" in c.source]
    assert len(checks) >= 3
    assert all(NBVAL_MARK in c.source for c in checks)
    shown = [o for c in checks for o in c.outputs]
    assert shown and all("✓ correct" in o.data["text/plain"] for o in shown)


@pytest.mark.parametrize("path", sorted((ROOT / "exercises").glob("*.ipynb")), ids=_name)
def test_exercises_hold_stubs_not_solutions(path):
    notebook = _read(path)
    text = "\n".join(c.source for c in notebook.cells)
    assert BEGIN not in text and END not in text and NBVAL_MARK not in text
    assert text.count("raise NotImplementedError") >= 3
    assert all(not c.get("outputs") for c in notebook.cells if c.cell_type == "code")


@pytest.mark.parametrize(
    "path", [p for p in ALL if p.parent.name in ("notebooks", "deeper")], ids=_name
)
def test_every_figure_has_a_still_image_for_readers_without_a_kernel(path):
    from nbconvert import HTMLExporter

    notebook = _read(path)
    outputs = [o for c in notebook.cells for o in c.get("outputs", []) if "data" in o]
    widgets = [o for o in outputs if WIDGET in o.data]
    assert all("image/png" in o.data for o in widgets)
    # Only dashboards are widgets: a figure with no controls is a plain PNG (viz.figures.show), which
    # also survives a notebook saved with widget state (ipympl saves plain canvases blank).
    assert all("live dashboard" in o.data["text/plain"] for o in widgets)
    html, _ = HTMLExporter().from_notebook_node(notebook)  # as a static renderer shows it
    assert html.count("<img") >= sum("image/png" in o.data for o in outputs) >= len(widgets)


def test_first_cells_run_unedited_from_another_folder_of_the_repository():
    # The import cell of each notebook, without its IPython magics, from tests/ (a folder no
    # notebook lives in): nothing may depend on the working directory.
    sources = []
    for path in course_notebooks():
        first = next(c for c in _read(path).cells if c.cell_type == "code")
        sources.append("\n".join(ln for ln in first.source.splitlines() if not ln.startswith("%")))
    script = "import matplotlib\nmatplotlib.use('agg')\n" + "\n".join(sources)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT / "tests", capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_stub_out_keeps_the_indent_and_everything_outside_the_markers():
    source = f"def f(x):\n    y = 1\n    {BEGIN}\n    return x + y\n    {END}\n# after"
    assert stub_out(source) == (
        "def f(x):\n    y = 1\n    # YOUR CODE HERE\n"
        '    raise NotImplementedError("Replace this line with your code.")\n# after'
    )


@pytest.mark.parametrize(
    "source, message",
    [
        (f"{BEGIN}\nx = 1", "never closed"),
        (f"x = 1\n{END}", "without a"),
        (f"{BEGIN}\n{BEGIN}\n{END}", "inside another"),
    ],
)
def test_broken_markers_are_refused_with_the_line(source, message):
    with pytest.raises(ValueError, match=message):
        stub_out(source, "ch cell 3")


def test_markers_outside_code_cells_are_refused():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(f"{BEGIN}\nanswer")])
    with pytest.raises(ValueError, match="code cells only"):
        exercises_from(notebook, "x.ipynb")


def test_solutions_only_cells_are_left_out_of_the_exercises():
    cell = nbformat.v4.new_markdown_cell(
        "the worked solutions", metadata={"tags": ["solutions-only"]}
    )
    notebook = nbformat.v4.new_notebook(cells=[cell, nbformat.v4.new_code_cell("x = 1")])
    assert [c.source for c in exercises_from(notebook).cells] == ["x = 1"]


def test_exercises_carry_no_widget_state():
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    notebook.metadata["widgets"] = {"state": {}}
    assert "widgets" not in exercises_from(notebook).metadata


def test_executed_notebooks_keep_one_copy_of_each_image():
    html = '<img src="data:image/png;base64,AAA">'
    output = nbformat.v4.new_output("display_data", data={"image/png": "AAA", "text/html": html})
    cell = nbformat.v4.new_code_cell("x", outputs=[output])
    cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    notebook = nbformat.v4.new_notebook(cells=[cell])
    _drop_duplicate_images(notebook)
    assert set(notebook.cells[0].outputs[0].data) == {"image/png"}
    assert "execution" not in notebook.cells[0].metadata
