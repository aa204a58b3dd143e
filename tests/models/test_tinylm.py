"""Chapter 7's model, corpus and experiment runner."""

import math

import pytest
import torch

from posenc_lib.models import corpus
from posenc_lib.models.experiment import evaluate, perplexity, run
from posenc_lib.models.tinylm import POSITIONS, LMConfig, TinyLM

SMALL = dict(d_model=32, n_heads=2, n_layers=2, d_ff=64, max_len=16)


def _model(position, **overrides):
    torch.manual_seed(0)
    return TinyLM(LMConfig(position=position, **(SMALL | overrides))).eval()


def test_the_corpus_is_the_same_on_every_run_and_splits_differ():
    assert corpus.generate(3000, 0) == corpus.generate(3000, 0)
    assert corpus.generate(3000, 0) != corpus.generate(3000, 1)
    text = corpus.generate(20000, 0)
    assert len(text) == 20000 and set(text) <= set(corpus.VOCAB)
    assert corpus.decode(corpus.encode(text[:500])) == text[:500]
    assert text.startswith("def ")


def test_function_names_come_back_from_far_away():
    # The long-range structure: a called function was defined earlier in its document.
    doc = corpus.document(__import__("random").Random(5))
    names = [line[4 : line.index("(")] for line in doc.splitlines() if line.startswith("def ")]
    calls = [n for n in names if doc.count(n + "(") > 1]
    assert calls, doc
    first_def, last_use = doc.index(calls[0]), doc.rindex(calls[0] + "(")
    assert last_use - first_def > 64  # farther back than the training length


def test_unknown_characters_and_splits_get_a_sentence():
    with pytest.raises(ValueError, match="not in the corpus vocabulary"):
        corpus.encode("Déjà")
    with pytest.raises(ValueError, match="split"):
        corpus.split("test", 10)


@pytest.mark.parametrize("position", POSITIONS)
def test_every_method_runs_and_is_causal(position):
    model = _model(position)
    ids = torch.randint(0, 51, (2, 12))
    logits = model(ids)
    assert logits.shape == (2, 12, 51)
    changed = ids.clone()
    changed[:, 8:] = (changed[:, 8:] + 1) % 51  # change the future of position 7
    assert torch.allclose(model(changed)[:, :8], logits[:, :8], atol=1e-5)
    weights = model.attention_weights(ids)  # (B, H, T, T)
    assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 12), atol=1e-5)
    assert float(weights.triu(1).abs().max()) == 0.0


def test_only_the_learned_table_stops_at_its_length():
    ids = torch.randint(0, 51, (1, 40))
    for position in POSITIONS:
        model = _model(position)
        if position == "learned":
            with pytest.raises(ValueError, match="past the end of this learned table"):
                model(ids)
        else:
            assert torch.isfinite(model(ids)).all()


def test_without_positions_a_model_sees_a_bag_of_words_at_the_first_layer():
    # NoPE's first-layer attention weights on a sequence that repeats one token are uniform.
    model = _model("none")
    weights = model.attention_weights(torch.full((1, 6), 7))[0, 0]  # (T, T)
    expected = torch.tril(torch.ones(6, 6)) / torch.arange(1, 7)[:, None]
    assert torch.allclose(weights, expected, atol=1e-6)


def test_rope_scaling_changes_rope_models_only_and_is_checked():
    model = _model("rope")
    ids = torch.randint(0, 51, (1, 32))
    plain = model(ids)
    model.set_rope_scaling({"rope_type": "linear", "factor": 4.0})
    assert not torch.allclose(model(ids), plain)
    model.set_rope_scaling(None)
    assert torch.allclose(model(ids), plain)
    with pytest.raises(ValueError, match="needs the keys"):
        model.set_rope_scaling({"rope_type": "yarn", "factor": 2.0})
    with pytest.raises(ValueError, match="has no RoPE to scale"):
        _model("alibi").set_rope_scaling({"rope_type": "linear", "factor": 2.0})


def test_position_parameters_are_counted():
    assert _model("learned").position_parameters() == 16 * 32
    assert _model("t5").position_parameters() == 32 * 2
    assert all(
        _model(p).position_parameters() == 0 for p in ("none", "sinusoidal", "alibi", "rope")
    )


def test_a_checkpoint_round_trips_in_half_precision(tmp_path):
    model = _model("t5")
    with torch.no_grad():
        model.t5.bias.weight.normal_()
    model.save(tmp_path / "m.pt")
    loaded = TinyLM.load(tmp_path / "m.pt")
    ids = torch.randint(0, 51, (1, 10))
    assert loaded.config == model.config
    assert torch.allclose(loaded(ids), model(ids), atol=2e-2)
    assert (tmp_path / "m.pt").stat().st_size < 60_000


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"position": "absolute"}, "position"),
        ({"d_model": 30, "n_heads": 4}, "even size"),
        ({"max_len": 0}, "max_len must be at least 1"),
    ],
)
def test_bad_configs_get_a_sentence(overrides, message):
    with pytest.raises(ValueError, match=message):
        LMConfig(**(SMALL | overrides))


def test_an_untrained_model_is_about_as_unsure_as_the_vocabulary_is_large():
    tokens = corpus.split("validation", 3000)
    ppl = perplexity(_model("alibi"), tokens, 16, eval_tokens=2000)
    assert 30 < ppl < 80  # near 51, the vocabulary size


def test_evaluate_records_why_a_learned_table_has_no_perplexity_past_l():
    tokens = corpus.split("validation", 3000)
    out = evaluate(_model("learned"), tokens, [16, 32], 1000)
    assert out["ppl"]["32"] is None and math.isfinite(out["ppl"]["16"])
    assert "past the end" in out["errors"]["32"]


def test_a_few_training_steps_lower_the_loss_for_every_method(tmp_path):
    settings = dict(
        steps=40, batch=8, lr=3e-3, warmup=5, train_chars=30_000, eval_tokens=1024,
        finetune_steps=3, finetune_lr=1e-3, finetune_batch=2, factors=[2],
    )  # fmt: skip
    results = run(tmp_path, settings, seeds=(0,), variants=("alibi", "rope"))
    for entry in results["methods"].values():
        assert entry["train_loss"] < math.log(51) - 0.5
        assert all(v is not None and v < 51 for v in entry["ppl"].values())
    assert set(results["scaled"]) == {"linear", "ntk", "yarn", "dynamic"}
    assert set(results["finetuned"]) == {"linear", "yarn", "default"}
    assert sorted(p.name for p in tmp_path.glob("*.pt")) == [
        "alibi.pt", "rope-default-finetuned.pt", "rope-linear-finetuned.pt",
        "rope-yarn-finetuned.pt", "rope.pt",
    ]  # fmt: skip


@pytest.mark.parametrize("position", POSITIONS)
@pytest.mark.parametrize("layer", [0, 1])
def test_the_analysed_weights_are_the_ones_the_model_uses(position, layer):
    # attention_weights(ids, layer) @ V must equal the attention output forward computes.
    model = _model(position)
    ids = torch.randint(0, 51, (2, 12), generator=torch.Generator().manual_seed(1))
    captured = {}
    attention = model.blocks[layer].attention
    hook = attention.register_forward_hook(
        lambda module, args, out: captured.update(x=args[0], out=out)
    )
    with torch.no_grad():
        model(ids)
    hook.remove()
    x = captured["x"]  # (B, T, D): the normalised input of this layer's attention
    weights = model.attention_weights(ids, layer)  # (B, H, T, T)
    v = attention.qkv(x).view(2, 12, 3, 2, 16)[:, :, 2].transpose(1, 2)  # (B, H, T, Dh)
    mixed = (weights @ v).transpose(1, 2).reshape(2, 12, 32)  # (B, T, D)
    assert torch.allclose(attention.out(mixed), captured["out"], atol=1e-5)


def test_a_model_that_knows_nothing_has_the_vocabulary_as_perplexity():
    class Uniform(torch.nn.Module):
        def forward(self, ids):
            return torch.zeros(*ids.shape, 51)

    tokens = corpus.split("validation", 3000)
    assert perplexity(Uniform(), tokens, 16, eval_tokens=2000) == pytest.approx(51, rel=1e-6)


def test_the_experiment_evaluates_at_l_to_8l_and_fine_tunes_at_4l(tmp_path, monkeypatch):
    import posenc_lib.models.experiment as ex

    seen = []
    real_train = ex.train

    def spy(model, tokens, length, *args, **kwargs):
        seen.append((length, model.rope_scaling))
        return real_train(model, tokens, length, *args, **kwargs)

    monkeypatch.setattr(ex, "train", spy)
    settings = dict(
        steps=2, batch=2, lr=1e-3, warmup=1, train_chars=20_000, eval_tokens=600,
        finetune_steps=1, finetune_lr=1e-3, finetune_batch=1, factors=[2],
    )  # fmt: skip
    results = ex.run(None, settings, seeds=(0,), variants=("rope",))
    assert results["lengths"] == [64, 128, 256, 512]
    assert seen[0] == (64, None)
    tuned = {(length, (s or {}).get("rope_type")) for length, s in seen[1:]}
    assert tuned == {(256, "linear"), (256, "yarn"), (256, None)}
    assert all(model_length == 256 for model_length, _ in seen[1:])
    plain = results["methods"]["rope"]["ppl"]
    assert results["scaled"]["linear"]["2"] != plain  # the scaling was really applied


def test_training_shows_a_tqdm_bar_per_job_on_stderr_and_none_in_a_pipe(capsys):
    from tqdm.auto import tqdm

    import posenc_lib.models.experiment as ex

    assert ex.tqdm is tqdm  # tqdm.auto: the widget inside Jupyter, text on a terminal
    settings = dict(
        steps=3, batch=2, lr=1e-3, warmup=1, train_chars=20_000, eval_tokens=600,
        finetune_steps=1, finetune_lr=1e-3, finetune_batch=1, factors=[2],
    )  # fmt: skip
    ex.run(settings=settings, seeds=(0,), variants=("t5",), progress=True)
    printed, errors = capsys.readouterr()
    assert printed == "" and "train t5" in errors and "3/3" in errors
    ex.run(settings=settings, seeds=(0,), variants=("t5",))  # None: pytest's stderr is no tty
    assert capsys.readouterr() == ("", "")


# -- the experiment's fairness settings: scaled embeddings, randomized positions, windows, tables ---


def test_scaled_embeddings_start_at_unit_size_and_the_control_at_gpt2s():
    scaled, control = _model("sinusoidal", embed_scale=True), _model("sinusoidal")
    ids = torch.arange(51)[None]
    assert scaled.embed_multiplier == pytest.approx(math.sqrt(32)) and control.embed_multiplier == 1
    words = scaled.embed(ids) * scaled.embed_multiplier  # (1, 51, 32)
    assert (
        0.8 < float(words.detach().std()) < 1.2
    )  # N(0, 1/D) * sqrt(D): about 1, as big as a sinusoid
    assert 0.015 < float(control.embed.weight.detach().std()) < 0.025
    learned = _model("learned", embed_scale=True).learned.weight
    assert (
        0.8 / math.sqrt(32) < float(learned.detach().std()) < 1.2 / math.sqrt(32)
    )  # fairseq's N(0, 1/D)
    # the same seed draws the same numbers: the control's init is the scaled one's, shrunk
    ratio = control.embed.weight / scaled.embed.weight
    assert torch.allclose(ratio, torch.full_like(ratio, 0.02 * math.sqrt(32)), rtol=1e-4)


def test_the_multiplier_is_applied_in_forward_and_in_the_analysed_weights():
    model = _model("sinusoidal", embed_scale=True)
    ids = torch.randint(0, 51, (1, 10), generator=torch.Generator().manual_seed(2))
    logits = model(ids)
    model.embed_multiplier = 1.0  # the same weights without the multiplier
    assert not torch.allclose(model(ids), logits, atol=1e-3)


def test_randomized_positions_differ_per_text_and_repeat_after_a_reseed():
    model = _model("rope", random_positions=64)
    ids = torch.randint(0, 51, (3, 12), generator=torch.Generator().manual_seed(1))
    model.reseed_positions(5)
    first = model(ids)
    again = model(ids)
    assert not torch.allclose(first, again, atol=1e-4)  # new positions on every call
    model.reseed_positions(5)
    assert torch.equal(model(ids), first)
    same_text = ids[:1].expand(3, 12)
    out = model(same_text)
    assert not torch.allclose(out[0], out[1], atol=1e-4)  # one draw per text of the batch


def test_randomized_positions_over_the_whole_range_are_plain_rope():
    model = _model("rope", random_positions=16)  # max_len 16: at T = 16 every position is drawn
    plain = _model("rope")
    plain.load_state_dict(model.state_dict())
    ids = torch.randint(0, 51, (2, 16), generator=torch.Generator().manual_seed(4))
    assert torch.allclose(model(ids), plain(ids), atol=1e-5)


def test_sliding_window_hides_keys_further_back_than_the_window():
    for position in ("rope", "alibi", "t5", "none"):
        model = _model(position)
        ids = torch.randint(0, 51, (1, 12), generator=torch.Generator().manual_seed(3))
        full = model.attention_weights(ids)
        model.set_window(4)
        weights = model.attention_weights(ids)  # (1, H, 12, 12)
        for i in range(12):
            assert float(weights[0, :, i, : max(0, i - 3)].abs().sum()) == 0.0
            assert torch.allclose(weights[0, :, i].sum(-1), torch.ones(2), atol=1e-5)
        assert torch.allclose(
            weights[..., :4, :], full[..., :4, :], atol=1e-6
        )  # short rows: as before
        model.set_window(None)
        assert torch.allclose(model.attention_weights(ids), full, atol=1e-6)


def test_a_stretched_learned_table_runs_past_its_rows_and_keeps_its_ends():
    from posenc_lib.absolute import interpolate_table

    model = _model("learned")  # 16 rows
    ids = torch.randint(0, 51, (1, 40), generator=torch.Generator().manual_seed(6))
    with pytest.raises(ValueError, match="past the end"):
        model(ids)
    model.set_table_stretch(True)
    added, _, _ = model.position_inputs(40)
    table = model.learned.weight.detach()
    assert torch.equal(added[0], table[0]) and torch.allclose(added[-1], table[-1], atol=1e-7)
    assert torch.allclose(added, interpolate_table(table, 40))
    assert model(ids).shape == (1, 40, 51)
    short, _, _ = model.position_inputs(10)  # within the table: its own rows, not stretched
    assert torch.equal(short, table[:10])
    model.resize_learned_table(64)
    assert model.learned.weight.shape == (64, 32) and model.learned.weight.requires_grad
    assert torch.equal(model.learned.weight[0].detach(), table[0])
    with pytest.raises(ValueError, match="no learned table"):
        _model("rope").set_table_stretch(True)


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"position": "alibi", "random_positions": 64}, "position='rope' only"),
        ({"position": "rope", "random_positions": 8}, "must be at least max_len"),
        ({"position": "rope", "embed_scale": "yes"}, "embed_scale"),
    ],
)
def test_bad_fairness_settings_get_a_sentence(overrides, message):
    with pytest.raises(ValueError, match=message):
        LMConfig(**(SMALL | overrides))


TINY = dict(
    steps=3, batch=2, lr=1e-3, warmup=1, train_chars=20_000, eval_tokens=600,
    finetune_steps=1, finetune_lr=1e-3, finetune_batch=1, factors=[2], window=64,
)  # fmt: skip


def test_the_experiment_keeps_every_seed_and_summarises_each_row():
    import posenc_lib.models.experiment as ex

    results = ex.run(None, TINY, seeds=(0, 1), variants=("learned-scaled", "alibi"))
    assert results["seeds"] == [0, 1] and set(results["runs"]) == {"0", "1"}
    rows = results["rows"]
    assert set(rows) == {
        "learned-scaled", "alibi", "alibi, window L", "learned-scaled, interpolated",
        "learned-scaled, interpolated + fine-tuned",
    }  # fmt: skip
    for name, row in rows.items():
        for t in map(str, results["lengths"]):
            values = row["seeds"][t]
            if values[0] is None:  # the table itself past L: None in every seed, never averaged
                assert name == "learned-scaled" and row["ppl"][t] is None
                continue
            assert row["min"][t] == min(values) and row["max"][t] == max(values)
            assert row["ppl"][t] == pytest.approx(sum(values) / 2, abs=1e-4)
    assert rows["alibi"]["seeds"]["64"][0] != rows["alibi"]["seeds"]["64"][1]  # seeds differ
    assert results["methods"]["alibi"]["ppl"] == rows["alibi"]["ppl"]  # the means, one layout
    from posenc_lib.models.results import summarize

    assert summarize(results["runs"]) == rows
    text = ex.table(results)
    assert "mean of 2 seeds [min, max]" in text and "learned-scaled, interpolated" in text


def test_seed_zero_of_a_run_is_the_same_whichever_seeds_run_beside_it():
    import posenc_lib.models.experiment as ex

    alone = ex.run(None, TINY, seeds=(0,), variants=("rope-randomized",))
    together = ex.run(None, TINY, seeds=(1, 0), variants=("rope-randomized",))
    for key in ("ppl", "train_loss"):
        assert (
            together["runs"]["0"]["methods"]["rope-randomized"][key]
            == (alone["runs"]["0"]["methods"]["rope-randomized"][key])
        )


def test_the_experiment_will_not_overwrite_the_committed_results_unless_asked(tmp_path):
    import posenc_lib.models.experiment as ex

    with pytest.raises(ValueError, match="committed results"):
        ex.run(ex.DATA, TINY, seeds=(0,), variants=("none",))
    with pytest.raises(ValueError, match="unknown variants"):
        ex.run(None, TINY, variants=("rope-ntk",))
    results = ex.run(tmp_path / "new", TINY, seeds=(0, 1), variants=("none",))
    assert sorted(p.name for p in (tmp_path / "new").iterdir()) == ["none.pt", "results.json"]
    assert results["runs"]["1"]["methods"]["none"]["ppl"]  # seed 1 is in the results, not saved


def test_help_names_every_option(capsys):
    import posenc_lib.models.experiment as ex

    with pytest.raises(SystemExit):
        ex.main(["--help"])
    text = capsys.readouterr().out
    for option in ("--out", "--quick", "--seeds", "--variants", "--jobs", "--replace-committed"):
        assert option in text
    assert "never overwrites" in text


def test_the_command_line_refuses_the_committed_folder_with_a_sentence(capsys):
    import posenc_lib.models.experiment as ex

    with pytest.raises(SystemExit):
        ex.main(["--out", str(ex.DATA), "--seeds", "0", "--variants", "none", "--jobs", "1"])
    assert "--replace-committed" in capsys.readouterr().err
