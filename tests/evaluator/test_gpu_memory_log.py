"""The evaluator's GPU memory, sampled into the process log for benchmarks (gpu_memory_log.py)."""

import json
import os

from evaluator.gpu_memory_log import MIB, GpuMemoryLog


def test_samples_name_what_holds_the_memory_and_the_last_comes_at_the_close(tmp_path, monkeypatch):
    log = tmp_path / "processes.jsonl"
    monkeypatch.setenv("AGENTLOOP_PROCESS_LOG", str(log))
    held = {"allocated": 3 * MIB, "expected_outputs_kept": 2 * MIB}
    sampler = GpuMemoryLog(lambda: dict(held), lambda: 5, seconds=3600)
    held["allocated"] = 7 * MIB  # what the close's sample sees
    sampler.close()
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert lines == [{"pid": os.getpid(), "stage": "evaluator gpu memory", "in_flight": 5,
                      "allocated_mib": 7, "expected_outputs_kept_mib": 2}]


def test_without_a_process_log_nothing_is_sampled(tmp_path, monkeypatch):
    monkeypatch.delenv("AGENTLOOP_PROCESS_LOG", raising=False)
    asked = []
    sampler = GpuMemoryLog(lambda: asked.append(1) or {}, lambda: 0, seconds=0.01)
    sampler.close()
    assert asked == [] and sampler._thread is None
