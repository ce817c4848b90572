"""A candidate's cases split by dtype over several processes of the candidate. Each process compiles
the kernel specializations of its own dtype, so Triton's compiles (most of a cold evaluation's time
on a GPU: 52 kernels and 14 of its 21 s for Normalization/batch_norm on an H100) run side by side.

The verdict is the one a single process would reach: the earliest failing case in plan order, with
every case before it judged. A share stops once every case left to it comes after a failure another
share found."""

from __future__ import annotations

import math
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from evaluator.cases import Case
from evaluator.earlier_calls import EarlierCalls
from evaluator.result import CaseResult, KernelInfo, Stage


def split_by_dtype(cases: list[Case], processes: int) -> list[list[int]]:
    """Plan indices per share: the first share has the first case's dtype alone (stage 1 and the
    timing sets, whose process is then timed); with fewer processes than dtypes, the other shares
    take several dtypes each."""
    dtypes = list(dict.fromkeys(case.dtype for case in cases))
    count = max(1, min(processes, len(dtypes)))
    shares: list[list[int]] = [[] for _ in range(count)]
    for index, case in enumerate(cases):
        rank = dtypes.index(case.dtype)
        shares[0 if rank == 0 or count == 1 else 1 + (rank - 1) % (count - 1)].append(index)
    return shares


@dataclass
class Share:
    members: list[int]                                   # plan indices, in plan order
    judged: dict[int, CaseResult] = field(default_factory=dict)
    runs: dict[int, list[Any]] = field(default_factory=dict)  # outputs of cases with one run in
    pending: dict[int, Future] = field(default_factory=dict)  # judgements under way beside the share's loop
    passed_outputs: dict[int, Any] = field(default_factory=dict)  # kept copies of timing cases' first runs
    earlier_calls: EarlierCalls = field(default_factory=EarlierCalls)  # random ops: every call against all before
    failure: BaseException | None = None                # the verdict (StageFailed) this share reached
    failed_at: int = -1                                  # plan index of the failing case; -1 before any
    kernels: list[KernelInfo] = field(default_factory=list)
    import_seconds: float | None = None
    memory_check: str = ""             # how its process looked for out-of-bounds accesses, if it did
    call_seconds: float = 0.0
    compile_seconds: float = 0.0       # of call_seconds, compiling or loading kernels
    scout_wait_seconds: float = 0.0    # of compile_seconds, waiting for the compile scout

    def first_pending(self) -> int | None:
        return next((i for i in self.members if i not in self.judged), None)


class EarliestFailure:
    """The plan index of the earliest failure any share has found so far."""

    def __init__(self) -> None:
        self.at: float = math.inf
        self._lock = threading.Lock()

    def report(self, index: float) -> None:
        with self._lock:
            self.at = min(self.at, index)

    def passed(self, share: Share) -> bool:
        """Has every case still left to `share` come after a failure found elsewhere?"""
        pending = share.first_pending()
        return pending is not None and pending > self.at


def merged(shares: list[Share]) -> tuple[list[CaseResult], Share | None]:
    """The judged cases in plan order up to the earliest failure, and the share that found it
    (the lowest-numbered share on a tie: every process fails an import the same way)."""
    failed = min((s for s in shares if s.failure is not None), key=lambda s: s.failed_at, default=None)
    limit = failed.failed_at if failed else math.inf
    judged = sorted(((i, r) for share in shares for i, r in share.judged.items()), key=lambda pair: pair[0])
    return [r for i, r in judged if i <= limit], failed


def failure_stage(failed_at: int) -> Stage:
    return Stage.IMPORT if failed_at < 0 else Stage.CALL if failed_at == 0 else Stage.ACCURACY
