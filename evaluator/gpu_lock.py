"""Readers-writer lock over a GPU, across processes: timing holds it exclusively, every other
GPU user (correctness calls, reference computation) holds it shared.

Two flock files: a turnstile that a waiting writer holds, so new readers queue behind it instead
of starving it, and the lock itself. A `None` directory means no GPU: the lock is a no-op.

A sandboxed child calls `report_waits` so that the evaluator hears when it blocks on the lock:
time spent waiting for another candidate's timing is not the child's own time.

With AGENTLOOP_LOCK_LOG set to a file, every process appends one JSON line per hold (mode, when
asked, got and released), for benchmarks that ask where GPU time went.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import time
from pathlib import Path
from typing import Callable, Iterator

from evaluator import event_log

_wait_listener: Callable[[bool], None] | None = None


def report_waits(listener: Callable[[bool], None] | None) -> None:
    """`listener(True)` before this process blocks on a lock, `listener(False)` once it holds it."""
    global _wait_listener
    _wait_listener = listener


def _lock(fd: int, mode: int) -> None:
    try:
        fcntl.flock(fd, mode | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    listener = _wait_listener
    if listener:
        listener(True)
    try:
        fcntl.flock(fd, mode)
    finally:
        if listener:
            listener(False)


@contextlib.contextmanager
def _flock(path: Path, mode: int) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        _lock(fd, mode)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def _paths(lock_dir: str | Path) -> tuple[Path, Path]:
    d = Path(lock_dir)
    d.mkdir(parents=True, exist_ok=True)
    return d / "turnstile.lock", d / "gpu.lock"


@contextlib.contextmanager
def _hold(lock_dir: str | Path | None, mode: int, what: str) -> Iterator[None]:
    if lock_dir is None:
        yield
        return
    turnstile, lock = _paths(lock_dir)
    asked = time.time()
    with _flock(turnstile, fcntl.LOCK_EX):
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            _lock(fd, mode)
        except BaseException:
            os.close(fd)
            raise
    got = time.time()
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        _log_hold(mode, what, asked, got)


def _log_hold(mode: int, what: str, asked: float, got: float) -> None:
    event_log.append("AGENTLOOP_LOCK_LOG", {"pid": os.getpid(), "mode": "exclusive" if mode == fcntl.LOCK_EX
                                            else "shared", "what": what, "asked": asked, "got": got,
                                            "released": time.time()})


def shared(lock_dir: str | Path | None, what: str = ""):
    """`what` names the work in the lock log."""
    return _hold(lock_dir, fcntl.LOCK_SH, what)


def exclusive(lock_dir: str | Path | None, what: str = ""):
    return _hold(lock_dir, fcntl.LOCK_EX, what)


def lock_dir_for(cache_dir: Path, device_index: int) -> Path:
    """One lock per physical GPU, however CUDA_VISIBLE_DEVICES numbers it in this process (Ray
    workers and per-GPU shards each see their GPU as device 0)."""
    return cache_dir / "locks" / f"gpu-{physical_gpu_id(device_index)}"


def physical_gpu_id(device_index: int) -> str:
    import torch

    try:
        return str(torch.cuda.get_device_properties(device_index).uuid)
    except (AttributeError, RuntimeError, AssertionError):
        return str(device_index)
