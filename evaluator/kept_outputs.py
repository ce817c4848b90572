"""Outputs of the timing cases as they passed, copied into the evaluator's memory (out of the
candidate's reach: its files are its own to rewrite). A timed call's results, bit for bit one of
these, need no second judgement: judging them waited 2.4-3.7 s per task in the judging queue of
15 evaluations on an H100 (benchmarks/RESULTS.md). The copies are bounded in bytes;
beyond the bound, timed results are judged."""

from __future__ import annotations

import threading
import weakref
from typing import Any

import torch

from evaluator.task import element_bytes, map_tensors, tensors_in


class KeptOutputs:
    """Copies of outputs within a bound on their bytes, across the evaluations in flight. A copy's
    bytes count until its tensors are gone, however its evaluation ended."""

    def __init__(self, limit: int):
        self.limit, self.held = limit, 0
        self._lock = threading.Lock()

    def copy(self, tree: Any) -> Any | None:
        """The tree with every tensor copied, or None when the copies would pass the bound."""
        size = element_bytes(*tensors_in(tree))
        with self._lock:
            if self.held + size > self.limit:
                return None
            self.held += size
        copied = map_tensors(tree, torch.clone)
        for t in tensors_in(copied):
            weakref.finalize(t, self._release, element_bytes(t))
        return copied

    def _release(self, size: int) -> None:
        with self._lock:
            self.held -= size
