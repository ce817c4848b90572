"""Everything a sample of U(low, high) must satisfy: type, shape, range, distribution, no repeats, independence."""

from __future__ import annotations

from typing import Any, Sequence

import torch

from evaluator.contracts import dtype_name, host_scalars
from evaluator.randomness.distribution import distinct_fraction_check, ks_uniform, moment_checks, spacing_below
from evaluator.randomness.independence import independence_checks
from evaluator.randomness.limits import fmt_number
from evaluator.randomness.repetition import repeated_windows_check, repetition_checks
from evaluator.randomness.sampling import flat_values, subsample, value_counts


def _type_failures(t: Any, dtype: torch.dtype | None, shape: Sequence[int] | None) -> list[str]:
    """The first of: not a tensor, the wrong shape, the wrong dtype, not floating point."""
    if not isinstance(t, torch.Tensor):
        return [f"returned {type(t).__name__} where a tensor was expected"]
    if shape is not None and tuple(t.shape) != tuple(shape):
        return [f"output shape {tuple(t.shape)} where {tuple(shape)} was expected"]
    if dtype is not None and t.dtype != dtype:
        return [f"output dtype {dtype_name(t.dtype)} where {dtype_name(dtype)} was expected"]
    if not t.is_floating_point():
        return [f"output dtype {dtype_name(t.dtype)} is not a floating type"]
    return []


def _range_failures(x: torch.Tensor, low: float, high: float) -> list[str]:
    """The flat float64 values must all be finite and in [low, high)."""
    n = x.numel()
    bad, below, at_or_above = map(int, host_scalars((~torch.isfinite(x)).sum(), (x < low).sum(), (x >= high).sum()))
    if bad:
        return [f"{bad} of {n} elements are NaN or Inf (unwritten output elements?)"]
    if below or at_or_above:
        return [f"{below + at_or_above} of {n} values lie outside [{fmt_number(low)}, {fmt_number(high)}) "
                f"(min {fmt_number(float(x.min()))}, max {fmt_number(float(x.max()))}; the upper bound is exclusive, "
                "so values that round up to it in a narrow dtype must be kept below it)"]
    return []


def uniform_checks(t: Any, low: float = 0.0, high: float = 1.0, dtype: torch.dtype | None = None,
                   shape: Sequence[int] | None = None) -> list[str]:
    """Everything a sample of U(low, high) in [low, high) must satisfy; failure sentences, or []."""
    failures = _type_failures(t, dtype, shape)
    if failures:
        return failures
    x = flat_values(t)
    if x.numel() == 0:
        return []
    failures = _range_failures(x, low, high)
    if failures:
        return failures
    step = max(spacing_below(abs(low), t.dtype), spacing_below(abs(high), t.dtype))
    sample = subsample(x)
    distinct, collision = value_counts(sample)
    failures += ks_uniform(sample, low, high, slack=step / (high - low))
    failures += moment_checks(x, low, high, slack=step)
    failures += distinct_fraction_check(distinct, sample.numel(), t.dtype)
    failures += repetition_checks(t, collision)
    if not any("repeat" in f for f in failures):
        failures += repeated_windows_check(t, collision)
    if not failures:
        failures += independence_checks(t, low, high, x=x)
    return failures
