"""Chapter 8's real model: how long does it take to load, and to run the chapter, and how much memory?

Each measurement runs in a fresh Python process (so nothing is warm) and reports wall time and the
process's peak resident memory (``ru_maxrss`` of the child):

1. converting the GGUF file into an empty cache folder (what a learner's first load pays, once);
2. loading from the cache (every later load);
3. executing ``notebooks/08_real_model.ipynb`` top to bottom after the conversion, with
   nbclient in one kernel, as a learner's "Run all" does; then again with an empty cache.

Targets on the course's reference machine (2 cores), from issue 20: cached load <= 3 s (in a
fresh process: the figure includes importing torch and transformers, printed apart); the
chapter <= 60 s after the one-time conversion (<= 90 s with it); peak memory <= 3 GB.

    python -m benchmarks.bench_real_model
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "08_real_model.ipynb"
TARGETS = {"cached load": (3.0, 3.0), "chapter": (60.0, 3.0), "chapter, first run": (90.0, 3.0)}

# Runs in the child: does one thing, then prints its peak memory (and the kernel's, for a notebook).
CHILD = r"""
import json, resource, sys, time
started = time.perf_counter()
what = sys.argv[1]
kernel_peak = 0.0
imports = 0.0
if what == "load":
    import transformers.models.llama.modeling_llama  # noqa: F401 - the imports, timed apart
    from posenc_lib.models.smollm import load_smollm
    imports = time.perf_counter() - started
    load_smollm()
else:
    import nbformat
    from nbclient import NotebookClient
    notebook = nbformat.read(sys.argv[2], as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(
        "import resource; print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"))
    NotebookClient(notebook, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": sys.argv[3]}}).execute()
    out = notebook.cells[-1].outputs[0]["text"]
    kernel_peak = int(out.split()[1]) / 1e6
seconds = time.perf_counter() - started
own_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
print(json.dumps({"seconds": seconds, "imports": imports, "peak_gb": max(own_peak, kernel_peak)}))
"""


def _run(what: str, cache: str) -> dict:
    env = {**os.environ, "POSENC_CACHE": cache, "HF_HUB_OFFLINE": "1"}
    args = [sys.executable, "-c", CHILD, what, str(NOTEBOOK), str(NOTEBOOK.parent)]
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=False, cwd=ROOT)
    if out.returncode != 0:
        raise SystemExit(f"{what} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _line(name: str, result: dict) -> str:
    seconds, gigabytes = TARGETS.get(name, (None, None))
    target = f"  (target <= {seconds:.0f} s, <= {gigabytes:.0f} GB)" if seconds else ""
    verdict = ""
    if seconds:
        met = result["seconds"] <= seconds and result["peak_gb"] <= gigabytes
        verdict = "  met" if met else "  MISSED"
    imports = (
        f" ({result['imports']:.1f} s of it importing torch and transformers)"
        if result.get("imports")
        else ""
    )
    return (
        f"  {name:<20} {result['seconds']:6.1f} s, peak {result['peak_gb']:4.2f} GB{target}{verdict}"
        f"{imports}"
    )


def main() -> None:
    print(f"Chapter 8's model on {os.cpu_count()} cores, each step in a fresh process")
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as warm:
        started = time.perf_counter()
        print(_line("first load (convert)", _run("load", warm)))
        print(_line("cached load", _run("load", warm)))
        if NOTEBOOK.is_file():
            print(_line("chapter", _run("notebook", warm)))
            print(_line("chapter, first run", _run("notebook", empty)))
        print(f"  ({time.perf_counter() - started:.0f} s in all)")


if __name__ == "__main__":
    main()
