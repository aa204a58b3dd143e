"""Chapter 8's long-context experiment: its plan, a tiny run to a new folder, and the committed table."""

import hashlib
import json

import pytest

from posenc_lib.analysis import ch08_experiment as er
from posenc_lib.analysis.ch08_long import SCALINGS, TRAINED

COMMITTED = er.load_results() if er.COMMITTED.exists() else None
needs_committed = pytest.mark.skipif(COMMITTED is None, reason="no committed results.json yet")


def test_the_plan_runs_static_methods_once_and_dynamic_ntk_per_length():
    items = er.plan(er.SETTINGS, SCALINGS)
    ppl = [i for i in items if i[0] == "ppl"]
    by_method = {m: [i for i in ppl if i[1] == m] for m in SCALINGS}
    for method in ("none", "PI", "YaRN"):  # one pass at 16k gives every shorter window
        assert [(i[2], i[3]) for i in by_method[method]] == [(16384, [4096, 8192, 12288, 16384])]
    assert sorted(i[2] for i in by_method["dynamic"]) == [8192, 12288, 16384]
    assert items[0][:3] == ("ppl", "none", 16384) and items[1][:3] == ("ppl", "YaRN", 16384)
    passkeys = [i for i in items if i[0] == "passkey"]
    assert len(passkeys) == 4 * (3 + 3 + 3 + 1)
    assert 15 * 60 < sum(er.item_seconds(i) for i in items) < 40 * 60  # sized to ~30 min


def test_a_quick_run_writes_valid_json_to_a_new_folder_and_leaves_the_committed_file(tmp_path):
    before = er.COMMITTED.read_bytes() if er.COMMITTED.exists() else None
    out = tmp_path / "run"
    assert er.main(["--quick", "--lengths", "64", "--threads", "1", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["complete"] is True
    assert results["settings"]["windows"] == [64]
    assert set(results["perplexity"]) == set(SCALINGS)
    for rows in results["perplexity"].values():
        entry = rows["64"]
        assert entry["last_quarter"] > 1 and len(entry["bins"]) == 1
    assert {t["n_tokens"] for rows in results["passkey"].values() for t in rows["200"]} <= set(
        range(180, 220)
    )
    assert results["versions"]["model_file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert results["text"]["tokens"] >= 17_000
    after = er.COMMITTED.read_bytes() if er.COMMITTED.exists() else None
    assert before == after


def test_a_run_refuses_to_overwrite_the_committed_results():
    with pytest.raises(ValueError, match="committed"):
        er.run(er.DATA, er.QUICK)


@needs_committed
def test_the_committed_table_has_every_row_the_chapter_prints():
    r = COMMITTED
    assert r["complete"] is True, "the committed run stopped early"
    assert r["trained"] == TRAINED and r["settings"]["factor"] == 2.0
    assert list(r["methods"]) == list(SCALINGS) and r["methods"] == SCALINGS
    for method in SCALINGS:
        for window in r["settings"]["windows"]:
            entry = r["perplexity"][method][str(window)]
            assert len(entry["bins"]) == window // r["settings"]["bin"]
        for length, depths in r["settings"]["passkey"].items():
            assert [t["depth"] for t in r["passkey"][method][length]] == depths
        for block in r["settings"]["copy_blocks"]:
            assert r["copy"][method][str(block)]["second"] >= 0
    for key in ("torch", "transformers", "model_file", "model_package"):
        assert r["versions"][key]
    text = (er.DATA / "long_text.txt").read_bytes()
    assert r["text"]["sha256"] == hashlib.sha256(text).hexdigest()
    assert "none" in er.table(r) and "passkey" in er.table(r)


@needs_committed
def test_the_committed_findings():
    p = {m: {int(w): e["last_quarter"] for w, e in rows.items()} for m, rows in
         COMMITTED["perplexity"].items()}  # fmt: skip
    # Past 8,192 no scaling falls apart; YaRN and dynamic NTK stay near the 8k window's level.
    assert p["none"][16384] > 10 * p["none"][8192]
    assert p["YaRN"][16384] < 2 * p["none"][8192]
    assert p["dynamic"][16384] < 2 * p["none"][8192]
    # Inside the trained length dynamic NTK is no scaling (its stretch is 1).
    assert p["dynamic"][8192] == p["none"][8192]


@needs_committed
def test_the_committed_passkey_and_copy_findings():
    k = {m: {int(n): [t["found"] for t in ts] for n, ts in rows.items()} for m, rows in
         COMMITTED["passkey"].items()}  # fmt: skip
    assert all(k["none"][1024]) and all(k["none"][4096]) and sum(k["none"][8192]) >= 2
    assert not any(k["none"][12288]) and all(k["YaRN"][12288])
    assert not any(k["PI"][1024])  # PI without fine-tuning loses the digits even inside
    c = COMMITTED["copy"]
    assert c["none"]["512"]["second"] < c["none"]["2048"]["second"] < c["none"]["2048"]["first"]
    assert c["PI"]["512"]["second"] > 10
