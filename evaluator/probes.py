"""Probe calls: timed calls on inputs the candidate has never seen.

The timing sets rotate, and they were judged during correctness, so a candidate could remember
their answers (keyed by a fingerprint of the inputs) and replay them instead of computing. After
the rotation the candidate runs once on each probe set (one: each costs a standard-size reference,
built while the candidate runs its cases): drawn with a seed this evaluator picked at random, in the same configuration as the timing sets (same shapes, dtypes and non-tensor
arguments), judged like every timed output. Nothing can have been cached for them, so if even the
fastest probe call takes REPLAY_RATIO times the rotation's median or more, the rotation's calls
were not computing what the probe calls computed.
"""

from __future__ import annotations

import secrets
from typing import Any

from evaluator.cases import Case, timing_cases
from evaluator.task import Inputs, Task, map_tensors

PROBES = 1
# A seed offset by a multiple of this keeps `seed % k` for every k up to 10: tasks that pick a
# configuration by `seed % len(cases)` get the timing set's configuration.
SEED_PERIOD = 2520
# Honest kernels' probe calls took 0.98-1.8x the rotation's median (99% of them at most 1.16x) for
# the 169 of the suite's reference solutions probed in one run on an H100, with the collector
# paused; benchmarks/RESULTS.md. A replay that saves less than two thirds of a call is not told
# from a first call on new values.
REPLAY_RATIO = 3.0
# Below this the launch itself dominates and there is nothing worth replaying.
PROBE_FLOOR_MS = 0.02


def draw_seeds(count: int = PROBES) -> tuple[int, ...]:
    """Offsets for one evaluator's probe seeds (the same for every task it scores, secret to candidates)."""
    return tuple(SEED_PERIOD * (1 + secrets.randbelow(1 << 20)) for _ in range(count))


def probe_cases(task: Task, offsets: tuple[int, ...]) -> list[Case]:
    first = timing_cases(task)[0]
    return [Case(first.size, first.dtype, first.mode, first.seed + offset) for offset in offsets]


def same_configuration(a: Inputs, b: Inputs) -> bool:
    """Same tensor shapes, dtypes and layout, and equal non-tensor arguments."""
    return _signature(a.args) == _signature(b.args) and _signature(a.kwargs) == _signature(b.kwargs)


def _signature(value: Any) -> str:
    return repr(map_tensors(value, lambda t: ("tensor", tuple(t.shape), t.dtype, tuple(t.stride()))))


def replay_reason(median_ms: float, probe_ms: list[float]) -> str | None:
    """Why the rotation's median cannot be what the candidate computes, or None."""
    if not probe_ms:
        return None
    fastest = min(probe_ms)
    if fastest < PROBE_FLOOR_MS or fastest < REPLAY_RATIO * median_ms:
        return None
    return (f"timed calls on repeated inputs took {median_ms:.4f} ms (median), but calls on inputs never seen "
            f"before took at least {fastest:.4f} ms ({fastest / median_ms:.1f}x): results cached or replayed "
            "across calls are not allowed")
