"""EvalResult: the versioned, JSON-serializable verdict and measurements for one candidate."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from evaluator import plain_data

SCHEMA_VERSION = 4  # 2: MEMORY_FAIL, the memcheck stage and `memory_check`; 3: `unchecked`;
# 4: `out_of_gpu_memory`


class Verdict(str, Enum):
    NO_CODE = "NO_CODE"
    STATIC_REJECT = "STATIC_REJECT"
    COMPILE_FAIL = "COMPILE_FAIL"
    RUNTIME_FAIL = "RUNTIME_FAIL"
    TIMEOUT = "TIMEOUT"
    INCORRECT = "INCORRECT"
    OUTLIER_FAIL = "OUTLIER_FAIL"
    CONTRACT_FAIL = "CONTRACT_FAIL"
    MEMORY_FAIL = "MEMORY_FAIL"
    CORRECT = "CORRECT"

    @property
    def rank(self) -> int:
        """How close to a usable kernel: equal ranks are equally far (a crash and a hang)."""
        return VERDICT_RANKS[self]

    @property
    def is_error(self) -> bool:
        """The candidate did not run to a comparable result (no code, rejected, crashed, hung,
        broke the contract); the other failures produced outputs that were judged."""
        return self.rank <= VERDICT_RANKS[Verdict.CONTRACT_FAIL]

    @classmethod
    def rank_of(cls, name: str | None) -> int:
        """The rank of a verdict's name as stored; no verdict ranks lowest."""
        return VERDICT_RANKS[cls(name)] if name in cls._value2member_map_ else 0


VERDICT_RANKS = {Verdict.NO_CODE: 0, Verdict.STATIC_REJECT: 1, Verdict.COMPILE_FAIL: 2, Verdict.RUNTIME_FAIL: 3,
                 Verdict.TIMEOUT: 3, Verdict.CONTRACT_FAIL: 4, Verdict.INCORRECT: 5, Verdict.OUTLIER_FAIL: 6,
                 Verdict.MEMORY_FAIL: 7, Verdict.CORRECT: 8}


class Stage(str, Enum):
    """How far evaluation got: the stage where the verdict was reached."""

    STATIC = "static"
    IMPORT = "import"
    CALL = "call"
    ACCURACY = "accuracy"
    MEMCHECK = "memcheck"
    TIMING = "timing"
    DONE = "done"


@dataclass
class BadElement:
    index: list[int]
    expected: float
    got: float


@dataclass
class CaseResult:
    size: str
    dtype: str
    mode: str
    seed: int
    passed: bool
    reason: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatches: int = 0
    numel: int = 0
    first_bad: list[BadElement] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)


@dataclass
class TimingStats:
    median_ms: float
    p20_ms: float
    p80_ms: float
    cv: float
    reps: int


@dataclass
class Performance:
    size: str
    dtype: str
    candidate: TimingStats
    eager: TimingStats | None = None
    compiled: TimingStats | None = None
    speedup: float | None = None
    speedup_vs_compiled: float | None = None
    gbps: float | None = None
    tflops: float | None = None
    iou: float | None = None
    mfu: float | None = None
    roofline_floor_ms: float | None = None
    roofline_fraction: float | None = None
    # "events": CUDA events on the launching stream; "wall": device-synchronized wall time, used
    # when work outside that stream made it clearly longer.
    timing_method: str = "events"
    # Set when the eager baseline could not be measured (the speedup is then missing).
    baseline_error: str | None = None
    # Times of the calls on inputs never seen before, which corroborate the median (probes.py).
    probe_ms: list[float] = field(default_factory=list)


@dataclass
class KernelInfo:
    name: str
    registers: int | None = None
    spills: int | None = None
    shared_bytes: int | None = None
    num_warps: int | None = None
    num_stages: int | None = None


@dataclass
class Maintainability:
    mi: float
    cc_max: int
    cc_mean: float


@dataclass
class Environment:
    device: str
    interpreter: bool
    torch: str
    triton: str
    python: str
    gpu: str | None = None
    driver: str | None = None
    host: str | None = None  # the machine (a Ray cluster's node) it ran on
    # What the candidate's process ran under, as the evaluator measured it: "full", or "partial (no
    # ...)" naming what the OS refused (confinement.py); None where no candidate process started.
    isolation: str | None = None


@dataclass
class EvalResult:
    task_id: str
    verdict: Verdict
    stage: Stage
    reason: str
    source_hash: str
    environment: Environment
    cases: list[CaseResult] = field(default_factory=list)
    performance: Performance | None = None
    kernels: list[KernelInfo] = field(default_factory=list)
    profile: dict[str, float] | None = None
    maintainability: Maintainability | None = None
    traceback: str | None = None
    phases: dict[str, float] = field(default_factory=dict)
    # SHA-256 of the text the candidate's process ran: the checked text, its __main__ block blanked.
    executed_hash: str | None = None
    # How out-of-bounds accesses were looked for: "memcheck" (Compute Sanitizer, on a GPU),
    # "interpreter" (every access of every launch checked, on the CPU), "off" (--no-memcheck), or
    # "unavailable: <why>". None where the candidate failed before any kernel ran.
    memory_check: str | None = None
    # What was not checked and why (cases of a dtype this Triton's CPU interpreter computes wrongly).
    unchecked: str | None = None
    # The candidate or its eager baseline ran out of GPU memory (torch's OutOfMemoryError in its process):
    # on a GPU the evaluation is then done once more alone (memory_gate.py).
    out_of_gpu_memory: bool = False
    schema_version: int = SCHEMA_VERSION

    @property
    def correct(self) -> bool:
        return self.verdict is Verdict.CORRECT

    @property
    def speedup(self) -> float | None:
        return self.performance.speedup if self.performance else None

    def to_dict(self) -> dict[str, Any]:
        return plain_data.to_plain(self)

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "EvalResult":
        version = data.get("schema_version")
        if not isinstance(version, int):
            raise ValueError("not an EvalResult: schema_version is missing")
        if version > SCHEMA_VERSION:
            raise ValueError(f"EvalResult schema {version} is newer than this agentloop understands "
                             f"({SCHEMA_VERSION}); upgrade agentloop to read it")
        return plain_data.build(cls, data, "EvalResult")

    @classmethod
    def from_json(cls, text: str) -> "EvalResult":
        return cls.from_dict(json.loads(text))
