"""Chapter 7's corpus: generated code-like text, the same on every machine, no download.

Each document is a small program: functions with made-up names and arguments, whose bodies use
their arguments, and later functions that call the earlier ones by name. So the text has
- local structure (keywords, indentation, ``(a, b):``), learnable from a few characters back, and
- long-range structure: a function's made-up name can only be predicted by finding where it was
  defined, often hundreds of characters earlier; an argument's name, by finding the ``def`` line.
Context length matters, which is what an extrapolation experiment needs.

Characters are the tokens (``VOCAB``). Train and validation text come from different seeds.
"""

from __future__ import annotations

import random

import torch

from posenc_lib import _validate as validate
from posenc_lib.i18n import tr

VOCAB = "\n !(),*+-.0123456789:<=>_abcdefghijklmnopqrstuvwxyz"
_INDEX = {c: i for i, c in enumerate(VOCAB)}
_ONSETS = "b c d f g h k l m n p r s t v z br st tr pl gr".split()
_VOWELS = "a e i o u".split()
_CODAS = ["", "", "n", "r", "l", "s", "x"]
_OPS = ["+", "-", "*"]
SEEDS = {"train": 0, "validation": 1}


def _word(rng: random.Random, syllables: int) -> str:
    return "".join(
        rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(syllables)
    )


def _expression(rng: random.Random, names: list[str]) -> str:
    terms = [rng.choice(names) if rng.random() < 0.7 else str(rng.randint(1, 9)) for _ in range(2)]
    return f"{terms[0]} {rng.choice(_OPS)} {terms[1]}"


def document(rng: random.Random) -> str:
    """One generated program: 3 to 7 functions, each calling one defined before it."""
    functions: list[tuple[str, int]] = []  # (name, number of arguments) defined so far
    lines = []
    for _ in range(rng.randint(3, 7)):
        name = f"{_word(rng, 1)}_{_word(rng, rng.randint(1, 2))}"
        args = list(dict.fromkeys(_word(rng, 1) for _ in range(rng.randint(1, 3))))
        lines.append(f"def {name}({', '.join(args)}):")
        local = list(args)
        for _ in range(rng.randint(1, 3)):
            target = _word(rng, 1)
            if functions and rng.random() < 0.6:
                callee, arity = rng.choice(functions)
                call_args = ", ".join(rng.choice(local) for _ in range(arity))
                lines.append(f"    {target} = {callee}({call_args})")
            else:
                lines.append(f"    {target} = {_expression(rng, local)}")
            local.append(target)
        condition = f"{rng.choice(local)} > {rng.randint(0, 9)}"
        if rng.random() < 0.3:
            lines.append(f"    if {condition}:")
            lines.append(f"        return {rng.choice(local)}")
        lines.append(f"    return {_expression(rng, local)}")
        lines.append("")
        functions.append((name, len(args)))
    return "\n".join(lines) + "\n"


def generate(n_chars: int, seed: int) -> str:
    """Documents from ``seed`` until at least ``n_chars`` characters, cut to exactly n_chars."""
    n = validate.positive_int("n_chars", n_chars)
    rng = random.Random(seed)
    parts, total = [], 0
    while total < n:
        parts.append(document(rng))
        total += len(parts[-1])
    return "".join(parts)[:n]


def encode(text: str) -> torch.Tensor:
    """Characters -> token ids, (N,) int64. Raises ValueError on a character not in VOCAB."""
    try:
        return torch.tensor([_INDEX[c] for c in text], dtype=torch.long)
    except KeyError as error:
        raise ValueError(
            tr("character {character!r} is not in the corpus vocabulary.", character=error.args[0])
        ) from None


def decode(ids) -> str:
    """Token ids -> text."""
    return "".join(VOCAB[int(i)] for i in ids)


def split(name: str, n_chars: int) -> torch.Tensor:
    """The token ids of the ``"train"`` or ``"validation"`` split, (n_chars,)."""
    seed = SEEDS[validate.choice("split", name, tuple(SEEDS))]
    return encode(generate(n_chars, seed))
