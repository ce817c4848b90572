"""Readers-writer lock over a GPU, across processes: timing holds it exclusively, every other
GPU user (correctness calls, reference computation) holds it shared.

Three flock files: the writers' board, held shared by every writer from asking to letting go; a
turnstile that a waiting writer holds, so that a reader already past the board queues behind it
instead of starving it; and the lock itself. A reader first waits for the board to be empty, so
writers that ask while another holds the lock or waits for it go one after another, and the GPU
drains its shared holders once for them all rather than once each. A `None` directory means no GPU:
the lock is a no-op.

A sandboxed child calls `report_waits` so that the evaluator hears when it blocks on the lock:
time spent waiting for another candidate's timing is not the child's own time.

A waiting writer waits for every shared holder to let go, and everyone arriving after it waits
behind it. A long shared hold that reaches a point where its GPU work so far is finished (the
evaluator judging a large output, at each transfer of its figures to the host) calls
`yield_to_writers`: if a writer waits, the hold lets go there and queues again behind it, so a
timing waits for the GPU work in flight rather than for a whole judgement.

With AGENTLOOP_LOCK_LOG set to a file, every process appends one JSON line per hold (mode, when
asked, got and released), for benchmarks that ask where GPU time went.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

from evaluator import event_log

_wait_listener: Callable[[bool], None] | None = None
_held = threading.local()  # this thread's shared holds that may yield
_waited = threading.local()  # seconds this thread has waited for the lock


@dataclass
class _Hold:
    """One hold of the lock, as the lock log reports it (a yielding hold starts anew at each yield)."""

    lock_dir: str | Path
    fd: int
    mode: int
    what: str
    asked: float
    got: float = 0.0
    yielded: float = 0.0  # seconds spent waiting to hold the lock again after letting writers go first

    def log(self) -> None:
        _log_hold(self.lock_dir, self.mode, self.what, self.asked, self.got)


def waited_by_this_thread() -> float:
    """Seconds this thread has waited to hold the lock, in any mode and after its yields, so far."""
    return getattr(_waited, "seconds", 0.0)


def _count_wait(seconds: float) -> None:
    _waited.seconds = waited_by_this_thread() + seconds


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
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        _lock(fd, mode)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


def prepare(lock_dir: str | Path) -> None:
    """Creates the lock's files, so that processes that see the folder read-only (candidates) can
    take the lock: a flock needs only a descriptor open for reading."""
    for path in _paths(lock_dir):
        os.close(os.open(path, os.O_RDONLY | os.O_CREAT, 0o644))


def _paths(lock_dir: str | Path) -> tuple[Path, Path, Path]:
    d = Path(lock_dir)
    d.mkdir(parents=True, exist_ok=True)
    return d / "writers.lock", d / "turnstile.lock", d / "gpu.lock"


def _enter(lock_dir: str | Path, fd: int, mode: int) -> None:
    """A reader once no writer is on the board; then through the turnstile (behind any writer
    already waiting), then the lock itself."""
    writers, turnstile, _ = _paths(lock_dir)
    if mode == fcntl.LOCK_SH:
        with _flock(writers, fcntl.LOCK_EX):
            pass
    with _flock(turnstile, fcntl.LOCK_EX):
        _lock(fd, mode)


def _on_board(lock_dir: str | Path) -> int:
    """A writer's place on the board, held until the descriptor returned is closed."""
    fd = os.open(_paths(lock_dir)[0], os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        _lock(fd, fcntl.LOCK_SH)
    except BaseException:
        os.close(fd)
        raise
    return fd


@contextlib.contextmanager
def _hold(lock_dir: str | Path | None, mode: int, what: str, yielding: bool = False) -> Iterator[_Hold]:
    if lock_dir is None:
        yield _Hold(lock_dir, -1, mode, what, time.time())
        return
    asked = time.time()
    board = _on_board(lock_dir) if mode == fcntl.LOCK_EX else None
    fd = os.open(_paths(lock_dir)[2], os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        _enter(lock_dir, fd, mode)
    except BaseException:
        os.close(fd)
        _close(board)
        raise
    hold = _Hold(lock_dir, fd, mode, what, asked, got=time.time())
    _count_wait(hold.got - asked)
    stack = _yielding_holds()
    if yielding:
        stack.append(hold)
    try:
        yield hold
    finally:
        if yielding:
            stack.remove(hold)
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)
        _close(board)
        hold.log()


def _close(fd: int | None) -> None:
    if fd is not None:
        os.close(fd)  # closing the descriptor lets go of a lock taken through it


def _yielding_holds() -> list[_Hold]:
    if not hasattr(_held, "stack"):
        _held.stack = []
    return _held.stack


def _writer_waiting(lock_dir: str | Path) -> bool:
    """A writer is on the board (or a reader is looking at it that instant)."""
    fd = os.open(_paths(lock_dir)[0], os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing the descriptor lets go of a lock taken through it
    return False


def yield_to_writers(finish: Callable[[], None] | None = None) -> None:
    """Called where this thread's GPU work so far is finished (or is finished by `finish`, which
    runs only where a writer waits): each yielding shared hold of this thread lets a waiting writer
    go first, then holds the lock again; its `yielded` counts the wait."""
    for hold in _yielding_holds():
        if not _writer_waiting(hold.lock_dir):
            continue
        if finish is not None:
            finish()
            finish = None
        fcntl.flock(hold.fd, fcntl.LOCK_UN)
        hold.log()
        hold.asked = time.time()
        _enter(hold.lock_dir, hold.fd, hold.mode)
        hold.got = time.time()
        hold.yielded += hold.got - hold.asked
        _count_wait(hold.got - hold.asked)


def _log_hold(lock_dir: str | Path, mode: int, what: str, asked: float, got: float) -> None:
    event_log.append("AGENTLOOP_LOCK_LOG", {"pid": os.getpid(), "gpu": Path(lock_dir).name,
                                            "mode": "exclusive" if mode == fcntl.LOCK_EX
                                            else "shared", "what": what, "asked": asked, "got": got,
                                            "released": time.time()})


def shared(lock_dir: str | Path | None, what: str = "", yielding: bool = False):
    """`what` names the work in the lock log. A `yielding` hold lets waiting writers go first
    wherever its thread calls `yield_to_writers`. The context gives the hold (its `yielded`)."""
    return _hold(lock_dir, fcntl.LOCK_SH, what, yielding)


def exclusive(lock_dir: str | Path | None, what: str = ""):
    return _hold(lock_dir, fcntl.LOCK_EX, what)


def shared_until_exit(lock_dir: str | Path | None) -> None:
    """Holds the lock shared for the rest of this process's life: the descriptor is never closed, so
    the OS lets go only once the process is gone (after whatever its exit does on the GPU)."""
    if lock_dir is None:
        return
    fd = os.open(_paths(lock_dir)[2], os.O_RDONLY | os.O_CREAT, 0o644)
    _enter(lock_dir, fd, fcntl.LOCK_SH)


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
