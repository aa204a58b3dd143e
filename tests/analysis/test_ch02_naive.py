"""Chapter 2's measurements: neighbour steps, flip rates, the size of a position next to a word, and
the learned tables of real models (shapes from transformers' own configurations)."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st

from posenc_lib import (
    LearnedPositionalEmbedding,
    binary_encoding,
    integer_encoding,
    normalized_encoding,
    sinusoidal_encoding,
)
from posenc_lib.analysis.ch02_naive import (
    TABLES,
    flip_period,
    flip_rate,
    neighbour_cosines,
    neighbour_distances,
    norm_ratio,
    table_view,
    unevenness,
)
from posenc_lib.analysis.report import neighbour_distances as report_neighbour_distances


def _trailing_ones(t: int) -> int:
    return len(bin(t)) - len(bin(t).rstrip("1"))


@given(st.integers(1, 10), st.data())
def test_a_binary_step_flips_the_trailing_ones_and_the_bit_above(d_model, data):
    # t -> t+1 turns the k trailing ones of t into zeros and the 0 above them into a 1: k + 1 flips.
    n = data.draw(st.integers(2, 2**d_model))
    table = binary_encoding(n, d_model)
    hamming = neighbour_distances(table, "hamming")
    assert hamming.tolist() == [_trailing_ones(t) + 1 for t in range(n - 1)]
    torch.testing.assert_close(neighbour_distances(table), hamming.sqrt())


def test_the_longest_binary_step_is_from_two_to_the_k_minus_one_to_two_to_the_k():
    steps = neighbour_distances(binary_encoding(256, 8))  # (255,)
    assert int(steps.argmax()) == 127 and float(steps.max()) == pytest.approx(math.sqrt(8))
    assert float(steps.min()) == 1.0
    assert unevenness(binary_encoding(256, 8)) == pytest.approx(math.sqrt(8))
    assert unevenness(binary_encoding(256, 8), "hamming") == pytest.approx(8.0)


def test_euclidean_steps_are_the_yardsticks_own():
    table = sinusoidal_encoding(50, 8, dtype=torch.float64)
    assert torch.equal(neighbour_distances(table), report_neighbour_distances(table))


def test_integer_and_sinusoidal_steps_are_even_normalized_steps_shrink_with_length():
    assert unevenness(integer_encoding(100, 4)) == pytest.approx(1.0)
    assert unevenness(sinusoidal_encoding(100, 16, dtype=torch.float64)) == pytest.approx(1.0)
    short, long = (float(neighbour_distances(normalized_encoding(n, 4))[0]) for n in (5, 500))
    assert short / long == pytest.approx(499 / 4, rel=1e-5)


def test_bit_j_flips_once_every_two_to_the_j_steps():
    n = 1024
    rates = flip_rate(binary_encoding(n, 12, dtype=torch.float64))  # (12,)
    expected = [(n - 1) // 2**j / (n - 1) for j in range(12)]
    assert rates.tolist() == pytest.approx(expected)
    assert flip_period(torch.arange(5)).tolist() == [1, 2, 4, 8, 16]
    assert flip_period(3).item() == 8 and flip_period(torch.tensor([62])).item() == 2**62


def test_untrained_learned_rows_are_unrelated_neighbours():
    torch.manual_seed(0)
    table = LearnedPositionalEmbedding(512, 768).weight.detach()  # (512, 768)
    cosines = neighbour_cosines(table)  # (511,)
    assert abs(float(cosines.mean())) < 0.01 and float(cosines.abs().max()) < 0.2
    assert float(neighbour_cosines(integer_encoding(10, 4))[1:].min()) == pytest.approx(1.0)


def test_norm_ratio_is_position_size_over_word_size():
    tokens = torch.ones(4, 4) / 2  # each row has norm 1
    assert norm_ratio(integer_encoding(4, 4), tokens).tolist() == pytest.approx([0, 2, 4, 6])


def test_table_view_measures_and_clamps_the_position():
    for name in TABLES:
        view = table_view(name, 16, 8, 3)
        assert view.table.shape == (16, 8) and view.distances.shape == (15,)
        assert view.position == 3 and not view.clamped
    view = table_view("integer", 16, 8, 40)
    assert view.position == 15 and view.clamped and view.max_abs == 15.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: neighbour_distances(torch.ones(1, 3)), "at least 2 rows"),
        (lambda: neighbour_distances(torch.ones(4, 3), "manhattan"), "metric must be one of"),
        (lambda: neighbour_distances(torch.ones(4, 3, dtype=torch.long)), "floating-point"),
        (lambda: neighbour_distances(torch.ones(3)), "must have 2 dimensions"),
        (lambda: neighbour_cosines([[0.0, 1.0]]), "must be a torch.Tensor"),
        (lambda: unevenness(torch.zeros(3, 2)), "rows 0 and 1 of the table are equal"),
        (lambda: flip_period(63), "at most 62"),
        (lambda: flip_period(torch.tensor([-1, 2])), "must lie in 0..62"),
        (lambda: flip_period(torch.tensor([1.0])), "integer tensor"),
        (lambda: norm_ratio(torch.ones(3, 2), torch.ones(2, 2)), "shapes must match"),
        (lambda: table_view("gray", 8, 4, 0), "name must be one of"),
        (lambda: table_view("binary", 1, 4, 0), "at least 2 to have a neighbour"),
        (lambda: table_view("binary", 8, 4, -1), "position must be >= 0"),
        (lambda: table_view("binary", 64, 4, 0), "distinct codes"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# The learned tables of chapter 2's model table, from transformers' own configurations. Built on
# the meta device: shapes and parameter counts without allocating a single weight.
MODELS = [
    ("bert", {}, (512, 768), 110e6),
    ("bert", dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                  intermediate_size=4096), (512, 1024), 340e6),
    ("gpt2", {}, (1024, 768), 124e6),
    ("gpt2", dict(n_embd=1600, n_layer=48, n_head=25), (1024, 1600), 1.5e9),
]  # fmt: skip


@pytest.mark.parametrize(("family", "sizes", "shape", "published"), MODELS)
def test_learned_tables_of_real_models_agree_with_transformers(family, sizes, shape, published):
    transformers = pytest.importorskip("transformers")
    if family == "bert":
        config, model_class = transformers.BertConfig(**sizes), transformers.BertModel
        table_name = "embeddings.position_embeddings.weight"
    else:
        config, model_class = transformers.GPT2Config(**sizes), transformers.GPT2Model
        table_name = "wpe.weight"
    with torch.device("meta"):
        model = model_class(config)
    weights = dict(model.named_parameters())
    assert tuple(weights[table_name].shape) == shape
    ours = sum(p.numel() for p in LearnedPositionalEmbedding(*shape, device="meta").parameters())
    assert ours == math.prod(shape)
    total = sum(p.numel() for p in model.parameters())
    assert total == pytest.approx(published, rel=0.05)  # the totals the chapter quotes
