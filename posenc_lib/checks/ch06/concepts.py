"""Chapter 6's lecture quiz, ``quiz(CONCEPTS)`` at the end of ``notebooks/06_rope.ipynb`` (and the
website's and the classroom demo's quiz): four questions on the chapter's ideas, answered by a click.

- c1 (number): how many positions pair 0 takes to turn once at Llama 3's base 500,000, D = 128
  (2π whatever the base);
- c2 (choice): what RoPE turns (queries and keys, not values) and what the score then depends on;
- c3 (choice): weights made for one layout of the pairs, run with the other;
- c4 (choice): how the base should relate to the context (the slowest wavelength, not "base >
  context").

The exercises grade other questions (``exercise_concepts``), which make the learner use these ideas
on numbers the lecture does not print. Every number in a statement here is one chapter 6 prints;
the numeric answer is computed with the library's ``rope_inv_freq``, not typed in.
"""

from __future__ import annotations

import math

import torch

from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_
from posenc_lib.rope_scaling import rope_inv_freq


def _wavelength(pair: int, head_dim: int = 64, base: float = 10000.0) -> float:
    """Positions per full turn of RoPE's pair ``pair``: 2 pi / theta_pair, in float64."""
    theta = rope_inv_freq(head_dim, base, dtype=torch.float64)[0]  # (D/2,)
    return 2 * math.pi / float(theta[pair])


c1 = Numeric(
    "c1",
    prompt=N_(
        "Llama 3 uses RoPE with base 500,000 and head dimension D = 128. Roughly how many "
        "positions does its pair 0 (the fastest) take to turn once, back to the angle it started at?"
    ),
    answer=lambda: _wavelength(0, head_dim=128, base=500_000.0),  # theta_0 = 1
    rel_tol=0.05,
    unit=N_("positions"),
    why=N_(
        "2π / θ_0 ≈ 6.28: pair 0 turns θ_0 = base^0 = 1 radian per position whatever the base, so it "
        "comes back after 2π positions in every model; the base sets only the slow end of the ladder "
        "(section 2; the deep dive on RoPE's variants and base reads pair 0 as the units digit)."
    ),
    mistakes=(
        Mistake(
            1.0,
            N_(
                "1 is θ_0, the angle pair 0 turns per position (in radians), not the number of "
                "positions a full turn takes (sections 2 and 7)."
            ),
        ),
        Mistake(
            _wavelength(63, head_dim=128, base=500_000.0),
            N_(
                "about 2,559,000 positions is the wavelength of Llama 3's slowest pair, "
                "i = D/2 − 1 = 63 (section 7's table). Pair 0 is the fastest: θ_0 = base^0 = 1 "
                "(sections 2 and 7)."
            ),
        ),
        Mistake(
            2 * math.pi * 500_000,
            N_(
                "about 3,141,593 is a common tutorial's wavelength for a pair turning 1/base radian per "
                "position; no pair of RoPE turns that slowly, and pair 0, the fastest, turns 1 radian "
                "per position (section 7)."
            ),
        ),
        Mistake(
            500_000.0,
            N_(
                "500,000 is the base. It sets the slowest pair's speed, not pair 0's: pair 0 turns "
                "θ_0 = base^0 = 1 radian per position at any base (sections 2 and 7)."
            ),
        ),
    ),
    answer_keys=("2π / θ_0", "2π positions"),
    section=N_("section 2 of this chapter"),
)

c2 = MultipleChoice(
    "c2",
    prompt=N_(
        "What does RoPE turn, and what is left of the positions m (query) and n (key) in a score?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "The query, the key and the value, each by its own position; the score depends on m − n."
            ),
            why=N_(
                "Values are not turned: a turned value carries the angle of its own position n into "
                "the output, with no R_m to cancel it, so the output would change when the whole "
                "text shifts (the deep dive RoPE, checked, measures it)."
            ),
        ),
        Choice(
            "b",
            N_("Only the query, by its position m; the score then depends on m − n."),
            why=N_(
                "With the key left unturned, nothing cancels the query's angle: the score would "
                "depend on m itself. Both turn, so that ⟨R_m q, R_n k⟩ = ⟨q, R_(n−m) k⟩ "
                "(section 1)."
            ),
        ),
        Choice(
            "c",
            N_(
                "The query and the key, pair by pair, by position × θ_i; the score depends on m − n "
                "only."
            ),
            why=N_(
                "RoPE turns q by m·θ_i and k by n·θ_i in each pair, and ⟨R_m q, R_n k⟩ depends on "
                "m − n alone: scores sharing an offset agree below 1e-10 over 262,144 position pairs "
                "(sections 1 and 2)."
            ),
        ),
        Choice(
            "d",
            N_("The word embedding, once, before the first layer, like chapter 3's added vectors."),
            why=N_(
                "RoPE turns q and k inside every attention layer, after W_q and W_k. A position "
                "put into the input, as chapter 3's added vectors are, reaches the score through the "
                "projections and leaves it depending on m and n: added vectors spread by 42.95 along one "
                "offset, where RoPE's spread is below 1e-10 (section 2)."
            ),
        ),
    ),
    answer="c",
    section=N_("sections 1 and 2 of this chapter"),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "A checkpoint's W_q and W_k were trained with interleaved pairs (dims 2i, 2i+1). You run "
        "them with the half layout (dims i, i + D/2) without converting. What happens?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Logits with m = n stay exact, the rest degrade with distance; reordering W_q's and "
                "W_k's columns fixes it."
            ),
            why=N_(
                "On the diagonal the query's and key's turns cancel in either layout; elsewhere the "
                "wrong dims turn "
                "together (relative error 0.36 at 1 token, 1.00 at 8 to 15). `convert_projection` "
                "(Llama's permute()) repairs it to rounding (section 3)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Nothing: both layouts turn each pair by the same angles, so every logit comes out the "
                "same."
            ),
            why=N_(
                "The layouts are the same rotation only up to a reordering of the dims; weights "
                "must be reordered with them. Unconverted, logits one token apart are a third off "
                "(relative error 0.36), and 1.00 at 8 to 15 tokens (section 3)."
            ),
        ),
        Choice(
            "c",
            N_(
                "It stops with a shape error at the first layer, since the dims no longer form the "
                "pairs it expects."
            ),
            why=N_(
                "Both layouts take the same (…, D) tensors, so nothing crashes: the model runs and "
                "reads distances wrong, which is why the bug survives (section 3)."
            ),
        ),
        Choice(
            "d",
            N_(
                "Only the logits of a token with itself (m = n) go wrong; the logits at every other "
                "distance stay right."
            ),
            why=N_(
                "The other way round: at m = n the query's and key's turns cancel in either "
                "layout, so those logits are exact; every "
                "other distance is wrong, more so further away (section 3)."
            ),
        ),
    ),
    answer="a",
    section=N_("section 3 of this chapter"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_("Why do long-context models use larger RoPE bases, and how large must the base be?"),
    choices=(
        Choice(
            "a",
            N_(
                "The base must be larger than the context, or the model fails on any text longer than "
                "the base."
            ),
            why=N_(
                "A common rule of thumb, loose and wrong as a must: for D = 128 the slowest pair "
                "turns less than once over 32,768 tokens from base 5,974 on, and Mistral 7B v0.1 breaks "
                "it, pairing base 10,000 with 32,768 positions while its slowest pair still turns "
                "less than once (wavelength 54,410) (section 7)."
            ),
        ),
        Choice(
            "b",
            N_(
                "So that the slowest pair turns less than once over the context: for D = 128 and "
                "32,768 tokens, base ≥ context / 5.5, a heuristic floor, not a proven requirement or a "
                "recipe."
            ),
            why=N_(
                "Its wavelength is 2π·base^((D−2)/D); past one turn that pair cannot tell near from far "
                "alone, so 32,768 tokens ask for base ≥ 5,974 (section 7's table). A rule of thumb, "
                "not a proven need (Men et al. 2024 derive another bound), and a floor: Llama 3 uses "
                "500,000 for 8,192 tokens, Qwen2 1,000,000 for 32,768 (section 7)."
            ),
        ),
        Choice(
            "c",
            N_(
                "A larger base makes pair 0 turn more slowly, so that neighbouring tokens are told "
                "apart more finely."
            ),
            why=N_(
                "Pair 0 turns θ_0 = base^0 = 1 radian per position at any base; the base sets the "
                "slow end of the ladder, not the fast one (sections 2 and 7)."
            ),
        ),
        Choice(
            "d",
            N_(
                "So that every pair, the fastest included, turns less than once over the whole "
                "context, however long."
            ),
            why=N_(
                "No base can do that: pair 0 turns θ_0 = 1 radian per position in every model and "
                "comes back every 2π ≈ 6.3 positions; only the slowest pair is meant to stay within "
                "one turn (sections 2 and 7)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 7 of this chapter"),
)

CONCEPTS = (c1, c2, c3, c4)
