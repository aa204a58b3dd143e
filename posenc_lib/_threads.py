"""Running a small piece of work on one CPU thread (models and measurements share it)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import torch


@contextlib.contextmanager
def one_thread() -> Iterator[None]:
    """Run the block on one CPU thread, then restore torch's thread count.

    A few short sentences, or one token of decoding, are too little work to share out: several
    threads spend longer handing it out than doing it (about 20x longer for MiniLM's sentences on a
    busy 2-core machine, 0.4 s instead of 0.02 s per call; about 4x for one SmolLM2 decoding step).
    It also removes one source of machine-to-machine differences in the last digits: how the work
    is split among threads.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
