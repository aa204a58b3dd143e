"""Chapter 6's exercises: q1, apply_rope in both layouts; q2, measure the m - n invariance."""

from __future__ import annotations

import math

import torch

from posenc_lib.absolute import sinusoidal_encoding
from posenc_lib.analysis.ch06_rope import (
    layout_permutation,
    rotate,
)
from posenc_lib.checks import draws
from posenc_lib.checks.answers import FLOAT, TENSOR, as_number, as_tensor, near, same_number
from posenc_lib.checks.ch06.setting import F64, NOTEBOOK, _other
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr
from posenc_lib.rope_scaling import default_inv_freq

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
    name, function, points, notebook = "q1", "apply_rope", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "x1 cos - x2 sin, x1 sin + x2 cos",
        "x1 * cos - x2 * sin",
        "torch.arange(0, D, 2) / D",
    )
    returns = TENSOR
    references = (
        "posenc_lib.analysis.ch06_rope.rotate",
        "posenc_lib.rope.apply_rope",
        "transformers.models.llama.modeling_llama.apply_rotary_pos_emb",
        "transformers.models.llama.modeling_llama.rotate_half",
    )
    title = N_("Rotate queries with RoPE, in both layouts")
    hints = (
        N_(
            "Every pair of dims is a point in a plane, and RoPE turns that point by an angle: the "
            "row's position times the pair's own speed, theta_i, which shrinks as i grows. The style "
            "decides only which two dims form pair i. Three steps: the angles, the two members of "
            "each pair, the turn."
        ),
        N_(
            "The angles: theta_i = base ** (-2i / D) for i = 0 .. D/2 - 1; make `positions` a column, "
            "torch.tensor(positions, dtype=torch.float64)[:, None], and multiply, shape (T, D/2). The "
            "members: 'half' pairs dim i with dim i + D/2, 'interleaved' dim 2i with dim 2i + 1."
        ),
        N_(
            "The turn is counterclockwise, the 2-D rotation of section 1 of the lecture; write each "
            "turned member back to the dim it came from (the layout of the input)."
        ),
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
            generator = draws.seeded(seed, 1)
            specs = []
            for number, style in enumerate(("half", "interleaved", "interleaved", "half")):
                n = draws.randint(6, 11, generator)
                d = 2 * draws.randint(4, 9, generator)
                positions = torch.randint(0, 200, (n,), generator=generator).tolist()
                if positions == sorted(positions):
                    positions = positions[::-1]
                bases = [100.0, 1000.0, 500000.0] + [10000.0] * (number >= 2)
                specs.append(((n, d), positions, style, draws.pick(bases, generator)))
        generator = draws.seeded(seed, 11)
        cases = []
        for shape, positions, style, base in specs:
            x = torch.randn(*shape, generator=generator)  # float32, like a model's activations
            cases.append(
                Case(
                    (x, positions, style, base),
                    tr(
                        "x of shape {shape}, positions = {positions}, style = {style!r}, "
                        "base = {base:g}",
                        shape=shape,
                        positions=positions,
                        style=style,
                        base=base,
                    ),
                )
            )
        return cases

    def diagnose(self, case, value):
        x, positions, style, base = case.args
        got, problem = as_tensor(value, N_("The rotated x"), tuple(x.shape))
        if problem:
            return problem
        want = rotate(x, positions, base, style)  # the library, float64
        if near(got, want):
            return None
        other = _other(style)
        d = x.shape[1]
        pos = torch.tensor(positions, dtype=F64)
        mistakes = [
            (x.double(), N_("your function returns x unchanged: every pair must turn by its position's angle.")),
            (_rope_variant(x, positions, base, style, pairs=other, table=other), tr("you paired the dims as in the {other!r} layout. In 'half', dim i turns with dim i + D/2; in 'interleaved', dim 2i turns with dim 2i + 1.", other=other)),
            (_rope_variant(x, positions, base, style, sign=-1.0), N_("your pairs turn clockwise; the question's turn is counterclockwise: check the signs of your sin terms (section 1 of the lecture).")),
            (want[:, layout_permutation(d, style, other)], tr("you wrote the result back in the {other!r} order (the rotation itself is right); put each rotated pair where its two dims came from.", other=other)),
            (_rope_variant(x, positions, base, style, table=other), tr("your cos and sin tables are laid out for {other!r}, though the pairs are right: each pair must use one frequency for both its dims.", other=other)),
            (_rope_variant(x, positions, base, style, power=1.0), N_("your frequencies are base ** (-i / D); re-read the question's exponent: what does i count?")),
            (_rope_variant(x, positions, base, style, power=-2.0), N_("your frequencies grow with the pair index (base ** (+2i / D)); they should shrink: theta_i = base ** (-2i / D).")),
            (rotate(x, (pos + 1).tolist(), base, style), N_("every position is off by one (1-based?): position p must turn by p * theta, so position 0 is not turned at all.")),
            (rotate(x, len(positions), base, style), N_("you used positions 0, 1, 2, ... instead of the `positions` given.")),
            (rotate(x, positions, 10000.0, style), N_("you used base 10000 instead of the `base` given.")),
            (_cos_only(x, positions, base, style), N_("you multiplied by cos and left out the partner's term (-x2 sin for the first member, +x1 sin for the second).")),
            (rotate(x, sorted(positions), base, style), N_("you sorted the positions: row t sits at positions[t], in the order given.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: wrong.shape == got.shape and near(got, wrong))
        if named:
            return named
        return _(
            "The result has the right shape but not the right values; check the frequencies, which dims pair up, and the direction of the turn."
        )


def _cos_only(x, positions, base, style):
    """x * cos(angle), without the partner's sin term. (T, D) float64."""
    n, d = x.shape
    theta = default_inv_freq(d, base, F64)  # (D/2,)
    angles = torch.as_tensor(positions, dtype=F64)[:, None] * theta  # (T, D/2)
    table = torch.cat((angles, angles), -1) if style == "half" else angles.repeat_interleave(2, -1)
    return x.double() * table.cos()


# -- q2: measure the m - n invariance ---------------------------------------------------------------


def _turn(v, p, base: float, style: str = "half") -> torch.Tensor:
    """v (D,) turned as RoPE at position p, in float64: (D,). The library's ``rotate`` for one
    vector, without its input checks: the checks call it hundreds of times per draw."""
    v = torch.as_tensor(v, dtype=F64)
    d = v.shape[0]
    angles = float(p) * default_inv_freq(d, base, F64)  # (D/2,)
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
    return rope, tr("RoPE ({style}, base {base:g})", style=style, base=base)


def _added_rotation(d: int):
    table = sinusoidal_encoding(512, d, dtype=F64)  # (512, D)

    def added(v, p):
        return torch.as_tensor(v, dtype=F64) + table[int(p)]

    return added, _("x + PE_p (chapter 3's vector added, not a rotation)")


def _growing_rotation(base: float):
    def growing(v, p):
        return (1 + 0.01 * p) * _turn(v, p, base)

    return growing, _("RoPE whose length also grows with p, (1 + p / 100) R_p v")


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
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "max(scores) - min(scores)",
        "float(rotate(q, p + offset) @ rotate(k, p)) for p in positions",
    )
    returns, references = FLOAT, ()  # the library's offset_spread measures RoPE only
    title = N_("Measure whether a rotation's scores depend on m - n only")
    hints = (
        N_(
            "Each score is one dot product of two (D,) tensors, rotate(q, p + offset) @ rotate(k, p): a "
            "0-dim tensor, which float(...) turns into a Python number. Collect one per p in a list; "
            "Python's max() and min() then work on it."
        ),
        N_(
            "Test your tool on maps whose answer you know before you check it: rotate = lambda v, p: v "
            "(no position at all) must give exactly 0.0, and rotate = lambda v, p: (1 + p) * v (a "
            "stretch) must not: its scores grow with p (given two positions or more and q @ k != 0)."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 2)
        if seed == 0:
            specs = [("rope half", 16, 3, [0, 5, 17, 40, 100]), ("added", 16, -4, [5, 6, 12, 35]),
                     ("rope interleaved", 8, -2, [2, 3, 50, 60]), ("growing", 8, 5, [0, 10, 20])]  # fmt: skip
        else:
            # The offset is never 0 (there the query's and the key's positions coincide); the
            # stretching map's is positive and the added vectors' negative (a sign that matters).
            specs = []
            for kind, sign in (("growing", 1), ("rope half", 0), ("added", -1), ("rope interleaved", 0)):  # fmt: skip
                d = 2 * draws.randint(4, 13, generator)
                offset = draws.randint(1, 21, generator)
                if sign < 0 or (sign == 0 and bool(torch.rand(1, generator=generator) < 0.5)):
                    offset = -offset
                count = draws.randint(5, 9, generator)
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
                # A score is signed: in every draw the added vectors' scores take both signs, so
                # that the spread of |score| (or any answer that drops the sign) is not the spread.
                for _try in range(200):
                    scores = _scores(rotation, q, k, offset, positions)
                    if scores.min() < -0.5 and scores.max() > 0.5:
                        break
                    q, k = torch.randn(2, d, generator=generator, dtype=F64)
                else:  # pragma: no cover - the tests draw seeds 0..199 and find both signs
                    raise RuntimeError("no draw of q and k gives scores of both signs")
                positions = _extremes_inside(rotation, q, k, offset, positions)
            cases.append(
                Case(
                    (rotation, q, k, offset, positions),
                    tr(
                        "rotate = {label}, q and k of {d} dims, offset = {offset}, "
                        "positions = {positions}",
                        label=label,
                        d=d,
                        offset=offset,
                        positions=positions,
                    ),
                )
            )
        return cases

    def diagnose(self, case, value):
        rotation, q, k, offset, positions = case.args
        if isinstance(value, (list, tuple)) or (
            isinstance(value, torch.Tensor) and value.numel() > 1
        ):
            return _(
                "Return one number, the spread (largest score minus smallest), not the list of scores."
            )
        got, problem = as_number(value, N_("The spread"))
        if problem:
            return problem
        scores = _scores(rotation, q, k, offset, positions)
        want = float(scores.max() - scores.min())
        if same_number(got, want, 1e-6, 1e-6):
            return None

        def spread(s):
            return float(s.max() - s.min())

        mistakes = [
            (spread(_scores(rotation, q, k, offset, positions, rotate_k=False)), N_("you rotated the query and not the key: both are rotated, the key to position p.")),
            (spread(_scores(rotation, q, k, offset, positions, same=True)), N_("you put the query and the key at the same position; the query goes to p + offset, the key to p.")),
            (spread(_scores(rotation, q, k, offset, positions, key_offset=True)), N_("you moved the key by the offset instead of the query (or swapped q and k, which gives the same scores): the query q sits at m = p + offset, the key k at n = p.")),
            (float(scores.abs().max()), N_("you returned the largest |score|; the spread is the largest score minus the smallest.")),
            (spread(scores.abs()), N_("you took the spread of |score|: a score is signed, and a negative one counts with its sign (re-read the question: the largest score minus the smallest).")),
            (float(scores.std()), N_("you returned the standard deviation; the spread is max - min.")),
            (float(scores.std(correction=0)), N_("you returned the standard deviation; the spread is max - min.")),
            (spread(_scores(rotation, q, k, offset, range(len(positions)))), N_("you used positions 0, 1, 2, ... instead of the `positions` given.")),
            (spread(_scores(rotation, q, k, offset, positions[:-1])), N_("you left out the last position: every p in `positions` counts.")),
            (spread(_scores(rotation, q, k, offset, positions[1:])), N_("you left out the first position: every p in `positions` counts.")),
            (abs(float(scores[-1] - scores[0])), N_("you took the last score minus the first; the spread is the largest score minus the smallest, wherever they are in the list.")),
            (spread(_scores(rotation, q, k, abs(offset), positions)) if offset < 0 else math.nan, N_("you used |offset|; the offset can be negative, and the query sits at m = p + offset.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: same_number(got, wrong, 1e-6, 1e-6))
        if named:
            return named
        if got < 0:
            return _("A spread (max - min) cannot be negative.")
        return _(
            "Your spread differs from max - min of rotate(q, p + offset) @ rotate(k, p) over the positions given."
        )
