"""Chapter 8's long-context table: SmolLM2-135M past its 8,192 trained positions, four ways.

    python -m posenc_lib.analysis.ch08_experiment            # about 40 minutes on 2 cores (make experiment-real)
    python -m posenc_lib.analysis.ch08_experiment --quick    # a smoke run of a few seconds, tiny lengths
    python -m posenc_lib.analysis.ch08_experiment --out DIR  # choose the folder it writes to

For each RoPE method in ``analysis.ch08_long.SCALINGS`` (no scaling, PI, dynamic NTK and YaRN,
factor 2 over the trained 8,192) it measures, on the 4-bit quantized SmolLM2-135M-Instruct:

- perplexity by position on a long English text (``data/real_model/long_text.txt``) for windows
  of 4k, 8k, 12k and 16k tokens: overall, per 512-token bin, and over the window's last quarter.
  A causal model's loss at position p does not depend on tokens after p, and PI's and YaRN's
  frequencies do not depend on the length, so one 16k forward pass gives every shorter window
  too (its first T tokens are exactly the T-window; the tests check this). Dynamic NTK's
  frequencies do depend on the whole input's length, so it gets one pass per window past 8,192;
- passkey retrieval at 1k, 4k, 8k and 12k (three depths each, 0.25, 0.5 and 0.75, one trial
  each with its own key): a 5-digit key hidden in filler, greedy continuation, success if the
  key appears;
- an induction copy test: a random block of 512, 1,024 and 2,048 tokens written twice; the
  second copy's mean loss.

It prints an estimate of the time first, then a tqdm bar. It writes ``results.json`` (every
number, the exact settings, versions and the seconds of each item) to a NEW folder,
``./experiment-real-<date-time>/`` unless ``--out`` says otherwise, after every item (so a stopped
run keeps what it finished), and never writes the committed ``posenc_lib/data/real_model/
results.json``. At the end it prints its table beside the committed one.

    python -m posenc_lib.analysis.ch08_experiment --only passkey   # only the passkey trials
    python -m posenc_lib.analysis.ch08_experiment --merge DIR      # DIR's items into the committed file

``--only`` runs one or more kinds of item (ppl, passkey, copy); ``--passkey-lengths 12288`` keeps
only those passkey prompt lengths. ``--merge DIR`` (no run) copies
the items DIR/results.json measured into the committed results.json: each measured (method,
window / length / block) entry replaces the committed one, every other committed number stays
as it was, and the settings take DIR's for the kinds it measured. It refuses a run of other
settings (factor, bin, text, model file) or an unfinished run. A full run's file can also be
copied there by hand.

The model is small (135 M parameters) and 4-bit quantized (Q4_1, dequantized to float32): its
perplexities are higher than the original's, and a bigger model may hold on longer.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.metadata
import json
import platform
import sys
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm

from posenc_lib.i18n import _

DATA = Path(__file__).resolve().parents[1] / "data" / "real_model"
COMMITTED = DATA / "results.json"

SETTINGS = {
    "factor": 2.0,
    "windows": [4096, 8192, 12288, 16384],
    "bin": 512,  # tokens per perplexity bin
    "passkey": {
        "1024": [0.25, 0.5, 0.75],
        "4096": [0.25, 0.5, 0.75],
        "8192": [0.25, 0.5, 0.75],
        "12288": [0.25, 0.5, 0.75],
    },  # length -> the depths tried (one trial each, seed = trial index)
    "copy_blocks": [512, 1024, 2048],
    "threads": 2,
}
QUICK = {
    "factor": 2.0,
    "windows": [128, 256],
    "bin": 64,
    "passkey": {"200": [0.5]},
    "copy_blocks": [32],
    "threads": 2,
}
# Seconds of one forward pass of T tokens on 2 cores (sdpa), fitted to a 4,096 pass (12 s) and a
# 16,384 pass (156 s): a linear part (the layers) and a quadratic one (attention).
COST = (7.3e-4, 5.4e-7)


def forward_seconds(tokens: int) -> float:
    """The estimated seconds of one forward pass of ``tokens`` tokens on 2 cores."""
    return COST[0] * tokens + COST[1] * tokens**2


def load_results(path: Path = COMMITTED) -> dict:
    """The committed results.json (or another run's): settings, versions, every number."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


KINDS = ("ppl", "passkey", "copy")


def plan(settings: dict, methods, kinds=KINDS) -> list[tuple]:
    """The items of a run: ("ppl", method, forward length, [windows]), ("copy", method, block) and
    ("passkey", method, length, depth, seed), the chapter's headline first (see ``_rank``), so a
    run stopped early on a busy machine still holds the numbers that matter most. ``kinds``
    keeps only those kinds of item."""
    from posenc_lib.analysis.ch08_long import TRAINED

    items = []
    windows = sorted(settings["windows"])
    for method, params in methods.items():
        if params["rope_type"] == "dynamic":  # frequencies depend on the input's length
            items += [("ppl", method, w, [w]) for w in windows[::-1] if w > TRAINED]
            inside = [w for w in windows if w <= TRAINED]
            if inside:
                items.append(("ppl", method, max(inside), inside))
        else:  # the longest window's prefixes are the shorter windows
            items.append(("ppl", method, windows[-1], windows))
    for length, depths in sorted(settings["passkey"].items(), key=lambda kv: int(kv[0])):
        for seed, depth in enumerate(depths):
            items += [("passkey", method, int(length), depth, seed) for method in methods]
    for block in settings["copy_blocks"]:
        items += [("copy", method, block) for method in methods]
    items = [i for i in items if i[0] in kinds]
    return sorted(items, key=lambda item: _rank(item, TRAINED, max(windows)))


def _rank(item: tuple, trained: int, longest: int) -> int:
    """Run order: 0 no scaling's and YaRN's perplexity, 1 dynamic NTK's longest window, 2 passkey
    past the trained length for those two, 3 short passkeys (<= 4,096) and the copy test, 4 PI's
    perplexity, 5 dynamic NTK's other windows, 6 the other passkeys inside, 7 the rest."""
    kind, method = item[0], item[1]
    headline = method in ("none", "YaRN")
    if kind == "ppl":
        if headline:
            return 0
        if method == "dynamic":
            return 1 if item[2] == longest else 5
        return 4
    if kind == "copy" or item[2] <= trained // 2:
        return 3
    if item[2] > trained:
        return 2 if headline else 7
    return 6


def item_seconds(item: tuple) -> float:
    """The estimated seconds of one item (a passkey adds 8 decoding steps)."""
    kind = item[0]
    if kind == "ppl":
        return forward_seconds(item[2])
    if kind == "copy":
        return forward_seconds(2 * item[2])
    return forward_seconds(item[2]) + 1.0


def _versions() -> dict:
    import transformers

    from posenc_lib.models.smollm import GGUF_FILE, PACKAGE

    try:
        package = importlib.metadata.version(PACKAGE)
    except importlib.metadata.PackageNotFoundError:
        package = None
    return {
        "model": "SmolLM2-135M-Instruct, 4-bit Q4_1 GGUF dequantized to float32",
        "model_file": GGUF_FILE,
        "model_package": f"{PACKAGE} {package}",
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def run(
    out: Path,
    settings: dict = SETTINGS,
    progress: bool | None = None,
    llm=None,
    kinds=KINDS,
) -> dict:
    """Run every item of ``plan``, writing ``out``/results.json after each; return the results.

    ``out`` must not be the committed folder's results file (``COMMITTED``).
    """
    from posenc_lib.analysis import ch08_long as long
    from posenc_lib.models.smollm import load_smollm

    out = Path(out)
    if (out / "results.json").resolve() == COMMITTED.resolve():
        raise ValueError(
            f"--out {out} would overwrite the committed results ({COMMITTED}); choose a new "
            "folder and copy the file there by hand if you mean to commit it."
        )
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(settings["threads"])
    llm = load_smollm() if llm is None else llm
    methods = {name: long.scaling(name, settings["factor"]) for name in long.SCALINGS}
    items = plan(settings, methods, kinds)
    text = long.LONG_TEXT.read_bytes()
    results = {
        "about": "SmolLM2-135M (4-bit, dequantized) past its 8,192 trained positions; see "
        "posenc_lib/analysis/ch08_experiment.py",
        "versions": _versions(),
        "text": {
            "file": "posenc_lib/data/real_model/long_text.txt",
            "sha256": hashlib.sha256(text).hexdigest(),
            "tokens": int(long.long_text_ids(llm).shape[1]),
        },
        "trained": long.TRAINED,
        "settings": settings,
        "kinds": list(kinds),
        "methods": methods,
        "perplexity": {m: {} for m in methods},
        "copy": {m: {} for m in methods},
        "passkey": {m: {} for m in methods},
        "estimate_seconds": round(sum(item_seconds(i) for i in items)),
        "seconds": None,
        "complete": False,
    }
    path = out / "results.json"
    started = time.perf_counter()
    with tqdm(
        total=round(results["estimate_seconds"]),
        desc="long-context table",
        unit="s",
        file=sys.stderr,
        disable=None if progress is None else not progress,
    ) as bar:
        for item in items:
            t0 = time.perf_counter()
            kind, method = item[0], item[1]
            bar.set_postfix_str(f"{kind} {method} {item[2]}")
            if kind == "ppl":
                losses = long.position_losses(llm, methods[method], item[2])  # (T-1,)
                for window in item[3]:
                    part = losses[: window - 1]  # the window's own losses (causal)
                    results["perplexity"][method][str(window)] = {
                        "overall": round(long.perplexity(part), 4),
                        "last_quarter": round(long.last_quarter_perplexity(part), 4),
                        "bins": [
                            round(float(v), 3)
                            for v in long.binned_perplexity(part, max(1, window // settings["bin"]))
                        ],
                        "forward_length": item[2],
                        "seconds": round(time.perf_counter() - t0, 1),
                    }
            elif kind == "copy":
                entry = long.copy_loss(llm, methods[method], item[2])
                entry = {k: round(v, 4) for k, v in entry.items()}
                entry["seconds"] = round(time.perf_counter() - t0, 1)
                results["copy"][method][str(item[2])] = entry
            else:
                trial = long.passkey(llm, methods[method], item[2], item[3], item[4])
                results["passkey"][method].setdefault(str(item[2]), []).append(
                    {
                        "depth": trial.depth,
                        "seed": item[4],
                        "key": trial.key,
                        "n_tokens": trial.n_tokens,
                        "answer": trial.answer,
                        "found": trial.found,
                        "seconds": round(time.perf_counter() - t0, 1),
                    }
                )
            bar.update(round(item_seconds(item)))
            results["seconds"] = round(time.perf_counter() - started, 1)
            path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    results["complete"] = True
    path.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return results


def merge(run_results: dict, committed: dict) -> dict:
    """``committed`` with the entries ``run_results`` measured put in (a new dict).

    For each kind the run measured (its "kinds", all three if absent) every (method, window),
    (method, length) or (method, block) entry of the run replaces the committed one; the others
    stay as they were. The settings take the run's windows / passkey lengths / copy blocks for
    those kinds (merged by key for passkey). Raises ValueError for a run that did not finish or
    was made with other fixed settings (factor, bin, methods, text, model file).
    """
    if not run_results.get("complete"):
        raise ValueError("the run did not finish (complete is false); run it again or to the end.")
    for key, what in (
        (("settings", "factor"), "factor"),
        (("settings", "bin"), "bin"),
        (("methods",), "methods"),
        (("text", "sha256"), "long text"),
        (("versions", "model_file"), "model file"),
        (("trained",), "trained length"),
    ):
        a, b = run_results, committed
        for k in key:
            a, b = a[k], b[k]
        if a != b:
            raise ValueError(f"the run's {what} ({a!r}) differs from the committed one ({b!r}).")
    merged = json.loads(json.dumps(committed))  # a deep copy
    kinds = run_results.get("kinds", list(KINDS))
    names = {"ppl": "perplexity", "passkey": "passkey", "copy": "copy"}
    for kind in kinds:
        for method, rows in run_results[names[kind]].items():
            merged[names[kind]].setdefault(method, {}).update(json.loads(json.dumps(rows)))
    s, r = merged["settings"], run_results["settings"]
    if "ppl" in kinds:
        s["windows"] = sorted(set(s["windows"]) | set(r["windows"]))
    if "passkey" in kinds:
        s["passkey"] = dict(
            sorted((s["passkey"] | r["passkey"]).items(), key=lambda kv: int(kv[0]))
        )
    if "copy" in kinds:
        s["copy_blocks"] = sorted(set(s["copy_blocks"]) | set(r["copy_blocks"]))
    merged["seconds"] = round(committed["seconds"] + run_results["seconds"], 1)
    merged.setdefault("merged", []).append(
        {
            "kinds": list(kinds),
            "seconds": run_results["seconds"],
            "versions": run_results["versions"],
        }
    )
    return merged


def table(results: dict) -> str:
    """The run's numbers as text: last-quarter perplexity per window, passkey hits, copy loss."""
    methods = list(results["methods"])
    windows = [str(w) for w in results["settings"]["windows"]]
    head = _("method")
    lines = [_("last-quarter perplexity by window (tokens)")]
    lines.append(f"{head:<9}" + "".join(f"{w:>9}" for w in windows))
    for m in methods:
        row = results["perplexity"].get(m, {})
        cells = "".join(
            f"{row[w]['last_quarter']:>9.1f}" if w in row else f"{'-':>9}" for w in windows
        )
        lines.append(f"{m:<9}{cells}")
    lengths = sorted(results["settings"]["passkey"], key=int)
    lines.append(_("passkey found / tried, by prompt length"))
    lines.append(f"{head:<9}" + "".join(f"{n:>9}" for n in lengths))
    for m in methods:
        row = results["passkey"].get(m, {})
        cells = "".join(
            f"{sum(t['found'] for t in row[n])}/{len(row[n])}".rjust(9) if n in row else f"{'-':>9}"
            for n in lengths
        )
        lines.append(f"{m:<9}{cells}")
    blocks = [str(b) for b in results["settings"]["copy_blocks"]]
    lines.append(_("copy test: second-copy loss (nats) by block length"))
    lines.append(f"{head:<9}" + "".join(f"{b:>9}" for b in blocks))
    for m in methods:
        row = results["copy"].get(m, {})
        cells = "".join(f"{row[b]['second']:>9.2f}" if b in row else f"{'-':>9}" for b in blocks)
        lines.append(f"{m:<9}{cells}")
    return "\n".join(lines)


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib.analysis.ch08_experiment",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(f"experiment-real-{stamp}"),
        help="folder for results.json (default ./experiment-real-<date-time>, a new folder)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: windows of 128 and 256 tokens, a few s"
    )
    parser.add_argument(
        "--lengths",
        type=int,
        nargs="+",
        help="perplexity windows in tokens (default 4096 8192 12288 16384)",
    )
    parser.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=KINDS,
        default=list(KINDS),
        help="run only these kinds of item (default: all three)",
    )
    parser.add_argument(
        "--passkey-lengths",
        type=int,
        nargs="+",
        metavar="N",
        help="passkey only at these of the default prompt lengths (default 1024 4096 8192 12288)",
    )
    parser.add_argument(
        "--merge",
        type=Path,
        metavar="DIR",
        help="no run: put DIR/results.json's measured items into the committed results.json",
    )
    args = parser.parse_args(argv)
    if args.merge is not None:
        merged = merge(load_results(args.merge / "results.json"), load_results(COMMITTED))
        COMMITTED.write_text(json.dumps(merged, indent=1) + "\n", encoding="utf-8")
        print(f"merged {args.merge / 'results.json'} into {COMMITTED}:\n{table(merged)}")
        return 0
    settings = json.loads(json.dumps(QUICK if args.quick else SETTINGS))  # a deep copy
    if args.lengths:
        if min(args.lengths) < 2:
            parser.error("--lengths must be at least 2 tokens each.")
        settings["windows"] = sorted(set(args.lengths))
    if args.passkey_lengths:
        unknown = sorted(set(map(str, args.passkey_lengths)) - set(settings["passkey"]))
        if unknown:
            parser.error(f"--passkey-lengths: no depths are set for {', '.join(unknown)}.")
        settings["passkey"] = {
            n: d for n, d in settings["passkey"].items() if int(n) in args.passkey_lengths
        }
    settings["threads"] = args.threads
    from posenc_lib.analysis.ch08_long import SCALINGS

    kinds = tuple(k for k in KINDS if k in args.only)
    estimate = (
        sum(item_seconds(i) for i in plan(settings, SCALINGS, kinds)) * 2 / max(1, args.threads)
    )
    print(
        f"Estimated time: about {_minutes(estimate)} on {args.threads} threads "
        f"(more if other programs share the cores). Writing {args.out / 'results.json'}.",
        flush=True,
    )
    results = run(args.out, settings, kinds=kinds)
    print(f"done in {_minutes(results['seconds'])}\n\nthis run ({args.out}):\n{table(results)}")
    if COMMITTED.exists():
        print(f"\ncommitted ({COMMITTED}):\n{table(load_results())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
