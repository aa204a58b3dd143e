"""Chapter 4's exercise q5: encoder–decoder attention, queries from one sequence, keys from another."""

from __future__ import annotations

import math

import torch

from posenc_lib.analysis.ch04_encdec import cross_attention
from posenc_lib.checks import draws
from posenc_lib.checks.answers import TENSOR, as_tensor, close
from posenc_lib.checks.ch04.setting import F64, NOTEBOOK
from posenc_lib.checks.diagnosis import CLOSE_BUT, named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr


def _cross(dec, enc, w_q, w_k, w_v, *, scale="sqrt d_k", dim=-1, causal=False, swap_w=False):
    """Cross-attention's output (T_dec, d_v), or one of its usual wrong variants (float64)."""
    if swap_w:  # W_k on the queries' side and W_q on the keys'
        w_q, w_k = w_k, w_q
    q, k, v = dec @ w_q, enc @ w_k, enc @ w_v  # (T_dec, d_k), (T_enc, d_k), (T_enc, d_v)
    divisor = {
        "sqrt d_k": math.sqrt(q.shape[-1]),
        "none": 1.0,
        "d_k": q.shape[-1],
        "sqrt D": math.sqrt(dec.shape[-1]),
    }[scale]
    logits = q @ k.T / divisor  # (T_dec, T_enc)
    if causal:  # a decoder's mask, applied where it does not belong
        mask = torch.ones_like(logits, dtype=torch.bool).triu(diagonal=1)
        logits = logits.masked_fill(mask, float("-inf"))
    return torch.softmax(logits, dim=dim) @ v  # (T_dec, d_v)


class CrossAttention(Question):
    name, function, points, notebook = "q5", "cross_attention", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "by sqrt(d_k)",
        "1 / sqrt(d_k)",
        "/ sqrt(d_k)",
        "/ math.sqrt(q.shape[-1])",
    )
    returns = TENSOR
    references = (
        "posenc_lib.analysis.ch04_encdec.cross_attention",
        "posenc_lib.attention.self_attention",
    )
    title = N_("Encoder–decoder attention")
    hints = (
        N_(
            "Queries come from the decoder, keys and values from the encoder: q = decoder_x @ w_q, "
            "k = encoder_x @ w_k, v = encoder_x @ w_v."
        ),
        N_(
            "The logits q @ k.T have one row per decoder token and one column per encoder token, "
            "(T_dec, T_enc); divide them by sqrt(d_k), the size of a query (w_q.shape[1])."
        ),
        N_(
            "Softmax over the encoder tokens (the last axis), with no mask: a decoder token may "
            "look at every encoder token. Then multiply by v: (T_dec, T_enc) @ (T_enc, d_v)."
        ),
    )

    def cases(self, seed=0):
        generator = draws.seeded(seed, 5)
        if seed == 0:
            shapes = [(3, 5, 6, 4, 2), (4, 7, 8, 5, 3)]
        else:  # T_enc > T_dec, and d_k, d_v and D all different, so each slip shows
            shapes = []
            for _ in range(3):
                n_dec = draws.randint(5, 9, generator)
                d_k = draws.randint(3, 7, generator)
                shapes.append(
                    (
                        n_dec,
                        n_dec + draws.randint(2, 6, generator),
                        d_k + draws.randint(3, 6, generator),
                        d_k,
                        d_k - draws.randint(1, 3, generator),
                    )
                )
        cases = []
        for n_dec, n_enc, d, d_k, d_v in shapes:
            dec = torch.randn(n_dec, d, generator=generator, dtype=F64)
            enc = torch.randn(n_enc, d, generator=generator, dtype=F64)
            w_q, w_k = torch.randn(2, d, d_k, generator=generator, dtype=F64)
            w_v = torch.randn(d, d_v, generator=generator, dtype=F64)
            describe = tr(
                "decoder_x ({n_dec}, {d}), encoder_x ({n_enc}, {d}), w_q and w_k ({d}, {d_k}), "
                "w_v ({d}, {d_v})",
                n_dec=n_dec,
                n_enc=n_enc,
                d=d,
                d_k=d_k,
                d_v=d_v,
            )
            cases.append(Case((dec, enc, w_q, w_k, w_v), describe))
        return cases

    def diagnose(self, case, value):
        dec, enc, w_q, w_k, w_v = case.args
        n_dec, n_enc, d_k, d_v = dec.shape[0], enc.shape[0], w_q.shape[1], w_v.shape[1]
        if isinstance(value, torch.Tensor) and value.dim() == 2:
            shapes = {
                (n_enc, d_v): N_("your output has one row per encoder token: the queries come from the decoder (decoder_x @ w_q), the keys and values from the encoder."),
                (n_dec, n_enc): N_("your result has shape (T_dec, T_enc): those are the attention weights; multiply them by the values, encoder_x @ w_v."),
                (n_dec, d_k): N_("your output has d_k columns: the values are encoder_x @ w_v, not @ w_k."),
                (d_v, n_dec): N_("your output is transposed: one row per decoder token, (T_dec, d_v)."),
            }  # fmt: skip
            if tuple(value.shape) in shapes and tuple(value.shape) != (n_dec, d_v):
                return _(CLOSE_BUT) + _(shapes[tuple(value.shape)])
        got, problem = as_tensor(value, N_("The output"), (n_dec, d_v))
        if problem:
            return problem
        if close(got, cross_attention(dec, enc, w_q, w_k, w_v)[0]):
            return None
        args = (dec, enc, w_q, w_k, w_v)
        mistakes = [
            (_cross(*args, scale="none"), N_("the logits go into the softmax unscaled: re-read the scale in the question's formula (chapter 1's attention scales the same way).")),
            (_cross(*args, scale="d_k"), N_("you divided the logits by d_k itself: look again at how the question's formula scales them.")),
            (_cross(*args, scale="sqrt D"), N_("you divided by the square root of the model width D; re-read which size the question's formula divides by.")),
            (_cross(*args, dim=0), N_("your softmax runs over the decoder tokens (axis 0); each decoder token's weights over the encoder tokens must sum to 1: softmax over the last axis.")),
            (_cross(*args, causal=True), N_("you applied a causal mask: cross-attention has none, since every encoder token is already known when the decoder runs; only the decoder's self-attention is causal.")),
            (_cross(*args, swap_w=True), N_("you swapped w_q and w_k: the queries are decoder_x @ w_q, the keys encoder_x @ w_k.")),
        ]  # fmt: skip
        named = named_mistake(mistakes, lambda wrong: close(got, wrong))
        if named:
            return named
        # Two slips at once: name both steps.
        slips = {
            "none": (N_("the logits go into the softmax unscaled"), {"scale": "none"}),
            "d_k": (N_("the logits are divided by d_k itself"), {"scale": "d_k"}),
            "sqrt D": (N_("the logits are divided by the square root of the model width D"), {"scale": "sqrt D"}),
            "dim": (N_("the softmax runs over the decoder tokens (axis 0), not over the encoder tokens"), {"dim": 0}),
            "causal": (N_("a causal mask is applied, which cross-attention does not have"), {"causal": True}),
            "swap": (N_("w_q and w_k are swapped"), {"swap_w": True}),
        }  # fmt: skip
        keys = list(slips)
        for a, first in enumerate(keys):
            for second in keys[a + 1 :]:
                if first in ("none", "d_k", "sqrt D") and second in ("d_k", "sqrt D"):
                    continue  # two scales cannot both be wrong
                if close(got, _cross(*args, **slips[first][1], **slips[second][1])):
                    return tr(
                        "Two slips: {first}; and {second}. Re-read those two steps of the question's formula.",
                        first=_(slips[first][0]),
                        second=_(slips[second][0]),
                    )
        return _(
            "The output has the right shape but not the right values; compare each step (which input gives the queries, the keys and the values; the scale; the softmax's axis) with the question's formula."
        )
