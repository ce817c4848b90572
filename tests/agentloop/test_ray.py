"""The Ray executor on a local Ray cluster started by the test (CPU workers, Triton's interpreter):
the same experiment gives the same verdicts as the local executor, a worker killed mid-run is
survived (its evaluation is retried on another worker), and closing to abandon ends the
evaluations in flight."""

import asyncio
import os
import signal
import threading
import time

import psutil
import pytest

from agentloop.evaluation import EvaluationQueue
from tests.agentloop.executor_runs import TASKS, run_with
from traces.store import TraceStore

ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A two-CPU local Ray instance for this module."""
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             _temp_dir=str(tmp_path_factory.mktemp("ray")))
    yield
    ray.shutdown()


def kill_a_busy_worker(evaluations, pids: list[int], killed: list[int], stop: threading.Event) -> None:
    while not stop.wait(0.05):
        busy = list(evaluations.busy)
        if busy:
            time.sleep(0.5)  # well inside the evaluation
            if busy[0] in evaluations.busy:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(pids[busy[0]])
                return


def test_ray_reproduces_local_verdicts_and_survives_a_killed_worker(cluster, suite, tmp_path):
    from agentloop.ray_evaluation import RayEvaluations

    local = EvaluationQueue("cpu", workers=2, timing=False)
    try:
        expected = run_with(local, suite, tmp_path / "local.db")
    finally:
        local.close()

    remote = RayEvaluations(device="cpu", workers=2, timing=False)
    killed, stop = [], threading.Event()
    try:
        pids = remote.pids()
        assert len(set(pids)) == 2 and os.getpid() not in pids, "two worker processes apart from the driver"
        killer = threading.Thread(target=kill_a_busy_worker, args=(remote, pids, killed, stop), daemon=True)
        killer.start()
        got = run_with(remote, suite, tmp_path / "ray.db")
    finally:
        stop.set()
        remote.close()

    assert len(expected) == len(TASKS) * 2 * 3 and set(got) == set(expected)
    assert {k: a.verdict for k, a in got.items()} == {k: a.verdict for k, a in expected.items()}
    assert {"RUNTIME_FAIL", "STATIC_REJECT", "CORRECT"} <= {a.verdict for a in got.values()}
    assert killed and remote.retried >= 1, "a worker was killed mid-evaluation and its evaluation retried"
    hosts = {a.result.environment.host for a in got.values() if a.result and a.result.environment}
    assert hosts and None not in hosts, "results record where they ran"


def test_executor_is_configured_and_does_not_change_the_run():
    from agentloop.config import ConfigError, load_experiment
    with pytest.raises(ConfigError, match="not one of local, ray"):
        load_experiment(None, ["evaluation.executor=spark"])
    on_ray = load_experiment(None, ["evaluation.executor=ray", "evaluation.ray_address=auto"])
    assert on_ray.evaluation.executor == "ray" and on_ray.evaluation.ray_address == "auto"
    assert on_ray.run_id == load_experiment(None, []).run_id, "a run started locally resumes on Ray"


def test_agentloop_run_on_ray_from_the_command_line(tmp_path):
    import subprocess
    import sys

    from tests.agentloop.test_run import ROOT, agentloop_env

    store = tmp_path / "t.db"
    done = subprocess.run([sys.executable, "-m", "agentloop", "run", "--executor", "ray", "--device", "cpu", "--task",
                           "gelu", "--max-rounds", "1", "--store", str(store), "--no-progress"], capture_output=True,
                          text=True, timeout=600, env=agentloop_env(RAY_AUTH_MODE="disabled"), cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    trace = TraceStore(store)
    (attempt,) = trace.attempts()
    trace.close()
    assert attempt.result is not None and attempt.result.environment.host


def test_workers_import_from_this_checkout_and_the_drivers_path():
    from agentloop.ray_evaluation import worker_pythonpath
    from tests.agentloop.test_run import ROOT

    assert worker_pythonpath({}) == str(ROOT)
    assert worker_pythonpath({"PYTHONPATH": f"/opt/site{os.pathsep}{os.pathsep}/x"}).split(os.pathsep) == \
        [str(ROOT), "/opt/site", "/x"]


def test_abandon_is_heard_by_a_busy_worker_and_kills_its_evaluation(cluster, suite):
    """Every evaluation slot of the worker busy with a candidate that never returns: abandon (what
    closing to abandon asks of each worker) is still answered, the candidate's process is killed
    and the evaluation ends in EvaluationAbandoned, not a verdict."""
    from agentloop.ray_evaluation import RayEvaluations
    from tests.agentloop.test_evaluator_process import NEVER_RETURNS, spins_as_a_candidate

    relu = suite["Activation/relu"]
    remote = RayEvaluations(device="cpu", workers=1, timing=False)
    worker = psutil.Process(remote.pids()[0])

    async def abandoned() -> tuple[BaseException | None, psutil.Process | None]:
        evaluation = asyncio.ensure_future(remote.evaluate(relu, NEVER_RETURNS))
        candidate = None
        while candidate is None and not evaluation.done():
            await asyncio.sleep(0.1)
            candidate = next((p for p in worker.children(recursive=True) if spins_as_a_candidate(p)), None)
        await asyncio.get_running_loop().run_in_executor(
            None, lambda: ray.get([actor.abandon.remote() for actor in remote.actors], timeout=120))
        return (await asyncio.gather(evaluation, return_exceptions=True))[0], candidate

    try:
        error, candidate = asyncio.run(abandoned())
    finally:
        remote.close(abandon=True)
    assert candidate is not None, f"the evaluation ended on its own: {error}"
    assert isinstance(error, ray.exceptions.RayTaskError) and "EvaluationAbandoned" in str(error), error
    candidate.wait(timeout=60)  # killed (the signal may still be on its way): without abandon it ran on
    with pytest.raises(RuntimeError, match="the Ray executor was closed"):  # no wait for a worker to come back
        asyncio.run(remote.evaluate(relu, relu.solution_path.read_text()))

