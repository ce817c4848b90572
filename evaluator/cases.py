"""Which calls a candidate is judged on: stage 1 (one call on standard inputs) and stage 2
(seeds x sizes x dtypes x standard and outlier modes)."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from evaluator.contracts import dtype_name
from evaluator.task import Task


@dataclass(frozen=True)
class Case:
    size: str
    dtype: torch.dtype
    mode: str
    seed: int

    @property
    def key(self) -> str:
        return f"{self.size}-{dtype_name(self.dtype)}-{self.mode}-{self.seed}"


def timing_cases(task: Task) -> list[Case]:
    """The standard-size input sets that rotate during timing (one configuration, different values)."""
    return [Case("standard", task.primary_dtype, "standard", seed) for seed in task.timing_seeds]


def plan(task: Task, on_gpu: bool) -> list[Case]:
    """Stage 1 first, then every standard-mode case, then every outlier case.

    On the CPU interpreter only small and edge sizes run; on a GPU the standard size joins them
    with the timing input sets (primary dtype), which must be right before they are timed.
    """
    first_seed = task.seeds[0]
    stage1 = timing_cases(task)[0] if on_gpu else Case("small", task.primary_dtype, "standard", first_seed)
    standard, outlier = [], []
    for dtype in task.dtypes:
        for mode, bucket in (("standard", standard), ("outlier", outlier)):
            for size in ("small", "edge"):
                bucket.extend(Case(size, dtype, mode, seed) for seed in task.seeds)
    if on_gpu:
        standard.extend(timing_cases(task)[1:])
    ordered = [stage1] + [c for c in standard + outlier if c != stage1]
    return list(dict.fromkeys(ordered))


def describe_case(case: Case) -> str:
    mode = ", outlier mode (0.1% of elements x50)" if case.mode == "outlier" else ""
    return f"{case.size} {dtype_name(case.dtype)} inputs (seed {case.seed}{mode})"
