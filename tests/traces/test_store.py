"""The trace store: rows written once, a versioned schema, concurrent writers, plain SQL."""

import multiprocessing
import sqlite3

import pytest

from tests.agentloop.scripted import fake_result
from traces.records import Attempt
from traces.store import SCHEMA_VERSION, StoreError, TraceStore


def make_attempt(run="run", task="Math/softmax", sample=0, round_=0, verdict="CORRECT", speedup=1.5):
    return Attempt(run_id=run, task_id=task, arm="a", sample=sample, round=round_, mode="initial", decision="optimize",
                   prompt=[{"role": "user", "content": "write it"}], response="```python\nx\n```", code="x\n",
                   result=fake_result(task, verdict, speedup), feedback=["history"], model="m", tokens_in=10,
                   tokens_out=20, cost_usd=0.01)


def test_attempts_round_trip_and_are_never_rewritten(tmp_path):
    store = TraceStore(tmp_path / "t.db")
    store.ensure_run("run", {"a": 1})
    attempt = make_attempt()
    row_id = store.add_attempt(attempt)
    (back,) = store.chain("run", "Math/softmax", "a", 0)
    assert back.id == row_id and back.result == attempt.result and back.prompt == attempt.prompt
    assert back.speedup == 1.5 and back.code_hash == attempt.code_hash
    with pytest.raises(sqlite3.IntegrityError):
        store.add_attempt(make_attempt())
    with pytest.raises(sqlite3.DatabaseError, match="never rewritten"):
        store._write("UPDATE attempts SET verdict = 'CORRECT'", ())
    rows = list(store.iter_rows("SELECT verdict, speedup, tokens_in FROM attempts"))
    assert rows == [{"verdict": "CORRECT", "speedup": 1.5, "tokens_in": 10}]
    store.close()


def test_a_run_keeps_its_configuration(tmp_path):
    store = TraceStore(tmp_path / "t.db")
    assert store.ensure_run("run", {"a": 1}) is False
    assert store.ensure_run("run", {"a": 1}) is True
    with pytest.raises(StoreError, match="different configuration"):
        store.ensure_run("run", {"a": 2})
    assert store.run_config("run") == {"a": 1}
    store.close()


def test_newer_schema_and_foreign_files_are_refused(tmp_path):
    path = tmp_path / "t.db"
    TraceStore(path).close()
    db = sqlite3.connect(path)
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="newer than this agentloop"):
        TraceStore(path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a usable trace store"):
        TraceStore(junk)


def _writer(path, sample, count):
    store = TraceStore(path)
    for r in range(count):
        store.add_attempt(make_attempt(sample=sample, round_=r))
    store.close()


def test_concurrent_writers_lose_nothing(tmp_path):
    path = tmp_path / "t.db"
    store = TraceStore(path)
    store.ensure_run("run", {})
    workers = [multiprocessing.Process(target=_writer, args=(path, s, 40)) for s in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(60)
        assert w.exitcode == 0
    assert len(store.attempts("run")) == 160
    store.close()


def test_response_cache(tmp_path):
    store = TraceStore(tmp_path / "t.db")
    assert store.cached_response("k") is None
    store.put_response("k", {"model": "m"}, {"text": "hi", "model": "m"})
    store.put_response("k", {"model": "m"}, {"text": "other", "model": "m"})
    assert store.cached_response("k")["text"] == "hi" and store.count_responses() == 1
    store.close()
