"""Chapter 8's concept questions for the exercises (1 point each): each asks the learner to use an
idea of the lecture on a case or numbers the lecture does not print, where the lecture's own quiz
(``concepts.CONCEPTS``, shown by ``quiz(CONCEPTS)``) asks about SmolLM2's own numbers.

- c1 (number): the wavelength of the slowest rotary pair of a config the lecture's table does not
  hold (head_dim 64, rope_theta 500000), through ``ch08_config.rope_from_config``;
- c2 (choice): what a KV-cache loop that passes its step counter as the position does;
- c3 (number): the first position id float16 cannot store;
- c4 (choice): why YaRN leaves SmolLM2's fastest pair alone when stretched to 16,384 tokens.

The numeric answers and the named mistakes are computed with the library (and torch's float16),
from configs written here, never by loading the model: a question costs nothing at import.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch08_config import PUBLISHED_ROPE, rope_from_config
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

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
        "(section 1; chapter 6, section 9)."
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
                "section 9)."
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
            N_("transformers raises an error, since position 2 is already in the cache."),
            why=N_(
                "Nothing checks the position against the cache: it only sets the new query's "
                "rotation, and the mask comes from the cache's length. That is why the bug is "
                "silent (section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Nothing changes: RoPE scores depend only on m − n, and the cached keys are "
                "rotated again to match the new position."
            ),
            why=N_(
                "A cached key was rotated once, at its own position, when it was computed, and is "
                "never rotated again; only the new query's m is chosen now (section 4)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The new query is turned as if at position 2: every distance to a cached key comes "
                "out 12 too small (to the key at 13: −11, as if in its future), and no error is "
                "raised."
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

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "SmolLM2 (head_dim 64, base 100000, trained length 8,192) is run on 16,384 tokens with "
        "YaRN, s = 2. Its pair 0 turns once every 2π ≈ 6.3 positions. YaRN halves the slow pairs' "
        "frequencies and leaves pair 0 alone. Why is that right for pair 0?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Pair 0 turns so fast that it carries no information about position, so nothing "
                "done to it matters."
            ),
            why=N_(
                "The fast pairs are what tell neighbouring tokens apart (chapter 6, section 2); "
                "slowing them is what costs PI its precision, even inside 8,192 (section 6)."
            ),
        ),
        Choice(
            "b",
            N_(
                "It turns about 1,300 times within 8,192 positions, so it has shown every angle "
                "it can; 16,384 brings it none new, and halving it would only blur short distances."
            ),
            why=N_(
                "8,192 / 2π ≈ 1,300 turns: pair 0 has met every angle in training, so only the slow "
                "pairs meet new angles past 8,192. Halving pair 0 would squeeze neighbours "
                "together, which PI pays for at every length (section 6; chapter 7, section 4)."
            ),
        ),
        Choice(
            "c",
            N_("Halving pair 0's frequency would make it turn faster, out of the trained range."),
            why=N_(
                "Dividing a frequency makes a pair turn more slowly, not faster (chapter 7, "
                "section 4)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Changing pair 0 would make the scores depend on absolute positions; YaRN keeps "
                "them relative by changing the slow pairs only."
            ),
            why=N_(
                "Any change of the frequencies keeps each score a function of m − n: PI, which "
                "changes every pair, is relative too (chapter 7, section 4)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 6 of this chapter (and chapter 7, section 4)"),
)

EXERCISE_CONCEPTS = (c1, c2, c3, c4)
