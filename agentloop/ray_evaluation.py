"""Evaluations on a Ray cluster. Each worker is a Ray actor that holds one warm Evaluator (and its
fork server) and one GPU, or one CPU slot in interpreter mode; the orchestrator stays on the driver.
A GPU actor runs several evaluations at once (threads: compilation and correctness checks overlap
while the evaluator's GPU lock keeps timing exclusive), as the local executor does.
An evaluation whose actor dies (a lost node, a killed process) is retried on another actor; Ray
restarts the dead one. Results come back as EvalResult JSON, so a verdict does not depend on where
it was computed. Ray is an optional extra: nothing here is imported unless the executor is chosen.
"""

from __future__ import annotations

import asyncio
import collections
import os
from pathlib import Path
from typing import Any, Mapping

from evaluator.result import EvalResult
from evaluator.task import Task

RETRIES = 3
GPU_SLOTS = 4  # evaluations at once per GPU actor
WAIT_FOR_WORKER_S = 900.0


class RayUnavailable(RuntimeError):
    """Ray is not installed or the cluster cannot be reached."""


class EvaluatorActor:
    """One evaluator on one device of whichever node Ray placed it on."""

    def __init__(self, device: str, options: dict[str, Any]):
        import os

        import torch

        from agentloop.evaluator_process import sleep_in_waits
        from evaluator.evaluate import Evaluator, EvaluatorConfig

        if device == "cpu":
            os.environ.setdefault("TRITON_INTERPRET", "1")
        self.device = "cuda:0" if device == "cuda" and torch.cuda.is_available() else "cpu"
        sleep_in_waits(self.device)
        self.evaluator = Evaluator(EvaluatorConfig(device=self.device, **options))
        self.tasks: dict[str, Task] = {}

    def pid(self) -> int:
        import os

        return os.getpid()

    def evaluate(self, task_id: str, source_path: str, code: str) -> str:
        if task_id not in self.tasks:
            from agentloop.evaluator_process import task_from_file

            self.tasks[task_id] = task_from_file(task_id, source_path)
        return self.evaluator.evaluate(self.tasks[task_id], code).to_json()

    def abandon(self) -> None:
        self.evaluator.abandon()

    def close(self) -> None:
        self.evaluator.close()


class RayEvaluations:
    """The `Evaluates` interface over a pool of EvaluatorActors."""

    def __init__(self, address: str | None = None, device: str = "auto", workers: int = 0, timing: bool = True,
                 compile_baseline: bool = False, profile: bool = False, memcheck: bool = True, ir_store: bool = True,
                 memcheck_start: str = "spawn"):
        ray = _joined_ray(address)
        self.ray = ray
        on_gpu, count = _actor_placement(ray.cluster_resources(), device, workers)
        self.slots = (workers or GPU_SLOTS) if on_gpu else 1
        # a thread beyond the evaluations' slots: abandon() is answered while every slot is busy
        actor = ray.remote(num_gpus=1 if on_gpu else 0, num_cpus=1, max_restarts=-1,
                           max_concurrency=self.slots + 1)(EvaluatorActor)
        options = {"timing": timing, "compile_baseline": compile_baseline, "profile": profile, "memcheck": memcheck,
                   "ir_store": ir_store, "memcheck_start": memcheck_start}
        actor_device = "cuda" if on_gpu else "cpu"
        self.actors = [actor.remote(actor_device, options) for _ in range(count)]
        self.devices = [actor_device] * count
        self.idle: asyncio.Queue | None = None
        self.in_flight: collections.Counter = collections.Counter()  # evaluations per actor index
        self.retried = 0
        self.closed = False  # then a lost worker is not waited for: nothing is asked again

    @property
    def busy(self) -> set[int]:
        """Actors with an evaluation in flight, by index."""
        return {index for index, count in self.in_flight.items() if count}

    def _pool(self) -> asyncio.Queue:
        if self.idle is None:
            self.idle = asyncio.Queue()
            for _ in range(self.slots):
                for index in range(len(self.actors)):
                    self.idle.put_nowait(index)
        return self.idle

    def pids(self) -> list[int]:
        """Each actor's worker process (for monitoring, and for tests that kill one)."""
        return self.ray.get([actor.pid.remote() for actor in self.actors])

    async def evaluate(self, task: Task, code: str) -> EvalResult:
        if task.source_path is None:
            raise ValueError(f"{task.id}: a task without a source file cannot be sent to a Ray worker")
        pool, failures = self._pool(), []
        for _ in range(RETRIES + 1):
            if self.closed:
                raise RuntimeError(f"{task.id}: the Ray executor was closed during the evaluation")
            try:
                index = await asyncio.wait_for(pool.get(), timeout=WAIT_FOR_WORKER_S)
            except asyncio.TimeoutError:
                raise RuntimeError(f"{task.id}: no Ray worker answered for {WAIT_FOR_WORKER_S:.0f} s") from None
            self.in_flight[index] += 1
            healthy = True
            try:
                payload = await self.actors[index].evaluate.remote(task.id, str(task.source_path), code)
                return EvalResult.from_json(payload)
            except self.ray.exceptions.RayError as exc:
                if isinstance(exc, self.ray.exceptions.RayTaskError):
                    raise  # the evaluator itself failed: not a lost worker
                failures.append(type(exc).__name__)
                self.retried += 1
                healthy = False
            finally:
                self.in_flight[index] -= 1
                if healthy:
                    pool.put_nowait(index)
                else:
                    asyncio.ensure_future(self._rejoin(index))
        raise RuntimeError(f"{task.id}: lost the Ray worker {len(failures)} times ({', '.join(failures)})")

    async def _rejoin(self, index: int) -> None:
        """A lost actor's slot comes back to the pool once Ray has restarted it and it answers."""
        while True:
            try:
                await self.actors[index].pid.remote()
                break
            except self.ray.exceptions.RayError:
                await asyncio.sleep(1.0)
        self._pool().put_nowait(index)

    def close(self, abandon: bool = False) -> None:
        self.closed = True
        if abandon:
            try:
                self.ray.get([actor.abandon.remote() for actor in self.actors], timeout=30)
            except Exception:  # noqa: BLE001 - a dead actor has nothing in flight
                pass
        for actor in self.actors:
            try:
                self.ray.get(actor.close.remote(), timeout=30)
            except Exception:  # noqa: BLE001 - a dead actor has nothing to close
                pass
            self.ray.kill(actor)


def _joined_ray(address: str | None):
    """Ray, connected to the cluster at `address` (None: a new local instance) unless it already is."""
    ray = _import_ray()
    if not ray.is_initialized():
        try:
            ray.init(address=address, include_dashboard=False, log_to_driver=False,
                     runtime_env={"env_vars": {"PYTHONPATH": worker_pythonpath(os.environ)}})
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise RayUnavailable(f"cannot reach the Ray cluster at {address or 'a new local one'}: {exc}") from exc
    return ray


def worker_pythonpath(environ: Mapping[str, str]) -> str:
    """The workers' import path: this checkout first, then the driver's own PYTHONPATH (packages
    installed beside the interpreter's, such as a target folder, stay importable in the actors)."""
    checkout = str(Path(__file__).resolve().parents[1])
    return os.pathsep.join([checkout, *filter(None, environ.get("PYTHONPATH", "").split(os.pathsep))])


def _actor_placement(resources: dict[str, float], device: str, workers: int) -> tuple[bool, int]:
    """Whether the actors run on GPUs, and how many there are: one per GPU, else `workers` (0: one
    per CPU of the cluster)."""
    gpus = int(resources.get("GPU", 0))
    if device == "cuda" and not gpus:
        raise RayUnavailable("--device cuda: the Ray cluster has no GPU")
    on_gpu = gpus > 0 and device in ("auto", "cuda")
    return on_gpu, gpus if on_gpu else (workers or max(1, int(resources.get("CPU", 1))))


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RayUnavailable("the Ray executor needs Ray: pip install 'agentloop-kernels[ray]'") from None
    return ray
