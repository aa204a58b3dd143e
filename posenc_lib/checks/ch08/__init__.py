"""Chapter 8's exercises, on a real language model (SmolLM2-135M, 4-bit, dequantized to float32):
RoPE's frequencies and attention scale from a config.json, the un-permute of GGUF's query and key
rows, and greedy generation with your own KV-cache loop.

    from posenc_lib.checks.ch08 import q1, q2, q3
    q1.check(rope_from_config); q1.hint(); q1.solution()

and four concept questions, c1 to c4 (``exercise_concepts``), answered with a value:
``c1.check(answer_c1)``. ``CONCEPTS`` (``concepts``) is the lecture's quiz, ``quiz(CONCEPTS)``: the
exercises ask other questions, ``EXERCISE_CONCEPTS``, which make the learner use the same ideas on
cases the lecture does not print.

The references are the library's (``rope_scaling.rope_inv_freq``, ``ch06_rope.convert_projection``
and ``layout_permutation``, and chapter 8's own ``ch08_config.rope_from_config``,
``ch08_layout.to_half_rows`` and ``ch08_cache.greedy_generate_with_cache``) and transformers'
(the functions of ``ROPE_INIT_FUNCTIONS`` and the default one, the GGUF loader's
``_reverse_permute_weights``, ``generate``); each usual mistake is recomputed and, when the
learner's answer matches it, named. q3 hands the learner the real model, watched (see
``cache.py``): re-feeding the sequence, a forgotten cache, positions left to transformers or that
do not continue the cache, or more calls than the loop needs stop the answer with a sentence, in a
notebook and in the grader alike; each check adds a prompt of random token ids drawn afresh.
"""

from __future__ import annotations

from posenc_lib.checks.ch08.cache import GreedyWithCache
from posenc_lib.checks.ch08.concepts import CONCEPTS
from posenc_lib.checks.ch08.config import RopeFromConfig
from posenc_lib.checks.ch08.exercise_concepts import EXERCISE_CONCEPTS, c1, c2, c3, c4
from posenc_lib.checks.ch08.layout import UnpermuteGguf

q1, q2, q3 = RopeFromConfig(), UnpermuteGguf(), GreedyWithCache()
QUESTIONS = (q1, q2, q3, *EXERCISE_CONCEPTS)
# Address space the grader allows for the model q3 loads, on top of its --memory-mb for the
# learner's code: 540 MB of float32 weights, read through a memory map, and torch's working memory
# (a sandboxed child peaked at 940 MB resident).
LIBRARY_MEMORY_MB = 1536


def prepare() -> None:
    """Run once by the grader before it grades this chapter: convert the model into its cache, so
    that each sandboxed child (which may not write 500 MB) only reads it."""
    from posenc_lib.models.smollm import convert

    convert()


__all__ = [
    "CONCEPTS",
    "EXERCISE_CONCEPTS",
    "LIBRARY_MEMORY_MB",
    "QUESTIONS",
    "c1",
    "c2",
    "c3",
    "c4",
    "prepare",
    "q1",
    "q2",
    "q3",
]
