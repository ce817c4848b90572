"""Timing statistics, stopping rule, case plans and the GPU lock (CPU-testable parts)."""

import json
import multiprocessing
import os
import time

import pytest
import torch

from evaluator import gpu_lock
from evaluator.cases import plan, timing_cases
from evaluator.timing import median_is_stable, stats


def test_stats_quantiles_and_spread():
    s = stats([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (s.median_ms, s.p20_ms, s.p80_ms, s.reps) == (3.0, 1.8, 4.2, 5)
    assert s.cv == pytest.approx((2.0 ** 0.5) / 3.0)


def test_stability_rule():
    steady = [1.0 + 0.0001 * (i % 7) for i in range(100)]
    noisy = [1.0 + (0.5 if i % 2 else 0.0) for i in range(30)]
    assert median_is_stable(steady, 0.002)
    assert not median_is_stable(noisy, 0.002)


def test_case_plan_orders_stage1_standard_then_outliers(suite):
    task = suite["Activation/gelu"]
    cpu = plan(task, on_gpu=False)
    assert cpu[0].size == "small" and cpu[0].dtype == task.primary_dtype and cpu[0].mode == "standard"
    assert all(c.size != "standard" for c in cpu)
    modes = [c.mode for c in cpu]
    assert modes == sorted(modes, key=lambda m: m == "outlier"), "outlier cases come last"
    assert {c.dtype for c in cpu} == set(task.dtypes) and len(cpu) == len(set(cpu))
    gpu = plan(task, on_gpu=True)
    assert gpu[0] == timing_cases(task)[0]
    assert [c for c in gpu if c.size == "standard"] == timing_cases(task)


def _hold_exclusive(lock_dir, started, seconds):
    with gpu_lock.exclusive(lock_dir):
        started.set()
        time.sleep(seconds)


def test_exclusive_lock_keeps_shared_users_out(tmp_path):
    started = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_exclusive, args=(tmp_path, started, 1.0))
    holder.start()
    started.wait(10)
    began = time.monotonic()
    with gpu_lock.shared(tmp_path):
        waited = time.monotonic() - began
    holder.join()
    assert waited > 0.5
    with gpu_lock.shared(tmp_path), gpu_lock.shared(None):
        pass


def test_a_blocked_lock_user_reports_its_wait(tmp_path):
    heard = []
    started = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_exclusive, args=(tmp_path, started, 1.0))
    holder.start()
    started.wait(10)
    gpu_lock.report_waits(heard.append)
    try:
        with gpu_lock.shared(tmp_path):
            heard.append("held")
        with gpu_lock.shared(tmp_path):  # free now: no wait to report
            heard.append("held again")
    finally:
        gpu_lock.report_waits(None)
        holder.join()
    assert heard == [True, False, "held", "held again"]


def test_the_lock_log_records_every_hold_with_its_wait(tmp_path, monkeypatch):
    log = tmp_path / "locks.jsonl"
    monkeypatch.setenv("AGENTLOOP_LOCK_LOG", str(log))
    started = multiprocessing.Event()
    holder = multiprocessing.Process(target=_hold_exclusive, args=(tmp_path / "lock", started, 1.0))
    holder.start()
    started.wait(10)
    with gpu_lock.shared(tmp_path / "lock", "judging"):
        pass
    holder.join()
    holds = [json.loads(line) for line in log.read_text().splitlines()]
    assert sorted(h["mode"] for h in holds) == ["exclusive", "shared"]
    assert {h["mode"]: h["what"] for h in holds} == {"exclusive": "", "shared": "judging"}
    assert {h["pid"] for h in holds} == {holder.pid, os.getpid()}
    exclusive, shared = sorted(holds, key=lambda h: h["mode"])
    assert exclusive["released"] - exclusive["got"] > 0.5
    assert shared["got"] - shared["asked"] > 0.5 and shared["got"] >= exclusive["released"] - 0.05


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


def test_wall_time_replaces_events_only_when_work_clearly_escaped_the_stream():
    from evaluator.timing import Measurement, TimingPolicy
    policy = TimingPolicy()
    honest_under_load = Measurement(events_ms=[0.13] * 20, walls_ms=[0.13 + 0.3] * 20, guarded_reps=2)
    side_stream = Measurement(events_ms=[0.01] * 20, walls_ms=[0.9] * 20, guarded_reps=2)
    assert not honest_under_load.escaped_stream(policy)
    assert side_stream.escaped_stream(policy)


def test_timed_outputs_are_freed_at_once_not_left_to_the_garbage_collector(suite, monkeypatch):
    """Each repetition's output must die when the next one replaces it: kept alive by a reference
    cycle until the collector runs, 30 standard-size outputs took gigabytes of GPU memory. The GPU's
    events are replaced by stand-ins so that the loop runs on the CPU."""
    import gc

    import torch

    from evaluator import timing
    from evaluator.sandboxed import candidate_process as worker
    from evaluator.timing import TimingPolicy

    class Event:
        def __init__(self, **_):
            pass
    for name, value in {"_Event": Event, "_record": lambda e: None, "_elapsed": lambda a, b: 1.0,
                        "_synchronize": lambda: None, "_spin": None}.items():
        monkeypatch.setattr(timing, name, value)
    monkeypatch.setattr(worker, "_l2_flush_bytes", lambda device: 1 << 16)
    task = suite["Random/rand"]
    sets = [task.make_inputs(seed, "small", "standard", torch.float32) for seed in (0, 2)]
    sets = [worker.on_device(s, torch.device("cpu")) for s in sets]
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        timed = worker.time_function(task.reference, sets, task.mutates, None, frozenset(),
                                     TimingPolicy(min_reps=30, max_seconds=600), torch.device("cpu"),
                                     keep_outputs=False)
        gc.collect()
        in_cycles = [o for o in gc.garbage if isinstance(o, torch.Tensor)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert len(timed["samples_ms"]) >= 30
    assert in_cycles == []


class FakeGPU:
    """A clock and CUDA-event stand-ins: each call advances the clock by its duration, each spin by
    its cycles (one cycle per microsecond), and an event pair reads the clock between them."""

    def __init__(self):
        self.now = 0.0

    def install(self, monkeypatch):
        from evaluator import timing
        clock = self

        class Event:
            def __init__(self, enable_timing=True):
                self.at = 0.0

        monkeypatch.setattr(timing, "_perf_counter", lambda: clock.now)
        monkeypatch.setattr(timing, "_synchronize", lambda: None)
        monkeypatch.setattr(timing, "_Event", Event)
        monkeypatch.setattr(timing, "_record", lambda event: setattr(event, "at", clock.now))
        monkeypatch.setattr(timing, "_elapsed", lambda a, b: (b.at - a.at) * 1e3)
        monkeypatch.setattr(timing, "_spin", lambda cycles: setattr(clock, "now", clock.now + cycles * 1e-6))
        monkeypatch.setattr(timing, "_spin_cycles_per_ms", lambda: 1000.0)

    def calls(self, seconds: float, log: list):
        def call(guarded):
            log.append(guarded)
            self.now += seconds
        return call


@pytest.mark.parametrize("seconds", [2.0, 0.4])
def test_a_slow_call_is_timed_a_few_times_within_the_cap_not_min_reps_times(monkeypatch, seconds):
    """torch's CUDA LDL and eigen routines loop over the batch with a host sync per matrix: one
    eager call took seconds, and 3 warm-ups, 30 repetitions and a GPU spin of 1.5x the host time
    before each held the timing lock for minutes."""
    from evaluator.timing import MAX_SPIN_MS, MIN_REPS_FLOOR, TimingPolicy, measure
    gpu, log = FakeGPU(), []
    gpu.install(monkeypatch)
    policy = TimingPolicy(max_seconds=3.0)
    m = measure(gpu.calls(seconds, log), prepare=lambda k: None, n_sets=2, policy=policy)
    assert len(m.events_ms) >= MIN_REPS_FLOOR and m.guarded_reps >= 1
    assert all(abs(e - seconds * 1e3) < 1e-6 for e in m.events_ms)
    assert len(log) <= policy.warmup_calls + policy.guard_every
    spin_s = MAX_SPIN_MS / 1e3 * (len(log) - 2)
    assert gpu.now <= (len(log) * seconds + spin_s) * 1.001


def test_a_fast_call_still_gets_the_policys_minimum_repetitions(monkeypatch):
    from evaluator.timing import TimingPolicy, measure
    gpu, log = FakeGPU(), []
    gpu.install(monkeypatch)
    policy = TimingPolicy(max_seconds=3.0)
    m = measure(gpu.calls(1e-4, log), prepare=lambda k: None, n_sets=2, policy=policy)
    assert len(m.events_ms) >= policy.min_reps
    # all three warm-up calls ran, unguarded; then every eighth repetition is guarded
    assert not any(log[:policy.warmup_calls]) and log[policy.warmup_calls + policy.guard_every - 1] is True


def test_every_kernel_of_a_call_compiles_with_the_gpu_lock_let_go(tmp_path):
    """The first launch of a call compiled outside the lock before; a later kernel compiled while the
    call held it shared, and another candidate's timing waited that long."""
    import fcntl
    import os

    from evaluator.sandboxed.guards import LaunchRecorder

    recorder = LaunchRecorder(lock_dir=str(tmp_path), locking=True)
    seen = []

    def compile_probe():  # could a writer (timing) take the lock while this compiles?
        fd = os.open(tmp_path / "gpu.lock", os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
            seen.append("free")
        except BlockingIOError:
            seen.append("held")
        finally:
            os.close(fd)

    recorder.compile_unlocked(compile_probe)  # the call's first kernel
    recorder.compile_unlocked(compile_probe)  # its second: the lock was held since the first
    assert seen == ["free", "free"]
    assert recorder._held is not None, "the launch itself runs under the lock"
    recorder.release()


def _hold_exclusive_when_asked(lock_dir, asked, got):
    asked.wait(10)
    with gpu_lock.exclusive(lock_dir):
        got.set()


def test_a_yielding_shared_hold_lets_a_waiting_writer_go_first(tmp_path):
    """A writer asking while a long shared hold runs gets the lock at the holder's next yield point,
    not when the hold ends; the holder then holds the lock again."""
    import threading

    asked, got = multiprocessing.Event(), multiprocessing.Event()
    writer = multiprocessing.Process(target=_hold_exclusive_when_asked, args=(tmp_path, asked, got))
    writer.start()
    with gpu_lock.shared(tmp_path, "judging", yielding=True):
        asked.set()
        time.sleep(0.5)  # the writer is in the turnstile now, waiting for this hold
        assert not got.is_set()
        gpu_lock.yield_to_writers()
        assert got.wait(5), "the writer got the lock while this hold yielded"
        blocked = threading.Event()

        def try_exclusive():  # this hold is back: another writer must wait for it
            with gpu_lock.exclusive(tmp_path):
                blocked.set()
        other = threading.Thread(target=try_exclusive, daemon=True)
        other.start()
        assert not blocked.wait(0.5)
    assert blocked.wait(5)
    writer.join()


def test_without_a_waiting_writer_a_yield_keeps_the_hold(tmp_path, monkeypatch):
    log = tmp_path / "locks.jsonl"
    monkeypatch.setenv("AGENTLOOP_LOCK_LOG", str(log))
    with gpu_lock.shared(tmp_path / "lock", "judging", yielding=True):
        gpu_lock.yield_to_writers()
    gpu_lock.yield_to_writers()  # no hold: nothing to do
    assert len(log.read_text().splitlines()) == 1
