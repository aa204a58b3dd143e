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
    results = run(tmp_path, settings, save=True, methods=("alibi", "rope"))
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
    results = ex.run(tmp_path, settings, save=False, methods=("rope",))
    assert results["lengths"] == [64, 128, 256, 512]
    assert seen[0] == (64, None)
    tuned = {(length, (s or {}).get("rope_type")) for length, s in seen[1:]}
    assert tuned == {(256, "linear"), (256, "yarn"), (256, None)}
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
    ex.run(settings=settings, save=False, methods=("alibi",), progress=True)
    printed, errors = capsys.readouterr()
    assert printed == "" and "train alibi" in errors and "3/3" in errors
    ex.run(settings=settings, save=False, methods=("alibi",))  # None: pytest's stderr is no tty
    assert capsys.readouterr() == ("", "")
