"""Evaluations in one evaluator share the GPU's memory. A candidate (or its eager baseline) that
ran out of GPU memory while others held theirs is evaluated once more alone: the gate lets that
retry in only when every other evaluation has left, and holds new ones back until it is done.
A kernel that runs out of memory alone too gets its verdict. An evaluation whose references the
evaluator ran out of GPU memory building is done alone again too: then it either fits or raises
the evaluator's error."""

from __future__ import annotations

import contextlib
import threading
from typing import Iterator

import torch

from evaluator.result import EvalResult

CACHED_SLACK_BYTES = 4 << 30


def trim_cached(device: torch.device, slack_bytes: int = CACHED_SLACK_BYTES) -> None:
    """Gives the GPU memory torch keeps cached in this process back to the driver once more than
    `slack_bytes` of it sits unused. Emptying the cache after every large judgement made each
    one allocate its temporaries anew, and each cudaFree waits for all of the process's GPU work."""
    if device.type != "cuda":
        return
    if torch.cuda.memory_reserved(device) - torch.cuda.memory_allocated(device) > slack_bytes:
        torch.cuda.empty_cache()


class MemoryGate:
    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._sharing = 0
        self._alone_waiting = 0
        self._alone = False

    @contextlib.contextmanager
    def shared(self) -> Iterator[None]:
        with self._cond:
            self._cond.wait_for(lambda: not self._alone and not self._alone_waiting)
            self._sharing += 1
        try:
            yield
        finally:
            with self._cond:
                self._sharing -= 1
                self._cond.notify_all()

    @contextlib.contextmanager
    def alone(self) -> Iterator[None]:
        with self._cond:
            self._alone_waiting += 1
            self._cond.wait_for(lambda: not self._alone and not self._sharing)
            self._alone_waiting -= 1
            self._alone = True
        try:
            yield
        finally:
            with self._cond:
                self._alone = False
                self._cond.notify_all()


def starved(result: EvalResult) -> bool:
    """Did this evaluation fail for lack of GPU memory (its own or its baseline's)? Told by the
    exception's type in that process, not by any message text."""
    return result.out_of_gpu_memory
