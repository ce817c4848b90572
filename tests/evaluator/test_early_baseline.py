"""The early baseline starts once the timing inputs are built, keeps what it measured even if
nobody asks for it, and starts nothing once cancelled. (The measurement itself needs a GPU:
test_gpu.py's reference solutions are timed against it.)"""

import threading
import time
from pathlib import Path

import pytest

from evaluator.baseline import EarlyBaseline
from evaluator.result import TimingStats
from evaluator.sandbox import ChildGone

STATS = TimingStats(median_ms=1.0, p20_ms=0.9, p80_ms=1.1, cv=0.01, reps=10)


class Measurement:
    """Stands in for a baseline child: answers after `seconds`, or fails."""

    def __init__(self, seconds: float = 0.0, fails: bool = False):
        self.seconds, self.fails, self.cancelled = seconds, fails, threading.Event()

    def result(self):
        if self.cancelled.wait(self.seconds):
            raise OSError("closed")
        if self.fails:
            raise ChildGone("RUNTIME_FAIL", "baseline measurement failed: out of memory")
        return {"eager": STATS}

    def cancel(self):
        self.cancelled.set()


def inputs_after(polls: int):
    count = {"n": 0}

    def ready():
        count["n"] += 1
        return [Path("set0.pt")] if count["n"] > polls else None
    return ready


def test_it_starts_once_the_inputs_are_built_and_keeps_the_measurement():
    started, kept = [], []
    measurement = Measurement()

    def start(files):
        started.append(files)
        return measurement

    early = EarlyBaseline(inputs_after(3), start, kept.append)
    assert early.result() == {"eager": STATS}
    assert started == [[Path("set0.pt")]] and kept == [{"eager": STATS}]


def test_a_failed_measurement_is_the_baselines_failure():
    kept = []
    early = EarlyBaseline(inputs_after(0), lambda files: Measurement(fails=True), kept.append)
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


def test_cancelling_stops_a_measurement_under_way():
    measurement = Measurement(seconds=60)
    early = EarlyBaseline(inputs_after(0), lambda files: measurement, lambda m: None)
    time.sleep(0.2)
    began = time.monotonic()
    early.cancel()
    with pytest.raises(ChildGone):
        early.result()
    assert measurement.cancelled.is_set() and time.monotonic() - began < 10
