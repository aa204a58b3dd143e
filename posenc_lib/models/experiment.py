"""Chapter 7's experiment: train every position method at length L, test at L, 2L, 4L and 8L.

    python -m posenc_lib.models.experiment            # about 10 minutes on a laptop CPU (make experiment)
    python -m posenc_lib.models.experiment --quick    # a smoke run: few steps, results not saved

Writes to ``posenc_lib/data/extrapolation/``: one checkpoint per method (float16, ~0.5 MB each),
three RoPE checkpoints fine-tuned at 4L (Position Interpolation, YaRN, and no scaling as the
control), and ``results.json`` with
every perplexity. Chapter 7 reads those; it retrains only if its RETRAIN flag is set.

Perplexity at length T: the validation text cut into windows of T + 1 tokens, the model predicting
tokens 1..T of each window from the ones before them, averaged over every predicted token (the
ALiBi paper's nonoverlapping inference; Press et al. 2022, arXiv:2108.12409, section 2.1, and
Appendix B.1, which compares it with sliding-window evaluation).
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from posenc_lib.models import corpus
from posenc_lib.models.results import DATA
from posenc_lib.models.tinylm import POSITIONS, LMConfig, TinyLM

L = 64  # the training length
MULTIPLES = (1, 2, 4, 8)
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
    """The mean loss at each position 0..T-1 of the windows: (T,). Raises where the model cannot."""
    n_windows = max(1, eval_tokens // (length + 1))
    windows = tokens[: n_windows * (length + 1)].view(n_windows, length + 1)  # (N, T+1)
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
        desc=f"{job:<22}",
        unit="step",
        file=sys.stderr,
        disable=None if progress is None else not progress,
    )


def _advance(bar):
    """``train``'s progress callback, moving ``bar`` to ``done`` of ``total`` steps."""
    return lambda done, total: bar.update(done - bar.n)


def run(
    out: Path = DATA,
    settings: dict = SETTINGS,
    save: bool = True,
    methods=POSITIONS,
    threads=1,
    progress: bool | None = None,
) -> dict:
    """Train, evaluate and (if ``save``) write checkpoints and results.json; return the results.

    ``progress``: one tqdm bar per training job (see ``_bar``); None shows them on a terminal and
    in Jupyter only.

    One thread by default: for a model this small, a second thread gains little on an idle
    machine and loses five-fold on a busy one (measured: 59 ms per step against 316 ms).
    """
    torch.set_num_threads(threads)
    s = settings
    train_tokens = corpus.split("train", s["train_chars"])
    val_tokens = corpus.split("validation", s["eval_tokens"] * 2)
    lengths = [m * L for m in MULTIPLES]
    results = {"L": L, "lengths": lengths, "settings": s, "methods": {}, "seconds": {}}
    if save:
        out.mkdir(parents=True, exist_ok=True)
    models = {}
    for method in methods:
        started = time.perf_counter()
        torch.manual_seed(0)
        model = TinyLM(LMConfig(position=method, max_len=L))
        with _bar(f"train {method}", s["steps"], progress) as bar:
            loss = train(
                model,
                train_tokens,
                L,
                s["steps"],
                s["batch"],
                s["lr"],
                s["warmup"],
                0,
                _advance(bar),
            )
        entry = evaluate(model, val_tokens, lengths, s["eval_tokens"])
        entry["train_loss"] = round(loss, 4)
        entry["position_parameters"] = model.position_parameters()
        entry["parameters"] = sum(p.numel() for p in model.parameters())
        results["methods"][method] = entry
        results["seconds"][method] = round(time.perf_counter() - started, 1)
        models[method] = model
        if save:
            model.save(out / f"{method}.pt")
    if "rope" in models:
        results["scaled"] = _scaled(models["rope"], val_tokens, lengths, s)
        results["finetuned"] = _finetune(
            models["rope"], train_tokens, val_tokens, lengths, s, progress, out if save else None
        )
    if save:
        (out / "results.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return results


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


def _finetune(base, train_tokens, val_tokens, lengths, s, progress, out) -> dict:
    """RoPE fine-tuned at 4L for a few steps with PI and with YaRN (factor 4), and, as the control,
    with no scaling at all (the same steps on the same texts: what the fine-tuning alone buys)."""
    tuned = {}
    for name in ("linear", "yarn", "default"):
        model = copy.deepcopy(base)
        model.set_rope_scaling(SCALINGS[name](4) if name in SCALINGS else None)
        started = time.perf_counter()
        with _bar(f"fine-tune rope {name}", s["finetune_steps"], progress) as bar:
            loss = train(
                model,
                train_tokens,
                4 * L,
                s["finetune_steps"],
                s["finetune_batch"],
                s["finetune_lr"],
                10,
                1,
                _advance(bar),
            )
        entry = evaluate(model, val_tokens, lengths, s["eval_tokens"])
        entry["train_loss"] = round(loss, 4)
        entry["seconds"] = round(time.perf_counter() - started, 1)
        tuned[name] = entry
        if out is not None:
            model.save(out / f"rope-{name}-finetuned.pt")
    return tuned


def load_model(name: str, folder: Path = DATA) -> TinyLM:
    """A committed checkpoint by name: a method from POSITIONS, or rope-linear-finetuned etc."""
    path = folder / f"{name}.pt"
    if not path.exists():
        known = sorted(p.stem for p in folder.glob("*.pt"))
        raise ValueError(f"no checkpoint {name!r} in {folder}; there are {known}.")
    return TinyLM.load(path)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m posenc_lib.models.experiment", description=__doc__
    )
    parser.add_argument("--out", type=Path, default=DATA)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 30 steps, not saved")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args(argv)
    settings = dict(SETTINGS)
    if args.quick:
        settings.update(
            steps=30, finetune_steps=10, train_chars=100_000, eval_tokens=4096, factors=[4]
        )
    started = time.perf_counter()
    results = run(args.out, settings, save=not args.quick, threads=args.threads)
    print(f"done in {time.perf_counter() - started:.0f} s")
    print(f"{'method':<12}" + "".join(f"{'T=' + str(t):>10}" for t in results["lengths"]))
    for method, entry in results["methods"].items():
        cells = "".join(
            f"{v:>10.2f}" if v is not None else f"{'-':>10}" for v in entry["ppl"].values()
        )
        print(f"{method:<12}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
