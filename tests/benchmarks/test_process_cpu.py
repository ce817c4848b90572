"""CPU seconds by kind of process (benchmarks/process_cpu.py), read from /proc."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "process_cpu.py"
BURN = "import time\nwhile time.process_time() < 1.2: pass\ntime.sleep(1.5)"


def _module():
    spec = importlib.util.spec_from_file_location("process_cpu", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_processes_are_told_apart_by_name_and_command_line():
    kind_of = _module().kind_of
    assert kind_of("python3", "python3 -m evaluator.sandboxed.fork_server_process", 1, 2) == "candidates and scouts"
    assert kind_of("compute-sanitiz", "compute-sanitizer --tool memcheck python3", 1, 2) == "memory checks"
    assert kind_of("python3", "python3 -m evaluator.sandboxed.memcheck_process /dev/shm/x", 1, 2) == "memory checks"
    assert kind_of("ptxas", "ptxas -lineinfo", 1, 2) == "compilers"
    assert kind_of("python3", "python3 -c from multiprocessing.spawn import spawn_main", 1, 2) == "evaluator"
    assert kind_of("python3", "python3 benchmarks/executor_scaling.py", 7, 7) == "evaluator"
    assert kind_of("bash", "bash", 1, 2) is None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_processs_cpu_time_is_counted_under_its_kind_and_a_strangers_is_not():
    module = _module()
    with module.ProcessCPU(period=0.2) as cpu:
        checked = subprocess.Popen([sys.executable, "-c", BURN, "memcheck_process"])
        stranger = subprocess.Popen([sys.executable, "-c", BURN])
        checked.wait(), stranger.wait()
    assert cpu.seconds.get("memory checks", 0) >= 1.0
    assert set(cpu.seconds) <= {"memory checks", "evaluator"}, "the other burner is nobody's"
