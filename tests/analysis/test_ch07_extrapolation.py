"""Chapter 7's measurements on models: entropy, RoPE's position-only scores and which pairs leave
their training range, the position cost, timings, and the ALiBi paper's shipped tables."""

import math

import pytest
import torch

from posenc_lib.analysis import ch07_extrapolation
from posenc_lib.models.tinylm import LMConfig, TinyLM
from posenc_lib.rope import apply_rope, rope_cos_sin, rope_inv_freq

SMALL = dict(d_model=32, n_heads=2, n_layers=2, d_ff=64, max_len=16)
TOKENS = torch.randint(0, 51, (512,), generator=torch.Generator().manual_seed(0))


def _model(position, **overrides):
    torch.manual_seed(0)
    return TinyLM(LMConfig(position=position, **(SMALL | overrides))).eval()


def test_binned_means():
    values = torch.arange(8.0)
    assert torch.equal(ch07_extrapolation.binned(values, 4), torch.tensor([1.5, 5.5]))
    with pytest.raises(ValueError, match="do not split"):
        ch07_extrapolation.binned(values, 3)


def test_uniform_attention_has_entropy_ln_of_the_keys():
    model = _model("none")
    with torch.no_grad():
        for block in model.blocks:
            block.attention.qkv.weight.zero_()  # q = k = 0: every visible key weighs the same
    length = 32
    entropy = ch07_extrapolation.attention_entropy(
        model, TOKENS, length, n_tokens=128
    )  # (layers, heads)
    queries = torch.arange(length - length // 4, length, dtype=torch.float64)
    expected = torch.log(queries + 1).mean()  # query t sees t + 1 keys
    assert entropy.shape == (2, 2)
    torch.testing.assert_close(entropy, torch.full((2, 2), float(expected), dtype=torch.float64))


@pytest.mark.parametrize("layer", [0, 1])
def test_position_only_scores_summed_over_pairs_are_the_rotated_mean_query_and_key(layer):
    model = _model("rope")
    curves = ch07_extrapolation.position_score_curves(
        model, TOKENS, layer, n_distances=40, n_tokens=256
    )
    assert curves.shape == (2, 8, 40)  # (heads, pairs, distances)
    # Independent route: the mean query and key of the layer, turned by apply_rope.
    config = model.config
    ids = TOKENS[:256].view(-1, config.max_len)
    with torch.no_grad():
        _, bias, rotation = model.position_inputs(config.max_len)
        x = model.embed(ids)
        for block in model.blocks[:layer]:
            x = block(x, bias, rotation)
        block = model.blocks[layer]
        qkv = block.attention.qkv(block.norm1(x)).double()
        qkv = qkv.view(*ids.shape, 3, config.n_heads, config.head_dim)
    q_mean, k_mean = qkv[:, :, 0].mean((0, 1)), qkv[:, :, 1].mean((0, 1))  # (H, Dh)
    theta = rope_inv_freq(config.head_dim, config.rope_base, dtype=torch.float64)[0]
    cos, sin = rope_cos_sin(torch.arange(40, dtype=torch.float64), theta)  # (N, Dh)
    turned = apply_rope(q_mean[:, None].expand(-1, 40, -1), cos, sin)  # (H, N, Dh): q at delta
    scores = (turned * k_mean[:, None]).sum(-1) / math.sqrt(config.head_dim)  # key at 0
    torch.testing.assert_close(curves.sum(1), scores)


def test_score_excess_and_new_score_pairs_on_hand_made_curves():
    curves = torch.zeros(2, 3, 10, dtype=torch.float64)
    curves[:, 0] = torch.tensor([1.0, -1.0] * 5)  # the same swing throughout: nothing new
    curves[0, 1, 5:] = torch.tensor([0.0, 0.0, 2.0, 0.0, 0.0])  # a new high past L = 5, head 0
    curves[1, 2, :5] = 1.0
    curves[1, 2, 5:] = 0.99  # a new low by 1% of its size: under a 5% tolerance
    excess = ch07_extrapolation.score_excess(curves, 5)
    assert excess[0, 1] == 1.0 and excess[:, 0].abs().max() == 0
    assert excess[1, 2] == pytest.approx(0.01)
    assert ch07_extrapolation.new_score_pairs(curves, 5, 0.05) == [1]
    assert ch07_extrapolation.new_score_pairs(curves, 5, 0.005) == [1, 2]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: ch07_extrapolation.score_excess(torch.zeros(2, 10), 5), "dimensions"),
        (
            lambda: ch07_extrapolation.score_excess(torch.zeros(1, 2, 10), 10),
            "below the number of distances",
        ),
        (lambda: ch07_extrapolation.new_score_pairs(torch.zeros(1, 2, 10), 5, -1.0), "tol"),
        (
            lambda: ch07_extrapolation.position_score_curves(_model("alibi"), TOKENS),
            "needs a RoPE model",
        ),
        (
            lambda: ch07_extrapolation.position_score_curves(_model("rope"), TOKENS, layer=2),
            "layer must be",
        ),
        (lambda: ch07_extrapolation.attention_entropy(_model("none"), TOKENS[:10], 32), "at least"),
        (
            lambda: ch07_extrapolation.attention_entropy(_model("none"), TOKENS.float(), 32),
            "token ids",
        ),
        (lambda: ch07_extrapolation.load_reference("L2048"), "name must be one of"),
        (lambda: ch07_extrapolation.window_losses(_model("none"), TOKENS, 16, 0), "n_windows"),
        (lambda: ch07_extrapolation.window_losses(_model("none"), TOKENS, 16, 40), "at least"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_position_cost_grows_with_length_only_for_biases():
    costs = {}
    for position in ("none", "sinusoidal", "learned", "t5", "alibi", "rope"):
        config = LMConfig(position=position)  # d_model 128, 4 heads, 2 layers
        costs[position] = (
            ch07_extrapolation.position_cost(config, 64),
            ch07_extrapolation.position_cost(config, 512),
        )
    assert costs["none"] == (0, 0)
    assert costs["sinusoidal"] == costs["learned"] == (128, 128)
    assert costs["alibi"] == costs["t5"] == (4 * 64 * 2, 4 * 512 * 2)
    # RoPE: x cos + x' sin on d_model query and d_model key dims, 2 multiply-adds each, 2 layers
    assert costs["rope"] == (2 * 2 * 128 * 2,) * 2 == ((4 * 128) * 2,) * 2


def test_window_losses_keep_each_window_and_average_to_position_losses():
    from posenc_lib.models.experiment import position_losses

    model = _model("none")
    per_window = ch07_extrapolation.window_losses(model, TOKENS, 16, 8)  # (8, 16)
    assert per_window.shape == (8, 16) and per_window.dtype == torch.float64
    mean = position_losses(model, TOKENS, 16, eval_tokens=8 * 17)  # (16,)
    torch.testing.assert_close(per_window.mean(0), mean.double(), rtol=1e-5, atol=1e-6)


def test_forward_ms_times_a_forward_pass():
    assert ch07_extrapolation.forward_ms(_model("rope"), TOKENS[:64][None], repeats=3) > 0


def test_call_ms_calls_once_to_warm_up_then_repeats():
    calls = []
    assert ch07_extrapolation.call_ms(lambda: calls.append(1), repeats=3) >= 0
    assert len(calls) == 4


def test_the_alibi_papers_tables_are_shipped_and_read():
    table = ch07_extrapolation.load_reference("L512")
    assert table["L_valid"][0] == 512 and table["alibi_ppl"][0] == 19.73
    assert table["t5bias_ppl"][-1] is None  # out of memory in the paper
    assert ch07_extrapolation.reference_ratio(table, "alibi", 1) == 1.0
    at_1012 = ch07_extrapolation.reference_ratio(
        table, "sinusoidal", 1012 / 512
    )  # a row of the table
    assert at_1012 == pytest.approx(43.54 / 20.05)
    assert set(ch07_extrapolation.load_reference("L1024")) == set(table)
    assert "arXiv:2108.12409" in (ch07_extrapolation.REFERENCE / "README.md").read_text(
        encoding="utf-8"
    )
    with pytest.raises(ValueError, match="no method"):
        ch07_extrapolation.reference_ratio(table, "rope", 2)
    with pytest.raises(ValueError, match="outside the lengths"):
        ch07_extrapolation.reference_ratio(table, "t5bias", 30)


# -- comparisons over seeds ----------------------------------------------------------------------


def _results(rows):
    """A results dict with the given rows: name -> list of per-seed perplexities at T = 64."""
    out = {"L": 64, "lengths": [64], "seeds": [0, 1, 2], "rows": {}}
    for name, values in rows.items():
        known = [v for v in values if v is not None]
        out["rows"][name] = {
            "seeds": {"64": values},
            "ppl": {"64": sum(known) / len(known) if known else None},
        }
    return out


def test_a_difference_counts_only_when_every_seed_agrees():
    from posenc_lib.analysis.ch07_extrapolation import describe, ranking, seed_verdict

    r = _results(
        {"a": [2.0, 2.1, 2.2], "b": [2.3, 2.4, 2.5], "c": [2.15, 2.6, 2.7], "d": [None] * 3}
    )
    assert seed_verdict(r, "a", "b", 64) == "lower" and seed_verdict(r, "b", "a", 64) == "higher"
    assert seed_verdict(r, "a", "c", 64) == "overlap"  # c's best seed beats a's worst
    assert seed_verdict(r, "b", "c", 64) == "overlap"
    assert seed_verdict(r, "a", "d", 64) == "n/a"
    assert ranking(r, ["c", "b", "a", "d"], 64) == "a < b ~ c"
    assert describe(r, "a", 64) == "2.10 [2.00, 2.20]" and describe(r, "d", 64) == "-"
    # touching ranges are not separated: the lower must be strictly below every seed of the other
    touching = _results({"a": [2.0, 2.3], "b": [2.3, 2.4]})
    assert seed_verdict(touching, "a", "b", 64) == "overlap"


def test_a_paired_verdict_compares_each_seed_with_its_own():
    from posenc_lib.analysis.ch07_extrapolation import seed_verdict

    # a changed model (b's own seed, scaled at evaluation): lower seed by seed, ranges overlapping
    r = _results(
        {"b": [2.0, 3.0, 4.0], "a": [1.9, 2.9, 3.9], "c": [2.1, 2.9, 4.1], "d": [2.0, 3.0, 4.0]}
    )
    assert seed_verdict(r, "a", "b", 64) == "overlap"
    assert seed_verdict(r, "a", "b", 64, paired=True) == "lower"
    assert seed_verdict(r, "b", "a", 64, paired=True) == "higher"
    assert seed_verdict(r, "c", "b", 64, paired=True) == "mixed"
    assert seed_verdict(r, "d", "b", 64, paired=True) == "same"


def test_asking_for_a_row_or_length_the_results_lack_gets_a_sentence():
    from posenc_lib.analysis.ch07_extrapolation import seed_values

    r = _results({"a": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match="no row 'b'"):
        seed_values(r, "b", 64)
    with pytest.raises(ValueError, match="not evaluated at T = 128"):
        seed_values(r, "a", 128)


def test_the_growth_report_divides_each_seed_by_its_own_perplexity_at_l():
    from posenc_lib.analysis.ch07_extrapolation import growth_report

    r = {
        "L": 64, "lengths": [64, 512], "seeds": [0, 1],
        "rows": {
            "a": {"seeds": {"64": [2.0, 4.0], "512": [4.0, 4.0]}, "ppl": {"64": 3.0, "512": 4.0}},
            "b": {"seeds": {"64": [2.0, 2.0], "512": [9.0, 10.0]}, "ppl": {"64": 2.0, "512": 9.5}},
            "c": {"seeds": {"64": [2.0, 2.0], "512": [None, None]}, "ppl": {"64": 2.0, "512": None}},
        },
    }  # fmt: skip
    text = growth_report(r, ["a", "b", "c"])
    assert "a                    perplexity at 8L / at L = 1.50 [1.00, 2.00]" in text
    assert "b                    perplexity at 8L / at L = 4.75 [4.50, 5.00]" in text
    assert "c                    cannot run at 8L" in text
    assert text.endswith("best to worst at 8L: a < b")


def test_the_transformer_papers_position_rows_load_as_numbers_and_names():
    table = ch07_extrapolation.load_reference("vaswani")
    assert table["positions"] == ["sinusoidal", "learned"]
    assert table["ppl_dev"] == [4.92, 4.92] and table["bleu_dev"] == [25.8, 25.7]


def test_far_attention_share_is_the_share_of_keys_far_back_under_uniform_attention():
    model = _model("none")
    with torch.no_grad():
        for block in model.blocks:
            block.attention.qkv.weight.zero_()  # q = k = 0: every visible key weighs the same
    length, far = 32, 10
    share = ch07_extrapolation.far_attention_share(model, TOKENS, length, far, n_tokens=128)
    queries = torch.arange(length - length // 4, length, dtype=torch.float64)
    expected = ((queries - far + 1) / (queries + 1)).mean()  # keys 0..t-far of the t + 1 visible
    assert share.shape == (2, 2)  # (layers, heads)
    torch.testing.assert_close(share, torch.full((2, 2), float(expected), dtype=torch.float64))
    none_far = ch07_extrapolation.far_attention_share(model, TOKENS, length, length, n_tokens=128)
    assert torch.equal(none_far, torch.zeros(2, 2, dtype=torch.float64))  # no key is L back


def test_the_fused_kernel_takes_two_and_four_dim_masks_and_no_three_dim_one():
    # torch 2.13 on the CPU (sdp_utils_cpp.h, check_attn_mask_shape): a (T, T) or (1, H, T, T)
    # mask may run on the flash kernel; a (1, T, T) or (H, T, T) one falls back to the math path.
    bias = torch.zeros(4, 16, 16)  # (H, T, T)
    accepts = ch07_extrapolation.fused_attention_accepts
    assert accepts(bias[0], 4, 8) and accepts(bias[None], 4, 8)
    assert not accepts(bias, 4, 8) and not accepts(bias[:1], 4, 8)
    _, model_mask, _ = _model("alibi").position_inputs(16)  # what TinyLM passes: (H, T, T)
    assert model_mask.dim() == 3 and not accepts(model_mask, 2, 16)


def test_the_fused_kernel_refuses_a_mask_that_needs_a_gradient():
    model = _model("t5")  # its bias is built from a learned table
    _, bias, _ = model.position_inputs(16)  # (H, T, T), requires grad
    assert bias.requires_grad and not ch07_extrapolation.fused_attention_accepts(bias[None], 2, 16)
    with torch.no_grad():
        _, bias, _ = model.position_inputs(16)
    assert ch07_extrapolation.fused_attention_accepts(bias[None], 2, 16)
