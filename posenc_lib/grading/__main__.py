"""``python -m posenc_lib.grading SUBMISSION_OR_FOLDER... --out grades.csv``: see ``cli.py``."""

import sys

from posenc_lib.grading.cli import main

if __name__ == "__main__":
    sys.exit(main())
