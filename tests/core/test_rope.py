"""RoPE's rotation: cos/sin tables and rotated queries equal transformers' Llama and GPT-J, the
rotation laws, both layouts, bad input. The frequencies and scalings: test_rope_scaling.py."""

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch.testing import assert_close
from transformers import LlamaConfig
from transformers.models.gptj.modeling_gptj import apply_rotary_pos_emb as gptj_apply
from transformers.models.gptj.modeling_gptj import create_sinusoidal_positions
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply

from posenc_lib import apply_rope, rope_cos_sin, rope_inv_freq

F64 = {"dtype": torch.float64}


@pytest.mark.parametrize(
    "scaling",
    [
        None,
        {"rope_type": "linear", "factor": 4.0},
        {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 256},
    ],
)
def test_rotated_queries_equal_llama(scaling):
    """The whole pipeline: frequencies -> cos/sin at (large, random) positions -> rotated q and k."""
    head_dim, base = 64, 10000.0
    params = {"rope_type": "default", "rope_theta": base, **(scaling or {})}
    config = LlamaConfig(
        hidden_size=2 * head_dim,
        num_attention_heads=2,
        head_dim=head_dim,
        max_position_embeddings=2048,
        rope_parameters=params,
    )
    rotary = LlamaRotaryEmbedding(config)
    positions = torch.randint(0, 8192, (2, 50))  # (B, T)
    q, k = torch.randn(2, 4, 50, head_dim), torch.randn(2, 4, 50, head_dim)  # (B, H, T, D)
    cos_t, sin_t = rotary(q, positions)  # (B, T, D) each
    q_t, k_t = llama_apply(q, k, cos_t, sin_t)
    inv_freq, scale = rope_inv_freq(head_dim, base, scaling)
    cos, sin = rope_cos_sin(positions, inv_freq, scale)  # (B, T, D)
    assert_close(cos, cos_t)
    assert_close(sin, sin_t)
    cos, sin = cos[:, None], sin[:, None]  # (B, 1, T, D): one table for all heads
    assert_close(apply_rope(q, cos, sin), q_t)
    assert_close(apply_rope(k, cos, sin), k_t)


def test_interleaved_equals_gptj():
    head_dim, n = 32, 40
    x = torch.randn(2, n, 3, head_dim)  # GPT-J's layout: (B, T, H, D)
    table = create_sinusoidal_positions(n, head_dim)  # (T, D): sin block, cos block
    sin_t, cos_t = table[None, :, : head_dim // 2], table[None, :, head_dim // 2 :]  # (1, T, D/2)
    theirs = gptj_apply(x, sin_t, cos_t)
    cos, sin = rope_cos_sin(n, rope_inv_freq(head_dim)[0], style="interleaved")  # (T, D)
    ours = apply_rope(x.transpose(1, 2), cos, sin, style="interleaved").transpose(1, 2)
    assert_close(ours, theirs)  # rotated values: float32 rounding of two formulas


@given(
    half_dim=st.integers(2, 32),
    base=st.floats(10.0, 1e6),
    m=st.integers(0, 4000),
    n=st.integers(0, 4000),
    shift=st.integers(-4000, 4000),
    style=st.sampled_from(["half", "interleaved"]),
    seed=st.integers(0, 1000),
)
def test_scores_depend_only_on_the_offset(half_dim, base, m, n, shift, style, seed):
    """<R_m q, R_n k> = <R_{m+s} q, R_{n+s} k> for every shift s."""
    d = 2 * half_dim
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(d, generator=g, **F64), torch.randn(d, generator=g, **F64)
    shift = max(shift, -min(m, n))
    inv_freq, _ = rope_inv_freq(d, base, **F64)
    pos = torch.tensor([m, n, m + shift, n + shift], **F64)
    cos, sin = rope_cos_sin(pos, inv_freq, style=style)  # (4, D)
    rq = apply_rope(q.expand(4, d), cos, sin, style)
    rk = apply_rope(k.expand(4, d), cos, sin, style)
    assert_close(rq[0] @ rk[1], rq[2] @ rk[3], atol=1e-9, rtol=1e-9)
    assert_close(rq.norm(dim=-1), q.norm().expand(4))  # a rotation keeps lengths


@given(
    half_dim=st.integers(1, 32),
    m=st.integers(0, 3000),
    n=st.integers(0, 3000),
    style=st.sampled_from(["half", "interleaved"]),
    seed=st.integers(0, 1000),
)
def test_scores_equal_the_complex_closed_form(half_dim, m, n, style, seed):
    """Pairs as complex numbers z: R_m z = z e^{i m theta}, so
    <R_m q, R_n k> = Re sum_i q_i conj(k_i) e^{i (m - n) theta_i}."""
    d = 2 * half_dim
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(d, generator=g, **F64), torch.randn(d, generator=g, **F64)
    inv_freq, _ = rope_inv_freq(d, **F64)
    cos, sin = rope_cos_sin(torch.tensor([m, n], **F64), inv_freq, style=style)  # (2, D)
    rq, rk = (
        apply_rope(q.expand(2, d), cos, sin, style),
        apply_rope(k.expand(2, d), cos, sin, style),
    )

    def as_complex(v):  # first and second member of every pair -> real and imaginary part
        if style == "half":
            return torch.complex(v[: d // 2], v[d // 2 :])
        return torch.complex(v[0::2], v[1::2])

    phase = torch.polar(torch.ones_like(inv_freq), (m - n) * inv_freq)  # e^{i (m-n) theta}
    expected = (as_complex(q) * as_complex(k).conj() * phase).real.sum()
    assert_close(rq[0] @ rk[1], expected, atol=1e-9, rtol=1e-9)


def half_to_interleaved(d):
    """The permutation taking a 'half' layout to 'interleaved': (0, D/2, 1, D/2 + 1, ...)."""
    return torch.stack((torch.arange(d // 2), torch.arange(d // 2, d)), -1).reshape(d)


@given(half_dim=st.integers(2, 32), n=st.integers(1, 64), seed=st.integers(0, 1000))
def test_layouts_agree_up_to_a_fixed_permutation(half_dim, n, seed):
    d = 2 * half_dim
    x = torch.randn(3, n, d, generator=torch.Generator().manual_seed(seed), **F64)
    inv_freq, _ = rope_inv_freq(d, **F64)
    perm = half_to_interleaved(d)
    half = apply_rope(x, *rope_cos_sin(n, inv_freq, style="half"), style="half")
    inter = apply_rope(
        x[..., perm], *rope_cos_sin(n, inv_freq, style="interleaved"), style="interleaved"
    )
    assert_close(half[..., perm], inter)


def test_attention_scaling_multiplies_cos_and_sin():
    inv_freq, scale = rope_inv_freq(
        16, scaling={"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 64}
    )
    assert scale == pytest.approx(0.1 * torch.tensor(16.0).log().item() + 1)
    cos, sin = rope_cos_sin(10, inv_freq, scale)
    assert_close(cos**2 + sin**2, torch.full((10, 16), scale**2))


def test_fractional_positions_interpolate():
    inv_freq, _ = rope_inv_freq(8, **F64)
    cos, _ = rope_cos_sin(torch.tensor([0.5], **F64), inv_freq)
    assert_close(cos[0, 0], torch.tensor(0.5, **F64).cos())


def test_gradient_is_the_inverse_rotation():
    x = torch.randn(2, 5, 8, **F64, requires_grad=True)
    for style in ("half", "interleaved"):
        cos, sin = rope_cos_sin(5, rope_inv_freq(8, **F64)[0], 1.3, style=style)
        assert torch.autograd.gradcheck(
            lambda t, c=cos, s=sin, st=style: apply_rope(t, c, s, st), (x,)
        )


def test_second_derivatives_work():
    x = torch.randn(2, 5, 8, **F64, requires_grad=True)
    cos, sin = rope_cos_sin(5, rope_inv_freq(8, **F64)[0])
    assert torch.autograd.gradgradcheck(lambda t: apply_rope(t, cos, sin), (x,))


def test_half_precision_frequencies_give_accurate_angles():
    """fp16 positions overflow past 65504 and bf16 ones lose whole radians: angles use float32."""
    for dtype in (torch.float16, torch.bfloat16):
        inv_freq, _ = rope_inv_freq(8, dtype=dtype)
        cos, sin = rope_cos_sin(70_000, inv_freq)
        assert cos.dtype == dtype and torch.isfinite(cos).all()
        exact = (torch.arange(70_000, **F64)[:, None] * inv_freq.double()).cos()
        assert (cos[:, :4].double() - exact).abs().max() < 0.02


def test_output_keeps_dtype_and_layout_is_contiguous():
    x = torch.randn(2, 6, 3, 8).transpose(
        1, 2
    )  # (B, T, H, D) viewed as (B, H, T, D): not contiguous
    cos, sin = rope_cos_sin(6, rope_inv_freq(8)[0])
    out = apply_rope(x, cos, sin)
    assert out.is_contiguous() and out.shape == (2, 3, 6, 8)
    assert torch.equal(out, apply_rope(x.contiguous(), cos, sin))
    bf16 = apply_rope(
        torch.randn(4, 8, dtype=torch.bfloat16), *rope_cos_sin(4, rope_inv_freq(8)[0])
    )
    assert bf16.dtype == torch.bfloat16


def test_mixing_layouts_is_refused_with_a_hint():
    inv_freq, _ = rope_inv_freq(8)
    cos, sin = rope_cos_sin(4, inv_freq, style="interleaved")
    with pytest.raises(ValueError, match="style='interleaved'.*one style"):
        apply_rope(torch.randn(4, 8), cos, sin, style="half")


def yarn(**extra):
    """A valid YaRN scaling dict, with ``extra`` keys added or overridden."""
    return {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, **extra}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rope_inv_freq(63), "head_dim must be even, got 63.*pairs"),
        (
            lambda: rope_inv_freq(64, scaling={"rope_type": "ntk-by-parts"}),
            "rope_type.*must be one of",
        ),
        (
            lambda: rope_inv_freq(64, scaling={"rope_type": "yarn", "factor": 2.0}),
            r"needs the keys \['original_max_position_embeddings'\]",
        ),
        (
            lambda: rope_inv_freq(64, scaling={"rope_type": "linear", "factr": 2.0}),
            "needs the keys",
        ),
        (
            lambda: rope_inv_freq(64, scaling={"rope_type": "linear", "factor": 2.0, "beta": 1}),
            r"does not use the keys \['beta'\]",
        ),
        (
            lambda: rope_inv_freq(64, scaling={"rope_type": "linear", "factor": 0.5}),
            "factor.*at least 1",
        ),
        (lambda: rope_inv_freq(64, scaling="linear"), "must be None or a dict"),
        (lambda: rope_inv_freq(64, seq_len=0), "seq_len must be at least 1"),
        (lambda: rope_cos_sin(4, torch.ones(2, 2)), "inv_freq must have 1 dimensions"),
        (lambda: rope_cos_sin(4, torch.ones(4), style="neox"), "style must be one of"),
        (
            lambda: apply_rope(torch.randn(4, 8), torch.ones(4, 6), torch.ones(4, 6)),
            "last two dims",
        ),
        (
            lambda: apply_rope(torch.randn(4, 7), torch.ones(4, 7), torch.ones(4, 7)),
            "must be even, got 7",
        ),
        (lambda: apply_rope(torch.randn(8), torch.ones(8), torch.ones(8)), "x must have 2 or more"),
        (lambda: apply_rope(torch.randn(4, 8), torch.ones(4, 8), torch.ones(3, 8)), "same shape"),
        (
            lambda: apply_rope(
                torch.ones(4, 8, dtype=torch.long), *rope_cos_sin(4, rope_inv_freq(8)[0])
            ),
            "x must hold real floating-point numbers",
        ),
        (
            lambda: apply_rope(torch.randn(2, 5, 8), torch.ones(3, 5, 8), torch.ones(3, 5, 8)),
            "does not broadcast",
        ),
        (
            lambda: apply_rope(
                torch.randn(4, 8),
                rope_cos_sin(4, rope_inv_freq(8)[0])[0],
                rope_cos_sin(4, rope_inv_freq(8)[0], style="interleaved")[1],
            ),
            "sin does not repeat each frequency",
        ),
        (
            lambda: rope_inv_freq(4, scaling={"rope_type": "ntk", "factor": 1e160}),
            "overflow or vanish",
        ),
        (lambda: rope_inv_freq(8, 10**400), "base is too large"),
        (lambda: rope_inv_freq(8, dtype=torch.int32), "floating-point torch.dtype"),
        (lambda: rope_inv_freq(2, scaling={"rope_type": "ntk", "factor": 2.0}), "at least 4"),
        (
            lambda: rope_inv_freq(
                64,
                scaling={
                    "rope_type": "dynamic",
                    "factor": 2.0,
                    "original_max_position_embeddings": 2.5,
                },
            ),
            "whole number",
        ),
        (
            lambda: rope_inv_freq(
                64,
                scaling={
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "original_max_position_embeddings": 8192,
                    "low_freq_factor": "1",
                    "high_freq_factor": 4.0,
                },
            ),
            r"scaling\['low_freq_factor'\] must be a real number",
        ),
        (
            lambda: rope_inv_freq(64, scaling=yarn(beta_fast=1, beta_slow=32)),
            "beta_fast >= beta_slow",
        ),
        (lambda: rope_inv_freq(64, scaling=yarn(beta_fast=0)), "greater than 0"),
        (lambda: rope_inv_freq(64, scaling=yarn(truncate="no")), "True or False"),
        (lambda: rope_inv_freq(64, scaling=yarn(attention_factor=float("nan"))), "finite number"),
        (lambda: rope_cos_sin(4, torch.empty(0)), "inv_freq is empty"),
        (lambda: rope_cos_sin(torch.tensor([0.0, float("nan")]), torch.ones(2)), "must be finite"),
        (lambda: rope_cos_sin(4, torch.tensor([1, 2])), "real floating-point"),
        (
            lambda: rope_cos_sin(torch.tensor([True]), torch.ones(2)),
            "positions must be real numbers",
        ),
        (lambda: rope_cos_sin([0, 1], torch.ones(2)), "or a tensor of positions"),
    ],
)
def test_bad_input_gets_a_sentence(call, message):
    with pytest.raises(ValueError, match=message):
        call()
