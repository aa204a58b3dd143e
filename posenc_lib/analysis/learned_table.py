"""What a trained position table looks like: similarity by offset, and its principal components.

Chapter 2 looks inside a real learned table (all-MiniLM-L6-v2's 512 x 384,
``minilm.position_weight``) with two tools, both for any (T, D) table of position vectors:

- **Similarity by offset.** ``cosine_matrix`` gives cos(P_s, P_t) for every pair; the mean over t
  of cos(P_t, P_{t+k}) (``cosine_at_offset``, ``cosine_by_offset``) says how alike positions k
  apart are, on average; ``first_offset_below`` finds the first offset whose mean drops below a
  threshold. For a sinusoidal table (Vaswani et al. 2017, arXiv:1706.03762, section 3.5) the
  cosine at offset k is sum_i cos(k w_i) / (D/2) at every t, so the mean is that value.
- **Principal components, and which of them turn together.** ``principal_components`` centres the
  table and takes its SVD (Pearson 1901; PCA as an SVD, e.g. Jolliffe 2002, section 3.5): row t
  of ``scores`` is position t in the table's main directions, with the share of variance each one
  explains. A sinusoidal pair (sin(t w), cos(t w)) is a point turning round a circle; if a trained
  table holds such rotations, two of its components trace sin- and cos-like waves of one period,
  a quarter turn apart. ``pair_rotation`` measures that for two components a, b, and
  ``component_pairs`` pairs up the components that behave so.

How the period of a pair is estimated (one method, chosen for robustness): z_t = a_t + i b_t is a
point in the plane of the two components. If it turns at a steady angular speed w, z_t = r e^{iwt}
and its discrete Fourier transform peaks at frequency w / 2 pi exactly (the peak of the Dirichlet
kernel; a real wave has a mirror peak at -w that pulls a single component's peak aside when few
periods fit in the table, z does not). We zero-pad to ``PAD`` times the table's length and take
the peak: period = 1 / |frequency|. With two turns or more inside the table this is within 0.2%
(tested); with fewer, the mean of a partial turn, taken off with the centring, biases it by a few
percent (2.4% at 1.3 turns). The power at the peak, |Z(f)|^2, against the power at the mirror
frequency, |Z(-f)|^2, says how circular the motion is:

    quadrature = (|Z(f)|^2 - |Z(-f)|^2) / (|Z(f)|^2 + |Z(-f)|^2)  in [0, 1],

which for a = A cos(wt + p), b = B cos(wt + q) is 2AB |sin(p - q)| / (A^2 + B^2): 1 for a sin/cos
pair (equal amplitudes, a quarter period apart), 0 for two waves in step (a line, not a circle).
``dominant_period`` is the same peak for one component alone, for reference.

Shapes: T positions, D dims, n components. Tensors in, float64 tensors and plain numbers out.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import _, tr

PAD = 64  # zero-padding factor of the FFT: a frequency grid 64 times finer than 1 / T
MIN_QUADRATURE = 0.9  # component_pairs: how circular two components must turn to count as a pair
MIN_SHARE = 0.01  # component_pairs: components holding less of the variance are noise, not waves
MAX_ROWS = 8192  # cosine_matrix holds a (T, T) matrix: refuse more rows than this


def _table(name: str, table, min_rows: int = 2, nonzero_rows: bool = True) -> torch.Tensor:
    """``table`` as a finite float64 (T, D) tensor with T >= min_rows, or a ValueError."""
    validate.float_tensor(name, table, min_rank=2, max_rank=2, shape_hint="(T, D)")
    if table.is_complex():
        raise ValueError(
            tr("{name} must hold real numbers, got dtype {dtype}.", name=name, dtype=table.dtype)
        )
    if table.shape[0] < min_rows or table.shape[1] == 0:
        raise ValueError(
            tr(
                "{name} needs at least {min_rows} rows (positions) and one column, got shape "
                "{shape}.",
                name=name,
                min_rows=min_rows,
                shape=tuple(table.shape),
            )
        )
    if table.shape[0] > MAX_ROWS:
        raise ValueError(
            tr(
                "{name} has {rows} rows; these measurements build a (T, T) matrix and take "
                "at most {max_rows} rows.",
                name=name,
                rows=table.shape[0],
                max_rows=MAX_ROWS,
            )
        )
    table = table.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(table).all()):
        raise ValueError(tr("{name} contains NaN or infinite values.", name=name))
    if nonzero_rows:
        zero = (table.norm(dim=-1) == 0).nonzero()
        if zero.numel():
            raise ValueError(
                tr(
                    "row {row} of {name} is all zeros: the cosine of a zero vector with "
                    "anything is undefined (0 / 0). Leave such rows out first.",
                    row=int(zero[0]),
                    name=name,
                )
            )
    return table


def cosine_matrix(table) -> torch.Tensor:
    """cos(P_s, P_t) for every pair of positions. (T, D) -> (T, T) float64, ones on the diagonal."""
    table = _table("table", table)
    unit = table / table.norm(dim=-1, keepdim=True)  # (T, D) rows of length 1
    return unit @ unit.T  # (T, T)


def _offset(k, n_rows: int) -> int:
    k = validate.whole_int("offset k", k)
    if not 0 <= k < n_rows:
        raise ValueError(
            tr(
                "offset k must be 0..{last} for a table of {n_rows} positions (a pair t, t + k "
                "must fit in it), got {k}.",
                last=n_rows - 1,
                n_rows=n_rows,
                k=k,
            )
        )
    return k


def cosine_at_offset(table, k) -> float:
    """The mean over t = 0 .. T-1-k of cos(P_t, P_{t+k}): how alike positions k apart are. (T, D)."""
    table = _table("table", table)
    k = _offset(k, table.shape[0])
    unit = table / table.norm(dim=-1, keepdim=True)  # (T, D)
    return float((unit[: unit.shape[0] - k] * unit[k:]).sum(-1).mean())  # mean of (T-k,)


def cosine_by_offset(table) -> torch.Tensor:
    """The similarity-vs-offset curve: entry k is ``cosine_at_offset(table, k)``. (T, D) -> (T,).

    Entry 0 is 1 (each row with itself); entry T - 1 is the single pair (0, T - 1).
    """
    similarity = cosine_matrix(table)  # (T, T)
    n = similarity.shape[0]
    return torch.stack([similarity.diagonal(k).mean() for k in range(n)])  # (T,)


def first_offset_below(table, threshold=0.5) -> int:
    """The first offset k >= 1 whose mean cosine ``cosine_at_offset(table, k)`` is < threshold.

    (T, D) table, a threshold in [-1, 1]. If no offset 1 .. T-1 drops below it, returns T: the
    answer lies past the table's end (like ``len``, one past the last valid offset).
    """
    threshold = validate.real_number("threshold", threshold)
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(
            tr(
                "threshold is a cosine, so it must be in [-1, 1]; got {threshold}.",
                threshold=threshold,
            )
        )
    curve = cosine_by_offset(table)  # (T,)
    below = (curve[1:] < threshold).nonzero()  # offsets k - 1 where the mean is below
    return int(below[0]) + 1 if below.numel() else int(curve.shape[0])


@dataclass(frozen=True)
class PCA:
    """The principal components of a (T, D) table.

    scores: (T, n), column j is component j as a function of position (row t = position t);
    explained: (n,), the share of the table's total variance each component holds;
    directions: (n, D), the unit vectors in model space; mean: (D,), the mean row taken off first.
    """

    scores: torch.Tensor
    explained: torch.Tensor
    directions: torch.Tensor
    mean: torch.Tensor


def principal_components(table, n_components=None) -> PCA:
    """PCA of a (T, D) table of position vectors: centre the rows, then an SVD. float64.

    P - mean = U S V^T; scores = U S (T, n), directions = rows of V^T, explained = S^2 / sum S^2.
    Each component's sign is fixed so that its largest |score| is positive: the same table gives the
    same components on every machine. n_components: how many to keep (default all, min(T, D)).
    """
    table = _table("table", table, nonzero_rows=False)
    n_max = min(table.shape)
    n = n_max if n_components is None else validate.positive_int("n_components", n_components)
    if n > n_max:
        raise ValueError(
            tr(
                "n_components must be at most min(T, D) = {n_max} for a table of shape "
                "{shape}, got {n}.",
                n_max=n_max,
                shape=tuple(table.shape),
                n=n,
            )
        )
    mean = table.mean(0)  # (D,)
    u, s, vh = torch.linalg.svd(table - mean, full_matrices=False)  # (T, r), (r,), (r, D)
    total = float(s.pow(2).sum())
    if total == 0:
        raise ValueError(_("every row of the table is the same: there is no variance to analyse."))
    scores = u[:, :n] * s[:n]  # (T, n)
    flip = scores.gather(0, scores.abs().argmax(0, keepdim=True)).sign()  # (1, n)
    flip[flip == 0] = 1.0
    return PCA(
        scores=scores * flip,
        explained=s[:n].pow(2) / total,
        directions=vh[:n] * flip.T,
        mean=mean,
    )


def without_components(table, pca: PCA, components) -> torch.Tensor:
    """The (T, D) table with the given components (1-based, as printed) taken out: P - S_c V_c.

    ``pca`` must be ``principal_components(table)`` (all components, or at least those named).
    """
    table = _table("table", table, nonzero_rows=False)
    n = pca.scores.shape[1]
    columns = [validate.positive_int("component", c, maximum=n) - 1 for c in components]
    if pca.scores.shape[0] != table.shape[0] or pca.directions.shape[1] != table.shape[1]:
        raise ValueError(
            tr(
                "pca is of a {rows} x {columns} table, not of this {shape} one.",
                rows=pca.scores.shape[0],
                columns=pca.directions.shape[1],
                shape=tuple(table.shape),
            )
        )
    return table - pca.scores[:, columns] @ pca.directions[columns]  # (T, D)


def smoothed_noise(width, n_rows=512, dim=384, generator=None) -> torch.Tensor:
    """A control table with no sinusoids in it: white noise blurred along the positions.

    Each of the ``dim`` columns is Gaussian noise convolved with a Gaussian of ``width`` positions
    (kernel scaled to unit norm, so every entry has variance 1). Neighbouring rows are alike and
    far rows are not, as in a trained table, so its PCA finds wave-like components too. (T, D)
    float64, from ``generator`` (a torch.Generator) if given.
    """
    width = validate.positive_float("width", width)
    n_rows = validate.positive_int("n_rows", n_rows)
    dim = validate.positive_int("dim", dim)
    reach = max(1, 3 * int(width))
    validate.table_size("smoothed_noise", n_rows + 2 * reach, dim)
    x = torch.randn(dim, 1, n_rows + 2 * reach, generator=generator, dtype=torch.float64)
    u = torch.arange(-reach, reach + 1, dtype=torch.float64)  # (2r+1,)
    kernel = torch.exp(-0.5 * (u / width) ** 2)
    blurred = torch.nn.functional.conv1d(x, (kernel / kernel.norm())[None, None])  # (D, 1, T)
    return blurred[:, 0].T  # (T, D)


def _signal(name: str, values, min_length: int = 4) -> torch.Tensor:
    validate.float_tensor(name, values, min_rank=1, max_rank=1, shape_hint="(T,)")
    if values.is_complex() or values.numel() < min_length:
        raise ValueError(
            tr(
                "{name} must be a real (T,) signal with at least {min_length} positions, got "
                "shape {shape} and dtype {dtype}.",
                name=name,
                min_length=min_length,
                shape=tuple(values.shape),
                dtype=values.dtype,
            )
        )
    values = values.detach().to("cpu", torch.float64)
    if not bool(torch.isfinite(values).all()):
        raise ValueError(tr("{name} contains NaN or infinite values.", name=name))
    return values - values.mean()


def _peak(z: torch.Tensor) -> tuple[float, float, float]:
    """(frequency in cycles per position, power there, power at the mirror frequency) of z (T,)."""
    n = PAD * z.shape[0]
    spectrum = torch.fft.fft(z, n=n).abs().pow(2)  # (n,)
    spectrum[0] = 0.0  # the mean was taken off; a zero frequency has no period
    j = int(spectrum.argmax())
    frequency = j / n if j <= n // 2 else (j - n) / n  # signed, in (-1/2, 1/2]
    return frequency, float(spectrum[j]), float(spectrum[(n - j) % n])


def dominant_period(signal) -> float:
    """The period (in positions) of the strongest wave in a (T,) signal: its FFT peak, zero-padded.

    One real component; for a pair of components ``pair_rotation`` is exact where this is not (a
    real wave's mirror peak shifts this one a little when few periods fit in T).
    """
    values = _signal("signal", signal)
    if float(values.abs().max()) == 0:
        raise ValueError(_("the signal is constant: it has no period."))
    frequency, _power, _mirror = _peak(values.to(torch.complex128))
    return 1.0 / abs(frequency)


def pair_rotation(a, b) -> tuple[float, float]:
    """How two components turn together: (period, quadrature). a, b: (T,) each.

    period: 1 / |f| at the peak of the spectrum of z = a + i b (both centred), in positions.
    quadrature: (|Z(f)|^2 - |Z(-f)|^2) / (|Z(f)|^2 + |Z(-f)|^2), 1 for a sin/cos pair, 0 for two
    waves in step. See the module's docstring for why this estimate.
    """
    a, b = _signal("a", a), _signal("b", b)
    if a.shape != b.shape:
        raise ValueError(
            tr("a and b must have the same length, got {a} and {b}.", a=a.shape[0], b=b.shape[0])
        )
    if float(a.abs().max()) == 0 or float(b.abs().max()) == 0:
        raise ValueError(_("a component is constant: a constant does not turn."))
    frequency, power, mirror = _peak(torch.complex(a, b))
    return 1.0 / abs(frequency), (power - mirror) / (power + mirror)


@dataclass(frozen=True)
class ComponentPair:
    """Two principal components (0-based indices) that turn together like a (sin, cos) pair."""

    first: int
    second: int
    period: float  # positions per turn
    quadrature: float  # 1 = a perfect sin/cos pair
    explained: float  # share of the table's variance the two hold together


def component_pairs(
    pca: PCA, min_quadrature=MIN_QUADRATURE, min_share=MIN_SHARE
) -> list[ComponentPair]:
    """Pair up the components of ``pca`` that turn like (sin, cos) pairs, best pairs first.

    Only components holding at least ``min_share`` of the variance take part (two components of
    pure noise can also look a quarter turn apart at their strongest frequency). Every two of them,
    i < j, get ``pair_rotation``; the pair with the highest quadrature is taken, both its components
    leave the pool, and so on while the best left has quadrature >= min_quadrature and a period of
    at most T (at least one full turn inside the table). Returned in order of first component.
    """
    if not isinstance(pca, PCA):
        raise ValueError(
            tr(
                "component_pairs takes the result of principal_components, got {value}.",
                value=validate.show(pca),
            )
        )
    min_quadrature = validate.real_number("min_quadrature", min_quadrature)
    if not 0.0 < min_quadrature <= 1.0:
        raise ValueError(f"min_quadrature must be in (0, 1], got {min_quadrature}.")
    min_share = validate.real_number("min_share", min_share)
    if not 0.0 < min_share < 1.0:
        raise ValueError(f"min_share must be in (0, 1), got {min_share}.")
    scores = pca.scores  # (T, n)
    n_rows = scores.shape[0]
    kept = [i for i in range(scores.shape[1]) if float(pca.explained[i]) >= min_share]
    candidates = []
    for i in kept:
        for j in (j for j in kept if j > i):
            period, quadrature = pair_rotation(scores[:, i], scores[:, j])
            if quadrature >= min_quadrature and period <= n_rows:
                candidates.append((quadrature, i, j, period))
    pairs, used = [], set()
    for quadrature, i, j, period in sorted(candidates, reverse=True):
        if i in used or j in used:
            continue
        used |= {i, j}
        share = float(pca.explained[i] + pca.explained[j])
        pairs.append(ComponentPair(i, j, period, quadrature, share))
    return sorted(pairs, key=lambda p: p.first)
