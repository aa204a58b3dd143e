"""The chapters' fragments inside the core's error sentences speak Chinese (中文) too.

A chapter function checks its arguments with ``posenc_lib._validate`` and hands it a fragment: the
reason a number must be even (``why``), what a tensor must hold (``what``), the table that would be
too large (``table_size``'s description, with its sizes as fields) or an argument's label. Each is
marked ``N_()`` (or translated with ``_()``) where it is written, so in Chinese the whole sentence
is Chinese; in English it reads exactly as it did before.
"""

from __future__ import annotations

import re

import pytest
import torch

from posenc_lib.analysis import (
    ch02_naive,
    ch03_add_concat,
    ch03_sinusoid,
    ch04_relative,
    ch05_alibi,
    ch06_beyond,
    ch06_rope,
    ch07_extrapolation,
    ch07_scaling,
    ch08_cache,
    ch08_config,
    ch08_heads,
    report,
    toeplitz,
)
from posenc_lib.i18n import in_language

NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[+-]\d+)?")
TOO_LARGE = "would hold 4.29e+09 values (16 GiB in float32); the limit is 2.15e+09. Ask for fewer "
TOO_LARGE += "positions or dims."

# (a bad call, its English message exactly as before, the fragment's Chinese)
CASES = [
    (
        lambda: ch02_naive.flip_period(torch.tensor([1.5])),
        "bits must hold bit indices (an integer tensor), got dtype torch.float32.",
        "比特位下标",
    ),
    (
        lambda: ch03_add_concat.cross_terms_by_width([8, 7]),
        "each d_model must be even, got 7: sinusoidal pairs",
        "正弦编码由 (sin, cos) 对构成",
    ),
    (
        lambda: ch03_sinusoid.tensor2tensor_encoding(10, 7),
        "d_model must be even, got 7: the encoding is built from (sin, cos) pairs.",
        "这种编码由 (sin, cos) 对构成。",
    ),
    (
        lambda: ch03_sinusoid.tensor2tensor_encoding(2**20, 4096),
        f"a (1048576, 4096) position table {TOO_LARGE}",
        "形状为 (1048576, 4096) 的位置表",
    ),
    (
        lambda: ch04_relative.shaw_index(torch.tensor([0.5]), 2),
        "offsets must hold whole-number offsets j - i (an integer tensor), got dtype torch.float32.",
        "整数偏移量 j - i",
    ),
    (
        lambda: ch04_relative.scorer(next(iter(ch04_relative.SCORERS)), 7),
        "d_model must be even, got 7: the sinusoidal methods are built from pairs.",
        "正弦类方法都由 (sin, cos) 对构成。",
    ),
    (
        lambda: ch05_alibi.head_bias(8, 0, 2**16),
        f"a (65536, 65536) bias {TOO_LARGE}",
        "形状为 (65536, 65536) 的偏置",
    ),
    (
        lambda: ch05_alibi.key_bias(8, 2**29),
        f"a (536870912, 8) key bias {TOO_LARGE}",
        "形状为 (536870912, 8) 的键偏置",
    ),
    (
        lambda: ch05_alibi.needle_weight(torch.ones(8), 16, [1.5], 1.0),
        "distances must hold whole numbers of tokens (an integer tensor), got dtype torch.float32.",
        "整数个 token",
    ),
    (
        lambda: ch06_beyond.grid_scores(torch.ones(6), torch.ones(6), 2, 2),
        "head_dim / 2 must be even, got 3: 2-D RoPE splits the pairs between rows and columns.",
        "二维 RoPE",
    ),
    (
        lambda: ch06_rope.random_query_key(7),
        "head_dim must be even, got 7: RoPE rotates the dims in pairs.",
        "RoPE 把维度两两配对来旋转。",
    ),
    (
        lambda: ch07_scaling.frequency_ratio("linear", 2.0, train_len=0),
        "train_len (the training length L) must be at least 1, got 0.",
        "train_len (训练长度 L)",
    ),
    (
        lambda: ch07_extrapolation.forward_ms(None, torch.zeros(1, 4)),
        "ids must hold token ids (an integer tensor), got dtype torch.float32.",
        "各 token 的 id",
    ),
    (
        lambda: toeplitz.offset_matrix(2**16, 2**16),
        f"a (65536, 65536) offset matrix {TOO_LARGE}",
        "形状为 (65536, 65536) 的偏移矩阵",
    ),
    (
        lambda: report.position_report(torch.zeros(8, 4), seen=0),
        "seen (the training length) must be at least 1, got 0.",
        "seen (训练长度)",
    ),
    (
        lambda: ch08_heads.pair_energy(torch.ones(3)),
        "x.shape[-1] (head_dim) must be even, got 3: RoPE rotates the dims in pairs.",
        "RoPE 把维度两两配对来旋转。",
    ),
    (
        lambda: ch08_heads.frequency_bands(64, 10000.0, trained=0),
        "trained (the context length L) must be at least 1, got 0.",
        "trained (上下文长度 L)",
    ),
    (
        lambda: ch08_config.head_dim_of({"head_dim": 7}),
        "config['head_dim'] must be even, got 7: RoPE turns pairs.",
        "RoPE 成对旋转维度。",
    ),
    (
        lambda: ch08_cache.greedy_generate_with_cache(None, torch.zeros(1, 3), 2),
        "prompt must hold token ids (an integer tensor), got dtype torch.float32.",
        "各 token 的 id",
    ),
]


def _message(call, language: str) -> str:
    with in_language(language), pytest.raises(ValueError) as caught:
        call()
    return str(caught.value)


@pytest.mark.parametrize(("call", "english", "fragment"), CASES)
def test_fragment_in_chinese_and_english_unchanged(call, english, fragment):
    assert _message(call, "en") == english
    chinese = _message(call, "zh")
    assert fragment in chinese
    assert not re.search(r"[A-Za-z]{3,} [a-z]{3,} [a-z]{3,}", chinese), chinese  # no English left
    numbers = NUMBER.findall(english.replace("2-D", "二维"))  # "2-D RoPE" reads 二维 RoPE
    assert sorted(NUMBER.findall(chinese)) == sorted(numbers)
