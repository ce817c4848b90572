"""The throughput benchmark's split over several evaluator processes (it runs on any machine)."""

import json
import subprocess
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "evaluator_throughput.py"


def test_tasks_split_over_evaluator_processes_are_each_scored_once(tmp_path):
    tasks = ["Reduce/sum", "Activation/gelu", "Math/softmax"]
    out = tmp_path / "throughput.json"
    run = subprocess.run([sys.executable, str(BENCHMARK), "--processes", "2", "--workers", "2", "--tasks", *tasks,
                          "--cache-root", str(tmp_path / "cache"), "--json", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    results = json.loads(out.read_text())["results"]
    assert [r["task_id"] for r in results] == tasks
    assert {r["verdict"] for r in results} == {"CORRECT"}
    assert "evaluator processes 2" in run.stdout
