"""Chapter 8's concept questions (1 point each), answered in the exercises notebook:

- c1 (number): the wavelength of SmolLM2's slowest rotary pair, from its config (head_dim 64,
  rope_theta 100000) through ``ch08_config.rope_from_config``;
- c2 (choice): a KV-cache loop whose new tokens' positions restart at 0;
- c3 (number): the first position id bfloat16 cannot store, from ``ch08_precision``;
- c4 (choice): SmolLM2 fed 16,384 tokens, twice its trained 8,192, with and without a scaling.

Every number in a statement is one chapter 8 prints. The numeric answers are computed with the
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

c1 = Numeric(
    "c1",
    prompt=N_(
        "SmolLM2-135M's config gives head_dim 64 and rope_theta 100000. Roughly how many "
        "positions does its slowest rotary pair take to turn once?"
    ),
    answer=lambda: 2 * math.pi / float(rope_from_config(SMOLLM2, dtype=torch.float64)[0][-1]),
    rel_tol=0.05,
    unit=N_("positions"),
    why=N_(
        "2π · 100000^(62/64) ≈ 438,000: the slowest pair, i = 31, turns θ_31 = base^(−62/64) "
        "radians per position, so it needs 2π / θ_31 positions for a turn, far more than the 8,192 "
        "trained (section 1's table; chapter 6, section 9)."
    ),
    mistakes=(
        Mistake(
            2 * math.pi * 100000,
            N_(
                "2π · base ≈ 628,000 is the seeds' wavelength of a pair turning 1/base per position. "
                "RoPE's slowest pair turns base^(−(D−2)/D), a little faster (chapter 6, section 9)."
            ),
        ),
        Mistake(
            100000.0,
            N_(
                "100,000 is the base itself. A pair's wavelength is 2π / θ_i, and the slowest pair "
                "turns θ_31 = base^(−62/64) radians per position (section 1)."
            ),
        ),
        Mistake(
            8192.0,
            N_(
                "8,192 is the trained context (max_position_embeddings), not a wavelength: the slowest "
                "pair turns far less than once within it (section 1's table)."
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
    section=N_("section 1 of this chapter"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "A KV-cache loop feeds SmolLM2 one new token at a time after a 40-token prompt, but "
        "passes position_ids that restart at 0 for the new tokens. What happens?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "No error, but every step moves some logit by more than 1; only 3 of 8 next tokens "
                "match."
            ),
            why=N_(
                "The cache stores keys already rotated, so each new token must be turned to its "
                "true position, the cache's length (40, 41, ...). Restarted at 0, its distance to every "
                "prompt key is wrong, silently (section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Nothing changes: a RoPE score depends only on m − n, and every new position is off by "
                "the same 40."
            ),
            why=N_(
                "The prompt's cached keys keep their true rotations 0..39; only the new tokens "
                "restart. So every distance from a new query to a prompt key is wrong, many of them "
                "negative, and only 3 of 8 next tokens survive (section 4)."
            ),
        ),
        Choice(
            "c",
            N_(
                "transformers raises an error at the first new token: its position ids do not match "
                "the cache's length."
            ),
            why=N_(
                "Nothing raises an error: the causal mask comes from the cache's length, and the "
                "wrong positions only change the rotation. That is why the bug survives in real code "
                "(section 4)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Only the first new token is wrong; from the second on the cache corrects the "
                "positions."
            ),
            why=N_(
                "The cache corrects nothing: it stores keys already rotated, and each new token "
                "keeps the wrong position it is given. The logits move by more than 1 at every one "
                "of the 8 steps (section 4)."
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
                "range but only 8 significant bits, so it fails at 2^8 + 1 (section 5)."
            ),
        ),
        Mistake(
            2.0**24 + 1,
            N_(
                "2^24 + 1 is float32's limit (24 significant bits). bfloat16 keeps only 8, so it "
                "fails at 2^8 + 1 (section 5)."
            ),
        ),
    ),
    section=N_("section 5 of this chapter"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "SmolLM2 was trained on at most 8,192 tokens. Fed one 16,384-token text with no "
        "fine-tuning, which statement matches the chapter's measurements?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "It stops with an error past max_position_embeddings, like a learned position table."
            ),
            why=N_(
                "RoPE has no table that runs out: nothing stops a longer input, the model runs "
                "and its quality drops (section 6)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Nothing changes: RoPE is relative, so any longer input reads as well as a trained one."
            ),
            why=N_(
                "Extrapolation is not free: with no scaling the last quarter of the 16,384 window "
                "scores perplexity 437, against 8.7 for the last quarter of an 8,192 window "
                "(section 6)."
            ),
        ),
        Choice(
            "c",
            N_(
                "PI rescues it best (34.1 against 437 with no scaling), since it keeps every angle "
                "inside the trained range."
            ),
            why=N_(
                "PI squeezes every pair, the fast ones too: YaRN (11.3) and dynamic NTK (12.2) do "
                "better past 8,192, and PI pays inside the trained length too (35.4 at 4,096) and "
                "fails the passkey even at 1,024 tokens (section 6)."
            ),
        ),
        Choice(
            "d",
            N_(
                "It runs, but its last quarter scores perplexity 437 (8.7 within 8,192 tokens); YaRN "
                "(factor 2) brings that to 11.3."
            ),
            why=N_(
                "The slow pairs meet angles never seen in training; YaRN (11.3) and dynamic NTK "
                "(12.2) rescue most of it without training, PI less (34.1) (section 6's table)."
            ),
        ),
    ),
    answer="d",
    section=N_("section 6 of this chapter"),
)

CONCEPTS = (c1, c2, c3, c4)
