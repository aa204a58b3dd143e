"""Every parameter a committed checkpoint consults at the evaluated lengths was updated in training.

A model trained at L and tested at 8L may meet parameters that no training text reached: T5 bias
rows of buckets whose distances are all longer than L, say. Such a row still holds its initial
value, so a row of chapter 7's table would measure untrained parameters rather than the method.
This test rebuilds each checkpoint's initial weights (seed 0, as the experiment builds them), finds
the parameters the model consults on the validation text at every evaluated length (a nonzero
gradient), and fails for any consulted row still equal to its initial value. A row kept on purpose
to show that failure is exempt by name, and its test proves the detection finds it.
"""

import pytest
import torch

from posenc_lib.models import corpus
from posenc_lib.models.experiment import DATA, MULTIPLES, L, initial_model, load_model
from posenc_lib.models.tinylm import TinyLM

LENGTHS = [m * L for m in MULTIPLES]
# The rows whose point is untrained parameters: T5 with max_distance = 2L has buckets that only
# distances past L reach (27..31 of 32), and chapter 7 shows what that does.
EXEMPT = {"t5-far-buckets-untrained": {"t5.bias.weight": list(range(27, 32))}}
CHECKPOINTS = sorted(p.stem for p in DATA.glob("*.pt"))


def consulted(model: TinyLM, tokens: torch.Tensor) -> dict:
    """{parameter name: bool mask of rows (dim 0) whose gradient is nonzero at some evaluated
    length}; lengths the model cannot run (a learned table past its rows) are skipped."""
    seen: dict = {}
    weights = torch.Generator().manual_seed(0)
    for length in LENGTHS:
        ids = tokens[: 4 * length].view(4, length)  # (B, T)
        model.zero_grad(set_to_none=True)
        model.reseed_positions(length)
        try:
            logits = model(ids)  # (B, T, vocab)
        except ValueError:  # no table row past L: the row is "-" in the chapter, not a number
            continue
        # A random weighting of every logit, so no gradient cancels to zero by symmetry.
        (logits * torch.randn(logits.shape, generator=weights)).sum().backward()
        for name, parameter in model.named_parameters():
            if parameter.grad is None:
                continue
            rows = parameter.grad.reshape(parameter.shape[0], -1).ne(0).any(-1)  # (rows,)
            seen[name] = seen.get(name, torch.zeros_like(rows)) | rows
    return seen


def untrained_rows(name: str, folder=DATA) -> dict:
    """{parameter: [row indices]} consulted at an evaluated length yet equal to their initial
    value (compared in float16, as checkpoints are stored)."""
    model = load_model(name, folder)
    start = dict(initial_model(model.config, 0).named_parameters())  # seed 0's checkpoints
    tokens = corpus.split("validation", 4 * max(LENGTHS))
    found = {}
    for parameter, rows in consulted(model, tokens).items():
        now = dict(model.named_parameters())[parameter].detach()
        before = start[parameter].detach().half().float()
        if now.dim() < 2:  # a vector (a LayerNorm's gain, say) counts as one row
            same = torch.equal(now, before)
            unchanged = torch.tensor([same]).expand_as(rows)
        else:
            unchanged = now.reshape(now.shape[0], -1).eq(before.reshape(now.shape[0], -1)).all(-1)
        stale = (unchanged & rows).nonzero().flatten().tolist()
        if stale:
            found[parameter] = stale
    return found


@pytest.mark.parametrize("name", CHECKPOINTS)
def test_every_parameter_consulted_at_the_evaluated_lengths_was_trained(name):
    assert untrained_rows(name) == EXEMPT.get(name, {}), (
        f"{name}.pt consults parameters at the evaluated lengths {LENGTHS} that training never "
        "updated (rows still at their initial value); change the setting so training reaches "
        "them, or exempt the row by name here if untrained parameters are its point."
    )


def test_the_detection_finds_a_row_made_untrained_on_purpose(tmp_path):
    # A trained T5 checkpoint with one bucket's row set back to its initial 0.0 must be caught.
    model = load_model("t5")
    with torch.no_grad():
        model.t5.bias.weight[10] = 0.0  # distance 10 has a bucket of its own
    model.save(tmp_path / "t5.pt")
    assert untrained_rows("t5", tmp_path) == {"t5.bias.weight": [10]}
