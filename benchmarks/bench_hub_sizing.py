"""How big a machine does a class need on a JupyterHub? Memory and CPU per learner, and cell latency
as learners are added, printed as Markdown tables a teacher can copy.

1. One learner, per chapter (the start page 00, then 1..8): the lecture, then the chapter's
   exercises, each top to bottom in a fresh kernel, as "Run all" does. The exercises notebook as
   a learner leaves it has every answer blank, and its cells stop at the first question; what a
   hub must carry is the learner who has answered them all, so the run uses the **solutions**
   notebook (the same cells with the answers filled in, every check run). For each kernel: wall
   seconds, CPU seconds (user + system, of the kernel and the processes it waited for, from
   ``resource.getrusage`` in a last cell the benchmark appends) and peak memory (the kernel's own
   peak resident set, ``ru_maxrss``, or the kernel and its children's summed RSS sampled every
   50 ms, whichever is larger).
2. Concurrency: N simulated learners (N = 1, 2, 4, 8), each a separate kernel started at the same
   moment, run chapter 1's lecture; then again with chapter 8's: the median and worst wall time
   of a cell (over every cell of every learner), the wall time until the last learner is done, and
   the kernels' peak total memory (the sum of their RSS, sampled every 50 ms, which counts the
   libraries' shared pages once per kernel, an upper bound; and the sum of their PSS, sampled about
   once a second, which shares those pages out, a truer total).

Each learner is its own process driving its own kernel with nbclient (on a hub, each learner's
Jupyter server does the same); the kernels are the course's ``python3`` kernel in this
environment, started from the notebook's folder. Every kernel runs with ``OMP_NUM_THREADS=1``: a
kernel that spreads a matrix product over every core slows its neighbours down more than it gains,
so a hub should set the same in its spawner's environment. Chapter 8's model is converted once,
before anything is timed, into ``POSENC_CACHE`` (this variable if set, else the course's default
cache), and every kernel reads that one copy, as a hub's shared cache does.

N learners whose projected memory (N x one learner's memory, plus a fifth; one learner's memory
is the lone learner's peak, then the PSS per learner of the last run of several) does not fit in
the memory free at the time, less a tenth of the machine's memory kept for other work, are
skipped, with the reason printed: other work on a shared machine comes first. The machine line gives
cores, memory, CPU model and the load average at the start; the load average is printed again at
the end (wall times and latencies grow with other work on the machine; CPU seconds and memory
hardly do). The closing rule ("per 30 learners: X cores, Y GB") is **derived** from the measured
figures, with its reasoning printed.

    python -m benchmarks.bench_hub_sizing               (everything; about 18 minutes on 2 cores)
    python -m benchmarks.bench_hub_sizing --quick       (chapter 1 only, N = 1 and 2: a smoke test)
    python -m benchmarks.bench_hub_sizing --chapters 01 08 --max-n 4

Ctrl-C stops every learner and kernel it started, then prints the tables of what it measured.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = ["00", "01", "02", "03", "04", "05", "06", "07", "08"]
LEARNER_COUNTS = [1, 2, 4, 8]
CONCURRENT_CHAPTERS = ["01", "08"]
CLASS_SIZE = 30
SAMPLE_SECONDS = 0.05  # RSS of every kernel
PSS_EVERY = 20  # samples: PSS (reads /proc/PID/smaps_rollup, a few ms) about once a second
FIND_KERNELS_EVERY = 20  # samples: look for new kernels and their children about once a second
MEMORY_MARGIN = 1.2  # a learner's peak times this, for N learners to be started at all
RESERVE_SHARE = 0.1  # of the machine's memory left free for other work while N learners run
CELL_TIMEOUT = 900  # seconds: chapter 8 with 8 learners on 2 cores is slow, not stuck
# The rule's assumptions, printed with it.
SESSION_SECONDS = 3600  # a chapter's lecture and exercises, run once each in an hour's class
BUSY_SHARE = 0.5  # cores kept at most half busy on average, so a burst still finds a free one
LATENCY_FACTOR = 2.0  # acceptable: a Run all at most twice as long as for a learner alone
BURST_SHARE = 1 / 3  # of the class running cells at the same moment (the teacher says "go")

# Runs in each learner's process: one notebook in a fresh kernel, then prints one line of JSON.
LEARNER = r"""
import json, os, sys, threading, time
import nbformat
from nbclient import NotebookClient

path, allow_errors = sys.argv[1], sys.argv[2] == "1"
parent = os.getppid()

def watch_parent():  # the benchmark was killed outright: stop (the kernel notices and stops too)
    while True:
        time.sleep(1)
        if os.getppid() != parent:
            os._exit(1)

threading.Thread(target=watch_parent, daemon=True).start()
notebook = nbformat.read(path, as_version=4)
cells = len(notebook.cells)
notebook.cells.append(nbformat.v4.new_code_cell(
    "import json as _j, resource as _r\n"
    "_s, _c = _r.getrusage(_r.RUSAGE_SELF), _r.getrusage(_r.RUSAGE_CHILDREN)\n"
    "print('POSENC_PROBE', _j.dumps({'maxrss_kb': max(_s.ru_maxrss, _c.ru_maxrss), "
    "'cpu': _s.ru_utime + _s.ru_stime + _c.ru_utime + _c.ru_stime}))"))
starts, latencies = {}, []

def on_execute(cell, cell_index, **_):
    starts[cell_index] = time.perf_counter()

def on_executed(cell, cell_index, **_):
    if cell_index < cells:
        latencies.append(time.perf_counter() - starts[cell_index])

client = NotebookClient(
    notebook, timeout=int(os.environ["POSENC_BENCH_TIMEOUT"]), kernel_name="python3",
    allow_errors=allow_errors, record_timing=False, store_widget_state=False,
    resources={"metadata": {"path": os.path.dirname(os.path.abspath(path))}},
    on_cell_execute=on_execute, on_cell_executed=on_executed)
started = time.perf_counter()
client.execute()
wall = time.perf_counter() - started
text = "".join(o.get("text", "") for o in notebook.cells[-1].outputs if o.get("name") == "stdout")
probe = json.loads(text.split("POSENC_PROBE", 1)[1])
print(json.dumps({"wall": wall, "latencies": latencies, "cpu": probe["cpu"],
                  "kernel_peak_gb": probe["maxrss_kb"] / 1e6}))
"""


@dataclass
class Run:
    """N learners running one notebook at once: each learner's result, and the kernels' memory."""

    notebook: str
    learners: list[dict]
    wall: float
    peak_rss_gb: float  # the largest sum of every kernel's (and its children's) RSS
    peak_pss_gb: float  # the same with PSS: shared library pages counted once in all
    tree_peaks_gb: list[float] = field(default_factory=list)  # per learner: its kernel tree's peak

    @property
    def latencies(self) -> list[float]:
        return [s for learner in self.learners for s in learner["latencies"]]

    @property
    def peak_gb(self) -> float:
        """One learner's peak (N = 1): its kernel's own ru_maxrss or the sampled tree, the larger."""
        return max([self.learners[0]["kernel_peak_gb"], *self.tree_peaks_gb[:1]])

    @property
    def cpu(self) -> float:
        return sum(learner["cpu"] for learner in self.learners)


class Learners:
    """Learner processes started at once, their kernels' memory sampled until all are done.

    Each learner runs in its own session, so a Ctrl-C in the terminal reaches this process only;
    ``stop()`` then ends every kernel (kernels run in sessions of their own) and every learner.
    """

    def __init__(self, paths: list[Path], allow_errors: bool, env: dict[str, str]):
        self.paths, self.allow_errors, self.env = paths, allow_errors, env
        self.processes: list[subprocess.Popen] = []
        self.rss_peak = self.pss_peak = 0.0
        self.tree_peaks = [0.0] * len(paths)
        self._done = threading.Event()

    def run(self) -> Run:
        started = time.perf_counter()
        for path in self.paths:
            flag = "1" if self.allow_errors else "0"
            self.processes.append(
                subprocess.Popen(
                    [sys.executable, "-c", LEARNER, str(path), flag],
                    env=self.env,
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                    start_new_session=True,
                )
            )
        sampler = threading.Thread(target=self._sample, daemon=True)
        sampler.start()
        outputs = [process.communicate() for process in self.processes]
        wall = time.perf_counter() - started
        self._done.set()
        sampler.join()
        results = []
        for path, process, (out, err) in zip(self.paths, self.processes, outputs, strict=True):
            if process.returncode != 0:
                raise SystemExit(f"{path.relative_to(ROOT)} failed in a learner:\n{err[-3000:]}")
            results.append(json.loads(out.strip().splitlines()[-1]))
        return Run(
            self.paths[0].relative_to(ROOT).as_posix(),
            results,
            wall,
            self.rss_peak / 1e9,
            self.pss_peak / 1e9,
            [peak / 1e9 for peak in self.tree_peaks],
        )

    def _trees(self) -> list[list[psutil.Process]]:
        """Per learner: its kernel and the kernel's children (not the learner, which stands in
        for a learner's Jupyter server and browser)."""
        trees = []
        for process in self.processes:
            try:
                kernels = psutil.Process(process.pid).children()
                trees.append([p for k in kernels for p in [k, *k.children(recursive=True)]])
            except psutil.Error:
                trees.append([])
        return trees

    def _sample(self) -> None:
        trees, tick = [], 0
        while not self._done.is_set():
            if tick % FIND_KERNELS_EVERY == 0:
                trees = self._trees()
            rss_total = pss_total = 0
            for i, tree in enumerate(trees):
                tree_rss = 0
                for process in tree:
                    try:
                        tree_rss += process.memory_info().rss
                        if tick % PSS_EVERY == 0:
                            pss_total += process.memory_full_info().pss
                    except psutil.Error:
                        pass
                self.tree_peaks[i] = max(self.tree_peaks[i], tree_rss)
                rss_total += tree_rss
            self.rss_peak = max(self.rss_peak, rss_total)
            self.pss_peak = max(self.pss_peak, pss_total)
            tick += 1
            self._done.wait(SAMPLE_SECONDS)

    def stop(self) -> None:
        """End every kernel and learner this started (SIGTERM, then SIGKILL after 3 s)."""
        everyone = []
        for process in self.processes:
            try:
                learner = psutil.Process(process.pid)
                everyone += [*learner.children(recursive=True), learner]
            except psutil.Error:
                pass
        for process in everyone:
            try:
                process.terminate()
            except psutil.Error:
                pass
        _, alive = psutil.wait_procs(everyone, timeout=3)
        for process in alive:
            try:
                process.kill()
            except psutil.Error:
                pass


def run_learners(paths: list[Path], env: dict[str, str], allow_errors: bool = False) -> Run:
    learners = Learners(paths, allow_errors, env)
    try:
        return learners.run()
    finally:
        learners.stop()  # nothing left behind, on success, failure or Ctrl-C


def notebook_of(folder: str, chapter: str) -> Path | None:
    found = sorted((ROOT / folder).glob(f"{chapter}_*.ipynb"))
    return found[0] if found else None


def format_table(headers: list[str], rows: list[list]) -> str:
    """A Markdown table; numbers right-aligned, floats with the digits a plan needs.

    A float below 10 gets two decimals, below 100 one, else none; an int and a str stay as they
    are; None is shown as "-". A column whose cells are all numbers (or None) is right-aligned.
    """

    def cell(value) -> str:
        if value is None:
            return "-"
        if isinstance(value, float):
            digits = 2 if abs(value) < 10 else 1 if abs(value) < 100 else 0
            return f"{value:.{digits}f}"
        return str(value)

    def numeric(column: int) -> bool:
        values = [row[column] for row in rows if row[column] is not None]
        return bool(values) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values
        )

    lines = [
        "| " + " | ".join(headers) + " |",
        "|" + "|".join("---:" if numeric(i) else "---" for i in range(len(headers))) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine_line() -> str:
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    gigabytes = psutil.virtual_memory().total / 1e9
    return (
        f"Machine: {os.cpu_count()} cores, {gigabytes:.0f} GB, {model}; "
        f"load average at the start {load} (1, 5, 15 min)"
    )


def convert_model(env: dict[str, str]) -> str:
    """Chapter 8's model converted once into the shared cache (if not already); returns the folder."""
    code = "from posenc_lib.models.smollm import convert; print(convert())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=False
    )
    if out.returncode != 0:
        raise SystemExit(f"Converting chapter 8's model failed:\n{out.stderr[-3000:]}")
    return out.stdout.strip().splitlines()[-1]


def learner_env() -> dict[str, str]:
    from posenc_lib.models.smollm import cache_dir  # imports torch: only the parent pays it

    return {
        **os.environ,
        "OMP_NUM_THREADS": "1",  # see the module's docstring: a hub should set the same
        "POSENC_CACHE": os.environ.get("POSENC_CACHE") or str(cache_dir().parent),
        "HF_HUB_OFFLINE": "1",
        "POSENC_BENCH_TIMEOUT": str(CELL_TIMEOUT),
    }


def one_learner(
    chapters: list[str], env: dict[str, str], rows: list[list], lectures: dict[str, Run]
) -> None:
    """Part 1: per chapter, the lecture and then the solutions notebook, each in a fresh kernel;
    appends a row per chapter to ``rows`` (so an interrupted run still prints what it measured)."""
    for chapter in chapters:
        lecture = notebook_of("notebooks", chapter)
        if lecture is None:
            continue
        first = run_learners([lecture], env)
        lectures[chapter] = first
        solutions = notebook_of("solutions", chapter)
        second = run_learners([solutions], env) if solutions else None
        learner_cpu = first.cpu + (second.cpu if second else 0.0)
        # Both kernels stay alive while both tabs are open (JupyterLab keeps a closed tab's kernel).
        learner_gb = first.peak_gb + (second.peak_gb if second else 0.0)
        rows.append(
            [
                chapter,
                first.wall,
                first.cpu,
                first.peak_gb,
                second.wall if second else None,
                second.cpu if second else None,
                second.peak_gb if second else None,
                learner_cpu,
                learner_gb,
            ]
        )
        print(f"  chapter {chapter}: {learner_cpu:.0f} CPU s, {learner_gb:.2f} GB", flush=True)


def concurrency(
    chapter: str, counts: list[int], env: dict[str, str], alone: Run | None, rows: list[list]
) -> None:
    """Part 2: N learners at once on one chapter's lecture, for each N; appends to ``rows``.

    N learners are started only if N x one learner's memory x MEMORY_MARGIN fits in the memory
    free now, less RESERVE_SHARE of the machine kept for other work (the machine is shared). One
    learner's memory is a lone learner's peak until a run of several has measured their PSS (the
    libraries' and the model's shared pages counted once), then that run's PSS per learner.
    """
    lecture = notebook_of("notebooks", chapter)
    per_learner = alone.peak_gb if alone is not None else None
    for n in counts:
        if per_learner is not None:
            needed = n * per_learner * MEMORY_MARGIN
            reserve = RESERVE_SHARE * psutil.virtual_memory().total / 1e9
            free = psutil.virtual_memory().available / 1e9
            if needed > free - reserve:
                print(
                    f"  chapter {chapter}, N = {n}: skipped, it needs about {needed:.1f} GB "
                    f"({n} x {per_learner:.2f} GB x {MEMORY_MARGIN}); {free:.1f} GB is free, "
                    f"less {reserve:.1f} GB kept for other work",
                    flush=True,
                )
                rows.append(
                    [chapter, n, None, None, None, None, None, f"skipped: needs {needed:.0f} GB"]
                )
                continue
        run = run_learners([lecture] * n, env)
        if per_learner is None and n == 1:
            per_learner = run.peak_gb
        if n > 1 and run.peak_pss_gb:
            per_learner = run.peak_pss_gb / n
        latencies = run.latencies
        rows.append(
            [
                chapter,
                n,
                run.wall,
                statistics.median(latencies),
                max(latencies),
                run.peak_rss_gb,
                run.peak_pss_gb,
                "",
            ]
        )
        print(
            f"  chapter {chapter}, N = {n}: {run.wall:.0f} s, median cell "
            f"{statistics.median(latencies):.2f} s, worst {max(latencies):.1f} s, "
            f"{run.peak_rss_gb:.2f} GB",
            flush=True,
        )


def derive_rule(single: list[list], together: list[list], cores: int) -> str:
    """The teacher's rule per CLASS_SIZE learners, from the tables' rows, with its reasoning.

    Memory: the class works on the same chapter at the same time, so every learner may reach the
    worst chapter's peak at once (its lecture and exercises kernels both open), plus a fifth for
    settings a learner turns up (chapter 8's LENGTH). Cores: the larger of (a) the heaviest
    chapter's CPU seconds for the whole class spread over a session with the cores at most half
    busy, and (b) a burst: BURST_SHARE of the class running the same chapter at the same moment
    (the teacher says "now run the next part"), at the most learners per core whose "Run all"
    took at most LATENCY_FACTOR times as long as a lone learner's in the concurrency runs.
    """
    worst_gb = max(row[8] for row in single)
    worst_gb_chapter = max(single, key=lambda row: row[8])[0]
    worst_cpu = max(row[7] for row in single)
    worst_cpu_chapter = max(single, key=lambda row: row[7])[0]
    memory = math.ceil(CLASS_SIZE * worst_gb * MEMORY_MARGIN)
    average = CLASS_SIZE * worst_cpu / (SESSION_SECONDS * BUSY_SHARE)
    per_core, limiting = None, None
    for chapter in sorted({row[0] for row in together}):
        rows = [row for row in together if row[0] == chapter and row[2] is not None]
        alone = next((row[2] for row in rows if row[1] == 1), None)
        if alone is None:
            continue
        fine = [row[1] for row in rows if row[2] <= LATENCY_FACTOR * alone]
        if fine and (per_core is None or max(fine) / cores < per_core):
            per_core, limiting = max(fine) / cores, chapter
    at_once = math.ceil(CLASS_SIZE * BURST_SHARE)
    burst = at_once / per_core if per_core else None
    needed = max(average, burst or 0.0)
    lines = [
        f"**Derived rule (not measured): per {CLASS_SIZE} learners, {math.ceil(needed)} cores and "
        f"{memory} GB.**",
        "",
        f"- Memory: chapter {worst_gb_chapter} is the largest, {worst_gb:.2f} GB for one learner "
        f"with its lecture and exercises kernels both open; x {CLASS_SIZE} learners (a class works "
        f"on the same chapter at the same time) x {MEMORY_MARGIN} for settings a learner turns up "
        f"(chapter 8's LENGTH) = {memory} GB. The RSS counts shared library pages once per kernel, "
        "so this errs on the safe side; add each learner's Jupyter server (not measured here).",
        f"- Cores, on average: chapter {worst_cpu_chapter} takes the most CPU, {worst_cpu:.0f} s "
        f"per learner (lecture and exercises once); x {CLASS_SIZE} over a "
        f"{SESSION_SECONDS // 60}-minute session with the cores at most {BUSY_SHARE:.0%} busy = "
        f"{average:.1f} cores.",
    ]
    shared = [row for row in together if row[0] == worst_gb_chapter and row[5]]
    if shared:
        widest = max(shared, key=lambda row: row[1])  # the most learners measured at once
        ratio = widest[6] / widest[5]
        lines.insert(
            3,
            f"- Shared pages: with {widest[1]} learners on chapter {worst_gb_chapter}, the kernels' "
            f"summed PSS was {ratio:.0%} of their summed RSS (the libraries and chapter 8's model "
            "file are mapped once and shared), so the machine's real need is nearer "
            f"{memory * ratio:.0f} GB; the rule keeps the safe figure.",
        )
    if burst:
        lines.append(
            f"- Cores, in a burst: if {at_once} learners ({BURST_SHARE:.0%} of the class) run the "
            f"chapter at the same moment, and a Run all may take at most {LATENCY_FACTOR:g}x as "
            f"long as for a learner alone (chapter {limiting}'s concurrency rows: at most "
            f"{per_core:g} learner(s) per core stayed within it), they need {burst:.1f} cores."
        )
    lines.append(
        f"- The rule takes the larger ({needed:.1f}, rounded up). Set OMP_NUM_THREADS=1 for every "
        "kernel, share chapter 8's converted model (POSENC_CACHE), and cull idle kernels: every "
        "notebook a learner opened keeps its kernel's memory until it is shut down."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.bench_hub_sizing",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="chapter 1 only, N = 1 and 2")
    parser.add_argument("--chapters", nargs="+", metavar="NN", help="chapters for part 1 (00..08)")
    parser.add_argument("--max-n", type=int, default=8, help="most learners at once (default 8)")
    parser.add_argument(
        "--concurrent",
        nargs="+",
        metavar="NN",
        help=f"chapters for part 2 (default {' '.join(CONCURRENT_CHAPTERS)})",
    )
    args = parser.parse_args(argv)
    chapters = args.chapters or (["01"] if args.quick else CHAPTERS)
    concurrent = args.concurrent or (["01"] if args.quick else CONCURRENT_CHAPTERS)
    counts = [n for n in LEARNER_COUNTS if n <= (2 if args.quick else args.max_n)]
    unknown = sorted(set(chapters + concurrent) - set(CHAPTERS))
    if unknown:
        parser.error(f"no chapter {', '.join(unknown)}: choose from {' '.join(CHAPTERS)}")

    # SIGTERM (a CI runner stopping) ends the run as Ctrl-C does: every learner's finally runs.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    print(machine_line(), flush=True)
    env = learner_env()
    started = time.perf_counter()
    if "08" in chapters + concurrent:
        print(f"Chapter 8's model, converted once and shared: {convert_model(env)}", flush=True)
    single, lectures, together = [], {}, []
    interrupted = False
    try:
        print("Part 1: one learner, each notebook in a fresh kernel", flush=True)
        one_learner(chapters, env, single, lectures)
        print("Part 2: N learners at once", flush=True)
        for chapter in concurrent:
            concurrency(chapter, counts, env, lectures.get(chapter), together)
    except KeyboardInterrupt:
        interrupted = True  # every learner and kernel is already stopped; print what was measured
        print("\nInterrupted: the tables below hold what was measured before.", flush=True)

    print()
    print(machine_line().replace("at the start", "now"))
    print(f"({time.perf_counter() - started:.0f} s in all; OMP_NUM_THREADS=1 in every kernel)")
    print()
    print(
        "One learner per chapter: the lecture, then the exercises (run as the solutions notebook: "
        "every answer filled in), each in a fresh kernel. CPU s: the kernel's user + system time. "
        "Peak GB: the kernel's peak RSS. Learner: both notebooks (both kernels open).\n"
    )
    print(
        format_table(
            [
                "chapter",
                "lecture wall s",
                "lecture CPU s",
                "lecture peak GB",
                "exercises wall s",
                "exercises CPU s",
                "exercises peak GB",
                "learner CPU s",
                "learner GB",
            ],
            single,
        )
    )
    print()
    print(
        "N learners at once, each a kernel running the chapter's lecture top to bottom: cell wall "
        "times over every cell of every learner; wall s until the last learner is done; peak total "
        "memory of all N kernels as summed RSS (shared pages counted per kernel) and summed PSS.\n"
    )
    print(
        format_table(
            [
                "chapter",
                "N",
                "wall s",
                "median cell s",
                "worst cell s",
                "peak RSS GB",
                "peak PSS GB",
                "note",
            ],
            together,
        )
    )
    if single:
        print()
        print(derive_rule(single, together, os.cpu_count() or 1))
    return 130 if interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
