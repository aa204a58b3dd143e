"""`make test` hands its xdist workers whole files, longest first (conftest.py at the root), so no
worker is left with a long file while the other waits."""

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def conftest(request):
    return request.config.pluginmanager.get_plugin(str(ROOT / "conftest.py"))


def test_files_go_out_longest_first_and_keep_their_own_order(conftest):
    seconds = json.loads(conftest.TEST_SECONDS.read_text(encoding="utf-8"))
    longest, shortest = max(seconds, key=seconds.get), min(seconds, key=seconds.get)
    names = [
        f"{shortest}::a",
        "tests/not_measured_yet.py::x",
        f"{longest}::Cell 0",
        f"{longest}::Cell 1",
    ]
    items = [SimpleNamespace(nodeid=n) for n in names]
    conftest.pytest_collection_modifyitems(None, None, items)
    assert [i.nodeid for i in items] == [names[2], names[3], names[1], names[0]]
    assert seconds[shortest] < conftest.NEW_FILE_SECONDS < seconds[longest]


def test_the_measurements_name_files_that_exist():
    seconds = json.loads((ROOT / "tests" / "data" / "test_seconds.json").read_text())
    missing = [path for path in seconds if not (ROOT / path).exists()]
    # A file renamed or removed since: refresh with `python -m benchmarks.bench_tests --save`.
    assert len(missing) <= len(seconds) // 10, missing
