"""The disk cache's bytes per task: an elementwise float32 task compared in float64 keeps its
outputs twice (float32, and float64 at twice the bytes), three times its inputs' bytes."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_an_elementwise_tasks_outputs_are_kept_in_its_dtype_and_in_float64():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "case_bytes.py"), "--tasks", "Activation/relu"],
                          capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("1 tasks in ") and "not counted (no meta kernel) for 0 tasks" in done.stdout
    total, inputs, outputs = map(float, re.search(r"Activation/relu: ([\d.]+) GiB \(([\d.]+) inputs, ([\d.]+) outputs\)",
                                                  done.stdout).groups())
    assert inputs > 0 and outputs == 3 * inputs and total == inputs + outputs
