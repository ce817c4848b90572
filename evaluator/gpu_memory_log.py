"""For benchmarks (AGENTLOOP_PROCESS_LOG): what the evaluator process holds on its GPU, sampled twice
a second and at the end: torch's allocated, reserved and peak bytes, and of them the expected
outputs kept there, with the evaluations in flight. An 80 GB GPU
ran out of memory in the evaluator's own work with 56 GiB allocated there; this says by what."""

from __future__ import annotations

import os
import threading
from typing import Callable

import torch

from evaluator import event_log

SAMPLE_SECONDS = 0.5
MIB = 1 << 20


def torch_bytes(device: torch.device) -> dict[str, int]:
    """torch's allocated and reserved bytes on `device`, and the most allocated so far."""
    return {"allocated": torch.cuda.memory_allocated(device), "reserved": torch.cuda.memory_reserved(device),
            "peak_allocated": torch.cuda.max_memory_allocated(device)}


class GpuMemoryLog:
    """Samples `held()` (bytes by what holds them) and `in_flight()` (evaluations under way) into
    the process log until closed; nothing where no process log is named."""

    def __init__(self, held: Callable[[], dict[str, int]], in_flight: Callable[[], int],
                 seconds: float = SAMPLE_SECONDS):
        self.held, self.in_flight, self.seconds = held, in_flight, seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if os.environ.get("AGENTLOOP_PROCESS_LOG"):
            self._thread = threading.Thread(target=self._sample, name="gpu memory log", daemon=True)
            self._thread.start()

    def _sample(self) -> None:
        while not self._stop.wait(self.seconds):
            self._write()

    def _write(self) -> None:
        mib = {f"{what}_mib": count // MIB for what, count in self.held().items()}
        event_log.append("AGENTLOOP_PROCESS_LOG", {"pid": os.getpid(), "stage": "evaluator gpu memory",
                                                   "in_flight": self.in_flight(), **mib})

    def close(self) -> None:
        """Stops sampling, after a last sample."""
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._write()
        self._thread = None
