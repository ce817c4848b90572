"""The slow references' baseline stability benchmark (benchmarks/baseline_stability.py): what a floor
of k timed calls would have given, from each measurement's first k calls."""

import dataclasses
import statistics

import pytest
import torch

from benchmarks import baseline_stability


def test_the_spread_for_each_floor_comes_from_each_measurements_first_calls():
    measurements = [[10.0, 11.0, 12.0, 13.0, 14.0], [10.0, 10.0, 10.0, 10.0, 20.0, 9.0], [12.0] * 5]
    row = baseline_stability.summarize("T", measurements, [1.0, 2.0, 3.0])
    assert sorted(row["cv_by_floor"]) == [1, 2, 3, 4, 5] and row["calls"] == [5, 6, 5]
    assert row["cv_by_floor"][1] == pytest.approx(baseline_stability.cv([10.0, 10.0, 12.0]))
    assert row["cv_by_floor"][5] == pytest.approx(baseline_stability.cv([12.0, 10.0, 12.0]))
    assert row["cv_all"] == pytest.approx(baseline_stability.cv([12.0, 10.0, 12.0]))
    assert row["median_ms"] == statistics.median([x for m in measurements for x in m])
    assert "| T | 12.0 | 5-6 | 2.0 |" in baseline_stability.table([row])


def reference_on_the_stand_in_clock(suite, monkeypatch, seconds: float):
    """Activation/gelu on small inputs, each reference call advancing a stand-in clock by `seconds`
    (the clock moves with nothing else, so a loaded machine changes nothing)."""
    from tests.evaluator.gpu_stand_ins import FakeGPU

    gpu, log = FakeGPU(), []
    gpu.install(monkeypatch)
    call = gpu.calls(seconds, log)
    gelu = suite["Activation/gelu"]

    def reference(*args, **kwargs):
        call(False)
        return gelu.reference(*args, **kwargs)
    return dataclasses.replace(gelu, reference=reference,
                               make_inputs=lambda seed, size, mode, dtype: gelu.make_inputs(seed, "small", mode, dtype))


def test_a_task_is_timed_as_the_baseline_process_times_it(suite, monkeypatch):
    from evaluator import timing

    small = reference_on_the_stand_in_clock(suite, monkeypatch, 1e-3)
    row = baseline_stability.measure_task(small, repeats=2, device=torch.device("cpu"))
    assert row["task"] == "Activation/gelu"
    assert len(row["seconds"]) == 2  # one entry per measurement; their values are the host's, not checked
    assert row["median_ms"] == pytest.approx(1.0)  # the stand-in clock's, not a measured time
    assert row["calls"] == [timing.TimingPolicy().min_reps] * 2  # a fast, steady call: the policy's minimum
    assert row["cv_all"] == pytest.approx(0.0, abs=1e-9) and max(row["cv_by_floor"]) == min(row["calls"])


@pytest.mark.parametrize("floor", [None, 5])
def test_a_slow_reference_is_timed_its_floor_of_calls(suite, monkeypatch, floor):
    """A reference call of 2 s (on a stand-in clock) is timed the baseline process's floor of times,
    or `--floor` times, so that the data for a higher floor can still be gathered."""
    from evaluator.sandboxed.baseline_process import BASELINE_FLOOR

    slow = reference_on_the_stand_in_clock(suite, monkeypatch, 2.0)
    row = baseline_stability.measure_task(slow, repeats=2, device=torch.device("cpu"), floor=floor)
    assert row["calls"] == [floor or BASELINE_FLOOR] * 2
    assert row["median_ms"] == pytest.approx(2000.0)  # the stand-in clock's, not a measured time
