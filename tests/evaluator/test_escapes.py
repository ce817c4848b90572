"""What holds when the static rules fail: candidates under escapes/ (static checks off) try to reach
past their process, and the world outside their sandbox is checked afterwards: files, processes,
the network, and the next honest candidate's verdict.

Each escape is a template: `__TARGETS__` becomes a dict of what it attacks (paths, pids, a port),
as a candidate that had read the evaluator's code and watched the machine would know them."""

import hashlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from evaluator.evaluate import EvaluationAbandoned, Evaluator, EvaluatorConfig
from evaluator.fork_server import PROJECT_ROOT
from evaluator.result import EvalResult

HERE = Path(__file__).parent
ESCAPES = HERE / "escapes"
SECRET_NAME = "AGENTLOOP_ESCAPE_TEST_API_KEY"
SECRET = "sk-escape-test-0123456789abcdef"
DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.fixture(scope="module", params=DEVICES)
def world(request, tmp_path_factory, suite):
    """An evaluator with a secret in its environment, caches and a trace store that must not change."""
    root = tmp_path_factory.mktemp(f"world-{request.param}")
    os.environ[SECRET_NAME] = SECRET
    try:
        evaluator = Evaluator(EvaluatorConfig(device=request.param, static_checks=False, cache_dir=root / "cache"))
    finally:
        del os.environ[SECRET_NAME]
    cache = root / "cache"
    cache.mkdir(exist_ok=True)
    for name in ("baselines.json", "calibration.json"):
        if not (cache / name).exists():
            (cache / name).write_text("{}\n")
    store = root / "traces.sqlite"
    store.write_bytes(b"SQLite format 3\0" + bytes(4080))
    world = World(evaluator, suite["Activation/gelu"], cache, store)
    yield world
    evaluator.close()


class World:
    def __init__(self, evaluator: Evaluator, task, cache: Path, store: Path):
        self.evaluator, self.task, self.cache, self.store = evaluator, task, cache, store
        self.honest = task.solution_path.read_text()
        self.zeros = (HERE / "exploits" / "zeros_output.py").read_text()

    def protected(self) -> dict[str, str]:
        """Hashes of the files a candidate must not change."""
        paths = [self.cache / "baselines.json", self.cache / "calibration.json", _probe_file(self.cache), self.store,
                 PROJECT_ROOT / "evaluator" / "contracts.py", *sorted(self.evaluator.work_dir.rglob("*.pt"))]
        return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths if p.exists()}

    def escape(self, name: str, **targets) -> EvalResult:
        source = (ESCAPES / f"{name}.py").read_text().replace("__TARGETS__", json.dumps(targets))
        return self.evaluator.evaluate(self.task, source)

    def still_fair(self) -> None:
        """An honest candidate is CORRECT and one that writes zeros is INCORRECT, as in a clean world."""
        honest = self.evaluator.evaluate(self.task, self.honest)
        assert honest.verdict.value == "CORRECT", honest.reason
        zeros = self.evaluator.evaluate(self.task, self.zeros)
        assert zeros.verdict.value == "INCORRECT", zeros.reason


def test_candidates_run_fully_isolated(world):
    result = world.evaluator.evaluate(world.task, world.honest)
    assert result.environment.isolation == "full", result.environment.isolation


def test_no_other_process_environment_or_memory_can_be_read(world):
    secret = os.environ.get(SECRET_NAME) or SECRET  # a live object in this (the evaluator's) process
    result = world.escape("read_environ", evaluator_pid=os.getpid(), secret_name=SECRET_NAME,
                          secret_address=id(secret))
    assert result.verdict.value == "RUNTIME_FAIL" and result.reason.endswith("found nothing"), result.reason
    assert SECRET not in result.to_json()


def test_caches_inputs_store_and_project_cannot_be_rewritten(world):
    world.evaluator.evaluate(world.task, world.honest)  # inputs exist in the evaluator's folder
    before = world.protected()
    result = world.escape("rewrite_files", baselines=str(world.cache / "baselines.json"),
                          calibration=str(world.cache / "calibration.json"), probe=str(_probe_file(world.cache)),
                          store=str(world.store),
                          project_file=str(PROJECT_ROOT / "evaluator" / "contracts.py"),
                          inputs=str(world.evaluator.work_dir))
    assert result.verdict.value == "RUNTIME_FAIL", result.reason
    for attacked in ("baselines", "calibration", "probe", "store", "project_file"):
        assert f"{attacked}=refused" in result.reason, result.reason
    assert "inputs=none found" in result.reason or "inputs=refused" in result.reason, result.reason
    after = world.protected()
    assert {k: v for k, v in after.items() if k in before} == before
    world.still_fair()


def test_expected_outputs_kept_on_disk_cannot_be_read_or_rewritten(world, suite):
    world.evaluator.evaluate(world.task, world.honest)  # a candidate seen fully isolated: cases kept on disk
    relu = suite["Activation/relu"]
    assert world.evaluator.evaluate(relu, relu.solution_path.read_text()).verdict.value == "CORRECT"
    kept = world.evaluator.reference_cache.directory
    entries = [p for p in kept.iterdir() if (p / "expected.pt").exists()]
    assert entries, "relu's cases were kept on disk, so there is something to attack"
    before = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for e in entries for p in e.iterdir()}
    result = world.escape("read_reference_cache", references=str(kept))
    assert result.verdict.value == "RUNTIME_FAIL", result.reason
    assert "references=empty" in result.reason or "references=unlisted" in result.reason, result.reason
    assert {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for e in entries for p in e.iterdir()} == before
    world.still_fair()


def test_expected_outputs_kept_inside_a_folder_candidates_see_are_seen_empty(tmp_path, suite):
    """The cache folder may lie inside one every confined process reads (here the Python environment):
    it is mounted empty there, so the escape finds the folder and nothing in it."""
    import shutil
    import sys
    import uuid

    from evaluator import confinement

    prefix = Path(sys.prefix)
    if not os.access(prefix, os.W_OK) or os.path.normpath(prefix) not in confinement._system_paths():
        pytest.skip("needs a Python environment that confined processes read and this user may write")
    cache = prefix / f".agentloop-test-cache-{uuid.uuid4().hex[:8]}"
    evaluator = Evaluator(EvaluatorConfig(device="cpu", static_checks=False, cache_dir=cache))
    try:
        gelu, relu = suite["Activation/gelu"], suite["Activation/relu"]
        evaluator.evaluate(gelu, gelu.solution_path.read_text())  # a candidate seen fully isolated: cases kept
        assert evaluator.evaluate(relu, relu.solution_path.read_text()).verdict.value == "CORRECT"
        kept = evaluator.reference_cache.directory
        entries = [p for p in kept.iterdir() if (p / "expected.pt").exists()]
        assert entries, "relu's cases were kept on disk, so there is something to attack"
        before = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for e in entries for p in e.iterdir()}
        source = (ESCAPES / "read_reference_cache.py").read_text().replace(
            "__TARGETS__", json.dumps({"references": str(kept)}))
        result = evaluator.evaluate(gelu, source)
        assert result.verdict.value == "RUNTIME_FAIL" and "references=empty" in result.reason, result.reason
        assert {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for e in entries for p in e.iterdir()} == before
    finally:
        evaluator.close()
        shutil.rmtree(cache, ignore_errors=True)


def _probe_file(cache: Path) -> Path:
    """The CPU interpreter probe's kept answer (interpreter_probe.py); absent on a GPU."""
    from evaluator import interpreter_probe
    return interpreter_probe.cache_file(cache)


def _named(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == token[:15]:
                found.append(int(entry))
        except OSError:
            continue
    return found


def test_no_daemon_outlives_its_evaluation(world):
    token = f"al-daemon-{os.getpid() % 10000}"
    result = world.escape("daemon", token=token, honest=world.honest)
    assert result.verdict.value == "RUNTIME_FAIL" and "daemon left behind" in result.reason, result.reason
    deadline = time.monotonic() + 60  # the kernel ends the namespace at once; this only bounds a failing test
    while _named(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _named(token) == [], "the daemon still runs"
    world.still_fair()  # had it lived, it would have replaced these candidates' files


def test_no_daemon_outlives_an_abandoned_evaluation(suite, tmp_path):
    """An interrupted run abandons the evaluation while the candidate still runs: the evaluator's
    processes are killed, and the daemon it left (new session, no death signal) ends with its PID
    namespace, not with any process the evaluator kills by name."""
    token = f"al-abandon-{os.getpid() % 10000}"
    source = (ESCAPES / "daemon.py").read_text().replace(
        "__TARGETS__", json.dumps({"token": token, "honest": "", "spin": 1}))
    evaluator = Evaluator(EvaluatorConfig(device="cpu", static_checks=False, cache_dir=tmp_path))
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            evaluation = pool.submit(evaluator.evaluate, suite["Activation/gelu"], source)
            while not _named(token) and not evaluation.done():
                time.sleep(0.1)
            assert _named(token), f"no daemon was left: {evaluation.result()}"
            evaluator.abandon()
            with pytest.raises(EvaluationAbandoned):
                evaluation.result(timeout=300)
    finally:
        evaluator.close()
    deadline = time.monotonic() + 60  # the kernel ends the namespace at once; this only bounds a failing test
    while _named(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _named(token) == [], "the daemon still runs"


def test_no_network_namespace_can_be_joined(world):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    reached = []

    def accept():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not stop.is_set():
            try:
                reached.append(listener.accept()[0].recv(16))
            except OSError:
                continue

    stop = threading.Event()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        result = world.escape("join_network", port=listener.getsockname()[1], evaluator_pid=os.getpid())
    finally:
        stop.set()
        thread.join()
        listener.close()
    assert reached == []
    assert result.verdict.value == "RUNTIME_FAIL" and "no connection" in result.reason, result.reason
    assert "joined" not in result.reason and "unshared" not in result.reason, result.reason


def test_no_process_outside_can_be_signalled(world):
    sibling = subprocess.Popen(["sleep", "120"])
    server_pid = world.evaluator.server._proc.pid if world.evaluator.server.alive() else 0
    try:
        result = world.escape("signal_processes", evaluator=os.getpid(), fork_server=server_pid, sibling=sibling.pid)
        assert result.verdict.value == "INCORRECT", result.reason  # it returned its (wrong) output: a verdict came
        assert sibling.poll() is None, "the sibling was killed"
        assert server_pid == 0 or world.evaluator.server.alive(), "the fork server was killed"
        state = Path(f"/proc/{os.getpid()}/stat").read_text().rsplit(")", 1)[1].split()[0]
        assert state != "T"
        world.still_fair()
    finally:
        sibling.send_signal(signal.SIGKILL)
        sibling.wait()
