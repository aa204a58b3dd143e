"""The guard of the portability rule: no checked cell prints a rounding-level number as digits.

nbval compares the output of cells marked ``# NBVAL_CHECK_OUTPUT`` character by character, on the
learner's CPU. A difference at rounding level (float32: about 1e-7, float64: about 1e-16) has
digits that depend on the processor, the BLAS build and the thread count (the order of a sum
changes with the SIMD width), so such a cell passes here and fails on an AVX2 laptop or an Apple
Mac. The rule (CONTRIBUTING.md): print a rounding-level difference as a bound, "below 1e-6", and an
exact zero only where it is exact by construction, as a plain 0.

The guard reads every committed checked output in notebooks/, solutions/ and exercises/ and fails
on a number below 1e-5 written in scientific notation (or with five or more zeros after the point)
unless it is a power of ten that follows a bound ("below 1e-6", "< 1e-12", "under 1e-9").
"""

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = [  # deeper: the deep dives
    p
    for folder in ("notebooks", "notebooks/deeper", "solutions", "exercises")
    for p in sorted((ROOT / folder).glob("*.ipynb"))
]
MARK = "# NBVAL_CHECK_OUTPUT"
SMALLEST_DIGITS = 1e-5  # below this, a printed difference is assumed to be rounding

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?![\w.])")
_BOUND = re.compile(r"(?:below|under|less than|smaller than|at most|<=?|≤)\s*$", re.IGNORECASE)
_POWER_OF_TEN = re.compile(r"1(?:\.0*)?[eE]-\d+$")


def rounding_level_numbers(text: str) -> list[str]:
    """The numbers in ``text`` that show rounding-level digits (see the module's docstring)."""
    found = []
    for match in _NUMBER.finditer(text):
        token = match.group()
        scientific = "e" in token.lower()
        many_zeros = re.search(r"\.0{5,}", token) is not None
        if not (scientific or many_zeros) or abs(float(token)) >= SMALLEST_DIGITS:
            continue
        bound = _BOUND.search(text[max(0, match.start() - 20) : match.start()])
        if bound and _POWER_OF_TEN.match(token.lstrip("+-")):
            continue
        found.append(token)
    return found


def checked_outputs(path: Path):
    """(cell index, printed text) for every cell of ``path`` marked for nbval."""
    for index, cell in enumerate(nbformat.read(path, as_version=4).cells):
        if cell.cell_type != "code" or MARK not in cell.source:
            continue
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain", "")
            yield index, text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_checked_cells_print_no_rounding_level_digits(path):
    offending = [
        f"cell {index}: {numbers}"
        for index, text in checked_outputs(path)
        if (numbers := rounding_level_numbers(text))
    ]
    assert not offending, (
        f"{path.parent.name}/{path.name} prints rounding-level digits in checked cells, which "
        f"differ between CPUs: {offending}. Print a bound instead (posenc_lib.bounds.bound)."
    )


@pytest.mark.parametrize(
    "text",
    [
        "largest difference: 0.0e+00",
        "largest difference: 0e+00",
        "vs BLOOM 1.3e-06",
        "deviation 2.2e-16 and 7e-08",
        "spread 0.0000001",
        "below 3.2e-07",  # a bound is a power of ten, not a measured value
    ],
)
def test_the_guard_catches_rounding_level_digits(text):
    assert rounding_level_numbers(text)


@pytest.mark.parametrize(
    "text",
    [
        "largest difference below 1e-6 (float32 rounding)",
        "deviation < 1e-12, distance 0, ratio 1.02e+03",
        "weight 3.4e-04, share 0.5, 1e-5 is the tolerance",
        "H = 1..64: at most 1e-6 apart; model-12 took 2.5e-3 s",
    ],
)
def test_the_guard_lets_bounds_and_real_values_through(text):
    assert not rounding_level_numbers(text)


def test_the_guard_fails_on_a_notebook_that_prints_an_exact_looking_zero(tmp_path):
    notebook = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell(f"{MARK}\nprint(f'{{0.0:.1e}}')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="0.0e+00\n")]
    notebook.cells = [cell]
    path = tmp_path / "printed_zero.ipynb"
    nbformat.write(notebook, path)
    with pytest.raises(AssertionError, match=r"cell 0: \['0.0e\+00'\]"):
        test_checked_cells_print_no_rounding_level_digits(path)
