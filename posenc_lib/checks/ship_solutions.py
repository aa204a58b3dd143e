"""Write the package's copy of the worked solutions (``worked.py``) from the solutions notebooks:

    python -m posenc_lib.checks.ship_solutions solutions

Run it after changing a worked solution; tests/checks/test_solutions_shipped.py fails until then.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from posenc_lib.checks.solutions import write_shipped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib.checks.ship_solutions", description=__doc__.splitlines()[0]
    )
    parser.add_argument("folder", type=Path, help="the solutions folder, e.g. solutions")
    args = parser.parse_args(argv)
    if not sorted(args.folder.glob("[0-9][0-9]_*.ipynb")):
        # An empty or mistyped folder would write an empty worked.py and lose every solution.
        print(
            f"{args.folder} holds no solutions notebooks (NN_name.ipynb): pass the folder that "
            "does, e.g. solutions"
        )
        return 2
    print(f"wrote {write_shipped(args.folder)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
