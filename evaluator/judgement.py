"""A case's judgement, and how judgements combine over an output's leaves and over runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import torch

from evaluator import gpu_lock
from evaluator.result import BadElement

FIRST_BAD_SHOWN = 5


@dataclass
class Judgement:
    passed: bool
    reason: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatches: int = 0
    numel: int = 0
    first_bad: list[BadElement] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    contract_violation: bool = False


@dataclass
class Expected:
    lo: Any
    hi: Any = None


def bad_elements(mask: torch.Tensor, expected: torch.Tensor, got: torch.Tensor) -> list[BadElement]:
    flat = torch.nonzero(mask.reshape(-1)).reshape(-1)[:FIRST_BAD_SHOWN].tolist()
    shape = tuple(expected.shape)
    out = []
    for i in flat:
        index = list(torch.unravel_index(torch.tensor(i), shape)) if shape else []
        out.append(BadElement([int(j) for j in index], float(expected.reshape(-1)[i]), float(got.reshape(-1)[i])))
    return out


def merge(parts: Sequence[Judgement]) -> Judgement:
    """One judgement for several parts: the first failing part's reason, the totals and maxima."""
    failed = [p for p in parts if not p.passed]
    return Judgement(passed=not failed, reason=failed[0].reason if failed else "",
                     contract_violation=any(p.contract_violation for p in failed), **_combined_measures(parts))


def _combined_measures(parts: Sequence[Judgement]) -> dict[str, Any]:
    return dict(
        max_abs_err=_largest_known(p.max_abs_err for p in parts),
        max_rel_err=_largest_known(p.max_rel_err for p in parts),
        mismatches=sum(p.mismatches for p in parts),
        numel=sum(p.numel for p in parts),
        first_bad=[b for p in parts for b in p.first_bad][:FIRST_BAD_SHOWN],
        metrics={name: value for p in parts for name, value in p.metrics.items()},
    )


def _largest_known(values: Iterable[float | None]) -> float | None:
    return max((v for v in values if v is not None), default=None)


def worst(per_run: Sequence[Judgement]) -> Judgement:
    """One judgement for several runs of the same call: the first failing run's, else the first."""
    return next((j for j in per_run if not j.passed), per_run[0])


def host_scalars(*values: torch.Tensor) -> list[float]:
    """Zero-dimensional results brought to the host in one transfer. Each separate `.item()` waits
    for the GPU, and on a GPU time-sliced between many processes every wait costs a time slice.
    With the GPU work so far finished, a timing waiting for the GPU lock goes first."""
    if not values:
        return []
    scalars = torch.stack([v.reshape(()).to(torch.float64) for v in values]).tolist()
    gpu_lock.yield_to_writers()
    return scalars
