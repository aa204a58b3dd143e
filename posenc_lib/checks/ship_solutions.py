"""Write the package's copy of the worked solutions (``worked.py``) from the solutions notebooks:

    python -m posenc_lib.checks.ship_solutions solutions

Run it after changing a worked solution; tests/checks/test_solutions_shipped.py fails until then.
"""

from __future__ import annotations

import sys

from posenc_lib.checks.solutions import write_shipped


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m posenc_lib.checks.ship_solutions SOLUTIONS_FOLDER")
        return 2
    print(f"wrote {write_shipped(args[0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
