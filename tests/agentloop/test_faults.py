"""Fault injection: an LLM server that fails at random, candidate processes killed at random, and
the orchestrator killed with SIGKILL at 20 random points and restarted each time. The run must
finish with no attempt lost or duplicated and no answered call asked for again."""

import random
import signal
import subprocess
import sys
import threading
import time

import psutil

from tests.agentloop.fake_llm import FakeLLM, ok
from tests.agentloop.test_run import ROOT, agentloop_env, count_rows, run
from traces.store import TraceStore

# Evaluated in a sandbox (the kernel launches, then the call raises): a process to kill.
RAISING_GELU = """Here is my kernel.
```python
import torch
import triton
import triton.language as tl

@triton.jit
def nothing(x_ptr):
    pass

def gelu(input, approximate="none"):
    nothing[(1,)](input)
    raise ValueError("not finished yet")
```
"""
KILLS = 12


def kill_candidates_now_and_then(stop: threading.Event, rng: random.Random, current: dict, killed: list) -> None:
    """Every so often, kill a random candidate process of the run under test (a child of its fork server)."""
    while not stop.wait(rng.uniform(0.2, 0.6)):
        try:
            run = psutil.Process(current["pid"])
            servers = [p for p in run.children() if "evaluator.sandboxed.fork_server_process" in " ".join(p.cmdline())]
            candidates = [c for s in servers for c in s.children()]
            if candidates:
                rng.choice(candidates).kill()
                killed.append(1)
        except (psutil.Error, KeyError):
            continue


def at_work(process: subprocess.Popen, server: FakeLLM, limit: float = 60.0) -> None:
    """Wait until a freshly started run has asked the LLM for something (its start-up is over)."""
    before, deadline = server.calls("openai"), time.monotonic() + limit
    while process.poll() is None and server.calls("openai") == before and time.monotonic() < deadline:
        time.sleep(0.05)


def test_a_run_survives_chaos_and_a_dozen_kills(tmp_path):
    rng = random.Random(7)
    store = tmp_path / "t.db"
    total = 2 * 2 * 8  # tasks x samples x rounds
    args = ("--store", str(store), "--device", "cpu", "--task", "gelu", "--task", "relu",
            "--samples", "2", "--max-rounds", "8", "--set", "budgets.stagnation_rounds=0", "--set", "generator.retry_base_delay_s=0.02",
            "--set", "generator.max_retries=20", "--set", "generator.timeout_s=5", "--no-progress", "--log-json")
    stop, killed, current = threading.Event(), [], {}
    killer = threading.Thread(target=kill_candidates_now_and_then, args=(stop, rng, current, killed), daemon=True)
    with FakeLLM(default=ok(RAISING_GELU, delay=0.2), chaos=0.3, seed=3) as server:
        env = agentloop_env(AGENTLOOP_BASE_URL=server.openai_base_url)
        killer.start()
        lost, kills = 0, 0
        try:
            while kills < KILLS and count_rows(store) < total:
                process = subprocess.Popen([sys.executable, "-m", "agentloop", "run", *args], env=env, cwd=ROOT,
                                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                current["pid"] = process.pid
                at_work(process, server)
                time.sleep(rng.uniform(0.0, 1.0))
                if process.poll() is None:
                    lost += server.in_flight("openai")
                    process.send_signal(signal.SIGKILL)
                    kills += 1
                process.wait(60)
        finally:
            stop.set()
            killer.join(10)
        final = run(*args, env=env)
        assert final.returncode == 0, final.stderr[-3000:]
        trace = TraceStore(store)
        rows = trace.attempts()
        keys = [(a.task_id, a.sample, a.round) for a in rows]
        assert len(keys) == total and len(set(keys)) == total, "no attempt lost, none duplicated"
        repeated = server.answered("openai") - total
        assert 0 <= repeated <= lost + kills, f"{repeated} answered calls asked again ({lost} in flight at kills)"
        assert trace.count_responses() == total
        assert server.calls("openai") > server.answered("openai"), "the server really did fail some calls"
        print(f"{kills} SIGKILLs, {len(killed)} candidate processes killed, {server.calls('openai')} LLM calls, "
              f"{server.answered('openai')} answered, {repeated} answers asked again ({lost} in flight at a kill)")
        trace.close()
    assert kills >= 6, f"only {kills} kills landed before the run finished"
    assert killed, "some candidate processes were killed mid-evaluation"
