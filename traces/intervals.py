"""Intervals that respect how a run's chains are grouped: a task's chains are replicates, not
independent draws. Wilson and Newcombe score intervals (never of zero width), the design effect of
chains clustered in tasks, and a bootstrap that resamples whole tasks."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

BOOTSTRAP = 2000  # draws of the task bootstrap


def wilson(count: float, n: float, z: float = 1.959963984540054) -> tuple[float, float]:
    p = count / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def newcombe_interval(count_a: float, n_a: float, count_b: float, n_b: float) -> tuple[float, float]:
    """95% interval of rate_b - rate_a from the two Wilson score intervals (Newcombe's method 10)."""
    la, ha = wilson(count_a, n_a)
    lb, hb = wilson(count_b, n_b)
    pa, pb = count_a / n_a, count_b / n_b
    d = pb - pa
    return (d - math.sqrt((pb - lb) ** 2 + (ha - pa) ** 2), d + math.sqrt((hb - pb) ** 2 + (pa - la) ** 2))


def design_effect(chains: pd.DataFrame) -> float:
    """1 + (m - 1) x ICC for correctness, chains clustered by task (ANOVA estimator, ICC floored at 0)."""
    groups = [g["correct"].astype(float).to_numpy() for _, g in chains.groupby(["task_id", "arm"])]
    sizes = np.array([len(g) for g in groups])
    if len(groups) < 2 or sizes.sum() <= len(groups):
        return 1.0
    values = np.concatenate(groups)
    grand = values.mean()
    between = sum(len(g) * (g.mean() - grand) ** 2 for g in groups) / (len(groups) - 1)
    within = sum(((g - g.mean()) ** 2).sum() for g in groups) / (sizes.sum() - len(groups))
    m0 = (sizes.sum() - (sizes ** 2).sum() / sizes.sum()) / (len(groups) - 1)
    icc = (between - within) / (between + (m0 - 1) * within) if between + (m0 - 1) * within > 0 else 1.0
    return float(1 + (sizes.mean() - 1) * min(max(icc, 0.0), 1.0))


def cluster_bootstrap_ci(clusters: list[np.ndarray], seed: int = 0, level: float = 0.95) -> tuple[float, float]:
    """Interval of the mean of all values, resampling whole clusters (tasks): chains of one task are
    not independent. NaN with fewer than two clusters."""
    if len(clusters) < 2:
        return (float("nan"), float("nan"))
    rng = np.random.default_rng(seed)
    sums, counts = np.array([c.sum() for c in clusters]), np.array([len(c) for c in clusters])
    picked = rng.integers(0, len(clusters), (BOOTSTRAP, len(clusters)))
    draws = sums[picked].sum(axis=1) / counts[picked].sum(axis=1)
    low, high = np.quantile(draws, [(1 - level) / 2, 1 - (1 - level) / 2])
    return float(low), float(high)
