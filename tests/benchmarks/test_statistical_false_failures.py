"""The false-failure benchmark of statistical checks, on the CPU interpreter with small inputs: a
task's own check and the same check from another copy of the task's file both pass its reference
solution; a task without a statistical check is refused."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "statistical_false_failures.py"


def run(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRITON_INTERPRET="1", CUDA_VISIBLE_DEVICES="")
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env,
                          timeout=600, cwd=ROOT)


def test_the_reference_solution_passes_both_checks(tmp_path):
    copy = tmp_path / "block.py"
    copy.write_text((ROOT / "tasks" / "Fusion" / "fused_transformer_block.py").read_text())
    done = run("--task", "Fusion/fused_transformer_block", "--size", "small", "--seeds", "2", "--groups", "1",
               "--task-file", str(copy))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "on cpu: 2 groups of 3 calls" in done.stdout
    assert done.stdout.rstrip().endswith(f"groups failing: this checkout 0, {copy} 0")


def test_a_task_without_a_statistical_check_is_refused():
    done = run("--task", "Activation/relu")
    assert done.returncode != 0 and "not a task with a statistical check" in done.stderr
