"""Timing statistics, the stability rule and the measuring loop (on stand-ins for the GPU's clock and events)."""

import pytest

from evaluator.timing import median_is_stable, stats
from tests.evaluator.gpu_stand_ins import FakeGPU


def test_stats_quantiles_and_spread():
    s = stats([1.0, 2.0, 3.0, 4.0, 5.0])
    assert (s.median_ms, s.p20_ms, s.p80_ms, s.reps) == (3.0, 1.8, 4.2, 5)
    assert s.cv == pytest.approx((2.0 ** 0.5) / 3.0)


def test_stability_rule():
    steady = [1.0 + 0.0001 * (i % 7) for i in range(100)]
    noisy = [1.0 + (0.5 if i % 2 else 0.0) for i in range(30)]
    assert median_is_stable(steady, 0.002)
    assert not median_is_stable(noisy, 0.002)


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

    from evaluator.sandboxed import candidate_process as worker
    from evaluator.timing import TimingPolicy
    from tests.evaluator.gpu_stand_ins import steady_events

    steady_events(monkeypatch)
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


def test_the_probe_call_runs_with_the_collector_off_and_timing_makes_no_collection(suite, monkeypatch):
    """What runs under the exclusive hold makes no full collection (0.1 s and more with torch
    imported, every other GPU user waiting); the one probe call still cannot meet a collection pause."""
    import gc

    import torch

    from evaluator.sandboxed import candidate_process as worker
    from evaluator.timing import TimingPolicy
    from tests.evaluator.gpu_stand_ins import steady_events

    steady_events(monkeypatch)
    collections, collector_on = [], []
    monkeypatch.setattr(gc, "collect", lambda *args: collections.append(args) or 0)
    task = suite["Activation/gelu"]

    def candidate(*args, **kwargs):
        collector_on.append(gc.isenabled())
        return task.reference(*args, **kwargs)
    sets = [worker.on_device(task.make_inputs(seed, "small", "standard", torch.float32), torch.device("cpu"))
            for seed in (0, 1, 7)]
    timed = worker.time_function(candidate, sets[:2], task.mutates, None, frozenset(),
                                 TimingPolicy(min_reps=5, max_seconds=600), torch.device("cpu"),
                                 keep_outputs=False, probes=sets[2:])
    assert collections == []
    assert len(timed["probe_ms"]) == 1
    assert collector_on[-1] is False and all(collector_on[:-1]) and gc.isenabled()


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


def test_the_spin_before_each_call_follows_the_warm_calls_not_the_first_one(monkeypatch):
    """The GPU spins 1.5x a call's host time before each timed call. A first call that loads the
    kernels and a library's handles takes tens of ms of host time once; counted, it made a call
    that launches in 0.1 ms spin the 20 ms cap before every repetition."""
    from evaluator.timing import MAX_SPIN_MS, TimingPolicy, measure
    gpu, log = FakeGPU(), []
    gpu.install(monkeypatch)
    warm = gpu.calls(1e-4, log)

    def call(guarded):
        gpu.now += 0.05 if not log else 0.0
        warm(guarded)
    m = measure(call, prepare=lambda k: None, n_sets=2, policy=TimingPolicy(max_seconds=3.0))
    cycles_per_ms = 1000.0
    assert m.spin == int((1.5 * 0.1 + 0.05) * cycles_per_ms) < MAX_SPIN_MS * cycles_per_ms


def test_a_single_warm_up_call_still_sets_the_spin(monkeypatch):
    from evaluator.timing import TimingPolicy, measure
    gpu, log = FakeGPU(), []
    gpu.install(monkeypatch)
    m = measure(gpu.calls(2e-3, log), prepare=lambda k: None, n_sets=2,
                policy=TimingPolicy(max_seconds=3.0, warmup_calls=1))
    assert m.spin == int((1.5 * 2.0 + 0.05) * 1000.0)


@pytest.mark.parametrize("seconds", [2.0, 1e-4])
def test_a_reference_is_timed_without_thrown_away_repetitions_under_its_exclusive_hold(monkeypatch, seconds):
    """The eager baseline holds the GPU exclusively: guarded repetitions (which check a candidate and
    are left out of the statistics) and warm-up calls would only make every other GPU user wait
    longer, and so would timing a call of seconds 5 times. Its warm-up calls are made before the hold
    and stand in for the timing loop's. A call of 2 s took 10 calls (20 s) with the candidates' policy."""
    import torch

    from evaluator.sandboxed import baseline_process
    from evaluator.sandboxed.baseline_process import BASELINE_FLOOR, WARM_UP_CALLS
    from evaluator.task import Inputs
    from evaluator.timing import MIN_REPS_FLOOR
    gpu, log = FakeGPU(), []
    gpu.install(monkeypatch)
    call = gpu.calls(seconds, log)

    def reference(x):
        call(False)
        return x + 1
    job = baseline_process.Job({"id": 1, "policy": {"max_seconds": 3.0}}, sets=[Inputs((torch.ones(4),), {})] * 2,
                               functions={"eager": reference})
    baseline_process.warm_up(job, "eager")
    assert len(log) == WARM_UP_CALLS
    baseline_process.time_reference(job, "eager", torch.device("cpu"))
    under_hold, samples = len(log) - WARM_UP_CALLS, job.samples["eager"]
    assert under_hold == len(samples), "every call under the hold is a timed one"
    if seconds > 1:
        assert under_hold == BASELINE_FLOOR < MIN_REPS_FLOOR
    else:
        assert under_hold >= baseline_process.baseline_policy({}).min_reps
