"""How CUDA waits, and what it costs (benchmarks/sync_waits.py): without a CUDA driver it says so."""

import ctypes.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "sync_waits.py"


@pytest.mark.skipif(ctypes.util.find_library("cuda") is not None, reason="a CUDA driver is installed here")
def test_without_a_cuda_driver_the_benchmark_stops_and_says_why():
    done = subprocess.run([sys.executable, str(BENCHMARK), "--seconds", "1"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 1 and "no CUDA driver here" in done.stderr, done.stderr
