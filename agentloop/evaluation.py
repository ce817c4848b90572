"""The evaluation queue: one Evaluator (and fork server) per device, evaluations run in worker
threads so the event loop keeps serving LLM calls while kernels compile and run; with several
devices, each device's Evaluator in a process of its own (evaluator_process.py)."""

from __future__ import annotations

import asyncio
import os
from typing import Protocol

import torch

from agentloop.evaluator_process import EvaluatorProcess, InProcessEvaluator
from evaluator.result import EvalResult
from evaluator.task import Task


class Evaluates(Protocol):
    async def evaluate(self, task: Task, code: str) -> EvalResult: ...

    def close(self, abandon: bool = False) -> None:
        """Once the evaluations in flight are done; with `abandon`, at once (their results are not wanted)."""


def visible_devices(device: str) -> list[str]:
    """The devices `device` names: auto (every visible GPU, else the CPU), cuda (every visible GPU),
    one device (cpu, cuda:N), or several GPUs (cuda:0,2)."""
    if device == "auto":
        return [f"cuda:{i}" for i in range(torch.cuda.device_count())] or ["cpu"]
    if device == "cuda":
        return [f"cuda:{i}" for i in range(torch.cuda.device_count())]
    if device.startswith("cuda:") and "," in device:
        indices = device.removeprefix("cuda:").split(",")
        if not all(i.strip().isdigit() for i in indices):
            raise ValueError(f"{device!r}: GPUs are named by number, as cuda:0,1")
        return list(dict.fromkeys(f"cuda:{int(i)}" for i in indices))
    return [device]


class FreeSlots:
    """Every device's free evaluation slots in one queue: the next evaluation takes the first slot to
    free up, on whichever device, so none waits behind a busy device while another has room. The
    devices take turns in the queue's first places, so the first evaluations spread over them all."""

    def __init__(self, devices: int, per_device: int):
        self.order = [index for _ in range(per_device) for index in range(devices)]
        self._queue: asyncio.Queue | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def queue(self) -> asyncio.Queue:
        """The queue of the running event loop (a queue belongs to one loop; a later `asyncio.run`
        gets a full one)."""
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            self._queue, self._loop = asyncio.Queue(), loop
            for index in self.order:
                self._queue.put_nowait(index)
        return self._queue


class EvaluationQueue:
    """`workers` concurrent evaluations per device; each device has its own GPU lock for timing.
    One device: its Evaluator in this process. Several (or `processes=True`): each device's
    Evaluator in a process of its own, so no device waits for another's work in one interpreter."""

    def __init__(self, device: str = "auto", workers: int = 0, timing: bool = True,
                 compile_baseline: bool = False, profile: bool = False, memcheck: bool = True,
                 processes: bool | None = None, ir_store: bool = True, memcheck_start: str = "spawn"):
        devices = visible_devices(device)
        if not devices:
            raise ValueError(f"no device matches {device!r}")
        cores = os.cpu_count() or 2
        # CPU evaluations are one interpreter process each; GPU ones also compile on the CPU cores.
        per_device = workers or (cores if devices == ["cpu"] else max(1, min(8, cores // (2 * len(devices)))))
        options = {"timing": timing, "compile_baseline": compile_baseline, "profile": profile, "memcheck": memcheck,
                   "ir_store": ir_store, "memcheck_start": memcheck_start}
        apart = len(devices) > 1 if processes is None else processes
        if apart:
            # building inputs and judging outputs on the host: the cores shared among every
            # device's evaluations, rather than a thread per core in each of them
            threads = max(1, cores // (len(devices) * per_device))
            self.backends = [EvaluatorProcess(d, per_device, options, threads) for d in devices]
        else:
            self.backends = [InProcessEvaluator(d, per_device, options) for d in devices]
        try:
            for each in self.backends:  # evaluator processes start side by side
                each.wait_ready()
        except RuntimeError:
            self.close()
            raise
        self.free = FreeSlots(len(devices), per_device)
        self.devices = devices

    async def evaluate(self, task: Task, code: str) -> EvalResult:
        free = self.free.queue()
        index = await free.get()
        try:
            return await asyncio.wrap_future(self.backends[index].submit(task, code))
        finally:
            free.put_nowait(index)

    def close(self, abandon: bool = False) -> None:
        for backend in self.backends:
            backend.close(abandon)


def evaluations_for(evaluation) -> Evaluates:
    """The executor an experiment's `evaluation` section asks for."""
    options = dict(timing=evaluation.timing, compile_baseline=evaluation.compile_baseline, profile=evaluation.profile,
                   memcheck=evaluation.memcheck)
    if evaluation.executor == "ray":
        from agentloop.ray_evaluation import RayEvaluations

        return RayEvaluations(evaluation.ray_address, evaluation.device, evaluation.workers, **options)
    return EvaluationQueue(evaluation.device, evaluation.workers, **options)
