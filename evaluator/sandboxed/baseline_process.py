"""A trusted child that times tasks' PyTorch references (eager, and optionally torch.compile) with
the same protocol as candidates. It never runs candidate code.

It serves batches for as long as the evaluator keeps it: one CUDA context for every task's
baseline, and one exclusive hold of the GPU per batch, each hold making every other GPU user wait
for the GPU to drain.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from evaluator import cuda_waits, gpu_lock, protocol, timing, wire
from evaluator.loader import load_task
from evaluator.sandboxed.candidate_process import log_gpu_memory, time_function
from evaluator.sandboxed.channel import Channel
from evaluator.sandboxed.failures import classify, describe_failure
from evaluator.task import Inputs, on_device
from evaluator.timing import TimingPolicy, WarmUp

WARM_UP_CALLS = 2  # each reference's, before its exclusive hold
# Timed calls of a reference however slow its call: the spread between whole measurements of the
# slowest references (0.3-2 s a call) was no larger with 3 calls than with 5 (benchmarks/RESULTS.md).
BASELINE_FLOOR = 3
FAULT_ELSEWHERE = "not measured: another task's baseline in the same batch left the GPU unusable (a CUDA fault)"


@dataclass
class Job:
    """One task's request in a batch, once its timing inputs are on the GPU."""

    request: dict[str, Any]
    mutates: tuple[int, ...] = ()
    sets: list[Inputs] = field(default_factory=list)
    functions: dict[str, Callable] = field(default_factory=dict)
    samples: dict[str, list[float]] = field(default_factory=dict)
    warmed: dict[str, WarmUp] = field(default_factory=dict)
    failure: str | None = None
    out_of_gpu_memory: bool = False


def serve(scratch: Path) -> None:
    job = protocol.read_job(scratch / "job.json")
    channel = Channel(scratch / "ctl.sock")
    channel.report_lock_waits()
    device = torch.device(job.device)
    cuda_waits.wait_by(device, cuda_waits.SCHED_SPIN)  # as candidates wait while they are timed
    torch.cuda.set_device(device)
    torch.empty(1, device=device)  # the CUDA context, before the first batch is asked for
    channel.send(protocol.encode(protocol.BaselineReady()))
    while True:
        try:
            command = protocol.parse_command(channel.recv())
        except (EOFError, protocol.ProtocolError):
            return
        if not isinstance(command, protocol.MeasureBaselines):
            return
        if not measure_batch(channel, list(command.jobs), device, job.lock_dir):
            return  # a CUDA fault: this process is unusable, the evaluator starts another


def measure_batch(channel: Channel, requests: list[dict[str, Any]], device: torch.device, lock_dir: str | None) -> bool:
    """Each request's timings, every one of a kind under a single exclusive hold; a reply per request.
    False if the process can no longer use the GPU."""
    jobs = [Job(request) for request in requests]
    usable = True
    for job in jobs:
        usable = usable and _prepare(job, device, lock_dir)
    for label in ("eager", "compiled"):
        usable = usable and _time_all(jobs, label, device, lock_dir)
    for job in jobs:
        channel.send(protocol.encode(_reply(job)))
    jobs.clear()
    torch.cuda.empty_cache()  # the batch's inputs and outputs; candidates share this GPU
    log_gpu_memory("timing", device)
    return usable


def _time_all(jobs: list[Job], label: str, device: torch.device, lock_dir: str | None) -> bool:
    """Every job's `label` function timed under one exclusive hold; False if the GPU became unusable."""
    ready = [job for job in jobs if label in job.functions and job.failure is None]
    if label == "compiled":  # compiling takes seconds of CPU, which must not hold the lock up
        if not _all_attempted(ready, lambda job: warm_up(job, "compiled")):
            return False
        ready = [job for job in ready if job.failure is None]
    if not ready:
        return True
    with gpu_lock.exclusive(lock_dir, "baseline timing"):
        return _all_attempted(ready, lambda job: time_reference(job, label, device))


def _all_attempted(jobs: list[Job], step: Callable[[Job], None]) -> bool:
    """`step` of each job in turn, until one leaves the GPU unusable (then False)."""
    return all(_attempt(job, lambda job=job: step(job)) for job in jobs)


def _reply(job: Job) -> protocol.BaselineTimed | protocol.BaselineFailed:
    if job.failure is None and job.functions and set(job.samples) == set(job.functions):
        samples = {f"{label}_ms": tuple(v) for label, v in job.samples.items()}
        return protocol.BaselineTimed(id=job.request["id"], **samples)
    return protocol.BaselineFailed(id=job.request["id"], reason=job.failure or FAULT_ELSEWHERE,
                                   out_of_gpu_memory=job.out_of_gpu_memory)


def _prepare(job: Job, device: torch.device, lock_dir: str | None) -> bool:
    """The task's timing inputs on the GPU and its reference warmed up (libraries loaded)."""
    def prepare() -> None:
        task = load_task(Path(job.request["task_path"]))
        job.mutates = tuple(task.mutates)
        files = [wire.load(path) for path in job.request["sets"]]
        job.functions = {"eager": task.reference}
        if job.request.get("compile"):
            job.functions["compiled"] = torch.compile(task.reference)
        # no GPU traffic while another process is timed
        with gpu_lock.shared(lock_dir, "baseline inputs"):
            job.sets = [on_device(inputs, device) for inputs in files]
            if device.type == "cuda":
                torch.cuda.synchronize(device)
        # a reference call may take seconds: a timing that asks meanwhile goes between two calls
        with gpu_lock.shared(lock_dir, "baseline warm-up", yielding=True):
            warm_up(job, "eager", between=gpu_lock.yield_to_writers)
    return _attempt(job, prepare)


def warm_up(job: Job, label: str, between: Callable[[], None] | None = None) -> None:
    """The calls that load the reference's libraries and kernels, timed as the timing loop's own
    warm-up times them, so that the exclusive hold makes none; `between()` between two of them."""
    fn, first = job.functions[label], job.sets[0]
    policy = dataclasses.replace(baseline_policy(job.request.get("policy", {})), warmup_calls=WARM_UP_CALLS)
    job.warmed[label] = timing.warm_up(lambda guarded: fn(*first.args, **first.kwargs), lambda k: None, 1, policy,
                                       between=between)


def baseline_policy(requested: dict[str, Any]) -> TimingPolicy:
    """The evaluator's policy, for a reference under the exclusive hold that makes every other GPU
    user wait: no guarded repetitions (they look for a candidate's host-side torch work and are left
    out of the statistics: here they would be calls timed and thrown away), and a call of seconds
    timed BASELINE_FLOOR times unless the request says otherwise. Its warm-up calls are made before
    the hold (`warm_up`)."""
    return dataclasses.replace(TimingPolicy(**{"min_reps_floor": BASELINE_FLOOR, **requested}), guard_every=0)


def time_reference(job: Job, label: str, device: torch.device) -> None:
    policy = baseline_policy(job.request.get("policy", {}))
    timed = time_function(job.functions[label], job.sets, job.mutates, None, frozenset(), policy, device,
                          keep_outputs=False, returns_checked=False, warmed=job.warmed.get(label))
    job.samples[label] = timed["samples_ms"]


def _attempt(job: Job, step: Callable[[], None]) -> bool:
    """Runs one step of a job; a failure is the job's. False if it left the GPU unusable."""
    try:
        step()
    except Exception as exc:  # noqa: BLE001 - a reference that fails (out of memory, say) fails its own job
        verdict, fatal = classify(exc)
        job.failure = describe_failure(exc, verdict)
        job.out_of_gpu_memory = isinstance(exc, torch.OutOfMemoryError)
        return not fatal
    return True


def main(scratch: str) -> None:
    os.chdir(scratch)
    with contextlib.suppress(BrokenPipeError):
        serve(Path(scratch))
