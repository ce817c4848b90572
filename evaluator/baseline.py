"""Eager PyTorch (and optionally torch.compile) timings of a task's reference: cached per device
and software versions, and asked of the baseline server (baseline_server.py) as soon as a task's
timing inputs are built."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import Callable

from evaluator.baseline_server import Measurement
from evaluator.cache_entries import parse_entry, read_table
from evaluator.result import TimingStats, Verdict
from evaluator.sandbox import ChildGone
from evaluator.task import Task

INPUTS_POLL_SECONDS = 0.05


def cache_key(task: Task, dtype_name: str, seeds: tuple[int, ...], device_key: str, compiled: bool) -> str:
    source = task.source_path.read_bytes() if task.source_path else b""
    digest = hashlib.sha256(source).hexdigest()[:16]
    return f"{task.id}|{dtype_name}|standard|seeds {seeds}|{'compiled' if compiled else 'eager'}|{device_key}|{digest}"


def baseline_keys(task: Task, dtype_name: str, device_key: str, compile_baseline: bool) -> dict[str, str]:
    """The cache key of each baseline a task is timed against, by label."""
    labels = ["eager", "compiled"] if compile_baseline else ["eager"]
    seeds = tuple(task.timing_seeds)
    return {label: cache_key(task, dtype_name, seeds, device_key, label == "compiled") for label in labels}


class BaselineCache:
    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()

    def _read(self) -> dict:
        return read_table(self.path)

    def get(self, key: str) -> TimingStats | None:
        """The cached timing; None when missing or not a valid entry (then it is measured again)."""
        return parse_entry(TimingStats, self._read().get(key))

    def find(self, keys: dict[str, str]) -> dict[str, TimingStats] | None:
        """Every baseline of `keys` (label -> key), or None unless all are cached."""
        found = {label: self.get(key) for label, key in keys.items()}
        return found if all(found.values()) else None

    def keep(self, keys: dict[str, str], measured: dict[str, TimingStats]) -> None:
        for label, key in keys.items():
            if label in measured:
                self.put(key, measured[label])

    def put(self, key: str, value: TimingStats) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            table = self._read()
            table[key] = vars(value)
            tmp = self.path.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps(table, indent=1))
            tmp.replace(self.path)


class EarlyBaseline:
    """A task's baseline asked for as soon as its timing inputs are built, while the candidate still
    compiles and runs its cases: its exclusive hold on the GPU then falls where the GPU is mostly
    idle, instead of among the candidates' timings at the end of a busy run. Kept once measured,
    even when the evaluation that asked has ended meanwhile: the task's next candidate uses it."""

    def __init__(self, inputs_ready: Callable[[], list[Path] | None], start: Callable[[list[Path]], Measurement],
                 keep: Callable[[dict[str, TimingStats]], None]):
        self._inputs_ready, self._start, self._keep = inputs_ready, start, keep
        self._cancelled = threading.Event()
        self._measured: dict[str, TimingStats] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="early baseline", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            while (files := self._inputs_ready()) is None:
                if self._cancelled.wait(INPUTS_POLL_SECONDS):
                    return
            if self._cancelled.is_set():
                return
            self._measured = self._start(files).result()
            self._keep(self._measured)
        except BaseException as exc:  # noqa: BLE001 - handed to whoever asks for the result
            self._error = exc

    def result(self) -> dict[str, TimingStats]:
        """Waits for the measurement (the timing inputs are built by the time a candidate is timed)."""
        self._thread.join()
        if isinstance(self._error, ChildGone):
            raise self._error
        if self._error is not None or self._measured is None:
            raise ChildGone(Verdict.RUNTIME_FAIL, f"baseline measurement failed: {self._error or 'cancelled'}")
        return self._measured

    def cancel(self) -> None:
        """Nothing more is started; a measurement under way finishes and is kept."""
        self._cancelled.set()
