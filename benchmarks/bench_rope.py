"""How fast is apply_rope? Prints milliseconds; asserts nothing (tests assert behaviour).

Run: make bench   (or, from the repository root: .venv/bin/python -m benchmarks.bench_rope)

On a (B=8, H=16, T=2048, D=128) float32 tensor (128 MiB) on the CPU, times:
- apply_rope on q and on k ("half" layout, and "interleaved");
- transformers' Llama apply_rotary_pos_emb on the same q and k;
- q.clone() and k.clone(): the memory-traffic floor of any out-of-place rotation.
Targets (issue 2): apply_rope no slower than transformers', and within 3x of the clone.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb

from posenc_lib import apply_rope, rope_cos_sin, rope_inv_freq


def median_ms(fn, repeats: int) -> float:
    fn()  # warm up: allocator and thread pool
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--shape", type=int, nargs=4, default=(8, 16, 2048, 128), metavar=("B", "H", "T", "D")
    )
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    b, h, t, d = args.shape
    torch.manual_seed(0)
    q, k = torch.randn(b, h, t, d), torch.randn(b, h, t, d)  # (B, H, T, D)
    inv_freq, scale = rope_inv_freq(d)
    cos, sin = rope_cos_sin(t, inv_freq, scale)  # (T, D)
    cos_i, sin_i = rope_cos_sin(t, inv_freq, scale, style="interleaved")
    cos_b, sin_b = cos[None], sin[None]  # (1, T, D): transformers unsqueezes the head dim itself

    q_theirs, _ = apply_rotary_pos_emb(q, k, cos_b, sin_b)
    gap = (apply_rope(q, cos, sin) - q_theirs).abs().max().item()
    print(f"apply_rope and transformers agree on q: largest |difference| = {gap:.1e}")

    timings = {
        "apply_rope (half), q and k": median_ms(
            lambda: (apply_rope(q, cos, sin), apply_rope(k, cos, sin)), args.repeats
        ),
        "apply_rope (interleaved), q and k": median_ms(
            lambda: (
                apply_rope(q, cos_i, sin_i, "interleaved"),
                apply_rope(k, cos_i, sin_i, "interleaved"),
            ),
            args.repeats,
        ),
        "transformers apply_rotary_pos_emb(q, k)": median_ms(
            lambda: apply_rotary_pos_emb(q, k, cos_b, sin_b), args.repeats
        ),
        "q.clone() and k.clone()": median_ms(lambda: (q.clone(), k.clone()), args.repeats),
    }
    mib = q.numel() * q.element_size() / 2**20
    print(
        f"shape (B, H, T, D) = {tuple(args.shape)}, float32, {mib:.0f} MiB per tensor, "
        f"{torch.get_num_threads()} threads, median of {args.repeats}"
    )
    for name, ms in timings.items():
        print(f"  {name:<42s} {ms:8.1f} ms")
    ours, theirs, floor = (
        timings["apply_rope (half), q and k"],
        timings["transformers apply_rotary_pos_emb(q, k)"],
        timings["q.clone() and k.clone()"],
    )
    print(f"  apply_rope / transformers = {ours / theirs:.2f}   (target <= 1)")
    print(f"  apply_rope / clone        = {ours / floor:.2f}   (target <= 3)")


if __name__ == "__main__":
    main()
