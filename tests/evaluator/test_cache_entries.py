"""Damaged cache entries are measured again, never trusted and never a crash."""

import json
import math

import pytest

from evaluator.baseline import BaselineCache
from evaluator.cache_entries import parse_entry, read_table
from evaluator.calibration import Peaks
from evaluator.result import TimingStats

GOOD = {"median_ms": 1.5, "p20_ms": 1.4, "p80_ms": 1.6, "cv": 0.01, "reps": 100}


@pytest.mark.parametrize("entry", [
    GOOD | {"extra": 1},                      # a field the schema does not have
    {k: v for k, v in GOOD.items() if k != "cv"},  # a field missing
    GOOD | {"median_ms": -1e-9},              # negative
    GOOD | {"median_ms": math.nan},           # not finite
    GOOD | {"median_ms": "0.0001"},           # not a number
    GOOD | {"reps": True},                    # a bool is not a count
    [1, 2, 3], "fast", None,
])
def test_invalid_entries_are_missing(entry):
    assert parse_entry(TimingStats, entry) is None


def test_valid_entries_parse():
    assert parse_entry(TimingStats, GOOD) == TimingStats(**GOOD)
    peaks = {"device": "H100", "copy_gbps": 3000.0, "tflops": {"float16": 700.0}}
    assert parse_entry(Peaks, peaks) == Peaks(**peaks)
    assert parse_entry(Peaks, peaks | {"tflops": {"float16": "x"}}) is None


def test_a_damaged_baseline_file_reads_as_empty_and_is_rewritten(tmp_path):
    path = tmp_path / "baselines.json"
    for damage in (b"[1, 2]", b"\xff\xfe not json", json.dumps({"k": GOOD | {"extra": 1}}).encode()):
        path.write_bytes(damage)
        cache = BaselineCache(path)
        assert cache.get("k") is None
    cache.put("k", TimingStats(**GOOD))
    assert cache.get("k") == TimingStats(**GOOD)
    assert read_table(path)["k"] == GOOD
