"""Chapter 7's measurements on the trained models of ``extrapolation``: why they fail past L.

- ``binned``: per-position losses averaged in bins (a readable curve from a few thousand tokens);
- ``attention_entropy``: how spread out attention is, per layer, at a given length;
  ``far_attention_share``: how much of it goes to keys at least a given distance back;
- ``position_score_curves``: the position-only part of a RoPE head's score, pair by pair, against
  the distance; ``score_excess`` and ``new_score_pairs``: which pairs reach scores past L that
  they never reached in training;
- ``position_cost``, ``forward_ms`` and ``call_ms``: what a position method costs per token;
  ``fused_attention_accepts``: whether PyTorch's fused attention kernel takes a given mask;
- ``window_losses``: the loss of every prediction, window by window;
- ``load_reference`` and ``reference_ratio``: the ALiBi paper's published perplexities (Press,
  Smith, Lewis, ICLR 2022, arXiv:2108.12409, appendix Tables 2 and 3), shipped in
  ``data/reference/``.

Shapes: B windows, H heads, T positions, P = head_dim / 2 pairs, N distances.
"""

from __future__ import annotations

import csv
import math
import time
import warnings
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, tr
from posenc_lib.rope_scaling import rope_inv_freq

F64 = torch.float64
REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
REFERENCE_TABLES = {
    "L512": "alibi_paper_table2_wt103_L512.csv",
    "L1024": "alibi_paper_table3_wt103_L1024.csv",
    "vaswani": "transformer_paper_table3_positions.csv",
}
# The chapter that teaches each method, for the closing table.
CHAPTERS = {"none": 1, "sinusoidal": 3, "learned": 2, "t5": 4, "alibi": 5, "rope": 6}


def _tokens(tokens, length: int, n_tokens: int) -> torch.Tensor:
    """Non-overlapping windows of ``length`` tokens from the start of ``tokens``: (B, T)."""
    validate.integer_tensor("tokens", tokens, N_("token ids"))
    length = validate.positive_int("length", length)
    n_windows = validate.positive_int("n_tokens", n_tokens) // length
    if n_windows < 1 or tokens.dim() != 1 or n_windows * length > tokens.numel():
        raise ValueError(
            f"need a 1-D tensor of at least max(n_tokens, length) = {max(n_tokens, length)} token "
            f"ids, got shape {tuple(tokens.shape)}."
        )
    return tokens[: n_windows * length].view(n_windows, length)


def binned(values: torch.Tensor, width: int) -> torch.Tensor:
    """The mean of each run of ``width`` consecutive values: (T,) -> (T // width,)."""
    validate.float_tensor("values", values, min_rank=1, max_rank=1, shape_hint="(T,)")
    width = validate.positive_int("width", width)
    if values.numel() % width:
        raise ValueError(f"{values.numel()} values do not split into bins of {width}.")
    return values.view(-1, width).mean(-1)


@torch.no_grad()
def attention_entropy(model, tokens, length: int, n_tokens: int = 2048) -> torch.Tensor:
    """Mean entropy (nats) of the attention weights of the queries in the last quarter of each
    window of ``length`` tokens, averaged over the windows: (layers, H) float64.

    Uniform attention over t + 1 keys has entropy ln(t + 1); a head that keeps looking at the same
    few keys keeps the same entropy at any length.
    """
    ids = _tokens(tokens, length, max(n_tokens, length))  # (B, T)
    out = []
    for layer in range(model.config.n_layers):
        weights = model.attention_weights(ids, layer).double()  # (B, H, T, T)
        entropy = -(weights * weights.clamp_min(1e-300).log()).sum(-1)  # (B, H, T)
        out.append(entropy[..., -max(1, length // 4) :].mean((0, 2)))  # (H,)
    return torch.stack(out)


@torch.no_grad()
def far_attention_share(
    model, tokens, length: int, min_distance: int, n_tokens: int = 2048
) -> torch.Tensor:
    """The share of attention weight that the queries in the last quarter of each window of
    ``length`` tokens give to keys at least ``min_distance`` positions back, averaged over those
    queries and the windows: (layers, H) float64, each in [0, 1].

    For a T5 model with ``max_distance`` d, the keys ``min_distance`` >= d back (or from the first
    distance that reaches the last bucket) all share one bias, whatever their number.
    """
    length = validate.positive_int("length", length)
    min_distance = validate.positive_int("min_distance", min_distance)
    ids = _tokens(tokens, length, max(n_tokens, length))  # (B, T)
    positions = torch.arange(length)
    far = (positions[:, None] - positions[None, :]) >= min_distance  # (T, T): key far enough back
    out = []
    for layer in range(model.config.n_layers):
        weights = model.attention_weights(ids, layer).double()  # (B, H, T, T)
        share = (weights * far).sum(-1)  # (B, H, T)
        out.append(share[..., -max(1, length // 4) :].mean((0, 2)))  # (H,)
    return torch.stack(out)


@torch.no_grad()
def position_score_curves(
    model, tokens, layer: int = 0, n_distances: int = 512, n_tokens: int = 4096
) -> torch.Tensor:
    """The position-only part of each RoPE head's score, pair by pair, against the distance.

    With the mean query qbar and mean key kbar of a head (over ``n_tokens`` validation tokens in
    windows of the training length), pair i read as a complex number, the part of the score
    q . k / sqrt(Dh) that depends on the distance delta = m - n alone is
    Re(qbar_i conj(kbar_i) e^(i delta theta_i)) / sqrt(Dh) (RoFormer, Su et al. 2021,
    arXiv:2104.09864, section 3.4.3 "Long-term decay of RoPE", equation (35)). Returns it for
    delta = 0 .. n_distances - 1: (H, P, N) float64, the model's own frequencies (no scaling).
    """
    config = model.config
    if config.position != "rope":
        raise ValueError(
            f"position_score_curves needs a RoPE model, got a {config.position!r} one."
        )
    layer = validate.whole_int("layer", layer)
    if not 0 <= layer < config.n_layers:
        raise ValueError(f"layer must be in 0..{config.n_layers - 1}, got {layer}.")
    n_distances = validate.positive_int("n_distances", n_distances)
    ids = _tokens(tokens, config.max_len, n_tokens)  # (B, T), T = L
    n_windows, n_pos = ids.shape
    _, bias, rotation = model.position_inputs(n_pos)
    x = model.embed(ids)  # (B, T, D)
    for block in model.blocks[:layer]:
        x = block(x, bias, rotation)
    block = model.blocks[layer]
    qkv = block.attention.qkv(block.norm1(x))  # (B, T, 3 D)
    qkv = qkv.view(n_windows, n_pos, 3, config.n_heads, config.head_dim).double()
    q_mean, k_mean = qkv[:, :, 0].mean((0, 1)), qkv[:, :, 1].mean((0, 1))  # (H, Dh) each
    half = config.head_dim // 2  # "half" layout: pair i is dims (i, i + Dh/2)
    z = (
        torch.complex(q_mean[:, :half], q_mean[:, half:])
        * torch.complex(k_mean[:, :half], k_mean[:, half:]).conj()
    )  # (H, P)
    theta = rope_inv_freq(config.head_dim, config.rope_base, dtype=F64)[0]  # (P,)
    delta = torch.arange(n_distances, dtype=F64)  # (N,)
    turn = torch.polar(torch.ones(half, n_distances, dtype=F64), theta[:, None] * delta)  # (P, N)
    return (z[..., None] * turn).real / math.sqrt(config.head_dim)  # (H, P, N)


def score_excess(curves: torch.Tensor, train_len: int) -> torch.Tensor:
    """How far each curve goes, at distances >= L, outside the range it took at distances < L,
    as a share of its largest |value|: 0 means no score it had not already reached in training.

    curves: (H, P, N) from ``position_score_curves``; distances 0 .. L - 1 are the training ones.
    Returns (H, P) float64.
    """
    validate.float_tensor("curves", curves, min_rank=3, max_rank=3, shape_hint="(H, P, N)")
    length = validate.positive_int("train_len", train_len)
    if not 1 <= length < curves.shape[-1]:
        raise ValueError(
            f"train_len must be below the number of distances ({curves.shape[-1]}), got {length}."
        )
    curves = curves.double()
    seen, beyond = curves[..., :length], curves[..., length:]  # (H, P, L), (H, P, N - L)
    above = (beyond.amax(-1) - seen.amax(-1)).clamp_min(0)  # (H, P)
    below = (seen.amin(-1) - beyond.amin(-1)).clamp_min(0)
    size = curves.abs().amax(-1).clamp_min(1e-300)
    return torch.maximum(above, below) / size


def new_score_pairs(curves: torch.Tensor, train_len: int, tol: float = 0.01) -> list[int]:
    """The pairs whose position-only score, in at least one head, leaves its training range at
    distances >= L by more than ``tol`` of its largest |value| (``score_excess``). Ascending."""
    tol = validate.positive_float("tol", tol)
    excess = score_excess(curves, train_len)  # (H, P)
    return [int(i) for i in torch.nonzero((excess > tol).any(0)).flatten()]


def position_cost(config, n_pos: int) -> int:
    """Multiply-adds per token, per forward pass, that the position method adds at length T.

    Counted from the method's definition, an add alone counting as one multiply-add: an added
    vector is d_model adds per token (sinusoidal, learned); a logit bias is H * T adds per token
    per layer (T5, ALiBi), growing with T; RoPE turns each of the d_model query dims and d_model
    key dims as x cos + x' sin, one multiply and one multiply-add, so 2 * 2 * d_model = 4 d_model
    per layer, whatever T. NoPE: 0. Computing the tables (sines, buckets) once per forward is left
    out. The same unit as attention's own 2 T d_model multiply-adds per token per layer.
    """
    n_pos = validate.positive_int("n_pos", n_pos)
    per_layer = {
        "none": 0,
        "sinusoidal": 0,
        "learned": 0,
        "t5": config.n_heads * n_pos,
        "alibi": config.n_heads * n_pos,
        "rope": 4 * config.d_model,
    }[config.position]
    once = config.d_model if config.position in ("sinusoidal", "learned") else 0
    return once + per_layer * config.n_layers


@torch.no_grad()
def window_losses(model, tokens, length: int, n_windows: int) -> torch.Tensor:
    """The loss (nats) of every prediction in ``n_windows`` non-overlapping windows of ``length``
    predicted tokens (``length + 1`` tokens each, from the start of ``tokens``): (N, T) float64.

    Unlike ``models.experiment.position_losses`` (the mean over the windows), it keeps each window, so
    that a difference between spans of positions can be given a standard error over the windows.
    """
    length = validate.positive_int("length", length)
    n_windows = validate.positive_int("n_windows", n_windows)
    ids = _tokens(tokens, length + 1, n_windows * (length + 1))  # (N, T + 1)
    logits = model(ids[:, :-1])  # (N, T, vocab)
    loss = torch.nn.functional.cross_entropy(logits.transpose(1, 2), ids[:, 1:], reduction="none")
    return loss.double()  # (N, T)


@torch.no_grad()
def call_ms(fn, repeats: int = 5) -> float:
    """The median wall time of ``fn()`` in milliseconds, after one warm-up call."""
    repeats = validate.positive_int("repeats", repeats)
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(1000 * (time.perf_counter() - start))
    return sorted(times)[repeats // 2]


def forward_ms(model, ids: torch.Tensor, repeats: int = 5) -> float:
    """The median wall time of ``model(ids)`` in milliseconds, after one warm-up call."""
    validate.integer_tensor("ids", ids, N_("token ids"))
    return call_ms(lambda: model(ids), repeats)


def fused_attention_accepts(attn_mask: torch.Tensor, n_heads: int, head_dim: int) -> bool:
    """Whether ``F.scaled_dot_product_attention`` may run its fused (flash) kernel with this
    ``attn_mask`` on queries, keys and values of shape (1, H, T, Dh), T read off the mask's last
    dim; False means it falls back to the unfused "math" path (scores, softmax, weighted sum).

    Asked of PyTorch itself: only the fused backend is allowed (``torch.nn.attention.sdpa_kernel``)
    and the call either runs or raises "No available kernel". On the CPU in torch 2.13 the flash
    kernel takes a mask of 2 dims (T, T) or 4 dims (B or 1, H or 1, T, T), and no
    mask of 3 dims, nor a mask that requires a gradient (``sdp_utils_cpp.h``,
    check_attn_mask_shape): build the mask under ``torch.no_grad()`` to ask about evaluation.
    """
    validate.float_tensor("attn_mask", attn_mask, min_rank=2, max_rank=4, shape_hint="(..., T, T)")
    n_heads = validate.positive_int("n_heads", n_heads)
    head_dim = validate.positive_int("head_dim", head_dim)
    q = torch.zeros(
        1, n_heads, attn_mask.shape[-1], head_dim, dtype=attn_mask.dtype
    )  # (1, H, T, Dh)
    with warnings.catch_warnings(), sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        warnings.simplefilter("ignore")  # PyTorch explains a refusal in warnings; we return False
        try:
            F.scaled_dot_product_attention(q, q, q, attn_mask=attn_mask)
        except RuntimeError:
            return False
    return True


# -- the ALiBi paper's published numbers --------------------------------------------------------------


def load_reference(name: str = "L512") -> dict[str, list]:
    """A published table: column -> values (float where the cell is a number, None where "OOM" or
    "-", the text otherwise).

    "L512": the ALiBi paper's appendix Table 2, models trained on L = 512; "L1024": its Table 3,
    on L = 1024. Columns: L_valid, then <method>_ppl and <method>_wps for sinusoidal, rotary,
    t5bias and alibi. "vaswani": the Transformer paper's Table 3 (Vaswani et al. 2017), its base
    row and row (E), learned positions instead of sinusoids: row, positions, ppl_dev, bleu_dev.
    """
    validate.choice("name", name, tuple(REFERENCE_TABLES))
    with open(REFERENCE / REFERENCE_TABLES[name], encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))

    def value(text):
        if text in ("OOM", "-"):
            return None
        try:
            return float(text)
        except ValueError:
            return text

    return {key: [value(row[key]) for row in rows] for key in rows[0]}


def reference_ratio(table: dict, method: str, multiple: float) -> float:
    """ppl(multiple * L) / ppl(L) for a method of a reference table, reading the perplexity at
    multiple * L off the table by linear interpolation in log length."""
    key = f"{method}_ppl"
    if key not in table:
        methods = sorted(k[: -len("_ppl")] for k in table if k.endswith("_ppl"))
        raise ValueError(f"no method {method!r} in the table; it has {methods}.")
    multiple = validate.positive_float("multiple", multiple, 1.0, inclusive=True)
    lengths, ppl = table["L_valid"], table[key]
    target = lengths[0] * multiple
    points = [(x, y) for x, y in zip(lengths, ppl, strict=True) if y is not None]
    for (x0, y0), (x1, y1) in zip(points, points[1:], strict=False):
        if x0 <= target <= x1:
            w = (math.log(target) - math.log(x0)) / (math.log(x1) - math.log(x0))
            return (y0 + w * (y1 - y0)) / ppl[0]
    raise ValueError(
        f"{multiple:g} L = {target:g} is outside the lengths the table has for {method!r}."
    )


# -- comparisons that survive the spread over training seeds ------------------------------------


def seed_values(results: dict, row: str, length: int) -> list:
    """Every seed's perplexity of ``row`` at ``length`` (None where the model cannot run)."""
    rows = results["rows"]
    if row not in rows:
        raise ValueError(f"no row {row!r} in the results; there are {list(rows)}.")
    key = str(length)
    if key not in rows[row]["seeds"]:
        raise ValueError(
            f"row {row!r} was not evaluated at T = {length}; lengths: {results['lengths']}."
        )
    return rows[row]["seeds"][key]


def seed_verdict(results: dict, a: str, b: str, length: int, paired: bool = False) -> str:
    """How row ``a`` compares with row ``b`` at ``length``, over the training seeds.

    Unpaired (two models trained apart): "lower" if every seed of ``a`` is below every seed of
    ``b``, "higher" if every one is above, "overlap" if their ranges overlap (the difference does
    not survive the spread). Paired (``a`` is ``b``'s own model changed at evaluation, or
    fine-tuned from it, seed by seed): "lower" or "higher" if seed i of ``a`` is below (above)
    seed i of ``b`` for every i, "same" if equal in every seed, "mixed" otherwise.
    "n/a" if either cannot run there.
    """
    va, vb = seed_values(results, a, length), seed_values(results, b, length)
    if None in va or None in vb:
        return "n/a"
    if paired:
        if va == vb:
            return "same"
        if all(x < y for x, y in zip(va, vb, strict=True)):
            return "lower"
        if all(x > y for x, y in zip(va, vb, strict=True)):
            return "higher"
        return "mixed"
    if max(va) < min(vb):
        return "lower"
    if min(va) > max(vb):
        return "higher"
    return "overlap"


def seed_ratios(results: dict, row: str, multiple: int) -> list:
    """Each seed's perplexity at ``multiple`` L divided by its own perplexity at L."""
    train_len = results["L"]
    at_l = seed_values(results, row, train_len)
    far = seed_values(results, row, multiple * train_len)
    return [None if f is None else f / a for f, a in zip(far, at_l, strict=True)]


def describe(results: dict, row: str, length: int) -> str:
    """'mean [min, max]' of a row at a length, as the chapter prints it ('-' if it cannot run)."""
    values = seed_values(results, row, length)
    if None in values:
        return "-"
    return f"{sum(values) / len(values):.2f} [{min(values):.2f}, {max(values):.2f}]"


def ranking(results: dict, rows, length: int) -> str:
    """The rows from best to worst by mean perplexity at ``length``, joined by "<" where every
    seed of the better row beats every seed of the next one and by "~" where their ranges
    overlap (the order between them is not settled by three seeds). Rows that cannot run there
    are left out."""
    runnable = [r for r in rows if None not in seed_values(results, r, length)]
    if not runnable:
        raise ValueError(f"none of {list(rows)} runs at T = {length}.")
    means = {r: results["rows"][r]["ppl"][str(length)] for r in runnable}
    ordered = sorted(runnable, key=means.get)
    text = ordered[0]
    for better, worse in zip(ordered, ordered[1:], strict=False):
        sign = "<" if seed_verdict(results, better, worse, length) == "lower" else "~"
        text += f" {sign} {worse}"
    return text


def growth_report(results: dict, rows, multiple: int = 8) -> str:
    """What chapter 7 measured about extrapolation, for the chapters that make a claim about it:
    each row's perplexity at ``multiple`` L divided by its own at L (mean of the seeds, [lowest,
    highest]), then the rows ranked at ``multiple`` L (see ``ranking``)."""
    n = len(results["seeds"])
    lines = [
        tr("chapter 7's small models, trained at L = {L}, {n} seeds each:", L=results["L"], n=n)
    ]
    for row in rows:
        ratios = seed_ratios(results, row, multiple)
        if None in ratios:
            lines.append(
                "  " + tr("{row:<20} cannot run at {multiple}L", row=row, multiple=multiple)
            )
            continue
        mean = sum(ratios) / len(ratios)
        lines.append(
            "  "
            + tr(
                "{row:<20} perplexity at {multiple}L / at L = {mean:.2f} [{low:.2f}, {high:.2f}]",
                row=row,
                multiple=multiple,
                mean=mean,
                low=min(ratios),
                high=max(ratios),
            )
        )
    ranked = ranking(results, rows, multiple * results["L"])
    lines.append(
        "  " + tr("best to worst at {multiple}L: {ranked}", multiple=multiple, ranked=ranked)
    )
    return "\n".join(lines)
