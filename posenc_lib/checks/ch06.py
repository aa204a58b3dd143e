"""Chapter 6's exercises: RoPE in both layouts, the m - n invariance, the decay bound, and the
convention detective (weights made for one layout, run with the other).

    from posenc_lib.checks.ch06 import q1, q2, q3, q4
    q1.check(apply_rope); q1.hint(); q1.solution()

The references are the library's (``rope.apply_rope`` through ``rope_demo.rotate``,
``rope_demo.decay_bound``, ``rope_demo.convert_projection``); each usual mistake is recomputed and,
when the learner's answer matches it, named.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.analysis.ch06_rope import (
    attention_logits,
    convert_projection,
    decay_bound,
    layout_permutation,
    rotate,
)
from posenc_lib.checks import FLOAT, TENSOR, Case, Question, TooMany, as_number, as_tensor

NOTEBOOK = "06_rope.ipynb"
F64 = torch.float64
STYLES = ("half", "interleaved")


def _generator(seed: int, salt: int) -> torch.Generator:
    return torch.Generator().manual_seed(seed * 7919 + salt)


def _pick(options, generator):
    return options[int(torch.randint(0, len(options), (1,), generator=generator))]


def _other(style: str) -> str:
    return STYLES[1 - STYLES.index(style)]


def _near(got: torch.Tensor, want: torch.Tensor, tol: float = 2e-4) -> bool:
    """Equal to float32 accuracy, relative to the size of the values (shapes must match)."""
    if got.shape != want.shape:
        return False
    scale = 1.0 + float(want.abs().max()) if want.numel() else 1.0
    return bool(((got - want).abs() <= tol * scale).all())


# -- q1: apply_rope in both layouts ---------------------------------------------------------------


def _rope_variant(x, positions, base, style, *, pairs=None, table=None, sign=1.0, power=2.0):
    """x (T, D) rotated as RoPE, or one of its usual wrong variants, in float64. (T, D).

    pairs: which dims turn together ("half" or "interleaved"); table: how the cos and sin of each
    frequency are laid out along the dims; sign: -1 turns clockwise; power: the frequencies are
    base ** (-power * i / D) (power -2 gives frequencies that grow with i).
    """
    pairs, table = pairs or style, table or style
    x = x.to(F64)
    n, d = x.shape
    pos = torch.as_tensor(positions, dtype=F64)[:, None]  # (T, 1)
    theta = base ** (-power * torch.arange(d // 2, dtype=F64) / d)  # (D/2,)
    angles = sign * pos * theta  # (T, D/2)
    if table == "half":
        angles = torch.cat((angles, angles), -1)  # (T, D)
    else:
        angles = angles.repeat_interleave(2, -1)  # (T, D)
    if pairs == "half":
        x1, x2 = x[:, : d // 2], x[:, d // 2 :]
        partner = torch.cat((-x2, x1), -1)  # rotate_half
    else:
        partner = torch.stack((-x[:, 1::2], x[:, 0::2]), -1).reshape(n, d)  # rotate_every_two
    return x * angles.cos() + partner * angles.sin()


class ApplyRope(Question):
    name, function, points, notebook = "q1", "apply_rope", 3, NOTEBOOK
    returns = TENSOR
    references = (
        "posenc_lib.analysis.ch06_rope.rotate",
        "posenc_lib.rope.apply_rope",
        "transformers.models.llama.modeling_llama.apply_rotary_pos_emb",
        "transformers.models.llama.modeling_llama.rotate_half",
    )
    title = "Rotate queries with RoPE, in both layouts"
    hints = (
        "Frequencies: theta_i = base ** (-2i / D) for i = 0 .. D/2 - 1. `positions` is a list: make "
        "it a column first, torch.tensor(positions, dtype=torch.float64)[:, None], then multiply by "
        "theta to get the angles, shape (T, D/2).",
        "Split x into the two members of each pair: for 'half', x1 = x[:, :D/2] and "
        "x2 = x[:, D/2:]; for 'interleaved', x1 = x[:, 0::2] and x2 = x[:, 1::2].",
        "Each pair turns counterclockwise: (x1 cos - x2 sin, x1 sin + x2 cos). Put the results back "
        "where x1 and x2 came from: torch.cat for 'half', torch.stack(..., -1).reshape for "
        "'interleaved'.",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [
                ((5, 8), [0, 1, 2, 3, 4], "half", 10000.0),
                ((4, 8), [3, 7, 0, 12], "interleaved", 10000.0),
                ((3, 12), [2, 5, 9], "half", 100.0),
                ((3, 6), [1, 4, 10], "interleaved", 500.0),
            ]
        else:
            # Both styles twice; the first two bases are not the default 10000 (so an answer
            # that ignores `base` fails every draw), and the positions are never in increasing
            # order (row t sits at positions[t], whatever the order).
            generator = _generator(seed, 1)
            specs = []
            for number, style in enumerate(("half", "interleaved", "interleaved", "half")):
                n = int(torch.randint(6, 11, (1,), generator=generator))
                d = 2 * int(torch.randint(4, 9, (1,), generator=generator))
                positions = torch.randint(0, 200, (n,), generator=generator).tolist()
                if positions == sorted(positions):
                    positions = positions[::-1]
                bases = [100.0, 1000.0, 500000.0] + [10000.0] * (number >= 2)
                specs.append(((n, d), positions, style, _pick(bases, generator)))
        generator = _generator(seed, 11)
        cases = []
        for shape, positions, style, base in specs:
            x = torch.randn(*shape, generator=generator)  # float32, like a model's activations
            cases.append(
                Case(
                    (x, positions, style, base),
                    f"x of shape {shape}, positions = {positions}, style = {style!r}, base = {base:g}",
                )
            )
        return cases

    def diagnose(self, case, value):
        x, positions, style, base = case.args
        got, problem = as_tensor(value, "The rotated x", tuple(x.shape))
        if problem:
            return problem
        want = rotate(x, positions, base, style)  # the library, float64
        if _near(got, want):
            return None
        other = _other(style)
        d = x.shape[1]
        pos = torch.tensor(positions, dtype=F64)
        mistakes = [
            (x.double(), "your function returns x unchanged: every pair must turn by its position's angle."),
            (_rope_variant(x, positions, base, style, pairs=other, table=other), f"you paired the dims as in the {other!r} layout. In 'half', dim i turns with dim i + D/2; in 'interleaved', dim 2i turns with dim 2i + 1."),
            (_rope_variant(x, positions, base, style, sign=-1.0), "your pairs turn clockwise. The convention is counterclockwise, (x1, x2) -> (x1 cos - x2 sin, x1 sin + x2 cos): multiplying x1 + i x2 by e^(i m theta)."),
            (want[:, layout_permutation(d, style, other)], f"you wrote the result back in the {other!r} order (the rotation itself is right); put each rotated pair where its two dims came from."),
            (_rope_variant(x, positions, base, style, table=other), f"the pairs are right but the cos and sin tables are laid out for {other!r}: each pair must use one frequency for both its dims."),
            (_rope_variant(x, positions, base, style, power=1.0), "the frequencies are base ** (-i / D); RoFormer's are base ** (-2i / D), i = 0 .. D/2 - 1 (use torch.arange(0, D, 2) / D)."),
            (_rope_variant(x, positions, base, style, power=-2.0), "your frequencies grow with the pair index (base ** (+2i / D)); they should shrink: theta_i = base ** (-2i / D)."),
            (rotate(x, (pos + 1).tolist(), base, style), "every position is off by one (1-based?): position p must turn by p * theta, so position 0 is not turned at all."),
            (rotate(x, len(positions), base, style), "you used positions 0, 1, 2, ... instead of the `positions` given."),
            (rotate(x, positions, 10000.0, style), "you used base 10000 instead of the `base` given."),
            (_cos_only(x, positions, base, style), "you multiplied by cos but left out the partner's term (-x2 sin for the first member, +x1 sin for the second)."),
            (rotate(x, sorted(positions), base, style), "you sorted the positions: row t sits at positions[t], in the order given."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if wrong.shape == got.shape and _near(got, wrong):
                return "Close, but " + sentence
        return "The result has the right shape but not the right values; check the frequencies, which dims pair up, and the direction of the turn."


def _cos_only(x, positions, base, style):
    """x * cos(angle), without the partner's sin term. (T, D) float64."""
    n, d = x.shape
    theta = base ** (-2 * torch.arange(d // 2, dtype=F64) / d)  # (D/2,)
    angles = torch.as_tensor(positions, dtype=F64)[:, None] * theta  # (T, D/2)
    table = torch.cat((angles, angles), -1) if style == "half" else angles.repeat_interleave(2, -1)
    return x.double() * table.cos()


# -- q2: measure the m - n invariance ---------------------------------------------------------------


def _turn(v, p, base: float, style: str = "half") -> torch.Tensor:
    """v (D,) turned as RoPE at position p, in float64: (D,). The same numbers as the library's
    ``rotate``, written out here because the checks call it hundreds of times per draw."""
    v = torch.as_tensor(v, dtype=F64)
    d = v.shape[0]
    angles = float(p) * base ** (-torch.arange(0, d, 2, dtype=F64) / d)  # (D/2,)
    cos, sin = angles.cos(), angles.sin()
    if style == "half":
        x1, x2 = v[: d // 2], v[d // 2 :]
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos))
    x1, x2 = v[0::2], v[1::2]
    return torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), -1).reshape(d)


def _rope_rotation(base: float, style: str):
    def rope(v, p):
        return _turn(v, p, base, style)

    rope.__name__ = f"rope_{style}"
    return rope, f"RoPE ({style}, base {base:g})"


def _added_rotation(d: int):
    table = sinusoidal_encoding(512, d, dtype=F64)  # (512, D)

    def added(v, p):
        return torch.as_tensor(v, dtype=F64) + table[int(p)]

    return added, "x + PE_p (chapter 3's vector added, not a rotation)"


def _growing_rotation(base: float):
    def growing(v, p):
        return (1 + 0.01 * p) * _turn(v, p, base)

    return growing, "RoPE whose length also grows with p, (1 + p / 100) R_p v"


def _scores(rotation, q, k, offset, positions, *, key_offset=False, rotate_k=True, same=False):
    """<rotation(q, p + offset), rotation(k, p)> for p in positions, or a usual wrong variant."""
    out = []
    for p in positions:
        m, n = (p, p + offset) if key_offset else (p + offset, p)
        if same:
            m = n = p
        rk = rotation(k, n) if rotate_k else torch.as_tensor(k, dtype=F64)
        out.append(float(rotation(q, m) @ rk))
    return torch.tensor(out, dtype=F64)


def _extremes_inside(rotation, q, k, offset, positions):
    """The positions reordered so that neither the first nor the last holds the largest or the
    smallest score: the last score minus the first is then not the spread. (The stretching map's
    positions stay increasing: its scores grow with p, so there the first and the last are the
    extremes, and an answer that skips one of them shows.)"""
    order = _scores(rotation, q, k, offset, positions).argsort().tolist()  # smallest first
    ranked = [positions[i] for i in order]
    return [ranked[1], ranked[0], *ranked[2:-2], ranked[-1], ranked[-2]]


class SpreadAtOffset(Question):
    name, function, points, notebook = "q2", "offset_spread", 2, NOTEBOOK
    returns, references = FLOAT, ()  # the library's offset_spread measures RoPE only
    title = "Measure whether a rotation's scores depend on m - n only"
    hints = (
        "Each score is one dot product of two (D,) tensors, rotate(q, p + offset) @ rotate(k, p): a "
        "0-dim tensor, which float(...) turns into a Python number. Collect one per p in a list; "
        "Python's max() and min() then work on it.",
        "Test your tool on maps whose answer you know before you check it: rotate = lambda v, p: v "
        "(no position at all) must give exactly 0.0, and rotate = lambda v, p: (1 + p) * v (a "
        "stretch) must not: its scores grow with p (given two positions or more and q @ k != 0).",
    )

    def cases(self, seed=0):
        generator = _generator(seed, 2)
        if seed == 0:
            specs = [("rope half", 16, 3, [0, 5, 17, 40, 100]), ("added", 16, -4, [5, 6, 12, 35]),
                     ("rope interleaved", 8, -2, [2, 3, 50, 60]), ("growing", 8, 5, [0, 10, 20])]  # fmt: skip
        else:
            # The offset is never 0 (there the query's and the key's positions coincide); the
            # stretching map's is positive and the added vectors' negative (a sign that matters).
            specs = []
            for kind, sign in (("growing", 1), ("rope half", 0), ("added", -1), ("rope interleaved", 0)):  # fmt: skip
                d = 2 * int(torch.randint(4, 13, (1,), generator=generator))
                offset = int(torch.randint(1, 21, (1,), generator=generator))
                if sign < 0 or (sign == 0 and bool(torch.rand(1, generator=generator) < 0.5)):
                    offset = -offset
                count = int(torch.randint(5, 9, (1,), generator=generator))
                start = max(0, -offset)
                positions = sorted(
                    set(torch.randint(start, 400, (count,), generator=generator).tolist())
                )
                specs.append((kind, d, offset, positions))
        cases = []
        for kind, d, offset, positions in specs:
            if kind == "added":
                rotation, label = _added_rotation(d)
            elif kind == "growing":
                rotation, label = _growing_rotation(10000.0)
            else:
                rotation, label = _rope_rotation(
                    10000.0 if kind == "rope half" else 500.0, kind.split()[1]
                )
            q, k = torch.randn(2, d, generator=generator, dtype=F64)
            if kind == "added":
                positions = _extremes_inside(rotation, q, k, offset, positions)
            cases.append(
                Case(
                    (rotation, q, k, offset, positions),
                    f"rotate = {label}, q and k of {d} dims, offset = {offset}, positions = {positions}",
                )
            )
        return cases

    def diagnose(self, case, value):
        rotation, q, k, offset, positions = case.args
        if isinstance(value, (list, tuple)) or (
            isinstance(value, torch.Tensor) and value.numel() > 1
        ):
            return "Return one number, the spread (largest score minus smallest), not the list of scores."
        got, problem = as_number(value, "The spread")
        if problem:
            return problem
        scores = _scores(rotation, q, k, offset, positions)
        want = float(scores.max() - scores.min())
        if abs(got - want) <= 1e-6 * (1 + abs(want)):
            return None

        def spread(s):
            return float(s.max() - s.min())

        mistakes = [
            (spread(_scores(rotation, q, k, offset, positions, rotate_k=False)), "you rotated the query but not the key: both are rotated, the key to position p."),
            (spread(_scores(rotation, q, k, offset, positions, same=True)), "you put the query and the key at the same position; the query goes to p + offset, the key to p."),
            (spread(_scores(rotation, q, k, offset, positions, key_offset=True)), "you moved the key by the offset instead of the query (or swapped q and k, which gives the same scores): the query q sits at m = p + offset, the key k at n = p."),
            (float(scores.abs().max()), "you returned the largest |score|; the spread is the largest score minus the smallest."),
            (float(scores.std()), "you returned the standard deviation; the spread is max - min."),
            (float(scores.std(correction=0)), "you returned the standard deviation; the spread is max - min."),
            (spread(_scores(rotation, q, k, offset, range(len(positions)))), "you used positions 0, 1, 2, ... instead of the `positions` given."),
            (spread(_scores(rotation, q, k, offset, positions[:-1])), "you left out the last position: every p in `positions` counts."),
            (spread(_scores(rotation, q, k, offset, positions[1:])), "you left out the first position: every p in `positions` counts."),
            (abs(float(scores[-1] - scores[0])), "you took the last score minus the first; the spread is the largest score minus the smallest, wherever they are in the list."),
            (spread(_scores(rotation, q, k, abs(offset), positions)) if offset < 0 else math.nan, "you used |offset|; the offset can be negative, and the query sits at m = p + offset."),
        ]  # fmt: skip
        for wrong, sentence in mistakes:
            if abs(got - wrong) <= 1e-6 * (1 + abs(wrong)):
                return "Close, but " + sentence
        if got < 0:
            return "A spread (max - min) cannot be negative."
        return "Your spread differs from max - min of rotate(q, p + offset) @ rotate(k, p) over the positions given."


# -- q3: RoFormer's decay bound ----------------------------------------------------------------------

# Work in float32 (theta = base ** (-torch.arange(0, D, 2) / D), phases up to 20 000 radians) is off
# by up to 9e-4 * (1 + b) on graders' cases (measured over 3000 seeds), so the check allows 2e-3;
# every named mistake is further off than that on at least one case of every seed.
BOUND_TOLERANCE = 2e-3


def _bound_variant(distance, d, base, *, power=2.0, reduce="mean|S|", start=1, divide=None):
    theta = base ** (-power * torch.arange(d // 2, dtype=F64) / d)  # (D/2,)
    angles = distance * theta
    real, imag = angles.cos().cumsum(0), angles.sin().cumsum(0)  # S_1 .. S_{D/2}
    sizes = torch.hypot(real, imag)  # (D/2,)
    if start == 0:  # S_0 = 0 .. S_{D/2 - 1}
        sizes = torch.cat((torch.zeros(1, dtype=F64), sizes[:-1]))
    if reduce == "re":
        sizes = real
    if reduce == "|S_j|/j":
        sizes = sizes / torch.arange(1, d // 2 + 1, dtype=F64)
    if reduce == "last":
        return float(sizes[-1])
    if reduce == "cos":
        return float(angles.cos().mean())
    return float(sizes.sum() / (divide if divide is not None else d // 2))


class DecayBound(Question):
    name, function, points, notebook = "q3", "decay_bound", 2, NOTEBOOK
    returns, references = FLOAT, ("posenc_lib.analysis.ch06_rope.decay_bound",)
    title = "RoFormer's relative upper bound at one distance"
    hints = (
        "theta_i = base ** (-2i / D) for i = 0 .. D/2 - 1; the phase of pair i at distance delta is "
        "delta * theta_i.",
        "S_j is the sum of the first j phases exp(1j * delta * theta_i): a cumulative sum "
        "(torch.cumsum) of cos and of sin, with |S_j| = sqrt(real^2 + imag^2), for j = 1 .. D/2.",
        "The bound is the mean of the D/2 values |S_1|, ..., |S_{D/2}|. At distance 0 it is "
        "(D/2 + 1) / 2.",
    )

    def cases(self, seed=0):
        if seed == 0:
            # Distance 0 last: there several mistakes give the same number (every phase is 1), so
            # an earlier case names the mistake.
            specs = [(10, 64, 10000.0), (100, 128, 10000.0), (1000, 32, 500.0), (0, 64, 10000.0)]
        else:
            # The first base is not the default 10000, one distance is small (below 100, where
            # the bound is far from flat), and distance 0 (the boundary, b = (D/2 + 1) / 2) is last.
            generator = _generator(seed, 3)
            specs = []
            for number in range(4):
                top = 100 if number == 1 else 20001
                distance = int(torch.randint(1, top, (1,), generator=generator))
                d = 8 * int(torch.randint(2, 33, (1,), generator=generator))
                bases = [100.0, 500000.0] + [10000.0] * (number > 0)
                specs.append((distance, d, _pick(bases, generator)))
            specs.append((0, 8 * int(torch.randint(2, 33, (1,), generator=generator)), 10000.0))
        return [
            Case(spec, f"distance = {spec[0]}, head_dim = {spec[1]}, base = {spec[2]:g}")
            for spec in specs
        ]

    def diagnose(self, case, value):
        distance, d, base = case.args
        got, problem = as_number(value, "The bound")
        if problem:
            return problem
        want = float(decay_bound([distance], d, base)[0])
        if abs(got - want) <= BOUND_TOLERANCE * (1 + abs(want)):
            return None
        mistakes = [
            (_bound_variant(distance, d, base, divide=1), "you returned the sum of the |S_j|; the relative bound divides it by D/2."),
            (_bound_variant(distance, d, base, divide=d), "you divided by D; there are D/2 partial sums, so divide by D/2."),
            (_bound_variant(distance, d, base, reduce="last"), "you returned |S_{D/2}|, the last partial sum only; the bound averages all of |S_1|, ..., |S_{D/2}|."),
            (_bound_variant(distance, d, base, reduce="last") / (d // 2), "you returned |S_{D/2}| / (D/2), the last partial sum divided by D/2; the bound is the mean of all D/2 values |S_1|, ..., |S_{D/2}|."),
            (_bound_variant(distance, d, base, reduce="re"), "you averaged the real parts of S_j; the bound uses their moduli |S_j| = sqrt(re^2 + im^2)."),
            (_bound_variant(distance, d, base, start=0), "your partial sums are off by one: S_j sums the first j phases, j = 1 .. D/2 (S_1 is the first phase alone, and S_{D/2} all of them)."),
            (_bound_variant(distance, d, base, power=1.0), "your frequencies are base ** (-i / D); RoFormer's are base ** (-2i / D)."),
            (_bound_variant(distance, d, base, reduce="cos"), "you returned the mean of cos(delta theta_i), the expected score of a query with its own key; the bound is the mean of |S_j|."),
            ((d // 2 + 1) / 2, "your bound does not change with the distance: each S_j sums phases exp(1j delta theta_i), not lengths."),
            (_bound_variant(distance, d, 10000.0), "you used base 10000 instead of the `base` given."),
            (_bound_variant(distance, d, base, divide=d // 2 + 1), "you averaged D/2 + 1 values, S_0 = 0 included; the mean runs over j = 1 .. D/2."),
            (_bound_variant(distance, d, base, reduce="|S_j|/j"), "you divided each |S_j| by j (the mean of the first j phases); the bound averages the partial sums |S_j| themselves."),
        ]  # fmt: skip
        # The nearest mistake within the tolerance: far away two mistakes can both be small numbers
        # (the mean of cos and |S_{D/2}| / (D/2)), closer together than float32's rounding.
        near = [
            (abs(got - wrong), sentence)
            for wrong, sentence in mistakes
            if abs(got - wrong) <= BOUND_TOLERANCE * (1 + abs(wrong))
        ]
        if near:
            return "Close, but " + min(near, key=lambda item: item[0])[1]
        return "Your value differs from (1 / (D/2)) * sum over j = 1 .. D/2 of |S_j|; check the frequencies and the partial sums."


# -- q4: the convention detective ----------------------------------------------------------------------


def _per_head(w, n_heads, fn):
    """Apply fn to each head's block of columns of w (D_in, H * Dh)."""
    dh = w.shape[1] // n_heads
    return torch.cat([fn(w[:, h * dh : (h + 1) * dh]) for h in range(n_heads)], dim=1)


def _head_logits(x, w_q, w_k, n_heads, style):
    """(H, T, T) float64 logits, one (T, T) per head."""
    dh = w_q.shape[1] // n_heads
    return torch.stack(
        [
            attention_logits(x, w_q[:, h * dh : (h + 1) * dh], w_k[:, h * dh : (h + 1) * dh], style)
            for h in range(n_heads)
        ]
    )


def _strided(w, n_heads, source, target):
    """w (D_in, H * Dh) with each 'head' taken as the columns h, h + H, h + 2H, ... (a wrong split)
    and reordered from source to target within it."""
    dh = w.shape[1] // n_heads
    slots = torch.arange(w.shape[1]).reshape(dh, n_heads)  # (Dh, H): column of dim j of head h
    order = layout_permutation(dh, source, target)
    out = w.clone()
    for h in range(n_heads):
        out[:, slots[:, h]] = w[:, slots[order, h]]
    return out


class FixLayout(Question):
    name, function, points, notebook = "q4", "fix_layout", 3, NOTEBOOK
    returns = (TENSOR, TENSOR)
    references = (
        "posenc_lib.analysis.ch06_rope.convert_projection",
        "posenc_lib.analysis.ch06_rope.layout_permutation",
    )
    title = "Convention detective: make a checkpoint work with the other layout"
    hints = (
        "The weights were made for the other layout. In each head, a dim's partner must be the same "
        "dim it was trained with: reorder each head's columns so that the pairs line up.",
        "interleaved -> half: the new order of a head's columns is (0, 2, 4, ..., 1, 3, 5, ...); "
        "half -> interleaved: (0, D/2, 1, D/2 + 1, ...), the inverse.",
        "Do it within each head (columns h * Dh .. (h + 1) * Dh - 1), to both w_q and w_k, and return "
        "the pair (w_q, w_k).",
    )

    def cases(self, seed=0):
        if seed == 0:
            specs = [(8, 1, 8, "half"), (12, 2, 8, "interleaved"), (16, 3, 12, "half")]
        else:
            # Both targets, several heads (each with its own block of columns), and one head alone.
            generator = _generator(seed, 4)
            specs = []
            for target, fewest in (
                ("interleaved", 2),
                ("half", 2),
                ("interleaved", 2),
                ("half", 1),
            ):
                d_in = int(torch.randint(8, 25, (1,), generator=generator))
                heads = int(
                    torch.randint(fewest, 5 if fewest > 1 else 2, (1,), generator=generator)
                )
                specs.append((d_in, heads, _pick([8, 12, 16], generator), target))
        generator = _generator(seed, 14)
        cases = []
        for d_in, heads, dh, target in specs:
            w_q, w_k = torch.randn(2, d_in, heads * dh, generator=generator) / math.sqrt(d_in)
            cases.append(
                Case(
                    (w_q, w_k, heads, target),
                    f"w_q and w_k of shape {(d_in, heads * dh)} ({heads} head{'s' * (heads > 1)} of "
                    f"{dh} dims) made for {_other(target)!r}, target = {target!r}",
                )
            )
        return cases

    def diagnose(self, case, value):
        w_q, w_k, heads, target = case.args
        if isinstance(value, TooMany):
            return "Return a pair (w_q, w_k); your function returned an endless iterator."
        if (
            isinstance(value, torch.Tensor)
            or not isinstance(value, (tuple, list))
            or len(value) != 2
        ):
            return "Return a pair of tensors, (new_w_q, new_w_k)."
        got_q, problem = as_tensor(value[0], "The new w_q", tuple(w_q.shape))
        if problem:
            return problem
        got_k, problem = as_tensor(value[1], "The new w_k", tuple(w_k.shape))
        if problem:
            return problem
        source = _other(target)
        x = torch.randn(10, w_q.shape[0], generator=_generator(heads, 5), dtype=F64)  # (T, D_in)
        right = _head_logits(x, w_q, w_k, heads, source)  # (H, T, T): as the weights were made
        got = _head_logits(x, got_q, got_k, heads, target)
        if _near(got, right, 1e-6):
            return None
        inverse = layout_permutation(w_q.shape[1] // heads, target, source)
        fixed_q, fixed_k = convert_projection(w_q, heads, source, target), convert_projection(w_k, heads, source, target)  # fmt: skip
        whole = layout_permutation(w_q.shape[1], source, target)
        if target == "half":
            going = (
                "Going to 'half', a head's new column j is old column perm[j] with "
                "perm = (0, 2, 4, ..., 1, 3, 5, ...)."
            )
        else:
            going = (
                "Going to 'interleaved', a head's new column j is old column perm[j] with "
                "perm = (0, D/2, 1, D/2 + 1, ...), the inverse of (0, 2, 4, ..., 1, 3, 5, ...)."
            )
        mistakes = [
            ((w_q, w_k), "these are the weights as they came: run with the target layout they still show the symptom. Reorder each head's columns."),
            ((w_k, w_q), "you returned the weights unchanged and in swapped order; return (w_q, w_k), each with its columns reordered."),
            ((fixed_k, fixed_q), "your reordering is right but you returned (w_k, w_q); return (w_q, w_k)."),
            ((_per_head(w_q, heads, lambda b: b[:, inverse]), _per_head(w_k, heads, lambda b: b[:, inverse])), "you applied the permutation of the opposite direction (its inverse). " + going),
            ((fixed_q, w_k), "you fixed w_q but not w_k: the key's pairs must line up too."),
            ((w_q, fixed_k), "you fixed w_k but not w_q: the query's pairs must line up too."),
            ((w_q[:, whole], w_k[:, whole]), "you reordered all the columns as if they were one head; each head has its own pairs: reorder within each head's block of columns."),
            ((_strided(w_q, heads, source, target), _strided(w_k, heads, source, target)), "you took head h's columns as h, h + H, h + 2H, ...; head h owns the block of columns h * D_h .. (h + 1) * D_h - 1."),
        ]  # fmt: skip
        if w_q.shape[0] == w_q.shape[1]:  # square: the rows could be reordered the same way
            mistakes.append(
                (
                    (w_q[whole], w_k[whole]),
                    "you reordered the rows (input features); the pairs live in the output columns.",
                )
            )
        for (wrong_q, wrong_k), sentence in mistakes:
            if _near(got_q, wrong_q.double(), 1e-9) and _near(got_k, wrong_k.double(), 1e-9):
                return "Close, but " + sentence
        diagonal = bool(
            (
                (got - right).diagonal(dim1=-2, dim2=-1).abs()
                <= 1e-6 * (1 + float(right.abs().max()))
            ).all()
        )
        if diagonal:
            return "With your weights the scores of each token with itself are right but every other score is off: the symptom of pairs that do not line up. Reorder each head's columns of both matrices."
        return "With your weights the attention logits differ from those the checkpoint was made to give, even on the diagonal: only reorder columns, do not change their values."


q1, q2, q3, q4 = ApplyRope(), SpreadAtOffset(), DecayBound(), FixLayout()
QUESTIONS = (q1, q2, q3, q4)
