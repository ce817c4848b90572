"""Probe calls: seeds that keep a task's configuration, and the replay rule."""

import pytest

from evaluator import probes
from evaluator.cases import Case
from evaluator.loader import load_suite


def test_probe_seeds_are_secret_and_keep_every_tasks_configuration():
    offsets = probes.draw_seeds()
    assert len(set(offsets)) == len(offsets) and all(o % probes.SEED_PERIOD == 0 for o in offsets)
    assert probes.draw_seeds() != offsets, "each evaluator draws its own"
    kept = 0
    for task in load_suite().values():
        first, second = (task.make_inputs(s, "small", "standard", task.primary_dtype) for s in task.timing_seeds[:2])
        probe = task.make_inputs(task.timing_seeds[0] + offsets[0], "small", "standard", task.primary_dtype)
        # as alike as the timing sets are to each other (a masked select's output size follows its mask)
        assert probes.same_configuration(first, probe) == probes.same_configuration(first, second), task.id
        kept += probes.same_configuration(first, probe)
    assert kept > 150


def test_probe_cases_follow_the_first_timing_set():
    task = load_suite()["Activation/relu"]
    cases = probes.probe_cases(task, (2520, 5040))
    assert cases == [Case("standard", task.primary_dtype, "standard", task.timing_seeds[0] + o) for o in (2520, 5040)]


@pytest.mark.parametrize("median, probe_ms, replayed", [
    (1.0, [1.1, 0.95], False),
    (1.0, [1.9, 2.5, 2.9], False),  # a first call on new values can be slower: not a replay
    (0.001, [0.015, 0.019], False),  # below the floor: the launch dominates
    (0.1, [2.0, 2.4], True),
    (0.1, [2.0, 0.15], False),  # one probe as fast as the rotation: not shown
    (1.0, [], False),
])
def test_replay_needs_every_probe_far_slower_than_the_rotation(median, probe_ms, replayed):
    reason = probes.replay_reason(median, probe_ms)
    assert (reason is not None) is replayed
    if replayed:
        assert "inputs never seen before" in reason
