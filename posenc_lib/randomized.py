"""Randomized positions (Ruoss et al. 2023, "Randomized Positional Encodings Boost Length
Generalization of Transformers", arXiv:2305.16843, Figure 1 and the method it illustrates).

A model trained on texts of T tokens sees positions 0 .. T-1 only. Randomized positions give each
training text T positions drawn at random, without repeats, from a much longer range 0 .. N-1 and
sorted, so the order survives while the model meets every position (and every distance) up to
N - 1 during training. The authors' code draws them at evaluation too
(``noisy_fixed_positional_encodings`` in google-deepmind/randomized_positional_encodings,
models/positional_encodings.py); at T = N they are 0 .. N-1 exactly.

Shapes: T positions, N the range, (*batch, T) the result.
"""

from __future__ import annotations

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import N_, tr


def randomized_positions(n_positions, max_position, *, batch=(), generator=None, device=None):
    """Sorted positions drawn without repeats from 0 .. max_position - 1: int64 (*batch, T).

    Every row is an independent draw; ``generator`` (a ``torch.Generator``) makes it reproducible.
    """
    n = validate.positive_int("n_positions", n_positions)
    top = validate.positive_int("max_position", max_position)
    if n > top:
        raise ValueError(
            tr(
                "cannot draw {n} different positions from a range of {top} (0..{last}); "
                "max_position must be at least the number of positions, {n}.",
                n=n,
                top=top,
                last=top - 1,
            )
        )
    batch = (batch,) if isinstance(batch, int) else tuple(batch)
    shape = tuple(validate.positive_int("batch", b) for b in batch)
    validate.table_size(N_("the random keys"), *shape, top)
    keys = torch.rand(*shape, top, generator=generator, device=device)  # (*batch, N)
    return keys.argsort(dim=-1)[..., :n].sort(dim=-1).values  # (*batch, T)
