"""Chapter 8's concept questions (1 point each), answered in the exercises notebook:

- c1 (number): the wavelength of the slowest rotary pair of a config the lecture's table does not
  hold (head_dim 64, rope_theta 10000), through ``ch08_config.rope_from_config``;
- c2 (choice): why a KV-cache loop must pass each new token's true position (cached keys are
  rotated once);
- c3 (number): the first position id bfloat16 cannot store, from ``ch08_precision``;
- c4 (choice): why leaving the fast pairs alone (YaRN) reads past the trained length better than
  squeezing every pair (PI).

Every number in a statement is one chapter 8 prints, but c1's config, whose answer the learner
works out. The numeric answers are computed with the
library from the published config (``ch08_config.PUBLISHED_ROPE``), never by loading the model:
a question costs nothing at import.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch08_config import PUBLISHED_ROPE, rope_from_config
from posenc_lib.analysis.ch08_precision import first_inexact_bf16_position
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

# SmolLM2-135M's config.json (head_dim 64, rope_theta 100000, 8,192 positions), as published.
SMOLLM2 = next(entry.config for entry in PUBLISHED_ROPE if entry.model == "SmolLM2-135M")

# A config the lecture's table does not hold: RoFormer's base with SmolLM2's head size.
ROFORMER_BASE_D64 = {**SMOLLM2, "rope_theta": 10000.0}


def _slowest(config) -> float:
    """The slowest pair's wavelength 2π / θ_last of ``config``, in positions."""
    return 2 * math.pi / float(rope_from_config(config, dtype=torch.float64)[0][-1])


c1 = Numeric(
    "c1",
    prompt=N_(
        "A config gives head_dim 64 and rope_theta 10000 (SmolLM2's head size with Llama 2's "
        "base). Roughly how many positions does its slowest rotary pair take to turn once?"
    ),
    answer=lambda: _slowest(ROFORMER_BASE_D64),
    rel_tol=0.05,
    unit=N_("positions"),
    why=N_(
        "2π · 10000^(62/64) ≈ 47,000: the slowest pair, i = 31, turns θ_31 = base^(−62/64) "
        "radians per position, so it needs 2π / θ_31 positions for a turn (chapter 6, section 7). "
        "Llama 2's row in section 1's table says 54,410 because its head_dim is 128: the exponent "
        "is (D − 2)/D."
    ),
    mistakes=(
        Mistake(
            2 * math.pi * 10000,
            N_(
                "2π · base ≈ 62,800 is a common tutorial's wavelength of a pair turning 1/base per "
                "position; RoPE's slowest pair turns a little faster than that (chapter 6, section 7)."
            ),
        ),
        Mistake(
            _slowest(PUBLISHED_ROPE[0].config),
            N_(
                "54,410 is Llama 2's row in section 1's table: the same base, but head_dim 128. The "
                "slowest pair's exponent depends on the head_dim (section 1)."
            ),
        ),
        Mistake(
            10000.0,
            N_(
                "10,000 is the base itself, not a wavelength: work out how far the slowest pair "
                "turns per position (section 1)."
            ),
        ),
        Mistake(
            2 * math.pi,
            N_(
                "2π ≈ 6.3 is the wavelength of pair 0, the fastest (θ_0 = 1 in every model); the "
                "slowest is pair 31 (section 1)."
            ),
        ),
    ),
    answer_keys=("10000^(62/64)", "base^(−62/64)", "base^(−(D−2)/D)"),
    section=N_("section 1 of this chapter"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "A KV-cache loop must pass each new token's true position (the cache's length) in "
        "position_ids. Why does RoPE make that necessary?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "The cached keys were rotated once, at their own positions, when they were computed; "
                "only the new query is turned now, so its position sets its distance to each of them."
            ),
            why=N_(
                "A cached key keeps the rotation of its position n; the score then depends on m − n, "
                "and only the new token's m is chosen now. A wrong m gives wrong distances to every "
                "cached key, with no error raised (section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "The cache stores keys without rotation, and the new position tells the model how far "
                "to rotate all of them at this step."
            ),
            why=N_(
                "The cache holds keys already rotated: each is turned once, when it is computed, and "
                "never again. Rotating every cached key at each step would also cost a pass over the "
                "whole cache (section 4)."
            ),
        ),
        Choice(
            "c",
            N_("A RoPE score depends on the query's absolute position m, not on m − n."),
            why=N_(
                "A RoPE score depends on m − n only (chapter 6, section 1). That is the reason m must "
                "be right: the cached keys' n are fixed, so m alone sets every distance (section 4)."
            ),
        ),
        Choice(
            "d",
            N_(
                "The causal mask is built from position_ids, so a wrong position lets a token see "
                "keys after it."
            ),
            why=N_(
                "The mask comes from the cache's length, not from position_ids; a wrong position only "
                "changes the rotation, which is why the bug raises no error (section 4)."
            ),
        ),
    ),
    answer="a",
    section=N_("section 4 of this chapter"),
)

c3 = Numeric(
    "c3",
    prompt=N_(
        "bfloat16 keeps 8 significant bits. What is the smallest positive integer position "
        "that a position id stored in bfloat16 can no longer hold exactly?"
    ),
    answer=lambda: first_inexact_bf16_position(),  # tries 0, 1, 2, ... in bfloat16
    rel_tol=0.001,
    why=N_(
        "2^8 + 1 = 257: 8 significant bits hold every integer up to 2^8 = 256, and 257 needs 9; it "
        "is stored as 256, and past 4,096 the spacing is 32. So angles are formed in float32 "
        "(section 5)."
    ),
    mistakes=(
        Mistake(
            256.0,
            N_(
                "256 = 2^8 is still exact: 8 significant bits hold every integer up to 2^8. Look for "
                "the first integer that needs a 9th significant bit (section 5)."
            ),
        ),
        Mistake(
            2049.0,
            N_(
                "2,049 = 2^11 + 1 is float16's limit (11 significant bits). bfloat16 has float32's "
                "range but fewer significant bits (section 5)."
            ),
        ),
        Mistake(
            2.0**24 + 1,
            N_(
                "2^24 + 1 is float32's limit (24 significant bits); bfloat16 keeps far fewer "
                "(section 5)."
            ),
        ),
    ),
    answer_keys=("2^8 + 1",),
    section=N_("section 5 of this chapter"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "Fed a text longer than its training, PI divides every rotary pair's frequency by the "
        "factor, while YaRN divides only the slow pairs' and leaves the fast pairs alone. Why does "
        "leaving the fast pairs alone help?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Dividing the slow pairs' frequencies makes them turn faster, back into the trained range."
            ),
            why=N_(
                "Dividing a frequency makes a pair turn more slowly, not faster: that is what keeps "
                "the slow pairs' angles inside the range seen in training (chapter 7, section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "PI divides the positions while YaRN changes the frequencies, so only YaRN keeps the "
                "scores relative."
            ),
            why=N_(
                "Dividing every position by s and dividing every frequency by s are the same "
                "rotation, and both keep each score a function of m − n (chapter 7, section 4)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The fast pairs carry no information about position, so it does not matter what is "
                "done to them."
            ),
            why=N_(
                "The fast pairs are what tell neighbouring tokens apart (chapter 6, section 2); "
                "changing them is exactly what costs PI its short-range precision (section 6)."
            ),
        ),
        Choice(
            "d",
            N_(
                "A fast pair turns many times within the trained length, so it meets no new angle "
                "past it; slowing it down only blurs the short distances it tells apart."
            ),
            why=N_(
                "Only the slow pairs meet angles never seen in training; the fast ones have seen every "
                "angle, and dividing their frequency squeezes near tokens together, which PI pays for "
                "even inside the trained length (section 6; chapter 7, section 4)."
            ),
        ),
    ),
    answer="d",
    section=N_("section 6 of this chapter (and chapter 7, section 4)"),
)

CONCEPTS = (c1, c2, c3, c4)
