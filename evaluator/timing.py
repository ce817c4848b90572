"""GPU timing: warm-up, an L2 flush before every repetition, every stream counted, and
repetitions until the median is stable or a time cap is reached."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from typing import Callable

from evaluator.result import TimingStats

# Bound when the worker starts, before any candidate is imported: a candidate that patches the
# clock, CUDA events or synchronisation later cannot reach the timer's own references.
_perf_counter = time.perf_counter
try:
    import torch as _torch

    _Event = _torch.cuda.Event
    _record = _torch.cuda.Event.record
    _elapsed = _torch.cuda.Event.elapsed_time
    _synchronize = _torch.cuda.synchronize
    _spin = getattr(_torch.cuda, "_sleep", None)
except (ImportError, AttributeError):  # pragma: no cover - torch is a dependency
    _Event = _record = _elapsed = _synchronize = _spin = None


# However slow the call (torch routines that loop over a batch with a host sync per matrix take
# seconds), this many repetitions are timed, and one guarded; the cap on time applies above them.
MIN_REPS_FLOOR = 5  # a policy's default floor


@dataclass(frozen=True)
class TimingPolicy:
    warmup_calls: int = 3
    min_reps: int = 30
    max_reps: int = 2000
    max_seconds: float = 3.0
    target_rel_se: float = 0.002
    guard_every: int = 8
    # Wall time this much longer than the events means work escaped the launching stream even
    # when no foreign-stream launch was seen (the margin absorbs host wake-up latency under load).
    side_stream_margin_ms: float = 0.5
    side_stream_ratio: float = 3.0
    min_reps_floor: int = MIN_REPS_FLOOR


# The GPU spins ahead of each call for at most this long: a call whose host side takes longer is
# host-bound, and spinning 1.5x its host time would only double the timing's wall time.
MAX_SPIN_MS = 20.0


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


@dataclass(frozen=True)
class WarmUp:
    """What warm-up calls found (ms): the longest host time of one warm call (every call but the
    first, which loads the call's libraries and kernels; the first where it is the only one), and
    the time of the last whole call, the GPU finishing it."""

    host_ms: float
    rep_ms: float


@dataclass
class Measurement:
    events_ms: list[float]
    walls_ms: list[float]
    guarded_reps: int
    spin: int = 0  # GPU spin cycles ahead of each call

    def escaped_stream(self, policy: "TimingPolicy") -> bool:
        event, wall = statistics.median(self.events_ms), statistics.median(self.walls_ms)
        return wall > max(event * policy.side_stream_ratio, event + policy.side_stream_margin_ms)


def _spin_cycles_per_ms() -> float:
    """How many cycles of torch.cuda._sleep keep the GPU busy for a millisecond."""
    start, end = _Event(enable_timing=True), _Event(enable_timing=True)
    _spin(1000)
    _record(start)
    _spin(1_000_000)
    _record(end)
    _synchronize()
    return 1_000_000 / max(_elapsed(start, end), 1e-3)


def warm_up(call, prepare, n_sets: int, policy: TimingPolicy, after=None, between=None) -> WarmUp:
    """Warm-up calls: the longest host time of one warm call (launching it; see `WarmUp`), and the
    time of the last whole repetition (restoring inputs, the call, the GPU finishing it). When the
    second call or a later one still takes more than half the time cap, the call is slow rather
    than cold, and warm-up ends there. `between()` runs between two calls, the GPU's work finished.

    The first call's host time is left out because the GPU spins 1.5 times the host time before
    every timed call: a first call that loads kernels or a library's handles (tens of ms) made it
    spin its 20 ms cap before every timed call of 22 of 97 eager references on an H200, most of
    which launch in under a millisecond (benchmarks/baseline_spin.py)."""
    perf_counter, sync = _perf_counter, _synchronize
    hosts_ms: list[float] = []
    rep_ms = 0.0
    for i in range(policy.warmup_calls):
        began = perf_counter()
        prepare(i % n_sets)
        sync()
        t0 = perf_counter()
        call(False)
        hosts_ms.append((perf_counter() - t0) * 1e3)
        sync()
        if after is not None:
            after(i % n_sets)
        rep_ms = (perf_counter() - began) * 1e3
        if i >= 1 and rep_ms > policy.max_seconds * 1e3 / 2:
            break
        if between is not None and i < policy.warmup_calls - 1:
            between()
    return WarmUp(max(hosts_ms[1:] or hosts_ms or [0.0]), rep_ms)


def measure(call: Callable[[bool], None], prepare: Callable[[int], None], n_sets: int,
            policy: TimingPolicy = TimingPolicy(), after: Callable[[int], None] | None = None,
            warmed: WarmUp | None = None) -> Measurement:
    """Time `call` on the GPU.

    `prepare(k)` restores input set k into the working buffers and flushes L2 (untimed);
    `after(k)` runs after each repetition, untimed (to keep what the timed call produced);
    `call(guarded)` runs the function once; every `guard_every`-th repetition runs guarded
    (checked for host-side torch compute) and is left out of the statistics.

    Before each call the GPU spins for longer than the host needs to launch the call, so the
    events measure the call's GPU work rather than Python launch overhead (as in steady state,
    where launches queue ahead). The events only see the launching stream; the device-wide
    synchronized wall time, minus the spin, sees every stream. Both are returned; the caller
    decides which stands (see `Measurement.escaped_stream`).

    `warmed`, from warm-up calls the caller made just before, replaces the policy's warm-up calls.
    """
    perf_counter, sync = _perf_counter, _synchronize
    warmed = warmed or warm_up(call, prepare, n_sets, policy, after)
    spin = _spin_cycles(warmed.host_ms)
    min_reps = _min_reps(policy, warmed.rep_ms)
    marks = tuple(_Event(enable_timing=True) for _ in range(3))
    events, walls, guarded = [], [], 0
    began = perf_counter()
    rep = 0
    while rep < policy.max_reps:
        prepare(rep % n_sets)
        sync()
        guard = _is_guarded(policy, rep)
        event, wall = _timed(call, guard, spin, marks)
        if after is not None:
            after(rep % n_sets)
        if guard:
            guarded += 1
        else:
            events.append(event)
            walls.append(wall)
        rep += 1
        if _reps_done(policy, events, guarded, min_reps) and _settled(policy, events, perf_counter() - began):
            break
    return Measurement(events, walls, guarded, spin)


def _spin_cycles(host_ms: float) -> int:
    """GPU spin ahead of each call: longer than the host takes to launch it, at most MAX_SPIN_MS."""
    return int(min(1.5 * host_ms + 0.05, MAX_SPIN_MS) * _spin_cycles_per_ms()) if _spin else 0


def _min_reps(policy: TimingPolicy, rep_ms: float) -> int:
    """As many repetitions as fit the time cap, between the floor and the policy's minimum."""
    return max(policy.min_reps_floor, min(policy.min_reps, int(policy.max_seconds * 1e3 / max(rep_ms, 1e-3))))


def _is_guarded(policy: TimingPolicy, rep: int) -> bool:
    return policy.guard_every > 0 and rep % policy.guard_every == policy.guard_every - 1


def _reps_done(policy: TimingPolicy, events: list[float], guarded: int, min_reps: int) -> bool:
    """The minimum of timed repetitions, and a guarded one where any are guarded."""
    return len(events) >= min_reps and bool(guarded or policy.guard_every <= 0)


def _settled(policy: TimingPolicy, events: list[float], elapsed_s: float) -> bool:
    """The time cap reached or, checked every tenth sample, the median stable."""
    return elapsed_s > policy.max_seconds or (len(events) % 10 == 0 and median_is_stable(events, policy.target_rel_se))


def time_once(call: Callable[[bool], None], prepare: Callable[[], None], spin: int) -> tuple[float, float]:
    """One unguarded call timed as `measure` times each repetition: (events ms, wall ms)."""
    prepare()
    _synchronize()
    return _timed(call, False, spin, tuple(_Event(enable_timing=True) for _ in range(3)))


def _timed(call: Callable[[bool], None], guarded: bool, spin: int, marks: tuple) -> tuple[float, float]:
    """One call after the GPU spins `spin` cycles: (its events ms, its wall ms less the spin)."""
    pre, start, end = marks
    t0 = _perf_counter()
    _record(pre)
    if spin:
        _spin(spin)
    _record(start)
    call(guarded)
    _record(end)
    _synchronize()
    return _elapsed(start, end), (_perf_counter() - t0) * 1e3 - _elapsed(pre, start)
