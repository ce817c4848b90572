"""Nsight Compute metrics for a correct candidate (`--profile`), where ncu is installed.

The candidate runs once more in a fresh process started under ncu, with the same scrubbed
environment, scratch directory and limits as any candidate process.
"""

from __future__ import annotations

import csv
import io
import os
import resource
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from evaluator.fork_server import PROJECT_ROOT, scrubbed_environment
from evaluator.sandbox import sandbox_folder, scratch_root

METRICS = {
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_throughput_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_throughput_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "achieved_occupancy_pct",
    "gpu__time_duration.sum": "gpu_time_ns",
}
PROFILE_SECONDS = 300


def ncu_path() -> str | None:
    return shutil.which("ncu") or next((str(p) for p in (Path("/usr/local/cuda/bin/ncu"),
                                                          *Path("/opt/nvidia").glob("nsight-compute/*/ncu"))
                                        if p.exists()), None)


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    os.setsid()


def profile(source: str, entry: str, inputs_file: Path, device: str) -> dict[str, float] | None:
    """Mean of each metric over the kernels launched by one call; None when ncu is unavailable."""
    ncu = ncu_path()
    if ncu is None:
        return None
    scratch = Path(tempfile.mkdtemp(prefix="al-prof-", dir=scratch_root()))
    try:
        (scratch / "candidate.py").write_text(source, encoding="utf-8")
        sandbox_folder(scratch)
        env = scrubbed_environment(dict(os.environ))
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(PROJECT_ROOT), env.get("PYTHONPATH")]))
        # the profiled process runs as the sandbox's user: its caches live in its scratch folder
        env.update(HOME=str(scratch), XDG_CACHE_HOME=str(scratch / ".cache"), TRITON_CACHE_DIR=str(scratch / ".triton"))
        command = [ncu, "--csv", "--page", "raw", "--target-processes", "all", "--nvtx", "--nvtx-include",
                   "profiled_call/", "--metrics", ",".join(METRICS),
                   sys.executable, "-m", "evaluator.sandboxed.profile_process", str(scratch), entry, str(inputs_file),
                   device]
        done = subprocess.run(command, cwd=scratch, env=env, capture_output=True, text=True,
                              timeout=PROFILE_SECONDS, preexec_fn=_limits)
    except (subprocess.TimeoutExpired, OSError):
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return parse(done.stdout) if done.returncode == 0 else None


def parse(text: str) -> dict[str, float] | None:
    """Average ncu's raw CSV rows (one per kernel launch of the profiled call) per metric."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    if len(lines) < 3:
        return None
    rows = list(csv.DictReader(io.StringIO("\n".join([lines[0]] + lines[2:]))))
    values: dict[str, list[float]] = {}
    for row in rows:
        for metric, name in METRICS.items():
            try:
                values.setdefault(name, []).append(float(str(row.get(metric, "")).replace(",", "")))
            except ValueError:
                continue
    return {name: sum(v) / len(v) for name, v in values.items() if v} or None
