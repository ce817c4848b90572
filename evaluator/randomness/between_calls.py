"""Checks between the calls of one case: they must draw different numbers, independent of each other."""

from __future__ import annotations

import itertools
import math
from typing import Any, Iterator, Sequence

import torch

from evaluator.contracts import host_scalars
from evaluator.randomness.independence import cells, contingency_chi2, joint_bins
from evaluator.randomness.limits import MIN_SAMPLES, PAIR_SAMPLE, allowed_count, chi2_limits, fmt_number, normal_limit
from evaluator.randomness.sampling import collision_probability, flat_values, raw_bits, spread_indices, subsample
from evaluator.randomness.shared_values import shared_values
from evaluator.randomness.windows import correlate, window_lags, window_positions
from evaluator.task import tensors_in


def _paired_leaves(runs: Sequence[Any]) -> Iterator[tuple[int, int, torch.Tensor, torch.Tensor]]:
    """(i, j, a, b) for every two calls i < j (numbered from 0) and each pair of their tensors in order."""
    leaves = [tensors_in(run) for run in runs]
    for i, j in itertools.combinations(range(len(leaves)), 2):
        for a, b in zip(leaves[i], leaves[j]):
            yield i, j, a, b


def _equal_positions(a: torch.Tensor, b: torch.Tensor) -> int:
    """At how many positions two tensors of one shape hold the same value (the same bits when of one dtype)."""
    if a.dtype == b.dtype:
        return int(torch.count_nonzero(raw_bits(a) == raw_bits(b).to(a.device)))
    return int(torch.count_nonzero(flat_values(a) == flat_values(b).to(a.device)))


def distinct_runs(runs: Sequence[Any]) -> list[str]:
    """Different calls must draw different numbers: no two runs may agree at more positions than chance.

    A kernel seeded with a constant (or from state that does not advance) returns the same tensor on
    every call; one that leaves part of its output unwritten agrees with another run on that part.
    """
    failures = []
    for i, j, a, b in _paired_leaves(runs):
        if a.shape != b.shape or a.numel() == 0:
            continue
        n = a.numel()
        collision = collision_probability(subsample(flat_values(a)))
        equal = _equal_positions(a, b)
        if equal > allowed_count(n, collision):
            same = "returned identical values" if equal == n else f"agree at {equal} of {n} positions"
            failures.append(f"calls {i + 1} and {j + 1} {same} (independent draws agree at about "
                            f"{fmt_number(collision * n)}): draw a fresh seed on every call and write every "
                            "output element")
    return failures


def independent_runs(runs: Sequence[Any], low: float, high: float) -> list[str]:
    """Calls must be independent of each other, not only different: no correlation between calls at
    any shift below WINDOW // 2, no relation at equal positions (frac(u + c), 1 - u), and no values
    shared (one call a shift or permutation of another)."""
    failures = []
    for i, j, a, b in _paired_leaves(runs):
        if a.shape != b.shape or a.dtype != b.dtype or a.numel() < 2 * MIN_SAMPLES or not a.is_floating_point():
            continue
        b = b.to(a.device)
        pair = f"calls {i + 1} and {j + 1}"
        x, y = flat_values(a), flat_values(b)
        found = _cross_correlation(x, y, pair)
        found += _paired_independence(x, y, low, high, pair)
        found += shared_values([(raw_bits(a), x), (raw_bits(b), y)], low, high, [(pair, -1)])
        del x, y
        failures += found[:2]
    return failures


def _cross_correlation(x: torch.Tensor, y: torch.Tensor, pair: str) -> list[str]:
    """Correlation between two calls at shifts -WINDOW // 2 .. WINDOW // 2, in windows."""
    index = window_positions(x.numel(), x.device)
    a, b = x[index], y[index]
    a, b = a - a.mean(), b - b.mean()
    r = correlate(a, b)
    lags = window_lags(a.shape[1], both_signs=True)
    pick = torch.tensor([k % r.numel() for k in lags], dtype=torch.int64, device=x.device)
    counts = torch.tensor([a.shape[0] * (a.shape[1] - abs(k)) for k in lags], dtype=torch.float64, device=x.device)
    z = r[pick] / ((a.square().mean() * b.square().mean()).sqrt() * counts.sqrt()).clamp_min(1e-300)
    worst = z.abs().argmax()
    score, index_ = host_scalars(z[worst], worst)
    limit = normal_limit(len(lags))
    if abs(score) <= limit:
        return []
    lag = lags[int(index_)]
    where = "at the same positions" if lag == 0 else f"with call 2 shifted by {lag} elements"
    return [f"{pair} are correlated {where} (correlation {fmt_number(score / math.sqrt(a.shape[0] * (a.shape[1] - abs(lag))))}, "
            f"{fmt_number(abs(score))} standard errors, limit {fmt_number(limit)}): each call must draw from a fresh seed, not "
            "transform or shift the previous call's numbers"]


def _paired_independence(x: torch.Tensor, y: torch.Tensor, low: float, high: float, pair: str) -> list[str]:
    """Chi-square test of independence of (x[i], y[i]) over up to PAIR_SAMPLE positions."""
    index = spread_indices(PAIR_SAMPLE, x.numel(), x.device)
    bins = joint_bins(index.numel())
    if not bins:
        return []
    first, second = (cells(v[index], low, high, bins) for v in (x, y))
    chi2, r, c = host_scalars(*contingency_chi2(first, second, bins, index.numel()))
    dof = int((r - 1) * (c - 1))
    if dof < 1:
        return []
    limit = chi2_limits(dof, 1)[1]
    if chi2 <= limit:
        return []
    return [f"{pair} are not independent at equal positions: the joint histogram of (call 1, call 2) departs from "
            f"independence (chi-square {fmt_number(chi2)} on {dof} degrees of freedom, allowed {fmt_number(limit)}); one call's "
            "numbers are a function of the other's (u + c modulo 1, 1 - u): seed every call afresh"]
