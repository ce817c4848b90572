"""The exact contract: outputs that must match the expected values exactly."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

import torch

from evaluator.judgement import Expected, Judgement, bad_elements, merge, worst
from evaluator.output_trees import flatten


def exact_leaf(expected: Any, got: Any) -> Judgement:
    if isinstance(expected, torch.Tensor):
        return _exact_tensor(expected, got)
    same = expected == got or (isinstance(expected, float) and math.isnan(expected) and math.isnan(got))
    return Judgement(passed=bool(same), reason="" if same else f"returned {got!r}, expected {expected!r}",
                     numel=1, mismatches=0 if same else 1)


def _exact_tensor(expected: torch.Tensor, got: torch.Tensor) -> Judgement:
    got = got.to(expected.device)
    differ = _differing(expected, got)
    count = int(differ.sum())
    j = Judgement(passed=count == 0, numel=expected.numel(), mismatches=count, max_abs_err=0.0)
    if count:
        j.first_bad = bad_elements(differ, expected, got)
        j.max_abs_err = float((expected.double() - got.double()).abs()[differ].max())
        j.reason = f"{count} of {expected.numel()} elements differ from the exact expected values"
    return j


def _differing(expected: torch.Tensor, got: torch.Tensor) -> torch.Tensor:
    """Elements that differ, NaN where NaN is expected counted as equal."""
    differ = expected != got
    if expected.is_floating_point():
        differ &= ~(torch.isnan(expected) & torch.isnan(got))
    return differ


@dataclass(frozen=True)
class Exact:
    """Integer, index and mask outputs (and values merely moved) must match exactly."""

    kind: str = "exact"
    needs_hi: bool = False
    reads_inputs = False
    judges_runs_apart = True

    def judge(self, expected: Expected, runs: Sequence[Any], inputs: Any = None) -> Judgement:
        return worst([merge([exact_leaf(lo, got) for lo, got in zip(flatten(expected.lo), flatten(run))])
                      for run in runs])
