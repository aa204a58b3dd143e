"""Chapter 7's concept questions (1 point each), answered in the exercises notebook:

- c1 (choice): what the small models trained at L = 64 show past L (extrapolation is not "any
  longer input works", nor "any relative encoding works");
- c2 (number): what the tutorial base · s leaves of the slowest pair's frequency (s = 4, D = 32);
- c3 (choice): what Position Interpolation does without fine-tuning, and why;
- c4 (choice): what the fine-tuning experiment (PI, YaRN and a plain control) shows.

Every claim is one chapter 7 prints over its three seeds (means, and "in every seed" only where
its seed-by-seed verdicts say so); the numeric answer is computed with the library.
"""

from __future__ import annotations

from posenc_lib.analysis.ch07_scaling import frequencies
from posenc_lib.checks.concepts import Choice, Mistake, MultipleChoice, Numeric
from posenc_lib.i18n import N_

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
                "L, while ALiBi falls from 2.84 to 2.73, in every seed (sections 1 and 2). T5 does beat NoPE and RoPE "
                "past L in every seed, but it climbs past 2L: every key 31 or more back shares one "
                "fixed bias (sections 1 and 3d)."
            ),
        ),
        Choice(
            "c",
            N_(
                "Only ALiBi holds at 8L (its perplexity even falls a little), and even it does not "
                "measurably use the longer context."
            ),
            why=N_(
                "ALiBi alone holds, 2.84 at L and 2.73 at 8L, and fewer context-starved predictions at the "
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
                "perplexity falls from 2.84 at L to 2.73 at 8L, in every seed (sections 1 and 3b)."
            ),
        ),
    ),
    answer="c",
    section=N_("sections 1 and 3b of this chapter"),
)

c2 = Numeric(
    "c2",
    prompt=N_(
        "A common tutorial formula for NTK-aware scaling sets the new base to base · s. On this "
        "chapter's RoPE heads (base 10000, D = 32) with s = 4 that is 40,000: what fraction of its "
        "old frequency does the slowest pair, i = 15, keep?"
    ),
    answer=lambda: float(frequencies(32, 40000.0)[15] / frequencies(32, 10000.0)[15]),  # 4^(-30/32)
    rel_tol=0.02,
    answer_keys=("4^(−30/32)", "4^(-30/32)", "0.2726", "0.273"),
    why=N_(
        "Pair i's frequency is base^(−2i/D), so the slowest pair's is base^(−30/32). Four times the "
        "base multiplies it by 4^(−30/32) ≈ 0.2726, not 1/4: divided by 3.67, not 4. To divide "
        "it by exactly 4 the base needs a slightly larger power of 4, which exercise 1 derives "
        '(section 4; deep dive "the scalings in detail").'
    ),
    mistakes=(
        Mistake(
            0.25,
            N_(
                "0.25 assumes that four times the base divides the slowest pair by exactly 4. Its "
                "frequency is the base to a power that is not −1: write it for i = 15 and D = 32 "
                "(section 4)."
            ),
        ),
        Mistake(
            1.0,
            N_(
                "1 is pair 0's ratio: θ_0 = base⁰ = 1 for any base. The slowest pair is i = 15, whose "
                "frequency does depend on the base (section 4)."
            ),
        ),
        Mistake(
            4.0 ** (30 / 32),
            N_(
                "≈ 3.67 is how many times the frequency is divided; the question asks the fraction "
                "of the old frequency that is kept."
            ),
        ),
    ),
    section=N_("section 4 of this chapter"),
    hint=N_(
        "Write the slowest pair's frequency as a power of the base, then put 4 · base in its place: "
        "what factor appears?"
    ),
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
