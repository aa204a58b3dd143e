"""Seeded draws for the questions' inputs: the same seed gives the same cases, every time.

Seed 0 gives a question's public inputs; a grader's seed gives hidden ones. Each question draws from
its own stream, ``seeded(seed, salt)`` with the question's salt, so adding a draw to one question
changes no other question's inputs.
"""

from __future__ import annotations

import torch


def seeded(seed: int, salt: int) -> torch.Generator:
    """A generator for one question (``salt``) and one set of inputs (``seed``)."""
    return torch.Generator().manual_seed(seed * 7919 + salt)


def randint(low: int, high: int, generator: torch.Generator) -> int:
    """A whole number in low..high - 1."""
    return int(torch.randint(low, high, (1,), generator=generator))


def pick(options, generator: torch.Generator):
    """One of ``options``, each as likely."""
    return options[randint(0, len(options), generator)]
