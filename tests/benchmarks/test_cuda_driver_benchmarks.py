"""The benchmarks of CUDA's waits (benchmarks/sync_waits.py) and contexts (benchmarks/cuda_contexts.py):
without a CUDA driver each says so; a round of contexts times every process it starts."""

import ctypes.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.mark.skipif(ctypes.util.find_library("cuda") is not None, reason="a CUDA driver is installed here")
@pytest.mark.parametrize("command", [["sync_waits.py", "--seconds", "1"], ["cuda_contexts.py", "--at-once", "1"]])
def test_without_a_cuda_driver_the_benchmark_stops_and_says_why(command):
    done = subprocess.run([sys.executable, str(BENCHMARKS / command[0]), *command[1:]], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "no CUDA driver here" in done.stderr, done.stderr


def test_a_round_times_every_process_it_starts(monkeypatch):
    """The round's bookkeeping, with a start that needs no GPU: every process reports, and the
    settings asked for are undone in this process afterwards."""
    from benchmarks import cuda_contexts

    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    monkeypatch.setattr(cuda_contexts, "_start", lambda way: None)
    row = cuda_contexts.measure("torch", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}, at_once=3, gpus=2)
    assert row["at_once"] == 3 and row["per_s"] > 0 and row["max_s"] >= row["median_s"]
    assert "CUDA_DEVICE_MAX_CONNECTIONS" not in os.environ
