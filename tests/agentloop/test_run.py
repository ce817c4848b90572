"""`agentloop run` end to end, as a user runs it: the embedded replay, a real SDK against a local
server, resuming after the process is killed."""

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.agentloop.fake_llm import FakeLLM, ok
from traces.store import TraceStore

ROOT = Path(__file__).resolve().parents[2]


def agentloop_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AGENTLOOP_BASE_URL", "AGENTLOOP_MODEL")}
    env.update(PYTHONPATH=str(ROOT), COLUMNS="200", **extra)
    return env


def run(*args, env=None, timeout=900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentloop", "run", *args], capture_output=True, text=True,
                          timeout=timeout, env=env or agentloop_env(), cwd=ROOT)


def test_the_embedded_default_replays_every_state_and_resumes(tmp_path):
    store = tmp_path / "demo.db"
    first = run("--store", str(store), "--device", "cpu", "--no-progress")
    assert first.returncode == 0, first.stderr[-3000:]
    assert "This is a replay" in first.stderr
    trace = TraceStore(store)
    rows = trace.attempts()
    chains = {}
    for a in rows:
        chains.setdefault(a.task_id, []).append((a.mode, a.verdict))
    assert chains["Activation/gelu"] == [("initial", "COMPILE_FAIL"), ("repair", "CORRECT"), ("optimize", "CORRECT")]
    assert chains["Math/softmax"] == [("initial", "OUTLIER_FAIL"), ("repair", "CORRECT"), ("optimize", "CORRECT")]
    assert chains["Reduce/sum"] == [("initial", "CORRECT"), ("optimize", "CORRECT"), ("optimize", "CORRECT")]
    gelu_repair = next(a for a in rows if a.task_id == "Activation/gelu" and a.round == 1)
    assert "not a constexpr" in gelu_repair.prompt[1]["content"], "the compile error reached the next prompt"
    softmax_repair = next(a for a in rows if a.task_id == "Math/softmax" and a.round == 1)
    assert "Outlier failure" in softmax_repair.prompt[1]["content"]
    assert "9 new attempts" in first.stdout and "3/3" in first.stdout
    trace.close()
    again = run("--store", str(store), "--device", "cpu", "--no-progress")
    assert again.returncode == 0 and "0 new attempts" in again.stdout and "(resumed)" in again.stdout
    run_id = trace_run_ids(store)[0]
    analyse_the_demo_store(store, run_id, tmp_path)


def trace_run_ids(store: Path) -> list[str]:
    trace = TraceStore(store)
    ids = [r["id"] for r in trace.runs()]
    trace.close()
    return ids


def agentloop_command(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentloop", *args], capture_output=True, text=True, timeout=900,
                          env=agentloop_env(), cwd=ROOT)


def analyse_the_demo_store(store: Path, run_id: str, tmp_path: Path) -> None:
    """report, harvest and ab all work on what the embedded default wrote."""
    report = agentloop_command("report", run_id, "--store", str(store), "--out", str(tmp_path / "report"))
    assert report.returncode == 0, report.stderr[-2000:]
    html = (tmp_path / "report" / "report.html").read_text()
    assert "Math/softmax · iterative · sample 0" in html and "OUTLIER_FAIL" in html
    harvest = agentloop_command("harvest", run_id[:6], "--store", str(store), "--format", "sft", "--format", "dpo",
                                "--out", str(tmp_path / "data"))
    assert harvest.returncode == 0, harvest.stderr[-2000:]
    dpo = [json.loads(line) for line in (tmp_path / "data" / run_id / "dpo.jsonl").read_text().splitlines()]
    assert {d["kind"] for d in dpo} == {"error-correction"} and len(dpo) == 2  # gelu and softmax repairs
    one_round = run("--store", str(store), "--device", "cpu", "--no-progress", "--max-rounds", "1")
    assert one_round.returncode == 0, one_round.stderr[-2000:]
    other = [r for r in trace_run_ids(store) if r != run_id][0]
    compared = agentloop_command("ab", run_id, other, "--store", str(store))
    assert compared.returncode == 0, compared.stderr[-2000:]
    assert "chains correct" in compared.stdout and "3/3" in compared.stdout and "1/3" in compared.stdout
    assert "No detectable difference in correctness" in compared.stdout


STATIC_REJECT_GELU = """I'll use the exact erf form.
```python
import torch
import triton
import triton.language as tl

@triton.jit
def nothing(x_ptr):
    pass

def gelu(input, approximate="none"):
    nothing[(1,)](input)
    return 0.5 * input * (1 + torch.erf(input * 0.7071067811865476))
```
"""


def test_a_real_sdk_against_a_local_server(tmp_path):
    with FakeLLM(default=ok(STATIC_REJECT_GELU, tokens_in=1000, tokens_out=200)) as server:
        env = agentloop_env(AGENTLOOP_BASE_URL=server.openai_base_url, AGENTLOOP_MODEL="local-kernel-model")
        done = run("--store", str(tmp_path / "t.db"), "--device", "cpu", "--task", "gelu", "--max-rounds", "2",
                   "--no-progress", "--log-json", env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Using openai-compatible model local-kernel-model" in done.stderr
        assert server.calls("openai") == 2
        first, second = server.bodies("openai")
        assert first["model"] == "local-kernel-model" and first["messages"][0]["role"] == "system"
        assert "STATIC_REJECT" in second["messages"][1]["content"] and "torch.erf" in second["messages"][1]["content"]
    events = [json.loads(line) for line in done.stderr.splitlines() if line.startswith("{")]
    assert [e["verdict"] for e in events if e["event"] == "attempt"] == ["STATIC_REJECT", "STATIC_REJECT"]
    trace = TraceStore(tmp_path / "t.db")
    rows = trace.attempts()
    assert [r.tokens_in for r in rows] == [1000, 1000] and all(r.model == "local-kernel-model" for r in rows)
    trace.close()


def count_rows(path: Path) -> int:
    try:
        db = sqlite3.connect(path, timeout=5)
        try:
            return db.execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def test_killed_runs_resume_without_losing_or_repeating_work(tmp_path):
    """SIGKILL the run three times mid-flight, rerun the same command until it finishes."""
    store = tmp_path / "t.db"
    total = 3 * 2 * 4  # tasks x samples x rounds, every attempt a fast static reject
    args = ("--store", str(store), "--device", "cpu", "--task", "gelu", "--task", "softmax", "--task", "sum",
            "--samples", "2", "--max-rounds", "4", "--set", "budgets.stagnation_rounds=0", "--no-progress",
            "--log-json")
    with FakeLLM(default=ok(STATIC_REJECT_GELU, delay=0.15)) as server:
        env = agentloop_env(AGENTLOOP_BASE_URL=server.openai_base_url)
        kills, lost = 0, 0
        for target in (3, 9, 16):
            process = subprocess.Popen([sys.executable, "-m", "agentloop", "run", *args], env=env, cwd=ROOT,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.monotonic() + 300
            while count_rows(store) < target and process.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            if process.poll() is None:
                lost += server.in_flight("openai")  # asked, not yet answered: these answers are lost
                process.send_signal(signal.SIGKILL)
                kills += 1
            process.wait(60)
        final = run(*args, env=env)
        assert final.returncode == 0, final.stderr[-3000:]
        trace = TraceStore(store)
        rows = trace.attempts()
        keys = [(a.task_id, a.sample, a.round) for a in rows]
        assert len(keys) == total and len(set(keys)) == total, "no attempt lost, none duplicated"
        assert all(a.decision for a in rows)
        # Requests in flight when the process died never got their answers; they are asked again. An
        # answer that arrived is stored before anything else happens, so it is never asked for again
        # (bar a kill in the sub-millisecond between its arrival and its storage: at most one per kill).
        repeated = server.calls("openai") - total
        assert kills == 3 and 0 <= repeated <= lost + kills, f"{repeated} calls repeated; {lost} were in flight"
        assert trace.count_responses() == total
        trace.close()


@pytest.mark.parametrize("args, message", [
    (["/nonexistent.yaml"], "no such file"),
    (["--set", "budgets.max_roundz=3"], "unknown key 'max_roundz'"),
    (["--task", "nosuchtask"], "unknown task 'nosuchtask'"),
])
def test_bad_run_input_gets_a_clear_error(tmp_path, args, message):
    done = run(*args, "--store", str(tmp_path / "t.db"), "--device", "cpu", timeout=120)
    assert done.returncode == 2 and message in done.stderr, done.stderr[-2000:]
