"""``python -m tools.hub link``: the nbgitpuller link that hands the course out on a hub.

The link is read back the way nbgitpuller reads it, and followed: nbgitpuller's own ``GitPuller``
clones the repository named in the link (here a local git repository holding the course's start
notebook) into the folder the link names, and the file the link opens must then be there.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from tools.hub import ROOT, main, nbgitpuller_link, origin_url, public_url

START = "notebooks/00_start_here.ipynb"


def _git(folder: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture
def course_repo(tmp_path) -> Path:
    """A git repository on branch main with the course's start notebook, like the course's own."""
    repo = tmp_path / "posenc-course.git"
    (repo / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / START, repo / START)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", START)
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "course")
    return repo


def _query(link: str) -> dict[str, str]:
    parts = urlsplit(link)
    query = parse_qs(parts.query, strict_parsing=True)
    assert all(len(v) == 1 for v in query.values()), query
    return {key: values[0] for key, values in query.items()}


def test_the_link_opens_the_file_after_nbgitpuller_clones_it(course_repo, tmp_path):
    from nbgitpuller.pull import GitPuller

    link = nbgitpuller_link("https://hub.example.edu/", course_repo.as_uri(), "main", START)
    assert link.startswith("https://hub.example.edu/hub/user-redirect/git-pull?")
    query = _query(link)
    assert query["repo"] == course_repo.as_uri() and query["branch"] == "main"
    # What nbgitpuller's handler does with the link, in a learner's home folder.
    home = tmp_path / "home"
    home.mkdir()
    puller = GitPuller(query["repo"], str(home / query["targetpath"]), branch=query["branch"])
    for _ in puller.pull():  # the git output, line by line
        pass
    assert query["urlpath"].startswith("lab/tree/")
    opened = home / query["urlpath"].removeprefix("lab/tree/")
    assert opened.is_file() and opened.read_bytes() == (ROOT / START).read_bytes()
    assert opened.parent.parent.name == "posenc-course"  # the repository's name, without .git


def test_a_hub_under_a_path_keeps_its_path_and_the_chapter_is_chosen():
    link = nbgitpuller_link(
        "https://uni.example.edu/jupyter", "https://git.example.edu/me/course", "week3",
        "notebooks/03_sinusoidal.ipynb",
    )  # fmt: skip
    assert link.startswith("https://uni.example.edu/jupyter/hub/user-redirect/git-pull?")
    query = _query(link)
    assert query["urlpath"] == "lab/tree/course/notebooks/03_sinusoidal.ipynb"
    assert (query["branch"], query["targetpath"]) == ("week3", "course")


def test_ssh_addresses_and_credentials_become_an_address_a_hub_can_clone():
    assert public_url("git@github.com:school/posenc-course.git") == (
        "https://github.com/school/posenc-course.git"
    )
    assert public_url("https://me:s3cret@git.example.edu/me/course.git") == (
        "https://git.example.edu/me/course.git"
    )
    assert public_url("https://git.example.edu/me/course") == "https://git.example.edu/me/course"


def test_the_command_prints_the_link_for_this_clones_origin(course_repo, tmp_path, capsys):
    _git(course_repo, "remote", "add", "origin", "git@example.edu:school/posenc-course.git")
    assert origin_url(course_repo) == "git@example.edu:school/posenc-course.git"
    assert main(["link", "--hub", "https://hub.example.edu", "--repo", course_repo.as_uri()]) == 0
    assert _query(capsys.readouterr().out.strip())["repo"] == course_repo.as_uri()
    done = subprocess.run(
        [sys.executable, "-m", "tools.hub", "link", "--hub", "https://hub.example.edu",
         "--repo", "https://git.example.edu/me/course", "--path", "notebooks/01_order_blindness.ipynb"],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _query(done.stdout.strip())["urlpath"].endswith(
        "course/notebooks/01_order_blindness.ipynb"
    )


def test_mistakes_get_a_sentence(tmp_path):
    with pytest.raises(SystemExit, match="has no git remote 'origin'"):
        _git(tmp_path, "init", "-q")
        origin_url(tmp_path)
    with pytest.raises(SystemExit, match="--hub needs the hub's address"):
        nbgitpuller_link("hub.example.edu", "https://git.example.edu/me/course")
    with pytest.raises(SystemExit, match="is not in the course folder"):
        main(["link", "--hub", "https://h.example.edu", "--repo", "https://g/x", "--path", "nope"])
