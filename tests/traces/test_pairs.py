"""Training pairs and TRL formats from the hand-built store; exports load with `datasets`."""

import pytest

from traces import pairs
from traces.frames import export, load_frame
from tests.traces.known_store import build


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    s = build(tmp_path_factory.mktemp("known") / "t.db")
    yield s
    s.close()


def test_pairs_found_by_hand(store):
    found = pairs.find_pairs(store.attempts("r"))
    kinds = sorted((p.kind, p.before.arm, p.before.task_id, p.before.sample, p.before.round) for p in found)
    assert kinds == sorted([
        ("error-correction", "A", "Math/softmax", 0, 0), ("error-correction", "A", "Reduce/sum", 0, 1),
        ("error-correction", "A", "Activation/gelu", 0, 0), ("error-correction", "B", "Reduce/sum", 0, 0),
        ("error-correction", "B", "Activation/gelu", 1, 0), ("error-correction", "B", "Activation/gelu", 1, 1),
        ("optimization", "A", "Math/softmax", 0, 1), ("optimization", "A", "Math/softmax", 1, 0),
        ("optimization", "B", "Math/softmax", 0, 0), ("optimization", "B", "Reduce/sum", 1, 0),
    ])
    stricter = pairs.find_pairs(store.attempts("r"), threshold=0.3)
    assert sum(p.kind == "optimization" for p in stricter) == 2  # 1.4 -> 1.9 and 1.0 -> 1.3 only


def test_formats_and_deduplication(store):
    attempts = store.attempts("r")
    assert len(pairs.dataset("sft", attempts)) == 15, "16 correct answers, one code repeated"
    assert len(pairs.dataset("kto", attempts)) == 23
    assert len(pairs.dataset("dpo", attempts)) == 10
    assert len(pairs.dataset("stepwise", attempts)) == 12
    dpo = pairs.dataset("dpo", attempts)[0]
    assert set(dpo) >= {"prompt", "chosen", "rejected"} and dpo["chosen"][0]["role"] == "assistant"
    assert dpo["chosen"] != dpo["rejected"]
    sft = pairs.dataset("sft", attempts)[0]
    assert [m["role"] for m in sft["messages"]] == ["system", "user", "assistant"]
    step = pairs.dataset("stepwise", attempts)[0]
    assert len(step["completions"]) == len(step["labels"]) and isinstance(step["prompt"], str)


@pytest.mark.parametrize("fmt", pairs.FORMATS)
@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_exports_load_with_datasets(store, tmp_path, fmt, suffix):
    datasets = pytest.importorskip("datasets")
    records = pairs.dataset(fmt, store.attempts("r"))
    path = pairs.write(records, tmp_path / f"{fmt}{suffix}")
    loaded = datasets.load_dataset("json" if suffix == ".jsonl" else "parquet", data_files=str(path), split="train")
    assert len(loaded) == len(records)
    assert loaded[0] == {k: v for k, v in records[0].items()} or set(loaded.column_names) == set(records[0])


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_attempt_frame_round_trips(store, tmp_path, suffix):
    import pandas as pd
    frame = load_frame(store, "r")
    path = export(frame, tmp_path / f"attempts{suffix}")
    back = pd.read_parquet(path) if suffix == ".parquet" else pd.read_json(path, lines=True)
    assert len(back) == 24 and list(back["verdict"]) == list(frame["verdict"])
    assert back["speedup"].dropna().tolist() == pytest.approx(frame["speedup"].dropna().tolist())


# Pairs follow parent_id: a chain built by hand where the model was shown its best kernel, not its
# last one, and where a tuning trial's kernel came back as the model's answer.
def _attempt(store, round_, code, verdict, speedup, parent=None, trial=0, cv=0.01, prompt=None, sample=0):
    from tests.agentloop.scripted import fake_result
    from traces.records import Attempt

    result = fake_result("Math/softmax", verdict, speedup)
    if result.performance is not None:
        result.performance.candidate.cv = cv
    attempt = Attempt(run_id="p", task_id="Math/softmax", arm="A", sample=sample, round=round_, trial=trial,
                      mode="tune" if trial else "optimize", decision="d", parent_id=parent,
                      prompt=prompt if prompt is not None else [{"role": "user", "content": f"prompt of round {round_}"}],
                      response="", code=code, result=result, model="tune" if trial else "m")
    return store.add_attempt(attempt)


@pytest.fixture()
def shown_best(tmp_path):
    from traces.store import TraceStore

    store = TraceStore(tmp_path / "p.db")
    store.ensure_run("p", {"arms": [{"name": "A", "method": "iterative"}]})
    r0 = _attempt(store, 0, "# fast\n", "CORRECT", 2.1)
    r1 = _attempt(store, 1, "# slower\n", "CORRECT", 1.63, parent=r0)
    r2 = _attempt(store, 2, "# slower still\n", "CORRECT", 1.82, parent=r0)  # shown r0, the best, not r1
    trial = _attempt(store, 2, "# tuned\n", "CORRECT", 2.6, parent=r2, trial=1)
    _attempt(store, 3, "# tuned\n", "CORRECT", 2.6, parent=trial)  # the tuned kernel, echoed back
    broken = _attempt(store, 4, "# broken\n", "COMPILE_FAIL", None, parent=trial)
    _attempt(store, 5, "# fixed\n", "INCORRECT", None, parent=broken,
             prompt=[{"role": "user", "content": "round 4 failed to compile: fix it"}])
    yield store
    store.close()


def test_a_pair_is_an_attempt_and_the_parent_it_was_shown(shown_best):
    found = pairs.find_pairs(shown_best.attempts("p"))
    described = sorted((p.kind, p.before.code, p.after.code) for p in found)
    # 1.63 -> 1.82 follows in rounds but was not what round 2 saw: round 2 was shown 2.1x and is slower
    assert described == [("error-correction", "# broken\n", "# fixed\n")]
    (repair,) = found
    assert repair.prompt == [{"role": "user", "content": "round 4 failed to compile: fix it"}]
    row = pairs.dpo(found)[0]
    assert row["prompt"] == repair.prompt and row["chosen_verdict"] == "INCORRECT"
    assert row["rejected_verdict"] == "COMPILE_FAIL" and row["chosen_round"] == 5 and row["run_id"] == "p"


def test_an_echoed_tuning_kernel_is_not_the_models(shown_best):
    attempts = shown_best.attempts("p")
    codes = [row["messages"][-1]["content"] for row in pairs.dataset("sft", attempts)]
    assert not any("# tuned" in code for code in codes) and len(codes) == 3
    assert not any("# tuned" in row["completion"][0]["content"] for row in pairs.dataset("kto", attempts))


def test_an_optimization_must_beat_the_timing_noise(tmp_path):
    from traces.store import TraceStore

    store = TraceStore(tmp_path / "n.db")
    store.ensure_run("p", {"arms": [{"name": "A", "method": "iterative"}]})
    noisy = _attempt(store, 0, "# a\n", "CORRECT", 1.0, cv=0.1)
    _attempt(store, 1, "# b\n", "CORRECT", 1.15, parent=noisy, cv=0.1)  # 15% < 2 x 14% of noise
    steady = _attempt(store, 0, "# c\n", "CORRECT", 1.0, cv=0.01, sample=1)
    _attempt(store, 1, "# d\n", "CORRECT", 1.15, parent=steady, cv=0.01, sample=1)
    found = pairs.find_pairs(store.attempts("p"))
    assert [(p.before.code, p.after.code) for p in found] == [("# c\n", "# d\n")]
    store.close()


@pytest.mark.parametrize("fmt", pairs.FORMATS)
def test_every_format_carries_its_metadata(store, fmt):
    row = pairs.dataset(fmt, store.attempts("r"))[0]
    assert {"run_id", "task_id", "arm", "sample"} <= set(row)
    if fmt == "dpo":
        assert {"chosen_verdict", "rejected_verdict", "chosen_speedup", "rejected_attempt_id"} <= set(row)
    elif fmt != "stepwise":
        assert {"verdict", "speedup", "round", "model", "attempt_id"} <= set(row)


@pytest.mark.parametrize("fmt", pairs.FORMATS)
def test_every_format_names_its_columns_and_an_empty_export_keeps_them(store, tmp_path, fmt):
    import pandas as pd

    row = pairs.dataset(fmt, store.attempts("r"))[0]
    assert set(row) == set(pairs.COLUMNS[fmt])
    parquet = pairs.write([], tmp_path / f"{fmt}.parquet", fmt)
    assert list(pd.read_parquet(parquet).columns) == pairs.COLUMNS[fmt] and len(pd.read_parquet(parquet)) == 0
    assert pairs.write([], tmp_path / f"{fmt}.jsonl", fmt).read_text() == ""
    for path in (parquet, tmp_path / f"{fmt}.jsonl"):
        loaded = pairs.load(path)
        assert len(loaded) == 0 and loaded.column_names == pairs.COLUMNS[fmt], path


def test_an_export_with_rows_loads_as_datasets_loads_it(store, tmp_path):
    rows = pairs.dataset("kto", store.attempts("r"))
    for suffix in ("parquet", "jsonl"):
        loaded = pairs.load(pairs.write(rows, tmp_path / f"kto.{suffix}", "kto"))
        assert len(loaded) == len(rows) > 0 and set(pairs.COLUMNS["kto"]) <= set(loaded.column_names)


def test_the_split_is_by_task_deterministic_and_near_its_share():
    tasks = [f"Category/task{k}" for k in range(400)]
    held = {t for t in tasks if pairs.split_of(t, 0.2) == "eval"}
    assert held == {t for t in tasks if pairs.split_of(t, 0.2) == "eval"}  # the same every time
    assert 0.14 < len(held) / len(tasks) < 0.26
    records = [{"task_id": t, "sample": s} for t in tasks[:50] for s in range(3)]
    parts = pairs.split(records, 0.2)
    assert not {r["task_id"] for r in parts["train"]} & {r["task_id"] for r in parts["eval"]}
    assert len(parts["train"]) + len(parts["eval"]) == 150


def test_harvest_writes_a_dataset_card_with_counts_filters_and_the_split(store, tmp_path):
    from typer.testing import CliRunner

    from agentloop.cli import app

    db = tmp_path / "h.db"
    build(db).close()
    result = CliRunner().invoke(app, ["harvest", "r", "--store", str(db), "--format", "sft", "--format", "dpo",
                                      "--eval-share", "0.5", "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    card = (tmp_path / "out" / "r" / "README.md").read_text()
    sft = len(pairs.dataset("sft", store.attempts("r")))
    assert f"| sft | {sft} | train " in card and "pairs along parent_id" in card and "SHA-256" in card
    assert (tmp_path / "out" / "r" / "dpo.eval.parquet").exists() and (tmp_path / "out" / "r" / "sft.train.jsonl").exists()


def test_the_card_gives_token_lengths_and_the_share_trl_would_truncate():
    from traces import dataset_card

    rows = [{"task_id": "t", "prompt_tokens": n, "completion_tokens": 100} for n in (500, 900, 1200, 4800)]
    text = dataset_card.card("r", {"sft": {"all": rows}}, {}, 0.1, 0.0)
    assert "| sft | 4 | all 4 | 1150 / " in text and "| 50% |" in text


def test_stepwise_keeps_rounds_without_code_and_drops_repeated_chains(tmp_path):
    from tests.agentloop.scripted import fake_result
    from traces.records import Attempt
    from traces.store import TraceStore

    store = TraceStore(tmp_path / "s.db")
    store.ensure_run("s", {"arms": [{"name": "A", "method": "iterative"}]})
    for sample in (0, 1):  # two chains with the same prompt and the same answers
        for round_, (code, verdict) in enumerate([(None, "NO_CODE"), ("# k\n", "CORRECT")]):
            store.add_attempt(Attempt(run_id="s", task_id="Math/softmax", arm="A", sample=sample, round=round_,
                                      mode="initial", decision="d", prompt=[{"role": "user", "content": "write it"}],
                                      response="I would rather explain." if code is None else "", code=code,
                                      result=fake_result("Math/softmax", verdict, None)))
    rows = pairs.stepwise(store.attempts("s"))
    assert len(rows) == 1
    assert rows[0]["completions"] == ["I would rather explain.", "# k\n"] and rows[0]["labels"] == [False, True]
    store.close()
