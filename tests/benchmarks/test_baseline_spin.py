"""The baseline spin benchmark (benchmarks/baseline_spin.py): both spin rules timed on the same
warm-up, and their totals."""

import pytest
import torch

from benchmarks import baseline_spin
from tests.benchmarks.test_baseline_stability import reference_on_the_stand_in_clock


def test_each_rule_times_the_reference_after_one_warm_up(suite, monkeypatch):
    from evaluator.sandboxed.baseline_process import BASELINE_FLOOR
    task = reference_on_the_stand_in_clock(suite, monkeypatch, 1e-3)
    row = baseline_spin.measure_task(task, torch.device("cpu"), baseline_spin.RULES[::-1])
    assert row["task"] == "Activation/gelu" and row["first_host_ms"] >= 0 and row["warm_host_ms"] >= 0
    for rule in baseline_spin.RULES:
        assert row[rule]["calls"] >= BASELINE_FLOOR and row[rule]["median_ms"] == pytest.approx(1.0)
    assert list(row)[-2:] == list(baseline_spin.RULES[::-1]), "timed in the order asked"


def test_the_summary_adds_each_rules_seconds_and_spreads_the_ratio_of_medians():
    rows = [{"task": t, "every call": {"seconds": e, "median_ms": m}, "warm calls": {"seconds": w, "median_ms": r * m}}
            for t, e, w, m, r in (("A", 0.6, 0.1, 1.0, 1.01), ("B", 0.3, 0.3, 2.0, 0.99), ("C", 1.0, 0.5, 4.0, 1.0))]
    summary = baseline_spin.summarize(rows)
    assert summary["tasks"] == 3 and summary["every call"] == 1.9 and summary["warm calls"] == 0.9
    assert summary["median_ratio"]["min"] == pytest.approx(0.99) and summary["median_ratio"]["max"] == pytest.approx(1.01)
    assert summary["median_ratio"]["median"] == pytest.approx(1.0)
