"""Chapter 8's exercises: q2, the un-permute of a GGUF file's query and key rows."""

from __future__ import annotations

import torch

from posenc_lib.analysis.ch06_rope import convert_projection
from posenc_lib.checks import draws
from posenc_lib.checks.answers import TENSOR, as_tensor
from posenc_lib.checks.ch08.setting import NOTEBOOK
from posenc_lib.checks.diagnosis import named_mistake
from posenc_lib.checks.question import Case, Question
from posenc_lib.i18n import N_, _, tr

HIDDEN = 576  # SmolLM2-135M's hidden size: Q is (9 * 64, 576), K is (3 * 64, 576)


def _unpermuted(w: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(H * Dh, D_in) rows in GGUF's order -> transformers' half-split order.

    nn.Linear's weight is (out, in); ``convert_projection`` permutes the columns of x @ w's w, so it
    is applied to the transpose.
    """
    return convert_projection(w.T, n_heads, "interleaved", "half").T


def _rows(w, n_heads, order) -> torch.Tensor:
    """w's rows taken in ``order`` ((H, Dh) GGUF-row indices, one per loaded row)."""
    return w[order.reshape(-1)]


def _variants(w: torch.Tensor, n_heads: int) -> list[tuple[torch.Tensor, str]]:
    """The usual wrong un-permutes, each with the sentence that names it."""
    rows, cols = w.shape
    dh = rows // n_heads
    half = dh // 2
    h = torch.arange(n_heads)[:, None]  # (H, 1)
    k = torch.arange(dh)[None, :]  # (1, Dh) the loaded row inside its head
    j, i = k // half, k % half
    forward = h * dh + (k % 2) * half + k // 2  # loaded row h*Dh + 2i + j <- GGUF h*Dh + j*Dh/2 + i
    flipped = h * dh + 2 * i + (1 - j)  # the two members of each pair swapped
    one = torch.arange(rows)
    whole = torch.cat((one[0::2], one[1::2]))  # the whole matrix as one head
    variants = [
        (_rows(w, n_heads, forward), N_("you applied the forward permutation (half-split -> GGUF's interleaved), not its reverse: check which order the rows are in and which one they go to (section 2 of the lecture).")),
        (w[whole], N_("you permuted the whole matrix as if it were one head; each head has its own Dh rows and its own pairs (section 2).")),
        (_rows(w, n_heads, flipped), N_("you swapped the two members of each pair: check which member of a GGUF pair goes to the first half of a head (section 2).")),
        (w, N_("you returned the rows unchanged: GGUF stores each head's rows interleaved (pairs of rows 2i, 2i + 1), and transformers' half-split rotation needs rows i and i + Dh/2 paired.")),
    ]  # fmt: skip
    if rows == cols:
        perm = torch.cat([torch.arange(0, dh, 2), torch.arange(1, dh, 2)])  # (Dh,)
        columns = (h * dh + perm).reshape(-1)  # (H * Dh,)
        variants.append((w[:, columns], N_("you permuted the columns; nn.Linear's weight is (out, in), and the heads are in its rows (out): permute the rows.")))  # fmt: skip
    if dh != 64:
        for n in (rows // 64,) if rows % 64 == 0 else ():
            variants.append((_unpermuted(w, n), N_("you assumed head_dim 64; here head_dim = rows / n_heads is different: derive it from the shape.")))  # fmt: skip
    for other in (n_heads * 3, max(1, n_heads // 3)):
        if other != n_heads and rows % other == 0 and (rows // other) % 2 == 0:
            variants.append((_unpermuted(w, other), tr("you used {other} heads, not the n_heads = {n_heads} given (K has 3 heads in SmolLM2, Q has 9).", other=other, n_heads=n_heads)))  # fmt: skip
    return variants


def _draw(generator, n_heads: int, head_dim: int, d_in: int) -> torch.Tensor:
    return torch.randn(n_heads * head_dim, d_in, generator=generator)


class UnpermuteGguf(Question):
    name, function, points, notebook = "q2", "unpermute_gguf", 2, NOTEBOOK
    answer_keys = (  # the worked solution's key expressions: never in a verdict
        "reshape(n_heads, dh // 2, 2, d_in).transpose(1, 2)",
        "reshape(n_heads, Dh/2, 2, D_in)",
        "from GGUF row h*Dh + 2i + j",
        ".transpose(1, 2).reshape",
    )
    returns = TENSOR
    references = (
        "posenc_lib.analysis.ch06_rope.convert_projection",
        "posenc_lib.analysis.ch06_rope.layout_permutation",
        "posenc_lib.analysis.ch08_layout.to_half_rows",
        # transformers' GGUF loader's own un-permute
        "transformers.modeling_gguf_pytorch_utils.LlamaTensorProcessor._reverse_permute_weights",
    )
    title = N_("Un-permute GGUF's query and key rows")
    hints = (
        N_(
            "Picture one head's Dh rows as a grid of Dh/2 pairs by 2 members. GGUF lists that grid "
            "pair by pair (row 2i + j); transformers lists it member by member (row j * Dh/2 + i). "
            "Which operation on the grid turns one reading order into the other?"
        ),
        N_(
            "No loop is needed: a reshape can give the head, the pair and the member an axis each "
            "without moving a number (derive Dh = rows // n_heads from the shape); the order in "
            "which you read those axes back decides the row order."
        ),
        N_(
            "Test on the tiny (16, 3) case (2 heads of 8 rows): head 0's rows must come out as GGUF "
            "rows 0, 2, 4, 6, 1, 3, 5, 7, and head 1's as 8, 10, 12, 14, 9, 11, 13, 15."
        ),
    )

    def cases(self, seed=0):
        if seed == 0:
            tiny = torch.arange(2 * 8 * 3, dtype=torch.float32).reshape(16, 3)  # 2 heads of 8 rows
            generator = draws.seeded(0, 82)
            specs = [
                (tiny, 2, _("a (16, 3) arange: 2 heads, head_dim 8")),
                (_draw(generator, 3, 6, 4), 3, _("a random (18, 4): 3 heads, head_dim 6")),
                (
                    _draw(generator, 9, 64, HIDDEN),
                    9,
                    _("a random (576, 576): SmolLM2's Q, 9 heads"),
                ),
                (
                    _draw(generator, 3, 64, HIDDEN),
                    3,
                    _("a random (192, 576): SmolLM2's K, 3 heads"),
                ),
            ]
        else:
            generator = draws.seeded(seed, 82)
            specs = []
            for n_heads, head_dim in (
                (draws.pick([2, 4, 6], generator), draws.pick([8, 12, 16], generator)),
                (draws.pick([5, 8, 12], generator), draws.pick([32, 128], generator)),
                (draws.pick([9, 15], generator), 64),
            ):
                d_in = draws.pick([5, 40, 96], generator)
                w = _draw(generator, n_heads, head_dim, d_in)
                specs.append((w, n_heads, tr("a random ({rows}, {d_in}): {n_heads} heads, head_dim {head_dim}", rows=n_heads * head_dim, d_in=d_in, n_heads=n_heads, head_dim=head_dim)))  # fmt: skip
        return [Case((w, n), describe) for w, n, describe in specs]

    def diagnose(self, case, value):
        w, n_heads = case.args
        if isinstance(value, torch.Tensor) and tuple(value.shape) == tuple(w.shape)[::-1] != tuple(
            w.shape
        ):
            return _("Your result is transposed: return the rows permuted, in w's own shape (n_heads * Dh, D_in).")  # fmt: skip
        got, problem = as_tensor(value, N_("The un-permuted weight"), tuple(w.shape))
        if problem:
            return problem
        want = _unpermuted(w, n_heads).to(got.dtype)
        if torch.equal(got, want):  # a permutation of rows: exact
            return None
        named = named_mistake(
            _variants(w, n_heads), lambda wrong: torch.equal(got, wrong.to(got.dtype))
        )
        if named:
            return named
        return _(
            "Your rows are not in transformers' order: within each head, check where the two members of GGUF's pair i land (section 2 of the lecture)."
        )
