"""Where does `make test` spend its time? Prints the ten slowest test files of the last whole run.

`make test` records the seconds spent in each test file (tests/conftest.py writes
build/test-times.json after a run of the whole suite; summed over both workers, so the total is
about twice the wall time on 2 cores). The whole of `.ci/run` should stay under 15 minutes on 2
cores: when it grows, these are the files to look at first.

    python -m benchmarks.bench_tests [N]        (default N = 10)
    python -m benchmarks.bench_tests --save     (also write them to tests/data/test_seconds.json,
                                                 the order conftest.py hands files to workers in)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMES = ROOT / "build" / "test-times.json"
SAVED = ROOT / "tests" / "data" / "test_seconds.json"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bench_tests")
    parser.add_argument("count", nargs="?", type=int, default=10, help="how many files to list")
    parser.add_argument(
        "--save", action="store_true", help=f"write the times to {SAVED.relative_to(ROOT)}"
    )
    args = parser.parse_args(argv)
    count = args.count
    if not TIMES.exists():
        print(
            f"no {TIMES.relative_to(TIMES.parents[1])} yet: run `make test` (the whole suite) first"
        )
        return 0
    seconds = json.loads(TIMES.read_text(encoding="utf-8"))
    total = sum(seconds.values())
    print(
        f"the {count} slowest test files of the last `make test` ({len(seconds)} files, "
        f"{total / 60:.1f} worker-minutes in all):"
    )
    for path, spent in sorted(seconds.items(), key=lambda kv: -kv[1])[:count]:
        print(f"{spent:8.1f} s  {100 * spent / total:5.1f} %  {path}")
    if args.save:
        rounded = {path: round(spent, 1) for path, spent in sorted(seconds.items())}
        SAVED.write_text(json.dumps(rounded, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {SAVED.relative_to(ROOT)}: the next runs hand out the longest files first")
    return 0


if __name__ == "__main__":
    sys.exit(main())
