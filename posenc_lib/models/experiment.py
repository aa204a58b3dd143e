"""Chapter 7's experiment: train every position method at length L, test at L, 2L, 4L and 8L.

    python -m posenc_lib.models.experiment                 # make experiment: writes ./experiment-<date-time>/
    python -m posenc_lib.models.experiment --out DIR       # the same, into DIR (a new or empty folder)
    python -m posenc_lib.models.experiment --quick         # a smoke run: few steps, one seed, nothing saved
    python -m posenc_lib.models.experiment --seeds 0 --jobs 1 --variants rope alibi

Every variant (``VARIANTS``) is trained from three seeds (``SEEDS``); a seed sets the initial
weights and the order of the training texts. For each seed the experiment also
- tries each RoPE scaling at inference on the plain RoPE model (no training),
- fine-tunes plain RoPE at 4L for a few steps with Position Interpolation, with YaRN, and with no
  scaling at all (the control: what the fine-tuning alone buys),
- evaluates RoPE and ALiBi with a sliding window of W = L (each query sees the last L tokens; no
  retraining),
- stretches each learned table to the evaluated length by linear interpolation, and fine-tunes it
  stretched to 4L with the same steps as the RoPE scalings.

It writes ``results.json`` (every perplexity of every seed, and per row the mean, min and max over
seeds) and the checkpoints of seed 0 (float16, about 0.5 MB each). It never overwrites the
committed results in ``posenc_lib/data/extrapolation/`` unless asked with --replace-committed;
it prints its table beside the committed one. On 2 cores (--jobs 2) it takes about 20 minutes.

Perplexity at length T: the validation text cut into windows of T + 1 tokens, the model predicting
tokens 1..T of each window from the ones before them, averaged over every predicted token (the
ALiBi paper's nonoverlapping inference; Press et al. 2022, arXiv:2108.12409, section 2.1, and
Appendix B.1, which compares it with sliding-window evaluation).
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from posenc_lib.models import corpus
from posenc_lib.models.results import DATA, load_results, summarized
from posenc_lib.models.tinylm import LMConfig, TinyLM

L = 64  # the training length
MULTIPLES = (1, 2, 4, 8)
SEEDS = (0, 1, 2)
# Each variant's LMConfig settings. "sinusoidal" and "learned" are the unscaled controls (token
# embeddings at N(0, 0.02^2), not multiplied by sqrt(D)); the "-scaled" rows are Vaswani's form.
VARIANTS = {
    "none": {"position": "none"},
    "sinusoidal": {"position": "sinusoidal"},
    "sinusoidal-scaled": {"position": "sinusoidal", "embed_scale": True},
    "learned": {"position": "learned"},
    "learned-scaled": {"position": "learned", "embed_scale": True},
    # T5's buckets as its paper uses them: 32 causal buckets (16 exact, 16 logarithmic), with
    # max_distance below the training length (T5: 128 at 512 tokens; here 32 at L = 64), so every
    # bucket, the last included, is met in training and the last one covers all longer distances.
    "t5": {"position": "t5", "t5_max_distance": L // 2},
    # The same buckets with max_distance = 2L: distances of 67 and more fall in buckets 27-31,
    # which no training text of L tokens reaches. They keep their initial 0.0 and meet the model
    # only past L: what this row measures is untrained parameters, not relative bias.
    "t5-far-buckets-untrained": {"position": "t5", "t5_max_distance": 2 * L},
    "alibi": {"position": "alibi"},
    "rope": {"position": "rope"},
    # Ruoss et al. 2023 draw positions from a range longer than any test length; ours is 8L, the
    # longest length evaluated, so at 8L the positions are 0..8L-1 exactly.
    "rope-randomized": {"position": "rope", "random_positions": 8 * L},
}
WINDOWED = ("rope", "alibi")  # evaluated with a sliding window of W = L as well
SETTINGS = {
    "steps": 1000,
    "batch": 32,
    "lr": 3e-3,
    "warmup": 50,
    "train_chars": 2_000_000,
    "eval_tokens": 32_768,
    "finetune_steps": 200,
    "finetune_lr": 1e-3,
    "finetune_batch": 8,
    "factors": [2, 4, 8],
    "window": L,
}
QUICK = SETTINGS | {
    "steps": 30,
    "finetune_steps": 10,
    "train_chars": 100_000,
    "eval_tokens": 4096,
    "factors": [4],
}
# The scalings tried at inference on the plain RoPE model: rope_type -> a scaling dict for a factor.
SCALINGS = {
    "linear": lambda s: {"rope_type": "linear", "factor": float(s)},
    "ntk": lambda s: {"rope_type": "ntk", "factor": float(s)},
    "yarn": lambda s: {
        "rope_type": "yarn",
        "factor": float(s),
        "original_max_position_embeddings": L,
    },
}
DYNAMIC = {"rope_type": "dynamic", "factor": 1.0, "original_max_position_embeddings": L}
FINETUNE_FACTOR = 4  # fine-tunes run at 4L, with factor 4 where a scaling is used


def batches(tokens: torch.Tensor, length: int, batch: int, generator: torch.Generator):
    """Endless random windows of length + 1 tokens: (inputs (B, T), targets (B, T))."""
    while True:
        starts = torch.randint(0, len(tokens) - length - 1, (batch,), generator=generator)
        windows = torch.stack([tokens[s : s + length + 1] for s in starts.tolist()])  # (B, T+1)
        yield windows[:, :-1], windows[:, 1:]


def train(model, tokens, length, steps, batch, lr, warmup, seed, progress=None):
    """AdamW with a linear warm-up and a cosine decay; returns the last 50 steps' mean loss.

    ``progress(done, total)``, if given, is called after each step.
    """
    generator = torch.Generator().manual_seed(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer,
        lambda step: (
            min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * min(step, steps) / steps))
        ),
    )
    model.train()
    losses = []
    for step, (inputs, targets) in zip(
        range(steps), batches(tokens, length, batch, generator), strict=False
    ):
        logits = model(inputs)  # (B, T, vocab)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()
        losses.append(loss.item())
        if progress:
            progress(step + 1, steps)
    model.eval()
    return sum(losses[-50:]) / len(losses[-50:])


@torch.no_grad()
def position_losses(model, tokens, length, eval_tokens=SETTINGS["eval_tokens"], chunk=64):
    """The mean loss at each position 0..T-1 of the windows: (T,). Raises where the model cannot.

    A model with randomized positions draws them from a generator restarted at ``length``, so the
    same call gives the same number every time.
    """
    n_windows = max(1, eval_tokens // (length + 1))
    windows = tokens[: n_windows * (length + 1)].view(n_windows, length + 1)  # (N, T+1)
    if isinstance(model, TinyLM):
        model.reseed_positions(length)
    total = torch.zeros(length, dtype=torch.float64)
    for start in range(0, n_windows, chunk):
        part = windows[start : start + chunk]
        logits = model(part[:, :-1])  # (b, T, vocab)
        loss = F.cross_entropy(logits.transpose(1, 2), part[:, 1:], reduction="none")  # (b, T)
        total += loss.sum(0).double()
    return total / n_windows


def perplexity(model, tokens, length, eval_tokens=SETTINGS["eval_tokens"]) -> float:
    """exp(mean loss over every predicted token) on windows of ``length``."""
    return math.exp(float(position_losses(model, tokens, length, eval_tokens).mean()))


def evaluate(model, tokens, lengths, eval_tokens) -> dict:
    """{T: perplexity} for each length, or {T: None} with the reason under "errors"."""
    out, errors = {}, {}
    for length in lengths:
        try:
            out[str(length)] = round(perplexity(model, tokens, length, eval_tokens), 4)
        except ValueError as error:  # a learned table has no row past L: a finding, not a crash
            out[str(length)], errors[str(length)] = None, str(error).split(". ")[0] + "."
    return {"ppl": out, "errors": errors} if errors else {"ppl": out}


def _bar(job: str, steps: int, progress: bool | None):
    """A tqdm bar for one training job, on stderr (the widget inside Jupyter): ``progress`` True
    always, False never, None only on a terminal or in Jupyter (a pipe or a log gets none)."""
    return tqdm(
        total=steps,
        desc=f"{job:<30}",
        unit="step",
        file=sys.stderr,
        disable=None if progress is None else not progress,
    )


def _advance(bar):
    """``train``'s progress callback, moving ``bar`` to ``done`` of ``total`` steps."""
    return lambda done, total: bar.update(done - bar.n)


_TOKENS: dict = {}


def _tokens(settings: dict):
    """(train, validation) tokens for these settings, made once per process."""
    key = (settings["train_chars"], settings["eval_tokens"])
    if key not in _TOKENS:
        _TOKENS[key] = (
            corpus.split("train", settings["train_chars"]),
            corpus.split("validation", settings["eval_tokens"] * 2),
        )
    return _TOKENS[key]


def _fine_tune(model, label, s, seed, progress):
    """``model`` trained further at 4L for the fine-tune steps; returns (train loss, seconds)."""
    started = time.perf_counter()
    train_tokens, _ = _tokens(s)
    with _bar(label, s["finetune_steps"], progress) as bar:
        loss = train(
            model,
            train_tokens,
            FINETUNE_FACTOR * L,
            s["finetune_steps"],
            s["finetune_batch"],
            s["finetune_lr"],
            10,
            2 * seed + 1,  # seed 0 fine-tunes on the texts the first committed run used
            _advance(bar),
        )
    return round(loss, 4), round(time.perf_counter() - started, 1)


def initial_model(config: LMConfig, seed: int) -> TinyLM:
    """The model a training job starts from: torch seeded with ``seed``, then the model built.
    (tests/models/test_extrapolation_trained_parameters.py rebuilds a checkpoint's start here.)"""
    torch.manual_seed(seed)
    return TinyLM(config)


def run_job(variant: str, seed: int, s: dict, out: Path | None = None, progress=None) -> dict:
    """Train one variant from one seed and run every evaluation that uses it.

    Returns this job's part of the seed's results: {"methods": {variant: entry}, "seconds":
    {variant: s}} plus, for the variants they use, "scaled", "finetuned", "window",
    "interpolated" and "interpolated_finetuned". Saves checkpoints into ``out`` if it is given.
    """
    torch.set_num_threads(1)  # a model this small gains little from a second thread
    started = time.perf_counter()
    train_tokens, val_tokens = _tokens(s)
    lengths = [m * L for m in MULTIPLES]
    model = initial_model(LMConfig(max_len=L, **VARIANTS[variant]), seed)
    model.reseed_positions(seed)
    with _bar(f"seed {seed}: train {variant}", s["steps"], progress) as bar:
        loss = train(
            model, train_tokens, L, s["steps"], s["batch"], s["lr"], s["warmup"], 2 * seed,
            _advance(bar),
        )  # fmt: skip
    trained = time.perf_counter() - started
    entry = evaluate(model, val_tokens, lengths, s["eval_tokens"])
    entry |= {
        "train_loss": round(loss, 4),
        "position_parameters": model.position_parameters(),
        "parameters": sum(p.numel() for p in model.parameters()),
        "train_seconds": round(trained, 1),
    }
    part = {"methods": {variant: entry}}
    if out is not None:
        model.save(out / f"{variant}.pt")
    if variant in WINDOWED:
        model.set_window(s["window"])
        part["window"] = {variant: evaluate(model, val_tokens, lengths, s["eval_tokens"])["ppl"]}
        model.set_window(None)
    if variant == "rope":
        part["scaled"] = _scaled(model, val_tokens, lengths, s)
        part["finetuned"] = {}
        for name in ("linear", "yarn", "default"):
            tuned = copy.deepcopy(model)
            tuned.set_rope_scaling(SCALINGS[name](FINETUNE_FACTOR) if name in SCALINGS else None)
            loss, seconds = _fine_tune(
                tuned, f"seed {seed}: fine-tune rope {name}", s, seed, progress
            )
            result = evaluate(tuned, val_tokens, lengths, s["eval_tokens"])
            part["finetuned"][name] = result | {"train_loss": loss, "seconds": seconds}
            if out is not None:
                tuned.save(out / f"rope-{name}-finetuned.pt")
    if model.learned is not None:
        model.set_table_stretch(True)
        part["interpolated"] = {
            variant: evaluate(model, val_tokens, lengths, s["eval_tokens"])["ppl"]
        }
        tuned = copy.deepcopy(model)
        tuned.resize_learned_table(FINETUNE_FACTOR * L)
        loss, seconds = _fine_tune(tuned, f"seed {seed}: fine-tune {variant}", s, seed, progress)
        result = evaluate(tuned, val_tokens, lengths, s["eval_tokens"])
        part["interpolated_finetuned"] = {
            variant: result | {"train_loss": loss, "seconds": seconds}
        }
    part["seconds"] = {variant: round(time.perf_counter() - started, 1)}
    return part


def _scaled(model, val_tokens, lengths, s) -> dict:
    """Perplexity of the plain RoPE model with each scaling at inference, no training."""
    scaled = {}
    for name, make in SCALINGS.items():
        scaled[name] = {}
        for factor in s["factors"]:
            model.set_rope_scaling(make(factor))
            scaled[name][str(factor)] = evaluate(model, val_tokens, lengths, s["eval_tokens"])[
                "ppl"
            ]
    model.set_rope_scaling(DYNAMIC)
    scaled["dynamic"] = {"1": evaluate(model, val_tokens, lengths, s["eval_tokens"])["ppl"]}
    model.set_rope_scaling(None)
    return scaled


def _merge(into: dict, part: dict) -> None:
    for key, value in part.items():
        into.setdefault(key, {}).update(value)


def _checked_out(out: Path | None, replace_committed: bool) -> Path | None:
    """The folder to write into, refusing the committed results unless asked."""
    if out is None:
        return None
    out = Path(out)
    if out.resolve() == DATA.resolve() and not replace_committed:
        raise ValueError(
            f"{out} holds the committed results the chapter reads; write a new run elsewhere "
            "(--out DIR), or pass --replace-committed if you mean to replace them."
        )
    out.mkdir(parents=True, exist_ok=True)
    return out


def run(
    out: Path | None = None,
    settings: dict = SETTINGS,
    seeds=SEEDS,
    variants=tuple(VARIANTS),
    jobs: int = 1,
    progress: bool | None = None,
    save_seeds=(0,),
    replace_committed: bool = False,
    log=None,
) -> dict:
    """Train and evaluate every (variant, seed); write results.json and seed 0's checkpoints into
    ``out`` (nothing is written if ``out`` is None). Returns the results.

    ``jobs``: processes working at once, each on one thread (for a model this small a second
    thread gains little on an idle machine and loses five-fold on a busy one: 59 ms per step
    against 316 ms). ``progress``: tqdm bars for jobs run in this process (None: on a terminal and
    in Jupyter only). ``log(line)``: told of each finished job and its time.
    """
    out = _checked_out(out, replace_committed)
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise ValueError(f"unknown variants {unknown}; choose from {list(VARIANTS)}.")
    if not seeds:
        raise ValueError("give at least one seed.")
    s = SETTINGS | dict(settings)  # a setting not given keeps its default
    started = time.perf_counter()
    work = [(v, seed) for seed in seeds for v in variants]
    work.sort(key=lambda job: job[0] != "rope")  # the longest job first
    runs = {str(seed): {} for seed in seeds}
    log = log or (lambda line: None)

    def finished(job, part):
        _merge(runs[str(job[1])], part)
        log(f"seed {job[1]}  {job[0]:<18} {part['seconds'][job[0]]:6.0f} s")

    def saves(seed):
        return out if out is not None and seed in save_seeds else None

    if jobs <= 1:
        for job in work:
            finished(job, run_job(*job, s, saves(job[1]), progress))
    else:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn")) as pool:
            futures = {pool.submit(run_job, *job, s, saves(job[1]), False): job for job in work}
            for future, job in futures.items():
                finished(job, future.result())
    for seed_run in runs.values():  # a fixed order of variants, whatever order the jobs ended in
        for section in seed_run.values():
            order = {name: i for i, name in enumerate(VARIANTS)}
            items = sorted(section.items(), key=lambda kv: order.get(kv[0], len(order)))
            section.clear()
            section.update(items)
    raw = {  # every seed's numbers; the summaries over seeds are derived (results.summarized)
        "L": L,
        "lengths": [m * L for m in MULTIPLES],
        "settings": s,
        "seeds": [int(seed) for seed in runs],
        "runs": runs,
        "seconds": {
            "total": round(time.perf_counter() - started, 1),
            "jobs": jobs,
            "per_model": {
                seed: {v: r["methods"][v]["train_seconds"] for v in r["methods"]}
                for seed, r in runs.items()
            },
        },
    }
    if out is not None:
        (out / "results.json").write_text(json.dumps(raw, indent=1) + "\n", encoding="utf-8")
    return summarized(raw)


def table(results: dict, rows=None) -> str:
    """The rows as text: at each length the mean perplexity over seeds and, in brackets, the
    lowest and highest seed."""
    lengths = results["lengths"]
    names = list(results["rows"]) if rows is None else list(rows)
    if not names:
        raise ValueError("no rows to show; name at least one of the results' rows.")
    cells = {}
    for name in names:
        row = results["rows"][name]
        cells[name] = [
            "-" if row["ppl"][t] is None
            else f"{row['ppl'][t]:.2f} [{row['min'][t]:.2f}, {row['max'][t]:.2f}]"
            for t in map(str, lengths)
        ]  # fmt: skip
    width = max(len(c) for line in cells.values() for c in line) + 2
    header = f"mean of {len(results['seeds'])} seeds [min, max]"
    label = max(len(name) for name in [*names, header]) + 2
    lines = [f"{header:<{label}}" + "".join(f"{'T=' + str(t):>{width}}" for t in lengths)]
    lines += [f"{name:<{label}}" + "".join(c.rjust(width) for c in cells[name]) for name in names]
    return "\n".join(lines)


def load_model(name: str, folder: Path = DATA) -> TinyLM:
    """A committed checkpoint by name: a method from POSITIONS, or rope-linear-finetuned etc."""
    path = folder / f"{name}.pt"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.pt"))
        raise ValueError(f"no checkpoint {name!r} in {folder}; there are {known}.")
    return TinyLM.load(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib.models.experiment",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(f"experiment-{stamp}"),
        help="folder for results.json and seed 0's checkpoints (default ./experiment-<date-time>, "
        "a new folder)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="a smoke run: 30 steps, seed 0, nothing saved"
    )
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=list(SEEDS), help="training seeds (default 0 1 2)"
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        default=list(VARIANTS),
        choices=list(VARIANTS),
        metavar="VARIANT",
        help=f"which models to train (default all: {' '.join(VARIANTS)})",
    )
    parser.add_argument(
        "--jobs", type=int, default=2, help="processes at once, one thread each (default 2)"
    )
    parser.add_argument(
        "--replace-committed",
        action="store_true",
        help="allow --out to be the committed folder posenc_lib/data/extrapolation (maintainers)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error("--jobs must be at least 1.")
    settings, seeds, out = dict(SETTINGS), args.seeds, args.out
    if args.quick:
        settings, seeds, out = dict(QUICK), [0], None
    jobs = len(seeds) * len(args.variants)
    print(
        f"{jobs} training jobs ({len(args.variants)} variants x {len(seeds)} seeds) on {args.jobs} "
        f"processes: about {math.ceil(jobs * 75 / 60 / args.jobs)} minutes on an idle machine. "
        + (f"Writing {out}/." if out else "Writing nothing (--quick)."),
        flush=True,
    )
    try:
        results = run(
            out, settings, seeds, args.variants, args.jobs,
            replace_committed=args.replace_committed, log=lambda line: print(line, flush=True),
        )  # fmt: skip
    except ValueError as error:
        parser.error(str(error))
    print(f"done in {results['seconds']['total'] / 60:.1f} minutes\n")
    print(f"this run ({out or 'not saved'}):\n{table(results)}")
    committed = load_results() if (DATA / "results.json").exists() else {}
    shared = [name for name in results["rows"] if name in committed.get("rows", {})]
    if shared and not args.quick:
        print(f"\ncommitted ({DATA}):\n{table(committed, shared)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
