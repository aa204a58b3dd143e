"""The committed experiment (posenc_lib/data/extrapolation/) holds every row chapter 7 prints, from
three seeds, and its checkpoints reproduce the committed perplexities: the chapter's numbers come
from these files."""

import pytest

from posenc_lib.models import corpus
from posenc_lib.models.experiment import (
    DATA,
    FINETUNE_FACTOR,
    SCALINGS,
    SEEDS,
    SETTINGS,
    VARIANTS,
    L,
    load_model,
    perplexity,
)
from posenc_lib.models.results import load_results, summarize

RESULTS = load_results()
ROWS = RESULTS["rows"]
PPL = {name: entry["ppl"] for name, entry in RESULTS["methods"].items()}
LENGTHS = ("64", "128", "256", "512")
CHECKPOINTS = [*VARIANTS, "rope-linear-finetuned", "rope-yarn-finetuned", "rope-default-finetuned"]
# The scaling each fine-tuned checkpoint was trained with (the checkpoint does not carry it).
FINETUNE_SCALING = {
    "linear": SCALINGS["linear"](FINETUNE_FACTOR),
    "yarn": SCALINGS["yarn"](FINETUNE_FACTOR),
    "default": None,  # the control: plain RoPE, the same steps on the same texts
}
# Every row chapter 7 prints or draws (its table, section 1b, section 4, section 5, the closing table).
PRINTED_ROWS = [
    *VARIANTS,
    *(f"rope, {t} s={s}" for t in ("linear", "ntk", "yarn") for s in (2, 4, 8)),
    "rope, dynamic",
    *(f"rope, {name} fine-tuned at 4L" for name in FINETUNE_SCALING),
    "rope, window L",
    "alibi, window L",
    "learned, interpolated",
    "learned-scaled, interpolated",
    "learned, interpolated + fine-tuned",
    "learned-scaled, interpolated + fine-tuned",
]


def test_every_printed_row_has_three_seeds_at_every_length():
    assert RESULTS["L"] == L == 64 and RESULTS["lengths"] == [64, 128, 256, 512]
    assert RESULTS["seeds"] == list(SEEDS) == [0, 1, 2]
    assert set(PRINTED_ROWS) <= set(ROWS)
    for name in PRINTED_ROWS:
        row = ROWS[name]
        for t in LENGTHS:
            values = row["seeds"][t]
            assert len(values) == 3, (name, t)
            if name in ("learned", "learned-scaled") and t != "64":
                assert values == [None] * 3 and row["ppl"][t] is None
                continue
            assert all(v is not None and 1 < v < 51 * 50 for v in values), (name, t, values)
            assert row["min"][t] <= row["ppl"][t] <= row["max"][t]


def test_the_file_stores_only_the_seeds_numbers_and_loading_adds_the_summaries():
    import json

    stored = json.loads((DATA / "results.json").read_text(encoding="utf-8"))
    assert set(stored) == {"L", "lengths", "settings", "seeds", "runs", "seconds"}
    assert summarize(stored["runs"]) == ROWS
    for name in VARIANTS:
        assert PPL[name] == ROWS[name]["ppl"]
    assert RESULTS["scaled"]["ntk"]["4"] == ROWS["rope, ntk s=4"]["ppl"]
    assert RESULTS["finetuned"]["yarn"]["ppl"] == ROWS["rope, yarn fine-tuned at 4L"]["ppl"]


def test_the_settings_are_the_ones_the_code_uses_now():
    assert RESULTS["settings"] == SETTINGS
    assert RESULTS["settings"]["finetune_steps"] <= 200
    assert set(RESULTS["runs"]["0"]["methods"]) == set(VARIANTS)


def test_the_learned_tables_cannot_run_past_l_and_say_so():
    for name in ("learned", "learned-scaled"):
        entry = RESULTS["methods"][name]
        for length in ("128", "256", "512"):
            assert "past the end of this learned table" in entry["errors"][length]


def test_dynamic_ntk_is_plain_rope_up_to_l_in_every_seed():
    assert ROWS["rope, dynamic"]["seeds"]["64"] == ROWS["rope"]["seeds"]["64"]


def test_a_window_of_l_changes_nothing_at_l():
    for name in ("rope", "alibi"):
        assert ROWS[f"{name}, window L"]["seeds"]["64"] == ROWS[name]["seeds"]["64"]


def test_a_stretched_table_is_the_table_itself_at_l():
    for name in ("learned", "learned-scaled"):
        assert ROWS[f"{name}, interpolated"]["seeds"]["64"] == ROWS[name]["seeds"]["64"]


def test_randomized_positions_are_the_plain_positions_at_8l_where_the_range_ends():
    # The range is 0..8L-1, so a text of 8L tokens gets every position: nothing random is left.
    assert VARIANTS["rope-randomized"]["random_positions"] == 8 * L


@pytest.fixture(scope="module")
def validation():
    # The experiment's own validation tokens (the same call as the experiment's).
    return corpus.split("validation", SETTINGS["eval_tokens"] * 2)


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_each_checkpoint_loads_and_reproduces_seed_0s_perplexity_at_l(name, validation):
    model = load_model(name)
    seed0 = RESULTS["runs"]["0"]
    if name.startswith("rope-") and name.endswith("-finetuned"):
        method = name.split("-")[1]
        model.set_rope_scaling(FINETUNE_SCALING[method])
        committed = seed0["finetuned"][method]["ppl"]["64"]
    else:
        committed = seed0["methods"][name]["ppl"]["64"]
    measured = perplexity(model, validation, L)
    assert measured == pytest.approx(committed, rel=0.01)  # float16 weights, float32 maths


def test_checkpoints_are_small():
    sizes = [p.stat().st_size for p in DATA.glob("*.pt")]
    assert len(sizes) == len(CHECKPOINTS) and sum(sizes) < 7_500_000
