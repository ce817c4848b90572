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
        # where the timing sets share a configuration the probe shares it too; where they do not (a masked
        # select's output size follows its mask), a probe may still match by chance
        if probes.same_configuration(first, second):
            assert probes.same_configuration(first, probe), task.id
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


class _Timings:
    """Stands in for the candidate's process: each timing gives the next (median, probes)."""

    def __init__(self, *timings):
        self.timings = list(timings)
        self.probe_draws = []
        self.second_draw = [("second look",)]

    def timed_once(self, probe_sets):
        from evaluator.timing import stats
        median, probe_ms = self.timings.pop(0)
        self.probe_draws.append(probe_sets)
        return stats([median] * 5), "events", probe_ms


def _time_candidate(stand_in):
    from evaluator.stages.timing import time_with_second_look
    return time_with_second_look(stand_in.timed_once, [("first probe",)], lambda: stand_in.second_draw)


def test_a_probe_slowed_once_is_timed_again_on_other_new_inputs():
    stand_in = _Timings((0.1, [2.0]), (0.1, [0.11]))
    timed, _, probe_ms = _time_candidate(stand_in)
    assert probe_ms == [2.0, 0.11] and timed.median_ms == pytest.approx(0.1)
    assert stand_in.probe_draws == [[("first probe",)], [("second look",)]]


def test_a_replay_is_slow_on_both_draws_of_new_inputs():
    from evaluator.stage_failed import StageFailed
    stand_in = _Timings((0.1, [2.0]), (0.1, [2.2]))
    with pytest.raises(StageFailed) as failed:
        _time_candidate(stand_in)
    assert failed.value.verdict.value == "CONTRACT_FAIL" and "twice" in failed.value.reason


def test_no_second_look_where_the_probe_agrees():
    stand_in = _Timings((1.0, [1.2]))
    _, _, probe_ms = _time_candidate(stand_in)
    assert probe_ms == [1.2] and len(stand_in.probe_draws) == 1


def test_without_other_new_inputs_the_first_look_stands():
    from evaluator.stage_failed import StageFailed
    stand_in = _Timings((0.1, [2.0]), (0.1, [0.11]))
    stand_in.second_draw = []
    with pytest.raises(StageFailed) as failed:
        _time_candidate(stand_in)
    assert "inputs never seen before" in failed.value.reason and len(stand_in.probe_draws) == 1
