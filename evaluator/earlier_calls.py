"""Every call of a random op against every earlier call of the same candidate process.

A case's check compares its own two runs; a generator that alternates between two fixed seeds
(call parity, say) differs between those two and repeats itself in the next case. So the start of
each output (up to PREFIX elements) is kept for the candidate process's whole evaluation and every
new output is compared with every earlier one of its dtype, as `distinct_runs` compares two runs:
no two may agree at more positions than independent draws would.
"""

from __future__ import annotations

import threading
from typing import Any

import torch

from evaluator.randomness import MIN_SAMPLES, distinct_runs
from evaluator.task import tensors_in

PREFIX = 4096


class EarlierCalls:
    def __init__(self) -> None:
        self._prefixes: list[torch.Tensor] = []
        self._lock = threading.Lock()

    def add(self, runs: list[Any]) -> str | None:
        """Keeps the runs' prefixes; why one of them repeats an earlier call, or None."""
        new = [t.detach().reshape(-1)[:PREFIX].to("cpu") for run in runs for t in tensors_in(run)
               if t.numel() >= MIN_SAMPLES]
        with self._lock:
            earlier = list(self._prefixes)
            self._prefixes.extend(new)
        for a in new:
            for b in earlier:
                m = min(a.numel(), b.numel())
                if a.dtype == b.dtype and m >= MIN_SAMPLES and distinct_runs([a[:m], b[:m]]):
                    return (f"the first {m} numbers of an output agree with an earlier call's far more often than "
                            "independent draws do (a seed reused across calls, e.g. alternating between fixed "
                            "seeds): draw a fresh seed on every call")
        return None
