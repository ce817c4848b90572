"""The evaluator's side of the baseline process: one trusted child (sandboxed/baseline_process.py) that times
every task's PyTorch reference, with requests made together measured in one batch."""

from __future__ import annotations

import itertools
import os
import queue
import threading
from pathlib import Path

from evaluator import protocol
from evaluator.fork_server import ForkServer
from evaluator.result import TimingStats, Verdict
from evaluator.sandbox import ChildGone, Limits, Sandbox, with_last_line
from evaluator.task import Task
from evaluator.timing import stats

BASELINE_WALL_SECONDS = 600.0
QUEUE_POLL_SECONDS = 0.05
# A batch's timing inputs all sit on the GPU at once; past this many bytes of them the rest wait
# for the next batch.
BATCH_BYTES = 16 << 30
# A long-lived baseline process is replaced after this many measurements (its resource limits
# count its whole life).
RETIRE_AFTER_JOBS = 200


class Measurement:
    """A baseline asked of the baseline server: its timings (eager, and compiled if asked for) once measured."""

    def __init__(self, request: dict):
        self.request = request
        self._done = threading.Event()
        self._value: dict[str, TimingStats] | None = None
        self._error: ChildGone | None = None

    def result(self) -> dict[str, TimingStats]:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def finish(self, value: dict[str, TimingStats] | None = None, error: ChildGone | None = None) -> None:
        if not self._done.is_set():
            self._value, self._error = value, error
            self._done.set()


class BaselineServer:
    """One trusted child times every task's baseline. Requests made while it is busy (starting, or
    timing an earlier batch) go together in the next batch, timed under one exclusive hold of the
    GPU: one CUDA context instead of one per task, and one drain of the GPU's other users per batch
    instead of one per task. A child that dies fails its batch; the next batch gets a new one."""

    def __init__(self, server: ForkServer, device: str, lock_dir: Path | None, batch_bytes: int = BATCH_BYTES):
        self._server, self._batch_bytes = server, batch_bytes
        self._job = protocol.Job(task="baselines", device=device, lock_dir=str(lock_dir) if lock_dir else None)
        self._queue: queue.Queue[Measurement] = queue.Queue()
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="baseline server", daemon=True)
        self._started = threading.Lock()
        self._next_id = itertools.count()

    def measure(self, task: Task, set_files: list[Path], policy: dict, compile_too: bool) -> Measurement:
        measurement = Measurement({"id": next(self._next_id), "task_path": str(task.source_path),
                                   "sets": [str(p) for p in set_files], "policy": policy, "compile": compile_too})
        self._queue.put(measurement)
        with self._started:
            if not self._thread.is_alive() and not self._closed.is_set():
                self._thread.start()
        if self._closed.is_set():
            measurement.finish(error=ChildGone(Verdict.RUNTIME_FAIL, "the evaluator is closing"))
        return measurement

    def close(self) -> None:
        self._closed.set()
        with self._started:
            if self._thread.is_alive():
                self._thread.join()
        self._fail_queued(ChildGone(Verdict.RUNTIME_FAIL, "the evaluator is closing"))

    def _serve(self) -> None:
        box: Sandbox | None = None
        served = 0
        while not self._closed.is_set():
            try:
                if self._retired(box, served):
                    box, served = self._start(), 0
                    if box is None:
                        continue
                batch = self._next_batch()
                served += len(batch)
                if batch and not self._run_batch(box, batch):
                    box = _closed(box)
            except Exception as exc:  # noqa: BLE001 - the fork server failing, say: nobody may wait forever
                self._fail_queued(ChildGone(Verdict.RUNTIME_FAIL, f"baseline measurement failed: {exc}"))
                box = _closed(box)
        _closed(box)

    def _retired(self, box: Sandbox | None, served: int) -> bool:
        """Is there no live child to serve the next batch? A gone or long-serving one is closed."""
        if box is not None and self._server.exit_info(box.pid) is None and served < RETIRE_AFTER_JOBS:
            return False
        _closed(box)
        return True

    def _start(self) -> Sandbox | None:
        """A child with its CUDA context created, once there is work for it."""
        while self._queue.empty():
            if self._closed.wait(QUEUE_POLL_SECONDS):
                return None
        limits = Limits(step_seconds=BASELINE_WALL_SECONDS, total_seconds=BASELINE_WALL_SECONDS * 6,
                        memory_bytes=64 << 30, address_space=False)
        box = Sandbox(self._server, "baseline", self._job, {}, limits)
        try:
            while (message := box.recv(timeout=QUEUE_POLL_SECONDS)) is None:
                if self._closed.is_set():
                    box.close()
                    return None
        except ChildGone as gone:
            box.close()
            self._fail_queued(_described(gone))
            return None
        if not isinstance(_parsed(message), protocol.BaselineReady):
            box.close()
            self._fail_queued(ChildGone(Verdict.RUNTIME_FAIL, f"the baseline's process failed to start: {message}"))
            return None
        box.idle(True)
        return box

    def _next_batch(self) -> list[Measurement]:
        """Whatever is queued now, up to the batch's budget of input bytes (one request at least)."""
        try:
            batch = [self._queue.get(timeout=QUEUE_POLL_SECONDS)]
        except queue.Empty:
            return []
        size = _bytes_of(batch[0])
        while size < self._batch_bytes:
            try:
                measurement = self._queue.get_nowait()
            except queue.Empty:
                break
            batch.append(measurement)
            size += _bytes_of(measurement)
        return batch

    def _run_batch(self, box: Sandbox, batch: list[Measurement]) -> bool:
        """Every measurement of the batch finished; False if the child is gone."""
        waiting = {m.request["id"]: m for m in batch}
        box.idle(False)
        box.send(protocol.encode(protocol.MeasureBaselines(jobs=tuple(m.request for m in batch))))
        try:
            while waiting:
                message = box.recv(timeout=QUEUE_POLL_SECONDS)
                if self._closed.is_set():
                    raise ChildGone(Verdict.RUNTIME_FAIL, "the evaluator is closing")
                if message is not None:
                    _finish_one(waiting, _parsed(message))
        except ChildGone as gone:
            for measurement in waiting.values():
                measurement.finish(error=_described(gone))
            return False
        box.idle(True)
        return True

    def _fail_queued(self, error: ChildGone) -> None:
        while True:
            try:
                self._queue.get_nowait().finish(error=error)
            except queue.Empty:
                return


def _finish_one(waiting: dict[int, Measurement], reply: object) -> None:
    """The measurement a reply of the baseline's process is about, finished with it."""
    measurement = waiting.pop(getattr(reply, "id", None), None)
    if measurement is None:
        return
    if isinstance(reply, protocol.BaselineTimed):
        measurement.finish({label: stats(list(samples)) for label, samples
                            in (("eager", reply.eager_ms), ("compiled", reply.compiled_ms)) if samples})
    elif isinstance(reply, protocol.BaselineFailed):
        measurement.finish(error=ChildGone(Verdict.RUNTIME_FAIL, "baseline measurement failed: " + reply.reason,
                                           out_of_gpu_memory=reply.out_of_gpu_memory))


def _closed(box: Sandbox | None) -> None:
    if box is not None:
        box.close()


def _parsed(message: dict) -> object:
    """The baseline's message as its type; None where it is not one of the protocol's."""
    try:
        return protocol.parse_event(message)
    except protocol.ProtocolError:
        return None


def _described(gone: ChildGone) -> ChildGone:
    """Its last line says why (e.g. out of GPU memory)."""
    return ChildGone(gone.verdict, "baseline measurement failed: " + with_last_line(gone.reason, gone.output_tail),
                     gone.output_tail, gone.out_of_gpu_memory)


def _bytes_of(measurement: Measurement) -> int:
    total = 0
    for path in measurement.request["sets"]:
        try:
            total += os.path.getsize(path)
        except OSError:
            continue
    return total
