"""The early baseline starts once the timing inputs are built, keeps what it measured even if
nobody asks for it, and starts nothing once cancelled; the baseline server fails requests it
cannot serve instead of leaving anyone waiting. (The measurement itself needs a GPU: test_gpu.py
times baselines in batches and the reference solutions against them.)"""

import time
from pathlib import Path

import pytest
import torch

from evaluator.baseline import EarlyBaseline
from evaluator.baseline_server import BaselineServer
from evaluator.fork_server import ForkServer
from evaluator.result import TimingStats, Verdict
from evaluator.sandbox import ChildGone

STATS = TimingStats(median_ms=1.0, p20_ms=0.9, p80_ms=1.1, cv=0.01, reps=10)


class Answer:
    """Stands in for the baseline server's measurement: answers after `seconds`, or fails."""

    def __init__(self, seconds: float = 0.0, fails: bool = False):
        self.seconds, self.fails = seconds, fails

    def result(self):
        time.sleep(self.seconds)
        if self.fails:
            raise ChildGone(Verdict.RUNTIME_FAIL, "baseline measurement failed: out of memory")
        return {"eager": STATS}


def inputs_after(polls: int):
    count = {"n": 0}

    def ready():
        count["n"] += 1
        return [Path("set0.pt")] if count["n"] > polls else None
    return ready


def test_it_starts_once_the_inputs_are_built_and_keeps_the_measurement():
    started, kept = [], []
    answer = Answer()

    def start(files):
        started.append(files)
        return answer

    early = EarlyBaseline(inputs_after(3), start, kept.append)
    assert early.result() == {"eager": STATS}
    assert started == [[Path("set0.pt")]] and kept == [{"eager": STATS}]


def test_a_failed_measurement_is_the_baselines_failure():
    kept = []
    early = EarlyBaseline(inputs_after(0), lambda files: Answer(fails=True), kept.append)
    with pytest.raises(ChildGone, match="out of memory"):
        early.result()
    assert kept == []


def test_cancelled_before_its_inputs_it_starts_nothing():
    started = []
    early = EarlyBaseline(lambda: None, lambda files: started.append(files), lambda m: None)
    time.sleep(0.2)
    early.cancel()
    with pytest.raises(ChildGone, match="cancelled"):
        early.result()
    assert started == []


def test_a_measurement_under_way_when_cancelled_still_finishes_and_is_kept():
    kept = []
    early = EarlyBaseline(inputs_after(0), lambda files: Answer(seconds=0.5), kept.append)
    time.sleep(0.2)
    early.cancel()
    assert early.result() == {"eager": STATS} and kept == [{"eager": STATS}]


def test_a_baseline_process_that_cannot_start_fails_every_measurement_with_its_reason(suite):
    """No CUDA device 99 anywhere: the child dies at start; each request fails with the child's
    last words instead of waiting forever, and a later request tries a fresh child."""
    server = ForkServer(interpret=True)
    baselines = BaselineServer(server, "cuda:99", None)
    task = suite["Activation/gelu"]
    try:
        first = [baselines.measure(task, [], {}, False) for _ in range(2)]
        for measurement in first:
            with pytest.raises(ChildGone, match="baseline measurement failed.*(CUDA|cuda|device)"):
                measurement.result()
        with pytest.raises(ChildGone, match="baseline measurement failed"):
            baselines.measure(task, [], {}, False).result()
    finally:
        baselines.close()
        server.close()


def test_once_closed_it_fails_requests_at_once(suite):
    server = ForkServer(interpret=True)
    baselines = BaselineServer(server, "cuda:99", None)
    baselines.close()
    with pytest.raises(ChildGone, match="closing"):
        baselines.measure(suite["Activation/gelu"], [], {}, False).result()
    server.close()


def test_a_batch_takes_what_is_queued_up_to_its_budget_of_input_bytes(suite, tmp_path):
    """Requests queued while the baseline process is busy go in one batch, until their timing
    inputs reach the batch's budget; the rest wait for the next batch."""
    files = []
    for k in range(3):
        files.append(tmp_path / f"set{k}.pt")
        files[-1].write_bytes(b"x" * 600)
    server = ForkServer(interpret=True)
    baselines = BaselineServer(server, "cuda:99", None, batch_bytes=1000)
    baselines._closed.set()  # no child is started: only the batching is looked at
    try:
        task = suite["Activation/gelu"]
        for path in files:
            baselines.measure(task, [path], {}, False)
        first, second = baselines._next_batch(), baselines._next_batch()
        assert [m.request["sets"] for m in first] == [[str(files[0])], [str(files[1])]]
        assert [m.request["sets"] for m in second] == [[str(files[2])]]
        assert baselines._next_batch() == []
    finally:
        server.close()


class ScriptedChild:
    """Stands in for the baseline's process: records what it is sent, answers from a script."""

    def __init__(self, answers):
        self.answers, self.sent, self.idle_states = list(answers), [], []

    def send(self, message):
        self.sent.append(message)

    def recv(self, timeout=None):
        return self.answers.pop(0) if self.answers else None

    def idle(self, idle):
        self.idle_states.append(idle)


def test_a_batch_is_asked_and_answered_in_the_protocols_messages(suite):
    from evaluator import protocol
    from evaluator.baseline_server import Measurement
    server = ForkServer(interpret=True)
    baselines = BaselineServer(server, "cuda:99", None)
    try:
        batch = [Measurement({"id": k, "task_path": "t.py", "sets": []}) for k in (1, 2, 3)]
        child = ScriptedChild([
            protocol.encode(protocol.BaselineTimed(id=2, eager_ms=(1.0, 1.0, 1.0), compiled_ms=(0.5, 0.5, 0.5))),
            {"event": "baseline", "id": 3, "eager_ms": [float("inf")]},  # no finite time: read as nothing
            protocol.encode(protocol.BaselineFailed(id=1, reason="out of memory", out_of_gpu_memory=True)),
            protocol.encode(protocol.BaselineFailed(id=3, reason="the reference raised")),
        ])
        assert baselines._run_batch(child, batch)
        assert protocol.parse_command(child.sent[0]) == protocol.MeasureBaselines(jobs=tuple(m.request for m in batch))
        timed = batch[1].result()
        assert timed["eager"].median_ms == 1.0 and timed["compiled"].median_ms == 0.5
        for measurement, why, starved in ((batch[0], "out of memory", True), (batch[2], "the reference raised", False)):
            with pytest.raises(ChildGone, match=why) as failed:
                measurement.result()
            assert failed.value.out_of_gpu_memory is starved
        assert child.idle_states == [False, True]
    finally:
        baselines.close()
        server.close()


def test_the_baseline_process_answers_a_request_it_cannot_prepare_in_the_protocols_message(tmp_path):
    from evaluator import protocol
    from evaluator.sandboxed import baseline_process
    child = ScriptedChild([])
    request = {"id": 7, "task_path": str(tmp_path / "missing.py"), "sets": []}
    assert baseline_process.measure_batch(child, [request], torch.device("cpu"), None)
    (reply,) = [protocol.parse_event(m) for m in child.sent]
    assert isinstance(reply, protocol.BaselineFailed) and reply.id == 7 and "missing.py" in reply.reason


def test_the_baseline_process_times_a_reference_that_returns_a_named_tuple(suite, monkeypatch):
    """torch.linalg.qr, eig, lu and svd return named tuples (tuple subclasses), which a candidate may
    not return; the reference is trusted, and its baseline failed (no speedup for 4 tasks) while the
    candidates' rule applied to it. The GPU's events are replaced by stand-ins."""
    from evaluator.cases import timing_cases
    from evaluator.sandboxed import baseline_process
    from evaluator.task import on_device
    from tests.evaluator.gpu_stand_ins import steady_events

    steady_events(monkeypatch)
    task = suite["LinearAlgebra/qr"]
    case = timing_cases(task)[0]
    inputs = on_device(task.make_inputs(case.seed, "small", case.mode, case.dtype), torch.device("cpu"))
    assert type(task.reference(*inputs.args, **inputs.kwargs)) is not tuple
    job = baseline_process.Job({"id": 1}, mutates=tuple(task.mutates), sets=[inputs],
                               functions={"eager": task.reference})
    assert baseline_process._attempt(job, lambda: baseline_process.time_reference(job, "eager", torch.device("cpu")))
    assert job.failure is None and len(job.samples["eager"]) >= baseline_process.BASELINE_FLOOR


def test_a_timing_that_asks_during_the_baselines_warm_up_goes_between_its_two_calls(suite, monkeypatch, tmp_path):
    """A slow reference's warm-up calls (seconds each: LDL, eig) run under the shared lock; a
    timing that asks during the first gets the GPU before the second, not after both (a real
    lock, the writer a process of its own)."""
    import dataclasses
    import multiprocessing

    from evaluator import wire
    from evaluator.sandboxed import baseline_process
    from tests.evaluator.gpu_stand_ins import steady_events
    from tests.evaluator.test_gpu_lock import _hold_exclusive_when_asked

    steady_events(monkeypatch)  # the GPU's synchronization, on the CPU
    lock_dir = tmp_path / "lock"
    asked, got = multiprocessing.Event(), multiprocessing.Event()
    writer = multiprocessing.Process(target=_hold_exclusive_when_asked, args=(lock_dir, asked, got))
    writer.start()
    gelu, writer_done_before_call = suite["Activation/gelu"], []

    def reference(*args, **kwargs):
        if not writer_done_before_call:
            asked.set()
            time.sleep(0.5)  # the writer waits for this hold now
        writer_done_before_call.append(got.is_set())
        return gelu.reference(*args, **kwargs)

    monkeypatch.setattr(baseline_process, "load_task", lambda path: dataclasses.replace(gelu, reference=reference))
    wire.save(gelu.make_inputs(0, "small", "standard", torch.float32), tmp_path / "set0.pt")
    job = baseline_process.Job({"id": 1, "task_path": "gelu.py", "sets": [str(tmp_path / "set0.pt")]})
    try:
        assert baseline_process._prepare(job, torch.device("cpu"), str(lock_dir))
    finally:
        writer.join(10)
    assert job.failure is None and writer_done_before_call == [False, True]
