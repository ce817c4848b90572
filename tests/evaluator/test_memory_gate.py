"""The memory gate: a retry runs alone, and what decides it is the exception's type."""

import time

import pytest


def test_memory_gate_lets_a_retry_in_alone():
    import threading
    from evaluator.memory_gate import MemoryGate
    gate, events = MemoryGate(), []
    inside = threading.Event()

    def sharer(name, hold):
        with gate.shared():
            events.append(f"{name} in")
            inside.set()
            time.sleep(hold)
            events.append(f"{name} out")

    first = threading.Thread(target=sharer, args=("a", 0.5))
    first.start()
    inside.wait(5)

    def loner():
        with gate.alone():
            events.append("alone in")
            time.sleep(0.3)
            events.append("alone out")
    retry = threading.Thread(target=loner)
    retry.start()
    time.sleep(0.1)
    late = threading.Thread(target=sharer, args=("b", 0.0))
    late.start()
    for t in (first, retry, late):
        t.join(10)
    assert events == ["a in", "a out", "alone in", "alone out", "b in", "b out"]


@pytest.mark.parametrize("raised, starved", [
    ("torch.OutOfMemoryError('any words at all')", True),
    ("RuntimeError('CUDA out of memory. ran out of GPU memory')", False),  # the words alone are not it
    ("IndexError('list index out of range')", False),
])
def test_running_out_of_gpu_memory_is_told_by_the_exceptions_type_not_its_text(evaluators, suite, raised, starved):
    """What decides a retry alone on a GPU (memory_gate.starved) is the type of what the candidate's
    process raised, carried by the protocol; here on the CPU, where the retry itself does not run."""
    from evaluator import memory_gate
    from tests.evaluator.test_gpu import gelu_candidate
    result = evaluators(static=False).evaluate(suite["Activation/gelu"], gelu_candidate(f"raise {raised}"))
    assert result.verdict.value == "RUNTIME_FAIL", result.reason
    assert result.out_of_gpu_memory is starved and memory_gate.starved(result) is starved
    assert "phases" in result.to_dict() and result.to_dict()["out_of_gpu_memory"] is starved


def _short_of_memory(task, times: int):
    """The task with a reference that runs out of GPU memory the first `times` calls, as the
    evaluator's own builds did on an 80 GB GPU beside eight evaluations."""
    import dataclasses

    import torch

    calls = [0]

    def reference(*args, **kwargs):
        calls[0] += 1
        if calls[0] <= times:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 512.00 MiB.")
        return task.reference(*args, **kwargs)
    return dataclasses.replace(task, reference=reference)


def test_the_evaluators_own_work_out_of_memory_is_done_again_alone(tmp_path, suite):
    from evaluator.evaluate import Evaluator
    from evaluator.settings import EvaluatorConfig
    task = suite["Activation/gelu"]
    with Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path)) as evaluator:
        result = evaluator.evaluate(_short_of_memory(task, times=1), task.solution_path.read_text())
    assert result.verdict.value == "CORRECT", result.reason
    assert result.phases.get("retried_alone") == 1.0


def test_out_of_memory_alone_too_is_the_evaluators_error_not_a_verdict(tmp_path, suite):
    import torch

    from evaluator.evaluate import Evaluator
    from evaluator.settings import EvaluatorConfig
    task = suite["Activation/gelu"]
    with Evaluator(EvaluatorConfig(device="cpu", cache_dir=tmp_path)) as evaluator:
        with pytest.raises(torch.OutOfMemoryError):
            evaluator.evaluate(_short_of_memory(task, times=1000), task.solution_path.read_text())
        assert evaluator.evaluate(task, task.solution_path.read_text()).verdict.value == "CORRECT"
