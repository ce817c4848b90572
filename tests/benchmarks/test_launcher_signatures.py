"""benchmarks/launcher_signatures.py: a reference solution's kernels compiled for a GPU's target
without a GPU, their signatures counted (in a process of its own: the interpreter is off there)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_tasks_kernels_are_compiled_and_their_signatures_counted(tmp_path):
    out = tmp_path / "signatures.json"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "benchmarks/launcher_signatures.py", "--tasks", "Activation/gelu",
                           "--stages", "--json", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(out.read_text())
    gelu = summary["tasks"]["Activation/gelu"]
    # its kernel compiled for each dtype its cases run in (float32, float16, bfloat16), at least
    assert gelu["compiled"] >= 3 and gelu["compiled"] == summary["compiled"]
    assert 1 <= gelu["signatures"] <= gelu["compiled"]
    assert gelu["launchers"] is None or 1 <= gelu["launchers"] <= gelu["signatures"]
    assert gelu["cpu_s"] > 0 and gelu["compiler_cpu_s"] > 0, "Triton's passes in the process, ptxas in children"
    assert summary["cpu_s"] == round(gelu["cpu_s"], 1), "one task: the sum is its own, to a tenth"
    stages = summary["stage_cpu_s"]
    assert set(stages) == {"front end (make_ir)", "make_ttir", "make_ttgir", "make_llir", "make_ptx", "make_cubin"}
    assert stages["make_llir"] > 0 and stages["front end (make_ir)"] > 0
    assert "1 tasks: " in done.stdout and "CPU s by compile stage: " in done.stdout
