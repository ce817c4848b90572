"""A device's Evaluator in a process of its own (what the local executor does with several GPUs),
forced here on the CPU with `processes=True`: the same verdicts as in this process, an evaluator
process killed mid-evaluation is replaced and its evaluations asked again, the evaluator's own
failures come back as errors, closing ends the process, and closing to abandon (an interrupted run)
ends the evaluations in flight instead of waiting for them."""

import asyncio
import concurrent.futures
import dataclasses
import os
import signal
import threading
import time

import psutil
import pytest

from agentloop.evaluation import EvaluationQueue
from agentloop.evaluator_process import EvaluatorProcess
from evaluator.evaluate import EvaluationAbandoned
from tests.agentloop.executor_runs import TASKS, run_with

NEVER_RETURNS = """import torch
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def relu(input, inplace=False):
    y = torch.empty_like(input)
    while True:
        copy_kernel[(1,)](input, y, 0, BLOCK=16)
"""


def kill_mid_evaluation(backend: EvaluatorProcess, killed: list[int], stop: threading.Event) -> None:
    while not stop.wait(0.05):
        link = backend.link
        if link.pending:
            time.sleep(0.5)  # well inside the evaluation
            if link.pending and link.process.is_alive():
                os.kill(link.process.pid, signal.SIGKILL)
                killed.append(link.process.pid)
                return


def test_verdicts_match_in_process_and_a_killed_evaluator_process_is_replaced(suite, tmp_path):
    here = EvaluationQueue("cpu", workers=2, timing=False)
    try:
        assert not isinstance(here.backends[0], EvaluatorProcess), "one device: the Evaluator stays here"
        expected = run_with(here, suite, tmp_path / "here.db")
    finally:
        here.close()

    apart = EvaluationQueue("cpu", workers=2, timing=False, processes=True)
    backend = apart.backends[0]
    first = backend.process
    killed, stop = [], threading.Event()
    try:
        assert isinstance(backend, EvaluatorProcess) and first.pid != os.getpid()
        killer = threading.Thread(target=kill_mid_evaluation, args=(backend, killed, stop), daemon=True)
        killer.start()
        got = run_with(apart, suite, tmp_path / "apart.db")
        replacement = backend.process
    finally:
        stop.set()
        apart.close()

    assert len(expected) == len(TASKS) * 2 * 3 and set(got) == set(expected)
    assert {k: a.verdict for k, a in got.items()} == {k: a.verdict for k, a in expected.items()}
    assert {"RUNTIME_FAIL", "STATIC_REJECT", "CORRECT"} <= {a.verdict for a in got.values()}
    assert killed == [first.pid] and backend.restarts == 1 and replacement.pid != first.pid
    assert not first.is_alive() and not replacement.is_alive(), "closing ends the evaluator process"


def test_the_evaluators_own_failure_comes_back_as_an_error(suite):
    relu, other = suite["Activation/relu"], suite["Reduce/sum"]
    misfiled = dataclasses.replace(relu, source_path=other.source_path)
    apart = EvaluationQueue("cpu", workers=1, timing=False, processes=True)
    try:
        with pytest.raises(RuntimeError, match="holds Reduce/sum, not Activation/relu"):
            asyncio.run(apart.evaluate(misfiled, relu.solution_path.read_text()))
        nowhere = dataclasses.replace(relu, source_path=None)
        with pytest.raises(ValueError, match="without a source file"):
            asyncio.run(apart.evaluate(nowhere, relu.solution_path.read_text()))
        result = asyncio.run(apart.evaluate(relu, relu.solution_path.read_text()))
        assert result.verdict.value == "CORRECT", "the process serves on after a failed request"
        assert apart.backends[0].restarts == 0
    finally:
        apart.close()


def test_an_evaluator_process_that_cannot_start_says_why():
    with pytest.raises(RuntimeError, match="evaluator process for meta could not start: ValueError: unsupported device"):
        EvaluationQueue("meta", workers=1, timing=False, processes=True)


def test_an_evaluator_process_shares_the_cores_with_the_others_instead_of_a_thread_per_core_each(monkeypatch):
    """Several devices: each evaluator process builds inputs and judges outputs on its share of the
    cores, as many torch threads as the queue gives it, not torch's default of one per core."""
    import multiprocessing

    import torch

    from agentloop.evaluator_process import serve

    cores = os.cpu_count() or 2
    apart = EvaluationQueue("cpu", workers=1, timing=False, processes=True)
    try:
        assert apart.backends[0].cpu_threads == cores, "one device, one worker: every core"
    finally:
        apart.close()

    before, handler = torch.get_num_threads(), signal.getsignal(signal.SIGINT)
    given = 2 if before == 1 else 1  # not what this process computes on already
    monkeypatch.setenv("TRITON_INTERPRET", "1")  # what serve sets for the CPU, restored after the test
    ours, theirs = multiprocessing.Pipe()
    ours.send(None)  # nothing to evaluate: the process stops once its Evaluator is built
    try:
        serve(theirs, "cpu", 1, {"timing": False}, cpu_threads=given)
        assert torch.get_num_threads() == given
    finally:
        torch.set_num_threads(before)
        signal.signal(signal.SIGINT, handler)


def test_devices_are_named_one_by_one_or_as_a_list_of_gpus():
    from agentloop.evaluation import visible_devices

    assert visible_devices("cpu") == ["cpu"] and visible_devices("cuda:3") == ["cuda:3"]
    assert visible_devices("cuda:0,2") == ["cuda:0", "cuda:2"]
    assert visible_devices("cuda:1, 1,0") == ["cuda:1", "cuda:0"], "each GPU once, in the order named"
    with pytest.raises(ValueError, match="named by number"):
        visible_devices("cuda:0,x")


def test_a_caller_that_stops_waiting_leaves_the_evaluation_to_finish(suite, caplog):
    """An interrupted run stops waiting on evaluations in flight: each finishes in the evaluator
    process, and its result is dropped without an error."""
    relu = suite["Activation/relu"]
    code = relu.solution_path.read_text()
    apart = EvaluationQueue("cpu", workers=1, timing=False, processes=True)
    link = apart.backends[0].link

    async def impatient() -> None:
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(apart.evaluate(relu, code), timeout=0.05)

    try:
        asyncio.run(impatient())
        abandoned = list(link.pending.values())
        assert abandoned, "the evaluation goes on after its caller stopped waiting"
        _, unfinished = concurrent.futures.wait(abandoned, timeout=600)  # a hang fails instead of stalling CI
        assert not unfinished and not link.pending and all(f.exception() is None for f in abandoned)
        assert asyncio.run(apart.evaluate(relu, code)).verdict.value == "CORRECT"
    finally:
        apart.close()
    assert not [r for r in caplog.records if r.name == "concurrent.futures"], caplog.text


@pytest.mark.parametrize("ir_store", [True, False])
def test_the_ir_store_setting_reaches_the_evaluator(ir_store):
    queue = EvaluationQueue("cpu", workers=1, timing=False, ir_store=ir_store)
    try:
        assert queue.backends[0].evaluator.config.ir_store is ir_store
    finally:
        queue.close()


def spins_as_a_candidate(process: psutil.Process) -> bool:
    """A candidate's process that has spun for a second of CPU time (NEVER_RETURNS's)."""
    try:
        return process.name() == "al-candidate" and process.cpu_times().user > 1.0
    except psutil.Error:
        return False


def spinning_candidate(evaluation: concurrent.futures.Future) -> psutil.Process:
    """The candidate's process of this test's evaluation, once it has spun for a second of CPU time."""
    while not evaluation.done():
        spinning = [p for p in psutil.Process().children(recursive=True) if spins_as_a_candidate(p)]
        if spinning:
            return spinning[0]
        time.sleep(0.1)
    raise AssertionError(f"the evaluation ended on its own: {evaluation.result()}")


@pytest.mark.parametrize("processes", [False, True], ids=["here", "apart"])
def test_closing_to_abandon_kills_the_evaluations_in_flight_instead_of_waiting(suite, processes):
    """Ctrl-C during a run: a candidate that would run until its time limit is killed, its evaluation
    ends in EvaluationAbandoned rather than a verdict, and close returns."""
    relu = suite["Activation/relu"]
    queue = EvaluationQueue("cpu", workers=1, timing=False, processes=processes)
    evaluation = queue.backends[0].submit(relu, NEVER_RETURNS)
    try:
        candidate = spinning_candidate(evaluation)
    finally:
        queue.close(abandon=True)
    error = evaluation.exception(timeout=0)
    if processes:
        assert isinstance(error, RuntimeError) and "EvaluationAbandoned" in str(error)
    else:
        assert isinstance(error, EvaluationAbandoned)
        with pytest.raises(EvaluationAbandoned):
            queue.backends[0].evaluator.evaluate(relu, relu.solution_path.read_text())
    candidate.wait(timeout=60)  # killed (the signal may still be on its way): without abandon it ran on
