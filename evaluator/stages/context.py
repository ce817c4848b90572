"""One candidate's evaluation in progress: what each stage leaves for the next, and the processes
and files it holds until it ends."""

from __future__ import annotations

import contextlib
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from evaluator.result import EvalResult, TimingStats
from evaluator.task import Task

if TYPE_CHECKING:
    from evaluator.baseline import EarlyBaseline
    from evaluator.case_feed import CaseFeed
    from evaluator.evaluate import Evaluator
    from evaluator.memcheck import MemcheckRun
    from evaluator.protocol import Job
    from evaluator.references import CaseData
    from evaluator.sandbox import Reach, Sandbox


@dataclass
class Evaluation:
    scorer: Evaluator                  # the evaluator's shared parts: settings, servers, references, judge
    task: Task
    source: str                        # as it runs: the static stage rewrites it
    entry: str = ""
    job: Job | None = None             # what the candidate's processes are told
    feed: CaseFeed | None = None
    reach: Reach | None = None
    ir_answers: Path | None = None     # where its compile scout reads the IR store's answers (ir_compiler.py)
    ir_asked: int = 0                  # its scout's questions so far
    box: Sandbox | None = None         # the process of the first share of cases; timed afterwards
    checker: MemcheckRun | None = None
    checker_asked: bool = False        # its start was asked for (once; it may have found no sanitizer)
    checking: threading.Lock = field(default_factory=threading.Lock)
    baseline: dict[str, TimingStats] | EarlyBaseline | None = None
    probing: Future[list[CaseData]] | None = None
    passed_outputs: dict[int, Any] = field(default_factory=dict)  # kept outputs of timing cases, by plan index
    held: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    boxes: list[Sandbox] = field(default_factory=list)  # every process it started, for their CPU time

    @property
    def timed(self) -> bool:
        return self.scorer.on_gpu and self.scorer.config.timing

    def own(self, box: Sandbox) -> Sandbox:
        """`box`, counted among the evaluation's processes."""
        self.boxes.append(box)
        return box

    def cpu_seconds(self) -> dict[str, float]:
        """CPU time of the evaluation's closed processes by kind (`cpu_candidate`, `cpu_scout`,
        `cpu_memcheck`): each process's own and that of the processes it started and reaped."""
        totals: dict[str, float] = {}
        for box in self.boxes:
            if box.cpu_seconds is not None:
                totals[f"cpu_{box.kind}"] = totals.get(f"cpu_{box.kind}", 0.0) + box.cpu_seconds
        return totals

    def release(self) -> None:
        """Ends the candidate's processes and removes its files (once; later calls do nothing)."""
        self.held.close()

    def __enter__(self) -> Evaluation:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def phase(result: EvalResult, name: str) -> Iterator[None]:
    """Adds the time spent inside to `result.phases[name]`."""
    began = time.perf_counter()
    try:
        yield
    finally:
        result.phases[name] = result.phases.get(name, 0.0) + time.perf_counter() - began
