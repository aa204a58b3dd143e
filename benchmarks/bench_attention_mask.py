"""Why are chapter 7's bias models (T5, ALiBi) slower than NoPE? Prints milliseconds; asserts nothing.

Run: .venv/bin/python -m benchmarks.bench_attention_mask   (about a minute on one thread)

Chapter 7 timed its tiny models at 8L = 512 characters and found T5 and ALiBi slower than NoPE in
every round, though their bias is at most 1.6% of attention's multiply-adds. Three measurements,
at the tiny LM's sizes (B = 1, H = 4, T = 512, Dh = 32), one torch thread:

1. Which kernel ``F.scaled_dot_product_attention`` may use for each form of mask: its fused
   (flash) CPU kernel, or the unfused "math" path (scores, softmax, weighted sum, each in memory).
2. The attention call alone with each form: ``is_causal=True`` and no mask; a float causal mask of
   2 dims (T, T); the 3-dim (1, T, T) causal mask TinyLM passes for NoPE, RoPE and the absolute
   methods; the 3-dim (H, T, T) bias it passes for T5 and ALiBi; that bias with a leading dim,
   (1, H, T, T).
3. The whole forward pass of seed 0's committed models, as TinyLM runs them (a 3-dim mask) and
   with the same mask given a leading dim (4 dims, which the fused kernel takes), and building the
   position inputs alone (``TinyLM.position_inputs``: the mask, T5's buckets, ALiBi's distances).

Each figure is the median of ``--rounds`` rounds, each round the median of ``--repeats`` calls, the
forms interleaved so that a slow moment of a shared machine hits them all; "k of n" counts the
rounds in which a form was slower than the reference in the same round.
"""

from __future__ import annotations

import argparse
import statistics

import torch
import torch.nn.functional as F

from benchmarks.bench_rope import median_ms
from posenc_lib.analysis.ch07_extrapolation import fused_attention_accepts
from posenc_lib.models import corpus
from posenc_lib.models.experiment import L, load_model


def interleaved(calls: dict, rounds: int, repeats: int) -> dict:
    """{name: [ms per round]}: every call timed once per round, in turn."""
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            times[name].append(median_ms(fn, repeats))
    return times


def report(times: dict, reference: str) -> None:
    ref = times[reference]
    for name, ms in times.items():
        slower = sum(t > r for t, r in zip(ms, ref, strict=True))
        ratio = statistics.median(t / r for t, r in zip(ms, ref, strict=True))
        print(
            f"  {name:<44}{statistics.median(ms):8.2f} ms   x{ratio:4.2f} of {reference!r}, "
            f"slower in {slower} of {len(ms)} rounds"
        )


def with_leading_dim(model):
    """The model, passing its (1 or H, T, T) mask as (1, 1 or H, T, T): the same numbers, 4 dims."""
    build = model.position_inputs

    def position_inputs(n_pos, device=None, batch=1):
        added, bias, rotation = build(n_pos, device, batch)
        return added, bias[None], rotation  # (1, H, T, T)

    model.position_inputs = position_inputs
    return model


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--repeats", type=int, default=9)
    args = parser.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    heads, n_pos, head_dim = 4, 8 * L, 32
    q, k, v = (torch.randn(1, heads, n_pos, head_dim) for _ in range(3))  # (B, H, T, Dh)
    future = torch.ones(n_pos, n_pos, dtype=torch.bool).triu(1)  # (T, T) keys after the query
    causal = torch.zeros(n_pos, n_pos).masked_fill(future, float("-inf"))  # (T, T)
    bias = torch.randn(heads, n_pos, n_pos) + causal  # (H, T, T): T5 or ALiBi plus the mask
    forms = {
        "is_causal=True, no mask": {"is_causal": True},
        "float causal mask (T, T)": {"attn_mask": causal},
        "float causal mask (1, T, T)  [TinyLM: NoPE, RoPE]": {"attn_mask": causal[None]},
        "float bias (H, T, T)  [TinyLM: T5, ALiBi]": {"attn_mask": bias},
        "float bias (1, H, T, T)": {"attn_mask": bias[None]},
    }
    print(f"torch {torch.__version__}, CPU capability {torch.backends.cpu.get_cpu_capability()}")
    print(f"1. The kernel SDPA may use (B=1, H={heads}, T={n_pos}, Dh={head_dim}):")
    for name, kwargs in forms.items():
        mask = kwargs.get("attn_mask")
        fused = mask is None or fused_attention_accepts(mask, heads, head_dim)
        print(f"  {name:<52}{'fused (flash)' if fused else 'math (unfused)'}")

    print(f"2. The attention call alone, {args.rounds} rounds:")
    calls = {
        name: (lambda kw=kwargs: F.scaled_dot_product_attention(q, k, v, **kw))
        for name, kwargs in forms.items()
    }
    with torch.no_grad():
        report(interleaved(calls, args.rounds, 3 * args.repeats), "is_causal=True, no mask")

    print(f"3. Seed 0's tiny LMs, one forward pass of {n_pos} characters, {args.rounds} rounds:")
    ids = corpus.split("validation", n_pos)[None]  # (1, T)
    names = ("none", "t5", "alibi", "rope")
    as_committed = {name: load_model(name) for name in names}
    four_dims = {name: with_leading_dim(load_model(name)) for name in names}
    with torch.no_grad():
        gap = max(float((as_committed[n](ids) - four_dims[n](ids)).abs().max()) for n in names)
        print(f"  largest |logit difference|, 3-dim against 4-dim mask: {gap:.1e}")
        calls = {
            f"{n}, 3-dim mask (as committed)": (lambda m=as_committed[n]: m(ids)) for n in names
        }
        calls |= {f"{n}, 4-dim mask": (lambda m=four_dims[n]: m(ids)) for n in names}
        calls |= {
            f"{n}, position inputs alone": (lambda m=as_committed[n]: m.position_inputs(n_pos))
            for n in names
        }
        report(interleaved(calls, args.rounds, args.repeats), "none, 3-dim mask (as committed)")


if __name__ == "__main__":
    main()
