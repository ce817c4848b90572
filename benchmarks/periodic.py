"""A sampler that reads something every `period` seconds on a thread of its own, between entering
and leaving its `with` block."""

from __future__ import annotations

import threading


class Periodic:
    def __init__(self, period: float, name: str):
        self.period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def sample(self) -> None:
        raise NotImplementedError

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.sample()
