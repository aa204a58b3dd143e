"""Chapter 7's concept questions (1 point each), answered in the exercises notebook:

- c1 (choice): what the small models trained at L = 64 show past L (extrapolation is not "any
  longer input works", nor "any relative encoding works");
- c2 (number): NTK-aware scaling's new base for s = 4 at D = 32, from ``rope_scaling.ntk_base``;
- c3 (choice): what Position Interpolation does without fine-tuning, and why;
- c4 (choice): what the fine-tuning experiment (PI, YaRN and a plain control) shows.

Every claim is one chapter 7 prints over its three seeds (means, and "in every seed" only where
its seed-by-seed verdicts say so); the numeric answer is computed with the library.
"""

from __future__ import annotations

from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_
from posenc_lib.rope_scaling import ntk_base

c1 = MultipleChoice(
    "c1",
    prompt=N_(
        "Ten small models, trained on windows of L = 64 characters (three seeds each), were "
        "tested on texts up to 8L. Which statement does the chapter's table support?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "The sinusoidal model extrapolates: its table is defined at every position and passes "
                "the yardstick's extrapolation row."
            ),
            why=N_(
                "A defined vector is not a learned one: the sinusoidal model is the worst at every "
                "length past L (787 at 8L), its loss jumping from 1.20 to 6.36 nats just past "
                "position 63 (sections 1 and 3a)."
            ),
        ),
        Choice(
            "b",
            N_(
                "Relative encodings extrapolate: T5's bias and RoPE hold their perplexity at 8L about "
                "as well as ALiBi."
            ),
            why=N_(
                "Relative is not enough: at 8L T5 is 1.75 times and RoPE 3.73 times worse than at "
                'L, while ALiBi holds at 0.96 in every seed (section 2; table in the deep dive "fair comparisons"). T5 does beat NoPE and RoPE '
                "past L in every seed, but it climbs past 2L: every key 31 or more back shares one "
                "fixed bias (sections 1 and 3d)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Only ALiBi holds at 8L (0.96 of its perplexity at L), and even it does not measurably "
                "use the longer context."
            ),
            why=N_(
                "ALiBi alone holds, 0.96 in every seed, and fewer context-starved predictions at the "
                "start of each window would explain most or all of its fall: its loss at positions "
                "256-511 (1.005 nats) is not measurably below 32-63 (1.017; standard error 0.038) "
                '(section 3b, measured in the deep dive "inside the failures").'
            ),
        ),
        Choice(
            "d",
            N_("Past L every model got worse, ALiBi included; none can run on a longer input."),
            why=N_(
                "All but the learned tables run on longer inputs, and ALiBi does not get worse: its "
                "perplexity at 8L is 0.96 of its value at L in every seed (sections 1 and 2)."
            ),
        ),
    ),
    answer="c",
    section=N_("sections 1 and 3b of this chapter"),
)

c2 = Numeric(
    "c2",
    prompt=N_(
        "NTK-aware scaling for a factor s = 4 on RoPE with base 10000 and D = 32 (this chapter's "
        "models): what is the new base, the one that divides the slowest pair's frequency by exactly 4?"
    ),
    answer=lambda: ntk_base(10000.0, 4.0, 32),  # 10000 * 4 ** (32 / 30)
    rel_tol=0.02,
    answer_keys=("4^(32/30)", "s^(D/(D−2))", "s^(D/(D-2))", "32/30", "43,873"),
    why=N_(
        "base · s^(D/(D−2)) = 10000 · 4^(32/30) ≈ 43,873: the slowest pair's frequency is "
        "base^(−(D−2)/D), so the base must grow by s^(D/(D−2)) to divide it by s; pair 0 keeps its "
        'frequency (section 4; a myth box of the deep dive "the scalings in detail").'
    ),
    mistakes=(
        Mistake(
            10000.0 * 4,
            N_(
                "10000 · 4 = 40,000 is a common tutorial formula, which a myth box of the deep dive "
                '"the scalings in detail" corrects: it '
                "divides the slowest pair by only 4^(30/32), leaving it 0.2726 of its frequency "
                "instead of 0.25. Work out which power of 4 the base needs (section 4)."
            ),
        ),
        Mistake(
            10000.0 / 4,
            N_(
                "10000 / 4 = 2,500 makes every pair turn faster, the opposite of the aim: to slow the "
                "slow pairs the base must grow (section 4)."
            ),
        ),
        Mistake(
            10000.0 * 4**2,
            N_(
                "10000 · 4² = 160,000 over-stretches: it divides the slowest pair by 4^(60/32) ≈ 13.5, "
                "not 4. Work out the exponent from the slowest pair's frequency (section 4)."
            ),
        ),
    ),
    section=N_("section 4 of this chapter"),
)

c3 = MultipleChoice(
    "c3",
    prompt=N_(
        "Position Interpolation (PI) divides every RoPE frequency by s. Applied to the small RoPE "
        "model with no fine-tuning, what did it do?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "Nothing at L, since every angle stays within the range seen in training; it helps "
                "past L."
            ),
            why=N_(
                "PI is not lossless: at L it raises the perplexity from 2.91 to 13.0 (s = 2) and "
                "40.1 (s = 4), and at 8L it is still worse than plain RoPE (25.9 against 10.9) "
                "(section 4)."
            ),
        ),
        Choice(
            "b",
            N_(
                "It hurt at every length, L included: it also slows the fast pairs the model uses for "
                "local order."
            ),
            why=N_(
                "PI's damage comes from the fast pairs, which never needed stretching: dividing "
                "only pairs 5-15 by 4 scores 2.95 at L against 2.89 (seed 0), every pair 25.26 "
                '(the deep dive "the scalings in detail").'
            ),
        ),
        Choice(
            "c",
            N_(
                "It changed only the slowest pair, dividing its frequency by s, and left the fast "
                "pairs alone."
            ),
            why=N_(
                "That describes NTK-aware scaling's slowest pair. PI divides every pair by s, "
                "pair 0 included (0.25 for every pair at s = 4, section 4's table)."
            ),
        ),
        Choice(
            "d",
            N_("It had the lowest perplexity at 8L of the four scalings."),
            why=N_(
                "PI was the worst of the four at every length, whatever its factor (25.93 at 8L "
                "at best, s = 2); YaRN with s = 4 had the lowest mean at 8L (8.15), though one seed "
                "did worse than plain RoPE there (section 4)."
            ),
        ),
    ),
    answer="b",
    section=N_("section 4 of this chapter"),
)

c4 = MultipleChoice(
    "c4",
    prompt=N_(
        "Each RoPE model was fine-tuned for 200 steps on windows of 4L with PI, with YaRN "
        "(s = 4 both), and, as a control, with no scaling. What does the chapter conclude?"
    ),
    choices=(
        Choice(
            "a",
            N_(
                "The fine-tuning did the work: the unscaled control beat PI and YaRN in every seed."
            ),
            why=N_(
                "The control (2.82 at 4L) was below PI and YaRN (2.89, 2.82), paired by seed, at "
                "every length (section 4). But that fine-tune added 20% to the training characters "
                "(the YaRN paper's: about 0.1%), so it cannot test what PI and YaRN claim: that a "
                'short fine-tune suffices (deep dive "the scalings in detail").'
            ),
        ),
        Choice(
            "b",
            N_("PI and YaRN beat the control: the scaling is what lets the model read 4L."),
            why=N_(
                "The control was lower than both, paired by seed, at every length, and held at 2.81 "
                'at 8L where PI and YaRN rose to 3.63 and 3.29 (the deep dive "the scalings in '
                'detail").'
            ),
        ),
        Choice(
            "c",
            N_(
                "PI and YaRN are useless: even their authors' recipe of a short fine-tune does not "
                "help."
            ),
            why=N_(
                "The experiment does not test that: they aim to make a small fine-tune enough, but "
                "at this budget (20% more training characters) the fine-tune alone suffices, so the "
                'control cannot tell (section 4; the deep dive "the scalings in detail", three '
                "cautions)."
            ),
        ),
        Choice(
            "d",
            N_("Fine-tuning at 4L made no difference: the models still failed past L."),
            why=N_(
                "Fine-tuned, all three score below the base model's 2.91 at L when run at 4L "
                "(control 2.82, PI 2.89, YaRN 2.82), against 5.57 without fine-tuning (section 4)."
            ),
        ),
    ),
    answer="a",
    section=N_("section 4 of this chapter (with fine-tuning)"),
)

CONCEPTS = (c1, c2, c3, c4)
