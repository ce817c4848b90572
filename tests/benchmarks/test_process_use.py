"""What each kind of process used (benchmarks/process_use.py), read from /proc."""

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
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
    assert kind_of("python3", "python3 -m evaluator.sandboxed.fork_server_process", 1, 2) == "fork servers"
    forked = "python3 -m evaluator.sandboxed.fork_server_process"  # a child keeps its server's command line
    assert kind_of("al-candidate", forked, 1, 2) == "candidates"
    assert kind_of("al-scout", forked, 1, 2) == kind_of("al-ir_compile", forked, 1, 2) == "compile scouts"
    assert kind_of("al-baseline", forked, 1, 2) == "baselines"
    assert kind_of("python3", "/venv/bin/python3 -m agentloop eval --references", 1, 2) == "evaluator"
    assert kind_of("agentloop", "/venv/bin/python3 /venv/bin/agentloop run", 1, 2) == "evaluator"
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


RENAMED = ("import ctypes, sys, time\nprint('started', flush=True)\nsys.stdin.readline()\n"
           "ctypes.CDLL(None).prctl(15, sys.argv[1].encode())\n"
           "while time.process_time() < 1.0: pass\nprint('done', flush=True)\nsys.stdin.read()")


def renamed_burner(name: str) -> subprocess.Popen:
    """A process under a fork server's command line that takes `name` once told to, then burns a
    CPU second."""
    return subprocess.Popen([sys.executable, "-c", RENAMED, name, "evaluator.sandboxed.fork_server_process"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def rename_and_burn(child: subprocess.Popen) -> None:
    assert child.stdout.readline().strip() == "started"
    time.sleep(0.5)  # seen under the server's command line first
    child.stdin.write("go\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "done"
    time.sleep(0.5)


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="reads /proc")
def test_a_process_named_after_it_was_first_seen_is_counted_under_its_new_kind():
    """The fork server's children start under its name and command line and take their kind's
    name right after the fork."""
    child = renamed_burner("al-candidate")
    try:
        with _module().ProcessUse(period=0.1) as use:
            rename_and_burn(child)
    finally:
        child.communicate("")
    # CPU time the kernel counted (the burn's second, less what the child used before the first
    # sample), however loaded the machine
    assert use.cpu_seconds.get("candidates", 0) >= 0.9, use.cpu_seconds


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="reads /proc")
def test_from_the_command_line_it_samples_until_stopped(tmp_path):
    sampler = subprocess.Popen([sys.executable, str(BENCHMARK), "--period", "0.1", "--json", str(tmp_path / "use.json")],
                               stdout=subprocess.PIPE, text=True)
    assert sampler.stdout.readline().strip() == "sampling"
    child = renamed_burner("al-baseline")
    try:
        rename_and_burn(child)
    finally:
        sampler.send_signal(signal.SIGTERM)
        assert sampler.wait(timeout=30) == 0
        child.communicate("")
    use = json.loads((tmp_path / "use.json").read_text())
    assert set(use) == {"seconds", "cpu_seconds", "written_bytes"}
    assert use["cpu_seconds"].get("baselines", 0) >= 0.9, use  # CPU time, as above
