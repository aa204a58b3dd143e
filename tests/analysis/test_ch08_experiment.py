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
    assert len(passkeys) == 4 * (3 + 3 + 3 + 3)  # three depths at every length, 12,288 too
    assert {i[3] for i in passkeys if i[2] == 12288} == {0.25, 0.5, 0.75}
    assert 15 * 60 < sum(er.item_seconds(i) for i in items) < 50 * 60  # sized to ~40 min


def test_the_plan_keeps_only_the_kinds_asked_for():
    only = er.plan(er.SETTINGS, SCALINGS, ("passkey",))
    every = er.plan(er.SETTINGS, SCALINGS)
    assert only == [i for i in every if i[0] == "passkey"]
    assert er.plan(er.SETTINGS, SCALINGS, ("copy", "ppl")) == [
        i for i in every if i[0] != "passkey"
    ]


def _results(passkey: dict, *, complete=True, factor=2.0, settings_passkey=None) -> dict:
    """A results dict shaped as ``run`` writes it, with made-up numbers."""
    methods = {m: dict(p) for m, p in SCALINGS.items()}
    return {
        "versions": {"model_file": "SmolLM2-135M-Instruct.Q4_1.gguf", "torch": "x"},
        "text": {"sha256": "abc", "tokens": 28000},
        "trained": TRAINED,
        "settings": {
            "factor": factor,
            "windows": [4096],
            "bin": 512,
            "passkey": settings_passkey
            or {n: [t["depth"] for t in ts] for n, ts in passkey.items()},
            "copy_blocks": [512],
            "threads": 2,
        },
        "methods": methods,
        "perplexity": {m: {"4096": {"last_quarter": 7.7, "bins": [1.0] * 8}} for m in methods},
        "copy": {m: {"512": {"first": 13.0, "second": 3.2}} for m in methods},
        "passkey": {m: json.loads(json.dumps(passkey)) for m in methods},
        "seconds": 100.0,
        "complete": complete,
    }


def _trial(depth, seed, found):
    return {"depth": depth, "seed": seed, "key": "1", "n_tokens": 9, "answer": "1", "found": found}


def test_merge_replaces_the_measured_entries_and_keeps_every_other_number():
    committed = _results({"1024": [_trial(0.5, 0, True)], "12288": [_trial(0.5, 0, False)]})
    new = {"12288": [_trial(d, i, True) for i, d in enumerate((0.25, 0.5, 0.75))]}
    run = _results(new)
    run["kinds"] = ["passkey"]
    run["perplexity"] = {m: {} for m in SCALINGS}  # a passkey-only run measured nothing else
    run["copy"] = {m: {} for m in SCALINGS}
    merged = er.merge(run, committed)
    for m in SCALINGS:
        assert merged["passkey"][m]["12288"] == new["12288"]
        assert merged["passkey"][m]["1024"] == committed["passkey"][m]["1024"]
    assert merged["settings"]["passkey"] == {"1024": [0.5], "12288": [0.25, 0.5, 0.75]}
    assert list(merged["settings"]["passkey"]) == ["1024", "12288"]  # by length
    for key in ("perplexity", "copy", "methods", "versions", "text"):
        assert merged[key] == committed[key]
    assert merged["seconds"] == 200.0 and merged["merged"][0]["kinds"] == ["passkey"]
    assert committed["passkey"]["none"]["12288"] == [_trial(0.5, 0, False)]  # not modified


def test_merge_refuses_an_unfinished_run_or_other_settings():
    committed = _results({"12288": [_trial(0.5, 0, False)]})
    with pytest.raises(ValueError, match="did not finish"):
        er.merge(_results({"12288": []}, complete=False), committed)
    with pytest.raises(ValueError, match="factor"):
        er.merge(_results({"12288": []}, factor=4.0), committed)


def test_the_merge_option_writes_only_the_given_file(tmp_path, monkeypatch):
    committed = tmp_path / "committed" / "results.json"
    committed.parent.mkdir()
    committed.write_text(json.dumps(_results({"12288": [_trial(0.5, 0, False)]})))
    run = _results({"12288": [_trial(0.25, 0, True)]})
    run["kinds"] = ["passkey"]
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.json").write_text(json.dumps(run))
    monkeypatch.setattr(er, "COMMITTED", committed)
    assert er.main(["--merge", str(tmp_path / "run")]) == 0
    merged = json.loads(committed.read_text())
    assert merged["passkey"]["YaRN"]["12288"] == [_trial(0.25, 0, True)]
    assert merged["settings"]["passkey"]["12288"] == [0.25]


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


def test_a_passkey_only_run_measures_nothing_else(tmp_path):
    out = tmp_path / "run"
    assert er.main(["--quick", "--only", "passkey", "--threads", "1", "--out", str(out)]) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["complete"] is True and results["kinds"] == ["passkey"]
    assert all(rows == {} for rows in results["perplexity"].values())
    assert all(rows == {} for rows in results["copy"].values())
    assert all(len(rows["200"]) == 1 for rows in results["passkey"].values())


def test_passkey_lengths_must_be_ones_the_settings_give(tmp_path):
    with pytest.raises(SystemExit):
        er.main(["--quick", "--passkey-lengths", "999", "--out", str(tmp_path / "run")])


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
    assert all(len(k[m][12288]) == 3 for m in k)  # three depths at 12,288 for every method
    assert not any(k["none"][12288]) and all(k["YaRN"][12288])  # 0 of 3 against 3 of 3
    assert sum(k["YaRN"][1024] + k["YaRN"][4096] + k["YaRN"][8192]) == 5  # the chapter's 5 of 9
    assert not any(k["PI"][1024])  # PI without fine-tuning loses the digits even inside
    c = COMMITTED["copy"]
    assert c["none"]["512"]["second"] < c["none"]["2048"]["second"] < c["none"]["2048"]["first"]
    assert c["PI"]["512"]["second"] > 10
