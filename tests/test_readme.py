"""The README's figures about the test suite agree with the suite itself.

The README says how many tests `make test` runs; this test compares that with the number pytest
collected in this very session, so it needs no second collection. It counts only when the whole
suite was collected (no paths, -k, -m or --ignore), as under `make test`; a narrower run skips it.
"""

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_the_readme_states_how_many_tests_make_test_runs(request):
    if not getattr(request.config, "posenc_whole_suite", False):
        pytest.skip("the README's count is checked only when the whole suite runs (make test)")
    found = re.search(r"about ([\d,]+) tests", README)
    assert found, "README.md should say how many tests `make test` runs ('about N tests')"
    stated = int(found.group(1).replace(",", ""))
    collected = request.config.posenc_items
    assert abs(stated - collected) <= 0.05 * collected, (
        f"README.md says about {stated:,} tests; this session collected {collected:,}. Update the "
        "README with the count pytest prints at the end of `make test`."
    )
