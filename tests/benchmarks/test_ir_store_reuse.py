"""benchmarks/ir_store_reuse.py: a reference solution's kernels compiled, then compiled alone from
their IR, then met again with the scout's stages answered (in a process of its own: the
interpreter is off there)."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_kernels_met_again_are_answered_without_ptxas_and_with_the_same_cubins(tmp_path):
    out = tmp_path / "reuse.json"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    done = subprocess.run([sys.executable, "benchmarks/ir_store_reuse.py", "--tasks", "Activation/gelu",
                           "--json", str(out)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["tasks"] == 1 and report["irs"] >= 3, "gelu's kernel in each dtype its cases run"
    assert report["alone"]["compiled"] == report["irs"]
    assert report["cubins"] == {"first": report["irs"], "answered_pass": report["irs"], "same": report["irs"]}
    assert report["first"]["ptxas_cpu_s"] > 0 and report["answered"]["ptxas_cpu_s"] == 0, "nothing left to assemble"
    assert f"cubins {report['irs']} of {report['irs']} the same" in done.stdout
