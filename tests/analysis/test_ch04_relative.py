"""Chapter 4's measurements: Toeplitz spread, Shaw, Transformer-XL (against transformers' XLNet),
DeBERTa (against transformers' DeBERTa), the shift experiment, T5's bucket ranges, the dashboard."""

import math

import matplotlib.pyplot as plt
import pytest
import torch
from torch.testing import assert_close
from transformers import DebertaConfig, XLNetConfig
from transformers.models.deberta.modeling_deberta import (
    DisentangledSelfAttention,
    build_relative_position,
)
from transformers.models.xlnet.modeling_xlnet import XLNetModel, XLNetRelativeAttention

from posenc_lib import sinusoidal_encoding
from posenc_lib.analysis.ch04_relative import (
    RELATIVE,
    SCORERS,
    absolute_terms,
    bucket_view,
    deberta_index,
    deberta_terms,
    diagonal_spread,
    offset_matrix,
    relative_sinusoids,
    scorer,
    shaw_index,
    shaw_logits,
    shift_experiment,
    transformer_xl_terms,
)


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


def test_offset_matrix_is_key_minus_query():
    assert offset_matrix(2, 3).tolist() == [[0, 1, 2], [-1, 0, 1]]
    assert offset_matrix(2, 4, query_offset=2).tolist() == [[-2, -1, 0, 1], [-3, -2, -1, 0]]


def test_diagonal_spread_is_zero_exactly_for_toeplitz_matrices():
    values = _randn(9)  # offsets -3..5 of a (4, 6) matrix
    toeplitz = values[offset_matrix(4, 6) + 3]
    assert diagonal_spread(toeplitz) == 0.0
    bumped = toeplitz.clone()
    bumped[2, 1] += 0.25
    assert diagonal_spread(bumped) == pytest.approx(0.25)
    assert diagonal_spread(torch.stack([toeplitz, bumped])) == pytest.approx(0.25)  # worst head
    # The corners are diagonals of one entry: never a spread.
    corner = torch.zeros(3, 3, dtype=torch.float64)
    corner[0, 2] = 5.0
    assert diagonal_spread(corner) == 0.0


def test_sinusoidal_dot_products_are_toeplitz_until_projected():
    pe = sinusoidal_encoding(64, 16, dtype=torch.float64)
    assert diagonal_spread(pe @ pe.T) < 1e-12
    w_q, w_k = _randn(2, 16, 16) / 4
    assert diagonal_spread((pe @ w_q) @ (pe @ w_k).T) > 1.0


def test_absolute_terms_add_up_to_the_whole_score():
    x, pe, w_q, w_k = _randn(7, 6), _randn(7, 6, seed=1), _randn(6, 4, seed=2), _randn(6, 4, seed=3)
    terms = absolute_terms(x, pe, w_q, w_k)
    assert list(terms) == [
        "content-content",
        "content-position",
        "position-content",
        "position-position",
    ]
    assert_close(sum(terms.values()), ((x + pe) @ w_q) @ ((x + pe) @ w_k).T)


def test_shaw_logits_equal_the_formula_with_one_vector_per_pair():
    n, d, clip = 9, 4, 3
    q, k, table = _randn(n, d), _randn(n, d, seed=1), _randn(2 * clip + 1, d, seed=2)
    expected = torch.empty(n, n, dtype=torch.float64)
    for i in range(n):
        for j in range(n):
            a_ij = table[min(max(j - i, -clip), clip) + clip]  # Shaw et al., section 3.2
            expected[i, j] = q[i] @ (k[j] + a_ij) / math.sqrt(d)
    assert_close(shaw_logits(q, k, table, clip), expected)
    batched = shaw_logits(torch.stack([q, k]), torch.stack([k, q]), table, clip)  # (2, T, T)
    assert_close(batched[0], expected)
    assert shaw_index(torch.tensor([-10, -3, 0, 3, 10]), 3).tolist() == [0, 0, 3, 6, 6]


def test_relative_sinusoids_of_positions_are_the_sinusoidal_table():
    assert_close(
        relative_sinusoids(torch.arange(50), 16),
        sinusoidal_encoding(50, 16, dtype=torch.float64),
    )
    assert_close(
        relative_sinusoids(torch.tensor([-3]), 8)[0, 1::2],
        relative_sinusoids(torch.tensor([3]), 8)[0, 1::2],
    )


def _xlnet(n_pos, d_model=8, seed=0):
    torch.manual_seed(seed)
    config = XLNetConfig(vocab_size=10, d_model=d_model, n_layer=1, n_head=1, d_inner=16)
    layer = XLNetRelativeAttention(config).double().eval()
    for parameter in layer.parameters():
        torch.nn.init.normal_(parameter)
    model = XLNetModel(config)
    pos_emb = model.relative_positional_encoding(n_pos, n_pos, bsz=1).double()  # (2T, 1, D)
    return layer, pos_emb


def test_transformer_xl_terms_match_transformers_xlnet_attention():
    n, d = 6, 8
    layer, pos_emb = _xlnet(n, d)
    h = _randn(n, 1, d)  # (T, B, D), XLNet's layout
    q_head, k_head, v_head, k_head_r = (
        torch.einsum("ibh,hnd->ibnd", inp, w)
        for inp, w in ((h, layer.q), (h, layer.k), (h, layer.v), (pos_emb, layer.r))
    )
    _, probs = layer.rel_attn_core(q_head, k_head, v_head, k_head_r, output_attentions=True)
    theirs = probs[:, :, 0, 0]  # (T, T): query i, key j
    # XLNet's rows of k_head_r hold distances T, T-1, ..., -(T-1): distance o is row T - o.
    r = k_head_r[[n - o for o in range(-(n - 1), n)], 0, 0]  # (2T-1, d), distance -(T-1)..T-1
    terms = transformer_xl_terms(
        q_head[:, 0, 0], k_head[:, 0, 0], r, layer.r_w_bias[0], layer.r_r_bias[0]
    )
    ours = torch.softmax(sum(terms.values()) / math.sqrt(d), dim=-1)
    assert_close(ours.detach(), theirs.detach(), rtol=1e-10, atol=1e-12)


def test_transformer_xl_position_term_is_toeplitz_and_content_bias_is_per_key():
    n, d = 10, 4
    q, k, r, u, v = _randn(n, d), _randn(n, d, seed=1), _randn(2 * n - 1, d, seed=2), *_randn(2, d)
    terms = transformer_xl_terms(q, k, r, u, v)
    # Exact by construction: both terms are gathered from one vector, so equal entries are copies.
    assert diagonal_spread(terms["global position bias"]) == 0.0
    assert torch.equal(terms["global content bias"], terms["global content bias"][:1].expand(n, n))
    assert diagonal_spread(terms["content-position"]) > 0.1  # depends on the query's content too
    # Row i, column j uses the row of r for the distance i - j. Not exact: r @ v (a matrix-vector
    # product) and one row's dot product may add in different orders, so float64 rounding.
    torch.testing.assert_close(terms["global position bias"][5, 2], r[(5 - 2) + n - 1] @ v)


def _deberta_reference(n, d, span, seed=0):
    torch.manual_seed(seed)
    config = DebertaConfig(
        hidden_size=d,
        num_attention_heads=1,
        relative_attention=True,
        max_relative_positions=span,
        pos_att_type=["c2p", "p2c"],
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    attention = DisentangledSelfAttention(config).double().eval()
    q, k = _randn(1, 1, n, d, seed=seed + 1), _randn(1, 1, n, d, seed=seed + 2)
    rel = _randn(2 * span, d, seed=seed + 3)
    theirs = attention.disentangled_att_bias(q, k, build_relative_position(q, k), rel, 3)[0, 0]
    q_r = attention.pos_q_proj(rel) / math.sqrt(3 * d)  # transformers scales Q^r by 1/sqrt(3d)
    k_r = attention.pos_proj(rel)
    return q[0, 0], k[0, 0], q_r.detach(), k_r.detach(), theirs.detach()


@pytest.mark.parametrize(("n", "span"), [(7, 4), (12, 3), (5, 8)])
def test_deberta_terms_match_transformers_with_the_codes_index(n, span):
    q, k, q_r, k_r, theirs = _deberta_reference(n, 8, span)
    code = deberta_terms(q, k, q_r, k_r, span)
    assert list(code) == ["content-to-content", "content-to-position", "position-to-content"]
    assert_close(code["content-to-position"] + code["position-to-content"], theirs)
    paper = deberta_terms(q, k, q_r, k_r, span, convention="paper")
    assert (paper["position-to-content"] - theirs + code["content-to-position"]).abs().max() > 0.1
    assert torch.equal(paper["content-to-position"], code["content-to-position"])
    assert deberta_index(torch.tensor([-9, -3, 0, 2, 9]), 3).tolist() == [0, 0, 3, 5, 5]


@pytest.mark.parametrize("name", sorted(SCORERS))
def test_relative_scores_do_not_move_with_the_sentence_and_absolute_ones_do(name):
    sentence, context = _randn(5, 8), _randn(40, 8, seed=1)
    result = shift_experiment(scorer(name, 8), sentence, context)
    assert result.scores.shape == (36, 5, 5) and result.shifts == list(range(36))
    if name in RELATIVE:
        assert result.max_deviation < 1e-12
    else:
        assert result.max_deviation > 0.1


def test_shift_experiment_places_the_sentence_where_asked():
    seen = []

    def record(x):
        seen.append(x.clone())
        return x @ x.T

    sentence, context = (
        torch.ones(2, 3, dtype=torch.float64),
        torch.zeros(6, 3, dtype=torch.float64),
    )
    shift_experiment(record, sentence, context, shifts=[0, 3])
    assert seen[1][3:5].eq(1).all() and seen[1][:3].eq(0).all() and seen[1][5:].eq(0).all()


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: diagonal_spread(torch.ones(3, 3, dtype=torch.long)), "floating-point"),
        (lambda: diagonal_spread(torch.ones(3)), "2 or more dimensions"),
        (lambda: shaw_logits(_randn(4, 2), _randn(4, 2), _randn(5, 2), 3), r"\(7, 2\)"),
        (lambda: shaw_logits(_randn(4, 2), _randn(3, 2), _randn(7, 2), 3), "must match q"),
        (lambda: shaw_index(torch.tensor([1]), -1), "clip must be >= 0"),
        (lambda: transformer_xl_terms(*_randn(2, 4, 2), _randn(6, 2), *_randn(2, 2)), r"\(7, 2\)"),
        (lambda: deberta_terms(*_randn(2, 4, 2), *_randn(2, 6, 2), 3, "both"), "'code', 'paper'"),
        (lambda: shift_experiment(lambda x: x, _randn(5, 2), _randn(4, 2)), "fit inside"),
        (lambda: shift_experiment(lambda x: x, _randn(2, 2), _randn(4, 2), [3]), "0..2"),
        (lambda: scorer("ALiBi", 8), "must be one of"),
        (lambda: scorer("T5 bias", 7), "d_model must be even"),
        (lambda: bucket_view(32, 128, "yes"), "True or False"),
        (lambda: offset_matrix(0), "q_len must be at least 1"),
        (lambda: diagonal_spread(torch.ones(0, 3, 3)), "at least one entry"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_bucket_dashboard_reads_out_the_last_bucket_and_the_dead_one():
    from posenc_lib.viz.ch04_relative import bucket_dashboard

    dashboard = bucket_dashboard()
    assert "starts at distance <b>91</b>" in dashboard.readout.value
    assert "<b>31</b> of 32 learned numbers" in dashboard.readout.value
    dashboard.set(bidirectional=False)
    assert "starts at distance <b>113</b>" in dashboard.readout.value
    assert "after the query shares bucket 0" in dashboard.readout.value
    dashboard.set(max_distance=4)  # below the 16 exact distances: raised, and said so
    assert "max_distance raised to 17" in dashboard.readout.value
    assert dashboard.plot.limits[1].get_xdata()[0] == 17
    assert dashboard.plot.axes[0].get_ylim() == (-0.5, 31.5)
    dashboard.set(num_buckets=8)
    assert dashboard.plot.axes[0].get_ylim() == (-0.5, 7.5)
    assert torch.equal(torch.as_tensor(dashboard.plot.image.get_array()), dashboard.result.bias)
    plt.close(dashboard.figure)
