"""The committed experiment (posenc_lib/data/extrapolation/) meets chapter 7's targets, and its
checkpoints reproduce the committed perplexities: the chapter's numbers come from these files."""

import pytest

from posenc_lib.models import corpus
from posenc_lib.models.experiment import DATA, SETTINGS, L, load_model, perplexity
from posenc_lib.models.results import load_results
from posenc_lib.models.tinylm import POSITIONS

RESULTS = load_results()
PPL = {name: entry["ppl"] for name, entry in RESULTS["methods"].items()}
CHECKPOINTS = [*POSITIONS, "rope-linear-finetuned", "rope-yarn-finetuned", "rope-default-finetuned"]
# The scaling each fine-tuned checkpoint was trained with (the checkpoint does not carry it).
FINETUNE_SCALING = {
    "linear": {"rope_type": "linear", "factor": 4.0},
    "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": L},
    "default": None,  # the control: plain RoPE, the same steps on the same texts
}


def test_every_method_was_trained_at_L_and_evaluated_at_L_to_8L():
    assert RESULTS["L"] == L == 64 and RESULTS["lengths"] == [64, 128, 256, 512]
    assert set(RESULTS["methods"]) == set(POSITIONS)
    assert RESULTS["settings"]["finetune_steps"] <= 200


def test_the_learned_table_cannot_run_past_L_and_says_so():
    learned = RESULTS["methods"]["learned"]
    assert learned["ppl"]["64"] is not None
    for length in ("128", "256", "512"):
        assert learned["ppl"][length] is None
        assert "past the end of this learned table" in learned["errors"][length]


def test_sinusoidal_is_at_least_twice_as_bad_at_4L():
    assert PPL["sinusoidal"]["256"] >= 2 * PPL["sinusoidal"]["64"]


def test_plain_rope_degrades_past_L():
    rope = PPL["rope"]
    assert rope["128"] > rope["64"] and rope["512"] > rope["64"]


def test_alibi_at_8L_is_within_5_percent_of_its_perplexity_at_L_or_below():
    assert PPL["alibi"]["512"] <= 1.05 * PPL["alibi"]["64"]


@pytest.mark.parametrize("method", ["linear", "yarn"])
def test_rope_fine_tuned_at_4L_is_within_10_percent_of_the_base_model_at_L(method):
    assert RESULTS["finetuned"][method]["ppl"]["256"] <= 1.10 * PPL["rope"]["64"]


def test_every_scaling_was_evaluated_at_2L_4L_and_8L_beside_plain_rope():
    scaled = RESULTS["scaled"]
    assert set(scaled) == {"linear", "ntk", "yarn", "dynamic"}
    for family in scaled.values():
        for curve in family.values():
            assert all(curve[str(t)] is not None for t in (128, 256, 512))
    # dynamic NTK is plain RoPE up to L
    assert scaled["dynamic"]["1"]["64"] == PPL["rope"]["64"]


def test_the_control_fine_tune_ran_beside_the_scaled_ones_and_is_scored_at_every_length():
    tuned = RESULTS["finetuned"]
    assert set(tuned) == set(FINETUNE_SCALING)
    for entry in tuned.values():
        assert all(entry["ppl"][str(t)] is not None for t in RESULTS["lengths"])
    # the control improves on the base model past L: fine-tuning alone buys something
    assert tuned["default"]["ppl"]["256"] < PPL["rope"]["256"]


@pytest.fixture(scope="module")
def validation():
    # The experiment's own validation tokens (the same call as extrapolation.run).
    return corpus.split("validation", SETTINGS["eval_tokens"] * 2)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_each_checkpoint_loads_and_reproduces_its_perplexity_at_L(name, validation):
    model = load_model(name)
    if name.startswith("rope-"):  # fine-tuned, with the scaling it was trained with
        method = name.split("-")[1]
        model.set_rope_scaling(FINETUNE_SCALING[method])
        committed = RESULTS["finetuned"][method]["ppl"]["64"]
    else:
        committed = PPL[name]["64"]
    measured = perplexity(model, validation, L)
    assert measured == pytest.approx(committed, rel=0.01)  # float16 weights, float32 maths


def test_checkpoints_are_small():
    sizes = [p.stat().st_size for p in DATA.glob("*.pt")]
    assert len(sizes) == len(CHECKPOINTS) and sum(sizes) < 8_000_000
