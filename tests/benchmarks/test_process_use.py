"""What each kind of process used (benchmarks/process_use.py), read from /proc."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "process_use.py"
BURN = ("import os, sys, time\nwhile time.process_time() < 1.2: pass\n"
        "with open(sys.argv[1], 'wb') as f: f.write(os.urandom(4 << 20)); f.flush(); os.fsync(f.fileno())\n"
        "print('done', flush=True)\nsys.stdin.read()")  # idle until the test has read it


def _module():
    spec = importlib.util.spec_from_file_location("process_use", BENCHMARK)
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


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="reads /proc")
def test_a_processs_cpu_time_and_writes_are_counted_under_its_kind_and_a_strangers_are_not(tmp_path):
    module = _module()
    burners = []
    try:
        with module.ProcessUse(period=0.2) as use:
            for name, marker in (("a", ["memcheck_process"]), ("b", [])):
                burners.append(subprocess.Popen([sys.executable, "-c", BURN, str(tmp_path / name), *marker],
                                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
            assert [burner.stdout.readline().strip() for burner in burners] == ["done", "done"]
        checked = module._read(burners[0].pid)  # idle since: what the last sample read
    finally:
        for burner in burners:
            burner.communicate("")
    assert checked.ticks >= 1.2 * os.sysconf("SC_CLK_TCK")
    assert use.cpu_seconds["memory checks"] == round(checked.ticks / os.sysconf("SC_CLK_TCK"), 1), \
        "its burn, all of it, and not the other one's"
    assert use.written_bytes["memory checks"] == checked.written >= 4 << 20, "its file, synced to storage"
