"""Independence tests within one output: serial correlation, joint histograms at far lags, shared values, block sums."""

# The distribution tests see each value alone; a stream whose values are right one by one can
# still be far from independent: half the numbers mirrored (1 - u) or shuffled into the other half,
# blocks that are functions of each other, calls that are shifts or permutations of each other, a
# dropout mask that is a comb. The tests here, in shared_values, between_calls and dropout look for
# dependence between positions and calls:
#   - correlation at every lag below WINDOW // 2, inside windows of consecutive elements (FFT);
#   - at far lags (powers of two, row and plane strides, the half, third and quarter of the output)
#     the joint histogram of (x[i], x[i + lag]) against independence (chi-square), which also sees
#     relations that are not linear (frac(x + c));
#   - shared values: whether the values of two parts (the two halves, even and odd blocks, two calls)
#     coincide more often than values inside each part, a test that needs no model of the generator's
#     grid and catches parts that are permutations of each other;
#   - block sums: the sums of blocks of consecutive elements must vary as much as independent draws
#     make them vary, no more (blocks from different distributions, clumps) and no less (pairs u and
#     1 - u, stratified blocks, combs).
# For a dropout mask (0/1, only at positions whose kept value is clearly non-zero) the pair tests are
# Fisher's exact test (hypergeometric) on the number of positions dropped together, so a small p
# skews nothing; for a 0/1 sequence the Wald-Wolfowitz runs test is the lag-1 test.

from __future__ import annotations

import math
from typing import Sequence

import torch

from evaluator.contracts import host_scalars
from evaluator.randomness.limits import MIN_SAMPLES, chi2_limits, fmt_number, normal_limit
from evaluator.randomness.sampling import flat_values, raw_bits
from evaluator.randomness.shared_values import shared_values, two_way_splits
from evaluator.randomness.windows import (block_sizes, block_sums, correlate, far_lags, pair_starts, window_lags,
                                          window_positions)


def _serial_correlation(x: torch.Tensor, what: str) -> list[str]:
    """Correlation of the flat float64 values at every lag below WINDOW // 2, in windows."""
    n = x.numel()
    if n < 2 * MIN_SAMPLES:
        return []
    v = x[window_positions(n, x.device)]
    a = v - v.mean()
    r = correlate(a, a)
    lags = window_lags(v.shape[1], both_signs=False)
    pairs = torch.tensor([v.shape[0] * (v.shape[1] - k) for k in lags], dtype=torch.float64, device=x.device)
    z = r[1:len(lags) + 1] / (a.square().mean() * pairs.sqrt()).clamp_min(1e-300)
    worst = z.abs().argmax()
    score, index = host_scalars(z[worst], worst)
    limit = normal_limit(len(lags))
    if abs(score) <= limit:
        return []
    lag = lags[int(index)]
    count = v.shape[0] * (v.shape[1] - lag)
    return [f"{what} {lag} elements apart are correlated (correlation {fmt_number(score / math.sqrt(count))} over {count} "
            f"pairs, {fmt_number(abs(score))} standard errors where independent draws stay within {fmt_number(limit)}): "
            f"x[i + {lag}] depends on x[i] (values mirrored as 1 - u, shifted, or reused from a neighbouring "
            "block); draw every element from its own counter of a seeded generator (tl.rand(seed, offsets) with "
            "distinct offsets)"]


def cells(x: torch.Tensor, low: float, high: float, bins: int) -> torch.Tensor:
    """Which of `bins` equal-width bins of [low, high) each value falls in."""
    return ((x - low) * (bins / (high - low))).floor().clamp(0, bins - 1).to(torch.int64)


def joint_bins(pairs: int) -> int:
    return 16 if pairs >= 16 * 256 else 8 if pairs >= 8 * 64 else 4 if pairs >= 8 * 16 else 0


def contingency_chi2(first: torch.Tensor, second: torch.Tensor, bins: int,
                      pairs: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Chi-square statistic of independence of the `pairs` bin pairs (first[i], second[i]), with the
    numbers of rows and of columns of the joint histogram that hold any pair (device scalars)."""
    table = torch.bincount(first * bins + second, minlength=bins * bins).reshape(bins, bins).to(torch.float64)
    rows, cols = table.sum(1), table.sum(0)
    expected = rows[:, None] * cols[None, :] / pairs
    chi2 = torch.where(expected > 0, (table - expected).square() / expected.clamp_min(1e-300),
                       torch.zeros_like(expected)).sum()
    return chi2, (rows > 0).sum(), (cols > 0).sum()


def serial_independence(x: torch.Tensor, low: float, high: float, lags: Sequence[int], what: str) -> list[str]:
    """Chi-square test of independence of (x[i], x[i + lag]) on a grid of equal-width bins, at each
    lag of `lags`, on up to PAIR_SAMPLE pairs sharing no element."""
    n = x.numel()
    tested, stats_ = [], []
    finest = cells(x, low, high, 16)
    for lag in lags:
        starts = pair_starts(n, lag, x.device)
        bins = joint_bins(starts.numel())
        if not bins:
            continue
        first, second = (finest[i] // (16 // bins) for i in (starts, starts + lag))
        tested.append((lag, starts.numel()))
        stats_ += contingency_chi2(first, second, bins, starts.numel())
    if not tested:
        return []
    values = host_scalars(*stats_)
    failures = []
    for (lag, pairs), (chi2, r, c) in zip(tested, zip(values[0::3], values[1::3], values[2::3])):
        dof = int((r - 1) * (c - 1))
        if dof < 1:
            continue
        limit = chi2_limits(dof, len(tested))[1]
        if chi2 > limit:
            failures.append(
                f"{what} {lag} elements apart are not independent: the joint histogram of (x[i], x[i+{lag}]) "
                f"over {pairs} pairs departs from independence (chi-square {fmt_number(chi2)} on {dof} degrees of "
                f"freedom, allowed {fmt_number(limit)}); part of the output is a function of another part (1 - x, "
                "x + c modulo 1, a copy, or the same counters in several programs): give every element its own "
                "counter of a generator seeded afresh on each call")
            if len(failures) >= 2:
                break
    return failures


def block_sums_check(x: torch.Tensor, shape: Sequence[int]) -> list[str]:
    """The sums of blocks of consecutive elements must spread as independent draws make them:
    sum (S_j - B m)^2 / (B s^2) ~ chi-square with (blocks - 1) degrees of freedom, two-sided."""
    n = x.numel()
    sizes = block_sizes(n, shape, min_blocks=8)
    if not sizes:
        return []
    mean, var = x.mean(), x.var(unbiased=False)
    values = host_scalars(*((block_sums(x, size) - size * mean).square().sum() / (size * var).clamp_min(1e-300)
                            for size in sizes))
    for size, t in zip(sizes, values):
        blocks = n // size
        lower, upper = chi2_limits(blocks - 1, len(sizes))
        if t < lower or t > upper:
            how = ("too little: values are paired or stratified within blocks (u with 1 - u, one value per "
                   "sub-range) instead of independent" if t < lower else
                   "too much: blocks come from different distributions or reuse each other's numbers")
            return [f"the sums of blocks of {size} consecutive elements vary {how} (chi-square "
                    f"{fmt_number(t)} on {blocks - 1} degrees of freedom, allowed {fmt_number(lower)} to {fmt_number(upper)})"]
    return []


def independence_checks(t: torch.Tensor, low: float, high: float, what: str = "values",
                        x: torch.Tensor | None = None) -> list[str]:
    """Every independence test of one output of values spread over [low, high) (`x`: its flat_values,
    when already at hand)."""
    x = flat_values(t) if x is None else x
    n = x.numel()
    if n < 2 * MIN_SAMPLES:
        return []
    failures = _serial_correlation(x, what)
    if not failures:
        failures += serial_independence(x, low, high, far_lags(n, t.shape), what)
    failures += shared_values([(raw_bits(t), x)], low, high, two_way_splits(n, t.shape))
    failures += block_sums_check(x, t.shape)
    return failures
