"""The hub sizing benchmark's cheap parts: its command line, its Markdown table and its rule (the
measurements themselves are the benchmark's, run by hand: python -m benchmarks.bench_hub_sizing)."""

import math
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.bench_hub_sizing import (
    CLASS_SIZE,
    MEMORY_MARGIN,
    derive_rule,
    format_table,
    main,
)

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_the_options():
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_hub_sizing", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for option in ("--quick", "--chapters", "--max-n", "--concurrent"):
        assert option in out
    assert "OMP_NUM_THREADS=1" in out


def test_an_unknown_chapter_is_refused_before_any_work(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["--chapters", "01", "09"])
    assert stop.value.code == 2
    assert "no chapter 09" in capsys.readouterr().err


def test_markdown_table():
    table = format_table(
        ["chapter", "N", "wall s", "median s", "note"],
        [["01", 1, 31.94, 0.1234, ""], ["08", 8, None, None, "skipped"], ["08", 2, 123.4, 5.0, ""]],
    )
    lines = table.splitlines()
    assert lines[0] == "| chapter | N | wall s | median s | note |"
    assert lines[1] == "|---|---:|---:|---:|---|", "numbers right-aligned, text left"
    assert lines[2] == "| 01 | 1 | 31.9 | 0.12 |  |"
    assert lines[3] == "| 08 | 8 | - | - | skipped |"
    assert lines[4] == "| 08 | 2 | 123 | 5.00 |  |"
    assert len({line.count("|") for line in lines}) == 1


def _single(chapter, cpu, gigabytes):
    # chapter, lecture wall/CPU/GB, exercises wall/CPU/GB, learner CPU s, learner GB
    return [chapter, 1.0, cpu, gigabytes, 1.0, 0.0, 0.0, cpu, gigabytes]


def test_rule_takes_the_worst_chapter_and_the_larger_core_count():
    single = [_single("01", 10.0, 0.9), _single("08", 100.0, 2.5)]
    # Chapter 1: 2 learners as fast as 1, 4 learners 3x slower; chapter 8 never within 2x past 1.
    together = [
        ["01", 1, 30.0, 0.1, 1.0, 0.6, 0.5, ""],
        ["01", 2, 31.0, 0.1, 1.0, 1.2, 1.0, ""],
        ["01", 4, 90.0, 0.3, 3.0, 2.4, 2.0, ""],
        ["08", 1, 60.0, 0.5, 9.0, 2.5, 2.2, ""],
        ["08", 2, 130.0, 1.0, 18.0, 5.0, 4.4, ""],
        ["08", 8, None, None, None, None, None, "skipped"],
    ]
    rule = derive_rule(single, together, cores=2)
    memory = math.ceil(CLASS_SIZE * 2.5 * MEMORY_MARGIN)
    assert f"{memory} GB" in rule.splitlines()[0]
    assert "chapter 08 is the largest" in rule and "chapter 08's concurrency rows" in rule
    # chapter 8: 1 learner per 2 cores = 0.5 per core; a burst of a third of 30 -> 10 / 0.5 = 20
    assert rule.splitlines()[0].startswith(f"**Derived rule (not measured): per {CLASS_SIZE}")
    assert " 20 cores" in rule.splitlines()[0]
    # chapter 8's widest run (N = 2): PSS 4.4 of RSS 5.0 GB -> 88% of the safe figure
    assert f"nearer {memory * 4.4 / 5.0:.0f} GB" in rule and "with 2 learners on chapter 08" in rule
