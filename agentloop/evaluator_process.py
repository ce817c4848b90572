"""Where a device's evaluations run: its Evaluator in this process (one device), or in a process of
its own (several devices), so that no device's reference building, judging and result handling
waits for another's in one interpreter. Both serve `submit(task, code)` with a future of the result;
a result crosses the process boundary once, as EvalResult JSON, as it does from a Ray actor.
The evaluator process is trusted code: candidates still run only in its sandboxed children."""

from __future__ import annotations

import itertools
import multiprocessing
import os
import signal
import threading
import traceback
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from evaluator.result import EvalResult
from evaluator.task import Task

CLOSE_WAIT_S = 120.0
START_WAIT_S = 600.0
READY = -1  # the request number of the evaluator process's first word: its Evaluator is built
ABANDON = "abandon"  # to the evaluator process: end the evaluations in flight, then stop


class EvaluatorProcessLost(RuntimeError):
    """The evaluator process died (killed, or out of host memory) with evaluations in flight."""


def task_from_file(task_id: str, source_path: str) -> Task:
    """The task again, in another process, from the same file this one loaded it from."""
    from evaluator.kernelbench_formats import KERNELBENCH_CATEGORY, load_problem
    from evaluator.loader import load_task

    loader = load_problem if task_id.startswith(KERNELBENCH_CATEGORY + "/") else load_task
    task = loader(Path(source_path))
    if task.id != task_id:
        raise ValueError(f"{source_path} holds {task.id}, not {task_id}")
    return task


def sleep_in_waits(device: str) -> None:
    """In a process of the evaluator's own, before its CUDA context is made: its threads (building
    references, judging) sleep in their waits for the GPU rather than spin a core each. Nothing is
    timed in this process. Not done where the Evaluator shares the caller's process and context."""
    import torch

    from evaluator import cuda_waits

    cuda_waits.wait_by(torch.device(device), cuda_waits.SCHED_BLOCKING_SYNC)


def _new_evaluator(device: str, options: dict[str, Any]):
    from evaluator.evaluate import Evaluator, EvaluatorConfig

    return Evaluator(EvaluatorConfig(device=device, **options))


class InProcessEvaluator:
    """The device's Evaluator here, `workers` evaluations at once on threads."""

    def __init__(self, device: str, workers: int, options: dict[str, Any]):
        self.device = device
        self.evaluator = _new_evaluator(device, options)
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evaluate")

    def wait_ready(self) -> None:
        """Built already."""

    def submit(self, task: Task, code: str) -> Future:
        return self.pool.submit(self.evaluator.evaluate, task, code)

    def close(self, abandon: bool = False) -> None:
        """After the evaluations in flight, or (`abandon`) at once: theirs end in EvaluationAbandoned."""
        if abandon:
            self.evaluator.abandon()
        self.pool.shutdown(wait=True, cancel_futures=abandon)
        self.evaluator.close()


class _Link:
    """One evaluator process and the evaluations asked of it; a restart makes a new link, so a dead
    process's failures never reach evaluations asked of its successor."""

    def __init__(self, device: str, workers: int, options: dict[str, Any], cpu_threads: int | None = None):
        self.device = device
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=serve, args=(child, device, workers, options, cpu_threads),
                                       name=f"evaluator {device}", daemon=True)
        self.process.start()
        child.close()
        self.lock = threading.Lock()
        self.pending: dict[int, Future] = {}
        self.ids = itertools.count()
        self.ready = threading.Event()
        self.start_error: str | None = None
        self.reader = threading.Thread(target=self._read, daemon=True, name=f"results from {device}")
        self.reader.start()

    def submit(self, task_id: str, source_path: str, code: str) -> Future:
        future: Future = Future()
        with self.lock:
            request = next(self.ids)
            self.pending[request] = future
            try:
                self.conn.send((request, task_id, source_path, code))
            except (BrokenPipeError, OSError):
                self.pending.pop(request)
                future.set_exception(EvaluatorProcessLost(f"the evaluator process for {self.device} is gone"))
        return future

    def _read(self) -> None:
        while True:
            try:
                request, payload, error = self.conn.recv()
            except (EOFError, OSError):
                break
            if request == READY:
                self.start_error = error
                self.ready.set()
                continue
            with self.lock:
                future = self.pending.pop(request, None)
            if future is None:
                continue
            if error is not None:
                future.set_exception(RuntimeError(f"the evaluator for {self.device} failed:\n{error}"))
            else:
                future.set_result(EvalResult.from_json(payload))
        self.process.join(timeout=5)
        self.ready.set()
        with self.lock:
            pending, self.pending = self.pending, {}
        for future in pending.values():
            future.set_exception(EvaluatorProcessLost(f"the evaluator process for {self.device} exited "
                                                      f"(status {self.process.exitcode}) during the evaluation"))

    def wait_ready(self) -> None:
        """Until the process's Evaluator is built (its fork server started); its failure to start
        is raised here."""
        if not self.ready.wait(START_WAIT_S):
            raise RuntimeError(f"the evaluator process for {self.device} did not start in {START_WAIT_S:.0f} s")
        if self.start_error is not None or not self.process.is_alive():
            raise RuntimeError(f"the evaluator process for {self.device} could not start: "
                               f"{self.start_error or f'it exited with status {self.process.exitcode}'}")

    def close(self, abandon: bool = False) -> None:
        try:
            self.conn.send(ABANDON if abandon else None)
        except (BrokenPipeError, OSError):
            pass
        self.process.join(timeout=CLOSE_WAIT_S)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=10)
        self.conn.close()
        self.reader.join(timeout=10)


class EvaluatorProcess:
    """The device's Evaluator in a child process, `workers` evaluations at once on its threads. If
    the process dies, a new one takes its place and the evaluations it had are asked again, once."""

    def __init__(self, device: str, workers: int, options: dict[str, Any], cpu_threads: int | None = None):
        """`cpu_threads`: torch's CPU threads in the process (its default: one per core)."""
        self.device, self.workers, self.options, self.cpu_threads = device, workers, options, cpu_threads
        self._replacing = threading.Lock()
        self._closed = False
        self.link = _Link(device, workers, options, cpu_threads)
        self.restarts = 0

    @property
    def process(self):
        return self.link.process

    def wait_ready(self) -> None:
        self.link.wait_ready()

    def submit(self, task: Task, code: str) -> Future:
        if task.source_path is None:
            raise ValueError(f"{task.id}: a task without a source file cannot be sent to an evaluator process")
        outer: Future = Future()
        outer.set_running_or_notify_cancel()  # sent at once: a caller that stops waiting cannot cancel it
        self._send(task, code, outer, retries=1)
        return outer

    def _send(self, task: Task, code: str, outer: Future, retries: int) -> None:
        link = self.link
        inner = link.submit(task.id, str(task.source_path), code)

        def done(finished: Future) -> None:
            error = finished.exception()
            if isinstance(error, EvaluatorProcessLost) and retries and not self._closed:
                self._replace(link)
                self._send(task, code, outer, retries - 1)
            elif error is not None:
                outer.set_exception(error)
            else:
                outer.set_result(finished.result())

        inner.add_done_callback(done)

    def _replace(self, dead: _Link) -> None:
        """One new process for a dead one, however many of its evaluations ask."""
        with self._replacing:
            if self.link is dead:
                self.link = _Link(self.device, self.workers, self.options, self.cpu_threads)
                self.restarts += 1
                dead.conn.close()

    def close(self, abandon: bool = False) -> None:
        self._closed = True
        self.link.close(abandon)


def serve(conn, device: str, workers: int, options: dict[str, Any], cpu_threads: int | None = None) -> None:
    """The evaluator process: evaluations asked for on `conn`, answered there as they finish."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the orchestrator's to handle
    if cpu_threads:
        import torch
        torch.set_num_threads(cpu_threads)
    if device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    sleep_in_waits(device)
    try:
        evaluator = _new_evaluator(device, options)
    except Exception as exc:  # noqa: BLE001 - told to the orchestrator, which raises it
        conn.send((READY, None, f"{type(exc).__name__}: {exc}"))
        conn.close()
        return
    conn.send((READY, None, None))
    tasks: dict[tuple[str, str], Task] = {}
    tasks_lock, send_lock = threading.Lock(), threading.Lock()

    def answer(request: int, payload: str | None, error: str | None) -> None:
        with send_lock:
            conn.send((request, payload, error))

    def evaluate(request: int, task_id: str, source_path: str, code: str) -> None:
        try:
            with tasks_lock:
                key = (task_id, source_path)
                if key not in tasks:
                    tasks[key] = task_from_file(task_id, source_path)
            answer(request, evaluator.evaluate(tasks[key], code).to_json(), None)
        except Exception:  # noqa: BLE001 - the evaluator's own failure goes back to the caller
            answer(request, None, traceback.format_exc())

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evaluate") as pool:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            if message == ABANDON:
                evaluator.abandon()
                pool.shutdown(wait=True, cancel_futures=True)
                break
            pool.submit(evaluate, *message)
    evaluator.close()
    conn.close()
