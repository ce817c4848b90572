"""Eager PyTorch (and optionally torch.compile) timings of a task's reference, measured in a
trusted child with the candidates' protocol and cached per device and software versions."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import Callable

from evaluator.result import TimingStats
from evaluator.sandbox import ChildGone, ForkServer, Limits, Sandbox, with_last_line
from evaluator.task import Task
from evaluator.timing import stats

BASELINE_WALL_SECONDS = 600.0
INPUTS_POLL_SECONDS = 0.05


def cache_key(task: Task, dtype_name: str, seeds: tuple[int, ...], device_key: str, compiled: bool) -> str:
    source = task.source_path.read_bytes() if task.source_path else b""
    digest = hashlib.sha256(source).hexdigest()[:16]
    return f"{task.id}|{dtype_name}|standard|seeds {seeds}|{'compiled' if compiled else 'eager'}|{device_key}|{digest}"


class BaselineCache:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> dict:
        try:
            return json.loads(self.path.read_text())
        except (OSError, json.JSONDecodeError):
            return {}

    def get(self, key: str) -> TimingStats | None:
        entry = self._read().get(key)
        return TimingStats(**entry) if entry else None

    def put(self, key: str, value: TimingStats) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            table = self._read()
            table[key] = vars(value)
            tmp = self.path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(table, indent=1))
            tmp.replace(self.path)


class PendingBaseline:
    """A baseline child: it creates its CUDA context and loads the timing sets, then waits its turn
    for the exclusive GPU lock."""

    def __init__(self, server: ForkServer, task: Task, set_files: list[Path], device: str, lock_dir: Path | None,
                 policy: dict, compile_too: bool):
        job = {"task": task.id, "task_path": str(task.source_path), "sets": [str(p) for p in set_files],
               "device": device, "lock_dir": str(lock_dir) if lock_dir else None, "policy": policy,
               "compile": compile_too}
        limits = Limits(step_seconds=BASELINE_WALL_SECONDS, total_seconds=BASELINE_WALL_SECONDS,
                        memory_bytes=64 << 30, address_space=False)
        self.box = Sandbox(server, "baseline", job, {}, limits)

    def result(self) -> dict[str, TimingStats]:
        with self.box:
            try:
                message = self.box.recv()
            except ChildGone as gone:  # its last line says why (e.g. out of GPU memory)
                raise ChildGone(gone.verdict, with_last_line(gone.reason, gone.output_tail), gone.output_tail) from None
        if message.get("event") != "baseline":
            raise ChildGone("RUNTIME_FAIL", f"baseline measurement failed: {message}")
        return {label: stats(message[label]["samples_ms"]) for label in ("eager", "compiled") if label in message}

    def cancel(self) -> None:
        self.box.close()


class EarlyBaseline:
    """A task's baseline measured as soon as its timing inputs are built, while the candidate still
    compiles and runs its cases: its exclusive hold on the GPU then falls where the GPU is mostly
    idle, instead of among the candidates' timings at the end of a busy run."""

    def __init__(self, inputs_ready: Callable[[], list[Path] | None], start: Callable[[list[Path]], PendingBaseline],
                 keep: Callable[[dict[str, TimingStats]], None]):
        self._inputs_ready, self._start, self._keep = inputs_ready, start, keep
        self._lock = threading.Lock()
        self._cancelled = False
        self._pending: PendingBaseline | None = None
        self._measured: dict[str, TimingStats] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="early baseline", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while (files := self._inputs_ready()) is None:
                if self._cancelled:
                    return
                time.sleep(INPUTS_POLL_SECONDS)
            with self._lock:
                if self._cancelled:
                    return
                self._pending = self._start(files)
            self._measured = self._pending.result()
            self._keep(self._measured)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            self._error = exc

    def result(self) -> dict[str, TimingStats]:
        """Waits for the measurement (the timing inputs are built by the time a candidate is timed)."""
        self._thread.join()
        if isinstance(self._error, ChildGone):
            raise self._error
        if self._error is not None or self._measured is None:
            raise ChildGone("RUNTIME_FAIL", f"baseline measurement failed: {self._error or 'cancelled'}")
        return self._measured

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            if self._pending is not None:
                self._pending.cancel()

