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
