"""Chapter 8's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on a case or numbers the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about SmolLM2's own numbers.

- c1 (number): the wavelength of the slowest rotary pair of a config the lecture's table does not
  hold (head_dim 64, rope_theta 500000), through ``ch08_config.rope_from_config``;
- c2 (choice): what a KV-cache loop that passes its step counter as the position does;
- c3 (number): the first position id float16 cannot store;
- c4 (number): the factor YaRN (s = 2) multiplies SmolLM2's pair 15 by, a pair on its ramp,
  through ``rope_inv_freq``.

The numeric answers and the named mistakes are computed with the library (and torch's float16),
from configs written here, never by loading the model: a question costs nothing at import.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch08_config import PUBLISHED_ROPE, rope_from_config
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_
from posenc_lib.rope_scaling import rope_inv_freq

# A config the lecture's table does not hold: SmolLM2's head_dim with Llama 3's base, no scaling.
ASKED = {
    "hidden_size": 2048,
    "num_attention_heads": 32,
    "head_dim": 64,
    "max_position_embeddings": 8192,
    "rope_theta": 500000.0,
}
SMOLLM2 = next(entry.config for entry in PUBLISHED_ROPE if entry.model == "SmolLM2-135M")
LLAMA3 = next(entry.config for entry in PUBLISHED_ROPE if entry.model == "Llama 3 8B")


def _slowest_wavelength(config: dict) -> float:
    """2 pi / theta of the config's slowest rotary pair, from the library."""
    return 2 * math.pi / float(rope_from_config(config, dtype=torch.float64)[0][-1])


def _first_inexact(dtype: torch.dtype, limit: int = 1 << 16) -> int:
    """The smallest positive integer ``dtype`` cannot store exactly (as ch08_precision does for
    bfloat16)."""
    n = torch.arange(limit + 1, dtype=torch.float64)
    return int(torch.nonzero(n.to(dtype).double() != n)[0])


c1 = Numeric(
    "c1",
    prompt=N_(
        "A config gives head_dim 64 and rope_theta 500000, with no rope scaling. Roughly how many "
        "positions does its slowest rotary pair take to turn once?"
    ),
    answer=lambda: _slowest_wavelength(ASKED),  # 2 pi * 500000 ** (62 / 64)
    rel_tol=0.05,
    unit=N_("positions"),
    why=N_(
        "2π · 500000^(62/64) ≈ 2,085,000: with head_dim 64 the slowest pair is i = 31, which "
        "turns θ_31 = base^(−62/64) radians per position, so a turn takes 2π / θ_31 positions "
        "(section 1; chapter 6, section 7)."
    ),
    mistakes=(
        Mistake(
            _slowest_wavelength(LLAMA3),
            N_(
                "that is Llama 3 8B's row of section 1's table, whose heads have 128 dimensions; "
                "the exponent depends on head_dim (section 1)."
            ),
        ),
        Mistake(
            2 * math.pi * ASKED["rope_theta"],
            N_(
                "2π · base is a common tutorial's wavelength of a pair turning 1/base per "
                "position; RoPE's slowest pair turns a little faster than that (chapter 6, "
                "section 7)."
            ),
        ),
        Mistake(
            _slowest_wavelength(SMOLLM2),
            N_(
                "that is SmolLM2's slowest pair, with rope_theta 100000; this config has another "
                "base (section 1)."
            ),
        ),
        Mistake(
            _slowest_wavelength(ASKED) / (2 * math.pi),
            N_("that is 1/θ_31, the positions per radian; a full turn is 2π radians (section 1)."),
        ),
        Mistake(
            ASKED["rope_theta"],
            N_(
                "that is the base itself, not a wavelength: work out how far the slowest pair "
                "turns per position (section 1)."
            ),
        ),
        Mistake(
            2 * math.pi,
            N_(
                "2π ≈ 6.3 is the wavelength of pair 0, the fastest (θ_0 = 1 in every model); the "
                "slowest is the last pair (section 1)."
            ),
        ),
    ),
    answer_keys=("500000^(62/64)", "base^(−62/64)", "base^(−(D−2)/D)"),
    section=N_("section 1 of this chapter"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "A KV-cache loop has fed a 12-token prompt and 2 new tokens: the cache holds positions 0 "
        "to 13. For the next token it passes position_ids = [[2]], its step counter, instead of "
        "14. What happens?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "transformers stops with an error: position 2 already belongs to a token in the "
                "cache, so the step is refused."
            ),
            why=N_(
                "Nothing checks the position against the cache: it only sets the new query's "
                "rotation, and the mask comes from the cache's length. That is why the bug is "
                "silent (section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Nothing changes: the cached keys are rotated again to match position 2, so "
                "every distance m − n stays right."
            ),
            why=N_(
                "A cached key was rotated once, at its own position, when it was computed, and is "
                "never rotated again; only the new query's m is chosen now (section 4)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The query is turned as if at position 2: every distance to a cached key is 12 "
                "too small, and no error is raised."
            ),
            why=N_(
                "The cached keys keep their rotations at 0 … 13, and the score depends on m − n: "
                "with m = 2 instead of 14 every distance is off by 12, and the keys after 2 look "
                "like future tokens, a relation never trained. No error: the mask comes from the "
                "cache's length (section 4)."
            ),
        ),
        Choice(
            "d",
            N_(
                "The causal mask hides the cached keys at positions 3 to 13, so the new token sees "
                "only the first three."
            ),
            why=N_(
                "The mask comes from the cache's length, not from position_ids: the new token "
                "still sees all 14 keys, at wrong distances (section 4)."
            ),
        ),
    ),
    answer="c",
    section=N_("section 4 of this chapter"),
)

c3 = Numeric(
    "c3",
    prompt=N_(
        "float16 keeps 11 significant bits. What is the smallest positive integer position that a "
        "position id stored in float16 can no longer hold exactly?"
    ),
    answer=lambda: _first_inexact(torch.float16),  # tries 0, 1, 2, ... in float16
    rel_tol=0.0001,
    why=N_(
        "2^11 + 1 = 2,049: 11 significant bits hold every integer up to 2^11 = 2,048, and 2,049 "
        "needs 12; it is stored as 2,048. The same reason as bfloat16's 257, with 3 more bits "
        "(section 5)."
    ),
    mistakes=(
        Mistake(
            2.0**11,
            N_(
                "that power of two is still exact: 11 significant bits hold every integer up to "
                "2^11. Look for the first integer that needs a 12th significant bit (section 5)."
            ),
        ),
        Mistake(
            2.0**10 + 1,
            N_(
                "you counted 10 significant bits, the bits float16 stores after the point; the "
                "leading 1 is the 11th (section 5)."
            ),
        ),
        Mistake(
            float(_first_inexact(torch.bfloat16)),
            N_(
                "that is bfloat16's limit, printed in section 5 (8 significant bits); float16 "
                "keeps more (section 5)."
            ),
        ),
        Mistake(
            float(torch.finfo(torch.float16).max),
            N_(
                "that is float16's largest number, its range; below it most integers are already "
                "rounded: count the significant bits (section 5)."
            ),
        ),
        Mistake(
            2.0**24 + 1,
            N_(
                "that is float32's limit (24 significant bits); float16 keeps far fewer (section 5)."
            ),
        ),
    ),
    answer_keys=("2^11 + 1",),
    section=N_("section 5 of this chapter"),
)


def _yarn_factor(pair: int, *, paper: bool = False) -> float:
    """The factor YaRN (s = 2, default betas) multiplies SmolLM2's pair ``pair``'s frequency by,
    through the library's rope_inv_freq; ``paper``: with the YaRN paper's ramp, linear in the
    turns over L rather than in the pair index (a named mistake)."""
    base, length, factor = SMOLLM2["rope_theta"], SMOLLM2["max_position_embeddings"], 2.0
    theta = float(rope_inv_freq(64, base, dtype=torch.float64)[0][pair])
    if paper:
        keep = min(max((length * theta / (2 * math.pi) - 1.0) / (32.0 - 1.0), 0.0), 1.0)
        return keep + (1 - keep) / factor
    yarn = {"rope_type": "yarn", "factor": factor, "original_max_position_embeddings": length}
    return float(rope_inv_freq(64, base, yarn, 2 * length, dtype=torch.float64)[0][pair]) / theta


def _turns(pair: int) -> float:
    """How many times SmolLM2's pair ``pair`` turns over its 8,192 positions."""
    theta = float(rope_inv_freq(64, SMOLLM2["rope_theta"], dtype=torch.float64)[0][pair])
    return SMOLLM2["max_position_embeddings"] * theta / (2 * math.pi)


c4 = Numeric(
    "c4",
    prompt=N_(
        "(Chapter 7 review.) SmolLM2 (head_dim 64, base 100000, L = 8,192) is run on 16,384 "
        "tokens with YaRN, "
        "s = 2, beta_fast 32 and beta_slow 1, as transformers runs it: its ramp (1 = pair kept, "
        "0 = pair divided by s) is linear in the pair index, 1 up to pair floor(i(32)) = 10 and "
        "0 from pair ceil(i(1)) = 20 on (i(β): the real pair index that turns β times over L). "
        "By what factor does YaRN multiply its frequency "
        "θ_15 (1 = kept, 0.5 = halved)?"
    ),
    answer=lambda: _yarn_factor(15),  # ramp 0.5: 0.5 + 0.5 / 2
    rel_tol=0.02,
    why=N_(
        "0.75: turning between beta_slow = 1 and beta_fast = 32 times, pair 15 sits on the "
        "ramp, which runs from pair floor(i(32)) = 10 (kept) to ceil(i(1)) = 20 (halved). It "
        "keeps ramp 0.5 of its frequency and halves the rest: 0.5 + 0.5 / 2 = 0.75 (chapter 7's "
        "question 2 builds this ramp)."
    ),
    mistakes=(
        Mistake(
            1.0,
            N_(
                "1 (kept) is for the pairs that turn more than beta_fast = 32 times over L; pair 15 "
                "turns about 6 times (chapter 7, section 4)."
            ),
        ),
        Mistake(
            0.5,
            N_(
                "0.5 (halved) is for the pairs that turn fewer than beta_slow = 1 time over L; pair 15 "
                "turns about 6 times, between the two ends (chapter 7, section 4). If 0.5 is your "
                "ramp value, it is the share of the frequency kept, not the factor."
            ),
        ),
        Mistake(
            _yarn_factor(15, paper=True),
            N_(
                "your ramp is linear in the number of turns, as the YaRN paper writes it; the "
                "prompt's ramp (transformers', which SmolLM2 runs) is linear in the pair index."
            ),
        ),
        Mistake(
            1.5,
            N_(
                "that is more than 1: your blend multiplies the halved share by s; YaRN slows the "
                "pairs it changes (chapter 7, section 4)."
            ),
        ),
    ),
    answer_keys=("0.5 + 0.5 / 2",),
    section=N_("the ramp the prompt states (chapter 7, section 4)"),
    hint=N_(
        "Where does pair 15 sit between pair 10 and pair 20, and so what is its ramp? Then "
        "weigh the kept frequency and the halved one by it."
    ),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
