"""A task's cases, built in plan order on a thread of their own: the candidate's process starts,
imports and compiles while later cases' inputs and expected outputs are still being computed."""

from __future__ import annotations

import threading
import time

from evaluator import event_log, gpu_lock
from evaluator.cases import Case
from evaluator.references import CaseData, ReferenceStore, slot_waited_by_this_thread
from evaluator.task import Task


class CaseFeed:
    def __init__(self, store: ReferenceStore, task: Task, cases: list[Case]):
        self.store, self.task, self.cases = store, task, cases
        self.data: list[CaseData] = []
        self.error: BaseException | None = None
        self.seconds = 0.0  # building them all (or as many as were built)
        self.lock_waited = 0.0  # of it, waiting for the GPU lock
        self.slot_waited = 0.0  # and waiting for a slot to build a standard-size case on the GPU
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._build, name=f"cases of {task.id}", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        began = time.perf_counter()
        lock_before, slot_before = gpu_lock.waited_by_this_thread(), slot_waited_by_this_thread()
        try:
            for case in self.cases:
                if self._stop.is_set():
                    return
                self.data.append(self.store.get(self.task, case))  # the evaluation polls `ready()`
                event_log.case_event(self.task.id, "built", len(self.data) - 1, size=case.size)
                self.seconds = time.perf_counter() - began
                self.lock_waited = gpu_lock.waited_by_this_thread() - lock_before
                self.slot_waited = slot_waited_by_this_thread() - slot_before
        except BaseException as exc:  # noqa: BLE001 - handed to the evaluation that waits on it
            self.error = exc

    def ready(self) -> int:
        """How many cases, from the first, are built. Raises what building one raised."""
        if self.error is not None:
            raise self.error
        return len(self.data)

    def close(self) -> None:
        """Builds no further case (the one under way finishes; it stays cached)."""
        self._stop.set()
        self._thread.join()
