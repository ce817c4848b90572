"""Process isolation: secrets, crashes, and a clean process for every candidate."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evaluator.evaluate import Evaluator, EvaluatorConfig
from evaluator.fork_server import scrubbed_environment, secret_values
from evaluator.loader import find_task
from evaluator.protocol import Job
from evaluator.result import EvalResult
from evaluator.sandbox import Limits
from tests.evaluator.child_messages import after_device_ready

HERE = Path(__file__).parent
SECRET = "sk-agentloop-test-5ecret-value"

REPORT_ENVIRONMENT = textwrap.dedent('''
    import os
    import triton
    import triton.language as tl

    @triton.jit
    def nothing(x_ptr):
        pass

    def gelu(input, approximate="none"):
        nothing[(1,)](input)
        raise RuntimeError("has key: " + str("AGENTLOOP_TEST_API_KEY" in os.environ) + " cwd: " + os.getcwd())
''')


def test_environment_is_scrubbed():
    env = {"PATH": "/bin", "OPENAI_API_KEY": "x" * 20, "ANTHROPIC_API_KEY": "y" * 20, "HOME": "/root",
           "TRITON_CACHE_DIR": "/tmp/t", "CUDA_VISIBLE_DEVICES": "0", "AWS_SECRET_ACCESS_KEY": "z" * 20,
           "RANDOM_SETTING": "1", "TRITON_API_TOKEN": "t" * 20}
    kept = scrubbed_environment(env)
    assert set(kept) == {"PATH", "HOME", "TRITON_CACHE_DIR", "CUDA_VISIBLE_DEVICES"}
    assert set(secret_values(env)) == {"x" * 20, "y" * 20, "z" * 20, "t" * 20}


EVALUATE_BOTH = textwrap.dedent('''
    import sys
    from evaluator.evaluate import Evaluator, EvaluatorConfig
    from evaluator.loader import find_task, load_suite
    task = find_task("Activation/gelu", load_suite())
    with Evaluator(EvaluatorConfig(device="cpu", static_checks=False, cache_dir=sys.argv[3])) as evaluator:
        for path in sys.argv[1:3]:
            print(evaluator.evaluate(task, open(path).read()).to_json())
''')


def test_secrets_reach_neither_candidate_nor_result(tmp_path):
    """The evaluator runs with an API key in its environment from the start (as `agentloop run` would)."""
    own_env = tmp_path / "own_env.py"
    own_env.write_text(REPORT_ENVIRONMENT)
    env = dict(os.environ, AGENTLOOP_TEST_API_KEY=SECRET, PYTHONPATH=str(HERE.parent.parent))
    done = subprocess.run([sys.executable, "-c", EVALUATE_BOTH, str(own_env), str(HERE / "exploits" / "read_secrets.py"),
                           str(tmp_path / "cache")], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    own, stolen = (EvalResult.from_json(line) for line in done.stdout.splitlines())
    assert own.verdict.value == "RUNTIME_FAIL" and "has key: False" in own.reason
    assert "/al-" in own.reason, "the candidate runs in its own scratch directory"
    assert stolen.verdict.value == "RUNTIME_FAIL"
    assert SECRET not in done.stdout and SECRET not in done.stderr
    # Its own PID namespace: no other process's /proc/<pid>/environ is there to read, root or not.
    assert stolen.reason.endswith("nothing found")


REPORTS_ITS_THREADS = textwrap.dedent('''
    import os
    import torch

    raise RuntimeError(f"threads {torch.get_num_threads()} {os.environ.get('OMP_NUM_THREADS')}")
''')


def reported_by_a_candidate(source: str) -> tuple[dict, list[bytes]]:
    """The failure a candidate's process reports, and its fork server's environment."""
    from evaluator.fork_server import ForkServer
    from evaluator.sandbox import Sandbox

    server = ForkServer(interpret=True)
    try:
        job = Job(task="Activation/gelu", entry="gelu", device="cpu")
        with Sandbox(server, "candidate", job, {"candidate.py": source}, Limits()) as box:
            message = after_device_ready(box)
        return message, open(f"/proc/{server._proc.pid}/environ", "rb").read().split(b"\0")
    finally:
        server.close()


def test_candidates_processes_compute_on_one_cpu_thread(monkeypatch):
    """Many evaluations at once, each with a thread per core busy-waiting after every parallel
    region, cost a fifth of a GPU host's CPU time; the evaluator's own setting does not reach them."""
    monkeypatch.setenv("OMP_NUM_THREADS", "8")  # kept for the fork server's own environment, then overridden
    message, served = reported_by_a_candidate(REPORTS_ITS_THREADS)
    assert "threads 1 1" in message["reason"], message
    assert b"OMP_NUM_THREADS=8" in served, "the server, and the baseline's eager PyTorch it forks, keep the setting"


REPORTS_ITS_NAME = textwrap.dedent('''
    raise RuntimeError("name " + open("/proc/self/comm").read().strip())
''')


def test_the_fork_servers_children_are_named_by_their_kind():
    """What ps and the benchmarks' process sampling read to tell a candidate from a scout or a baseline."""
    message, _ = reported_by_a_candidate(REPORTS_ITS_NAME)
    assert "name al-candidate" in message["reason"], message


REPORTS_ITS_QUEUES = textwrap.dedent('''
    import os

    raise RuntimeError(f"queues {os.environ.get('CUDA_DEVICE_MAX_CONNECTIONS')}")
''')


@pytest.mark.parametrize("evaluators_setting, expected", [(None, "queues 1"), ("8", "queues 8")])
def test_candidates_processes_make_cuda_contexts_of_one_work_queue(evaluators_setting, expected, monkeypatch):
    """Contexts are made one at a time across the machine, and one with a single queue is made in
    half the time; an evaluator that sets its own number keeps it."""
    monkeypatch.delenv("CUDA_DEVICE_MAX_CONNECTIONS", raising=False)
    if evaluators_setting:
        monkeypatch.setenv("CUDA_DEVICE_MAX_CONNECTIONS", evaluators_setting)
    message, _ = reported_by_a_candidate(REPORTS_ITS_QUEUES)
    assert message["reason"].endswith(expected), message


def test_a_crash_leaves_the_next_candidate_a_clean_process(evaluators, suite):
    evaluator = evaluators(static=False)
    task = find_task("Activation/gelu", suite)
    crashed = evaluator.evaluate(task, (HERE / "verdicts" / "crash.py").read_text())
    assert crashed.verdict.value == "RUNTIME_FAIL" and "SIGSEGV" in crashed.reason
    polluting = textwrap.dedent('''
        import torch
        import triton
        import triton.language as tl
        torch.nn.functional.gelu = lambda *a, **k: None

        @triton.jit
        def nothing(x_ptr):
            pass

        def gelu(input, approximate="none"):
            nothing[(1,)](input)
            raise RuntimeError("stop")
    ''')
    evaluator.evaluate(task, polluting)
    after = evaluator.evaluate(task, task.solution_path.read_text())
    assert after.verdict.value == "CORRECT", after.reason


def test_fork_server_restarts_after_dying(tmp_path, suite):
    task = find_task("Activation/gelu", suite)
    with Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path)) as evaluator:
        assert evaluator.evaluate(task, task.solution_path.read_text()).correct
        evaluator.server._proc.kill()
        evaluator.server._proc.wait()
        assert evaluator.evaluate(task, task.solution_path.read_text()).correct


NETWORK_PROBE = textwrap.dedent('''
    import socket
    import triton
    import triton.language as tl

    @triton.jit
    def nothing(x_ptr):
        pass

    def gelu(input, approximate="none"):
        nothing[(1,)](input)
        try:
            socket.create_connection(("127.0.0.1", PORT), timeout=2).close()
            outcome = "reached the server"
        except OSError as exc:
            outcome = "no network: " + type(exc).__name__
        raise RuntimeError(outcome)
''')


def test_candidates_have_no_network(evaluators, suite):
    import socket
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    try:
        result = evaluators(static=False).evaluate(suite["Activation/gelu"], NETWORK_PROBE.replace("PORT", str(port)))
    finally:
        server.close()
    if os.geteuid() != 0:
        pytest.skip("a network namespace needs root (or a user namespace) on this machine")
    assert "no network" in result.reason, result.reason


FORK_BOMB = textwrap.dedent('''
    import os
    import time
    import triton
    import triton.language as tl

    @triton.jit
    def nothing(x_ptr):
        pass

    def gelu(input, approximate="none"):
        nothing[(1,)](input)
        for _ in range(200):
            if os.fork() == 0:
                time.sleep(60)
                os._exit(0)
        time.sleep(60)
''')


def test_a_fork_bomb_is_stopped(evaluators, suite):
    result = evaluators(static=False).evaluate(suite["Activation/gelu"], FORK_BOMB)
    assert result.verdict.value == "RUNTIME_FAIL" and "processes" in result.reason, result.reason


REPORTS_LOCK_WAITS = textwrap.dedent('''
    import time as _time
    from evaluator import gpu_lock as _gpu_lock
    _first = [True]

    def gelu(input, approximate="none"):
        if _first.pop() if _first else False:
            PATTERN
        return _gelu(input, approximate)
''')


def _lock_wait_candidate(task, pattern: str) -> str:
    solution = task.solution_path.read_text().replace("def gelu(", "def _gelu(")
    return solution + REPORTS_LOCK_WAITS.replace("PATTERN", pattern)


@pytest.mark.parametrize("pattern, verdict, reason", [
    # A wait for the GPU lock longer than a step is not the candidate's time.
    ("_gpu_lock._wait_listener(True); _time.sleep(7); _gpu_lock._wait_listener(False)", "CORRECT", "passed"),
    # A child that claims to wait forever, or claims one wait after another, is stopped all the same.
    ("_gpu_lock._wait_listener(True); _time.sleep(600)", "TIMEOUT", "for the GPU lock"),
    ("while True: _gpu_lock._wait_listener(True); _time.sleep(2); _gpu_lock._wait_listener(False)",
     "TIMEOUT", "for the GPU lock"),
    ("_time.sleep(600)", "TIMEOUT", "s per step"),
])
def test_lock_waits_are_not_the_candidates_time_but_are_bounded(tmp_path, suite, pattern, verdict, reason):
    from evaluator.sandbox import Limits
    task = find_task("Activation/gelu", suite)
    limits = Limits(step_seconds=5, total_seconds=300, memory_bytes=6 << 30, lock_wait_seconds=12)
    config = EvaluatorConfig(device="cpu", cache_dir=tmp_path, static_checks=False, limits=limits)
    with Evaluator(config) as evaluator:
        result = evaluator.evaluate(task, _lock_wait_candidate(task, pattern))
    assert result.verdict.value == verdict and reason in result.reason, result.reason


def _slowed(task, wait=lambda: None, fail: bool = False):
    """The task with inputs of its edge size built after `wait()` returns (or failing), as large
    inputs are slow to build on a GPU."""
    import dataclasses

    def make_inputs(seed, size, mode, dtype):
        if size == "edge":
            if fail:
                raise RuntimeError("the reference could not be built")
            wait()
        return task.make_inputs(seed, size, mode, dtype)
    return dataclasses.replace(task, make_inputs=make_inputs)


def _after_a_case_came_back(case_log: Path, idle_seconds: float):
    """Waits until the candidate has sent back a case's outputs (a `run_in` step in the case log),
    then `idle_seconds` more, once: the candidate had started, and then sat idle, while this case
    was still being built. Gives up (failing the build) after 120 s."""
    import time
    waited = []

    def wait():
        deadline = time.monotonic() + 120
        while '"run_in"' not in (case_log.read_text() if case_log.exists() else ""):
            if time.monotonic() > deadline:
                raise RuntimeError("no case came back while edge cases were still unbuilt")
            time.sleep(0.05)
        if not waited:
            waited.append(True)
            time.sleep(idle_seconds)
    return wait


def test_the_candidate_starts_while_cases_are_built_and_waiting_for_them_is_not_its_time(
        tmp_path, suite, monkeypatch):
    task = find_task("Activation/gelu", suite)
    case_log = tmp_path / "cases.jsonl"
    monkeypatch.setenv("AGENTLOOP_CASE_LOG", str(case_log))
    limits = Limits(step_seconds=3, total_seconds=300, memory_bytes=6 << 30)
    config = EvaluatorConfig(device="cpu", cache_dir=tmp_path, limits=limits)
    slowed = _slowed(task, _after_a_case_came_back(case_log, idle_seconds=limits.step_seconds + 1))
    with Evaluator(config) as evaluator:
        result = evaluator.evaluate(slowed, task.solution_path.read_text())
    # Edge cases were built only after a case's outputs came back, and the candidate then waited
    # for them longer than its step limit without being stopped.
    assert result.verdict.value == "CORRECT", result.reason
    assert sum(c.size == "edge" for c in result.cases) >= 4


def test_a_reference_that_cannot_be_built_is_the_evaluators_error_not_the_candidates(tmp_path, suite):
    task = find_task("Activation/gelu", suite)
    with Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path)) as evaluator:
        with pytest.raises(RuntimeError, match="could not be built"):
            evaluator.evaluate(_slowed(task, fail=True), task.solution_path.read_text())
        assert evaluator.evaluate(task, task.solution_path.read_text()).verdict.value == "CORRECT"


def test_the_process_log_names_each_child_with_its_kind_and_task(cpu_evaluator, suite, tmp_path, monkeypatch):
    import json
    log = tmp_path / "processes.jsonl"
    monkeypatch.setenv("AGENTLOOP_PROCESS_LOG", str(log))
    task = suite["Activation/gelu"]
    result = cpu_evaluator.evaluate(task, task.solution_path.read_text())
    assert result.verdict.value == "CORRECT"
    children = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(c["kind"], c["task"]) for c in children] == [("candidate", "Activation/gelu")]
    assert children[0]["pid"] not in (os.getpid(), cpu_evaluator.server._proc.pid)  # the fork server's child


def test_a_benchmark_log_not_made_yet_costs_the_candidate_no_isolation(cpu_evaluator, suite, tmp_path, monkeypatch):
    """A log that confined processes append to, named before anything has written it, is made for
    them (theirs to write) rather than leaving their root half-built."""
    from evaluator import confinement
    log = tmp_path / "locks.jsonl"
    monkeypatch.setenv("AGENTLOOP_LOCK_LOG", str(log))
    task = suite["Activation/gelu"]
    result = cpu_evaluator.evaluate(task, task.solution_path.read_text())
    assert result.verdict.value == "CORRECT", result.reason
    assert result.environment.isolation == "full"
    assert log.exists()
    if os.geteuid() == 0:
        assert log.stat().st_uid == confinement.SANDBOX_UID


def test_an_evaluator_makes_the_benchmark_logs_before_it_writes_them_itself(tmp_path, monkeypatch):
    """Its own threads (the GPU's calibration) may write a log before any candidate starts: the
    evaluator makes each named log first, so that it is the confined processes' to write too."""
    from evaluator import confinement
    logs = {name: tmp_path / f"{name.lower()}.jsonl" for name in ("AGENTLOOP_LOCK_LOG", "AGENTLOOP_CASE_LOG")}
    for name, path in logs.items():
        monkeypatch.setenv(name, str(path))
    with Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path / "cache")):
        for path in logs.values():
            assert path.exists()
            if os.geteuid() == 0:
                assert path.stat().st_uid == confinement.SANDBOX_UID


def test_a_file_that_exists_keeps_its_owner_and_mode_whatever_log_variable_names_it(tmp_path):
    """Pointing a log variable at a file that exists (by mistake at a system file, say) changes
    nothing about that file."""
    from evaluator.sandbox import sandbox_file
    existing = tmp_path / "important"
    existing.write_text("keep me\n")
    existing.chmod(0o600)
    before = existing.stat()
    sandbox_file(existing)
    after = existing.stat()
    assert (after.st_uid, after.st_gid, after.st_mode) == (before.st_uid, before.st_gid, before.st_mode)
    assert existing.read_text() == "keep me\n"


def test_the_process_tree_finds_every_descendant_and_nothing_else():
    import time

    import psutil

    from evaluator.sandbox import process_tree
    nested = subprocess.Popen(["bash", "-c", "sleep 30 & (sleep 30 & (sleep 30 & wait) & wait) & wait"])
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        time.sleep(0.5)
        expected = {nested.pid, *(c.pid for c in psutil.Process(nested.pid).children(recursive=True))}
        assert len(expected) == 6  # bash, sleep, subshell, sleep, subshell, sleep
        assert set(process_tree(nested.pid)) == expected
        assert bystander.pid not in process_tree(nested.pid)
        assert process_tree(bystander.pid) == [bystander.pid]
    finally:
        for process in psutil.Process(nested.pid).children(recursive=True):
            process.kill()
        nested.kill()
        bystander.kill()
    nested.wait()
    bystander.wait()
    assert process_tree(nested.pid) == []


FORKED_TREE = textwrap.dedent('''
    import os, sys, time
    hoard = b"x" * (96 << 20)  # touched: resident in the parent, shared with every child forked after
    for _ in range(3):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
    print("ready", flush=True)
    time.sleep(60)
''')


def test_a_forked_tree_is_held_to_its_limit_by_what_it_holds_not_by_its_shared_pages_counted_four_times():
    import psutil

    from evaluator.sandbox import process_tree, resident_bytes, tree_memory
    parent = subprocess.Popen([sys.executable, "-c", FORKED_TREE], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout.readline().strip() == "ready"
        tree = process_tree(parent.pid)
        assert len(tree) == 4
        summed = sum(resident_bytes(pid) for pid in tree)
        assert summed > 4 * (96 << 20), "each process counts the shared pages as its own"
        assert tree_memory(tree, limit=4 << 30) == summed, "far below the limit: the cheap sum stands"
        held = tree_memory(tree, limit=2 * (96 << 20))
        assert (96 << 20) < held < 2 * (96 << 20), "near it: the shared pages are counted once"
        assert tree_memory([parent.pid], limit=1 << 20) == resident_bytes(parent.pid), "one process: its own pages"
        assert tree_memory(tree, limit=64 << 20) > 64 << 20, "what the tree holds once still passes a lower limit"
    finally:
        for process in psutil.Process(parent.pid).children():
            process.kill()
        parent.kill()
        parent.wait()


BURN_THEN = """
import time
_began = time.process_time()
while time.process_time() < _began + 0.5:
    pass
"""


@pytest.mark.parametrize("ending", ["y = torch.empty_like(input)\nlaunch(input, y, approximate)\nreturn y",
                                    "import os\nos._exit(3)"])
def test_the_cpu_time_of_a_candidates_process_is_in_its_result_whether_it_is_killed_or_exits(evaluators, suite, ending):
    """Read from /proc before the evaluator kills a process it is done with, and from the fork
    server's wait for one that exited by itself (with its reaped descendants' in both cases)."""
    from tests.evaluator.test_gpu import gelu_candidate
    result = evaluators(static=False).evaluate(suite["Activation/gelu"], gelu_candidate(BURN_THEN + ending))
    assert result.verdict.value == ("CORRECT" if "return" in ending else "RUNTIME_FAIL"), result.reason
    assert result.phases["cpu_candidate"] >= 0.5, result.phases


BURST_THEN_IDLE = """
import os, threading, time
def burst(k):
    with open(os.path.join(os.getcwd(), f"burst{k}"), "wb") as f:
        for _ in range(64):
            f.write(b"x" * (1 << 20))
workers = [threading.Thread(target=burst, args=(k,)) for k in range(4)]
for w in workers:
    w.start()
for w in workers:
    w.join()
while True:
    time.sleep(0.05)
"""


def test_a_burst_written_between_two_walks_of_the_scratch_disk_is_caught_at_the_next(evaluators, suite, monkeypatch):
    """The adversary of the walk's schedule: with the static checks off, four threads write 256 MiB
    at once, right after a walk, then sit still (within their step time) hoping no walk comes again."""
    from evaluator import sandbox
    from tests.evaluator.test_gpu import gelu_candidate
    monkeypatch.setattr(sandbox, "DISK_FILL_RATE", 16 << 20)  # 128 MiB of headroom: the next walk waits its longest
    assert sandbox.next_disk_scan(0, 128 << 20) == sandbox.DISK_PERIOD_MAX
    result = evaluators(static=False, disk_bytes=128 << 20).evaluate(suite["Activation/gelu"],
                                                                    gelu_candidate(BURST_THEN_IDLE))
    assert result.verdict.value == "RUNTIME_FAIL" and "into its scratch directory (limit 128 MiB)" in result.reason, \
        result.reason


def test_the_scratch_disk_is_scanned_often_only_near_its_limit():
    from evaluator.sandbox import DISK_FILL_RATE, DISK_PERIOD_MAX, FOOTPRINT_PERIOD, next_disk_scan
    limit = 8 << 30
    for written in range(0, limit, 1 << 28):
        wait = next_disk_scan(written, limit)
        assert FOOTPRINT_PERIOD <= wait <= DISK_PERIOD_MAX
        assert wait == FOOTPRINT_PERIOD or written + wait * DISK_FILL_RATE <= limit, "no pass of the limit unseen"
    assert next_disk_scan(0, limit) >= 2 * FOOTPRINT_PERIOD
    assert next_disk_scan(limit - (1 << 20), limit) == FOOTPRINT_PERIOD
    assert next_disk_scan(limit + 1, limit) == FOOTPRINT_PERIOD
    assert FOOTPRINT_PERIOD < next_disk_scan(limit // 4, limit) < next_disk_scan(0, limit)
    assert next_disk_scan(0, 1 << 20) == FOOTPRINT_PERIOD, "a small limit is watched as closely as memory"


def test_a_failure_reported_just_before_the_child_exits_is_not_lost(evaluators, suite, monkeypatch):
    """The child reports its failure and exits at once; the evaluator, busy elsewhere (here: slowed
    after each empty poll), learns of the exit before it reads the report. The report still stands."""
    import select
    import time

    from evaluator import sandbox

    real_select = select.select

    class SlowSelect:
        @staticmethod
        def select(*args):
            ready = real_select(*args)
            if not any(ready):
                time.sleep(1.0)
            return ready
    monkeypatch.setattr(sandbox, "select", SlowSelect)
    task = suite["Activation/gelu"]
    failing = task.solution_path.read_text().replace(
        "    x = input.contiguous()",
        "    __import__('time').sleep(0.3)\n    raise ValueError('reported before exiting: 4711')\n    x = input.contiguous()")
    result = evaluators(static=False).evaluate(task, failing)  # the candidate sleeps first
    assert result.verdict.value == "RUNTIME_FAIL"
    assert "reported before exiting: 4711" in result.reason and "exited" not in result.reason, result.reason


TRITON_KEY_PROBE = textwrap.dedent('''
    import triton
    import triton.language as tl
    try:
        from triton.runtime.cache import triton_key
    except ImportError:
        from triton.compiler.compiler import triton_key

    HASHED = triton_key.cache_info().currsize  # before this process compiled anything

    @triton.jit
    def nothing(x_ptr):
        pass

    def gelu(input, approximate="none"):
        nothing[(1,)](input)
        raise RuntimeError(f"triton key hashed before the first compile: {HASHED == 1}")
''')


def test_children_inherit_tritons_cache_key_from_the_fork_server(evaluators, suite):
    """Hashing Triton's compiler library took 0.4 s of every candidate's first compile on a GPU host;
    Triton's interpreter (the CPU) compiles nothing, and no fork server of it hashes the library."""
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    result = evaluators(static=False, device=device).evaluate(suite["Activation/gelu"], TRITON_KEY_PROBE)
    hashed = device == "cuda"
    assert f"triton key hashed before the first compile: {hashed}" in result.reason, result.reason


def test_closing_a_sandbox_kills_its_child_at_once_and_keeps_no_record_of_it(tmp_path):
    """A child that held a CUDA context took seconds to exit on a loaded GPU; nothing waits for it."""
    import time

    import psutil

    from evaluator.fork_server import ForkServer
    from evaluator.sandbox import Sandbox

    job = Job(task="Activation/gelu", entry="gelu", device="cpu")
    server = ForkServer(interpret=True)
    try:
        box = Sandbox(server, "candidate", job, {"candidate.py": "import time\ntime.sleep(3600)\n"}, Limits())
        time.sleep(1)  # importing: it reads no message
        box.close()  # waiting for the import to end would run past pytest's 900 s timeout
        deadline = time.monotonic() + 10
        while psutil.pid_exists(box.pid) and psutil.Process(box.pid).status() != psutil.STATUS_ZOMBIE:
            assert time.monotonic() < deadline, "the child outlived its sandbox"
            time.sleep(0.05)
        while server._forgotten and time.monotonic() < deadline:  # its exit, reported late, is dropped
            time.sleep(0.05)
        assert not server._forgotten and box.pid not in server._exits
    finally:
        server.close()


def test_what_a_child_said_before_exiting_unheard_is_read(tmp_path):
    """A baseline child started ahead can connect, report and exit before the evaluator first
    listens: its report is still read, not taken for a crash."""
    import time

    from evaluator.fork_server import ForkServer
    from evaluator.sandbox import Sandbox

    job = Job(task="Activation/gelu", entry="gelu", device="cpu")
    server = ForkServer(interpret=True)
    try:
        with Sandbox(server, "candidate", job, {"candidate.py": "raise ValueError('broken on purpose')\n"},
                     Limits()) as box:
            deadline = time.monotonic() + 30
            while server.exit_info(box.pid) is None:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            message = after_device_ready(box, timeout=5)
        assert message["event"] == "failed" and "broken on purpose" in message["reason"], message
    finally:
        server.close()


def test_a_child_that_dies_with_unread_messages_reads_as_closed_not_as_an_error():
    """Killed with the evaluator's messages unread, a child's end resets the connection; the
    evaluator reads that as the channel's end (then asks how the child ended), not as its own error."""
    import socket
    import types

    from evaluator.sandbox import Sandbox

    ours, childs = socket.socketpair()
    ours.sendall(b'{"op": "run"}\n')  # never read by the child
    childs.close()
    box = types.SimpleNamespace(conn=ours)
    assert Sandbox._receive(box) == b""
    ours.close()


def test_resident_memory_is_read_without_proc_too(monkeypatch):
    import psutil

    from evaluator import sandbox
    from_proc = sandbox.resident_bytes(os.getpid())
    monkeypatch.setattr(sandbox, "_STATM_FILES", False)
    assert from_proc > 0 and abs(sandbox.resident_bytes(os.getpid()) - psutil.Process().memory_info().rss) < 64 << 20
    assert sandbox.resident_bytes(2 ** 22 + 12345) == 0, "a process that is gone holds nothing"
