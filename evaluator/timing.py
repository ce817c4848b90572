"""GPU timing: warm-up, an L2 flush before every repetition, every stream counted, and
repetitions until the median is stable or a time cap is reached."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable

from evaluator.result import TimingStats


@dataclass(frozen=True)
class TimingPolicy:
    warmup_calls: int = 3
    min_reps: int = 30
    max_reps: int = 2000
    max_seconds: float = 3.0
    target_rel_se: float = 0.002
    guard_every: int = 8
    side_stream_margin_ms: float = 0.02
    side_stream_ratio: float = 1.2


def stats(samples_ms: list[float]) -> TimingStats:
    ordered = sorted(samples_ms)
    mean = statistics.fmean(ordered)
    spread = statistics.pstdev(ordered) if len(ordered) > 1 else 0.0
    return TimingStats(
        median_ms=statistics.median(ordered),
        p20_ms=_quantile(ordered, 0.2),
        p80_ms=_quantile(ordered, 0.8),
        cv=spread / mean if mean > 0 else 0.0,
        reps=len(ordered),
    )


def _quantile(ordered: list[float], q: float) -> float:
    if len(ordered) == 1:
        return ordered[0]
    pos = q * (len(ordered) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def median_is_stable(samples_ms: list[float], target_rel_se: float) -> bool:
    """Relative standard error of the median, from a robust spread (inter-quantile range)."""
    n = len(samples_ms)
    ordered = sorted(samples_ms)
    med = statistics.median(ordered)
    if med <= 0:
        return True
    sigma = (_quantile(ordered, 0.84) - _quantile(ordered, 0.16)) / 2
    return 1.2533 * sigma / (n ** 0.5) / med <= target_rel_se


@dataclass
class Measurement:
    samples_ms: list[float]
    side_stream: bool
    guarded_reps: int


def measure(call: Callable[[bool], None], prepare: Callable[[int], None], n_sets: int,
            policy: TimingPolicy = TimingPolicy(), after: Callable[[int], None] | None = None) -> Measurement:
    """Time `call` on the GPU.

    `prepare(k)` restores input set k into the working buffers and flushes L2 (untimed);
    `after(k)` runs after each repetition, untimed (to keep what the timed call produced);
    `call(guarded)` runs the function once; every `guard_every`-th repetition runs guarded
    (checked for host-side torch compute) and is left out of the statistics. The time of a
    repetition is the span of CUDA events on the current stream, unless work outside that
    stream made the device-wide synchronized wall time clearly longer, in which case the wall
    time is used for every repetition.
    """
    import torch

    perf_counter = time.perf_counter
    sync = torch.cuda.synchronize
    for i in range(policy.warmup_calls):
        prepare(i % n_sets)
        sync()
        call(False)
    sync()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    events, walls, guarded = [], [], 0
    began = perf_counter()
    rep = 0
    while rep < policy.max_reps:
        prepare(rep % n_sets)
        sync()
        guard = policy.guard_every > 0 and rep % policy.guard_every == policy.guard_every - 1
        t0 = perf_counter()
        start.record()
        call(guard)
        end.record()
        sync()
        wall = (perf_counter() - t0) * 1e3
        if after is not None:
            after(rep % n_sets)
        if guard:
            guarded += 1
        else:
            events.append(start.elapsed_time(end))
            walls.append(wall)
        rep += 1
        if len(events) >= policy.min_reps and len(events) % 10 == 0:
            if median_is_stable(events, policy.target_rel_se) or perf_counter() - began > policy.max_seconds:
                break
    event_med, wall_med = statistics.median(events), statistics.median(walls)
    side_stream = wall_med > max(event_med * policy.side_stream_ratio, event_med + policy.side_stream_margin_ms)
    return Measurement(walls if side_stream else events, side_stream, guarded)
