"""A/B comparison of two arms on the same tasks, with the task as the unit of analysis.

A task's chains are replicates of one measurement, not independent pairs: chains of the two arms
share no randomness, so pairing them by sample number would be arbitrary, and one task's chains
agree with each other far more than chains of different tasks do. So:

- correctness: per task, the share of its chains that reached a CORRECT kernel, in each arm; the
  arms are compared by the Wilcoxon signed-rank test on the per-task differences (exact for few
  tasks; tasks without a difference drop out), and the effect is the difference of the pooled rates
  with Newcombe's score interval, its counts divided by the design effect of chains clustered in
  tasks (so the interval widens where a task's chains agree, and never has zero width);
- speed: per task, the geometric mean of its chains' best correct, timed speedups, in each arm;
  over the tasks with such chains in both arms, the Wilcoxon signed-rank test on the per-task log
  ratios, the rank-biserial effect size and the geometric-mean ratio, each with an interval from a
  bootstrap that resamples tasks, then chains within each task;
- the two p-values are adjusted together (Holm), and the verdict sentence uses the adjusted ones;
- fast_p as KernelBench defines it: per task, the share of its chains whose best correct kernel
  beats eager PyTorch by more than p, averaged over tasks; unknown where a correct chain is untimed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from traces.intervals import design_effect, newcombe_interval
from traces.stats import kernelbench_fast_p

BOOTSTRAP = 4000
POWER = 0.8
FAST_P_GRID = tuple(np.round(np.arange(0.0, 3.01, 0.25), 2))


@dataclass
class Comparison:
    a: str
    b: str
    tasks: int                       # tasks both arms ran
    chains_a: int
    chains_b: int
    correct_a: int
    correct_b: int
    tasks_b_better: int              # tasks where B's correct rate is higher
    tasks_a_better: int
    correctness_p: float             # Wilcoxon signed-rank over tasks, before adjustment
    rate_difference: float           # B's pooled correct rate minus A's
    rate_difference_ci: tuple[float, float]
    design_effect: float
    speed_tasks: int = 0
    speed_p: float = float("nan")
    geomean_ratio: float = float("nan")  # B over A, over tasks
    geomean_ratio_ci: tuple[float, float] = (float("nan"), float("nan"))
    rank_biserial: float = float("nan")  # > 0: B faster on more (and larger) tasks
    rank_biserial_ci: tuple[float, float] = (float("nan"), float("nan"))
    adjusted_p: dict[str, float] = field(default_factory=dict)  # Holm, over the tests the verdict uses
    fast_p: dict[float, tuple[float, float]] = field(default_factory=dict)  # NaN: unknown
    tasks_for_power: int | None = None  # tasks to detect the observed per-task difference (80%, alpha 0.05)
    verdict: str = ""


def compare(chains_a: pd.DataFrame, chains_b: pd.DataFrame, a: str = "A", b: str = "B", seed: int = 0) -> Comparison:
    """`chains_a`, `chains_b`: chains_frame rows of one arm each."""
    for name, chains in ((a, chains_a), (b, chains_b)):
        if chains["arm"].nunique() > 1:
            raise ValueError(f"{name} holds chains of several arms ({', '.join(sorted(chains['arm'].unique()))}); "
                             "compare one arm with one arm")
    shared = sorted(set(chains_a["task_id"]) & set(chains_b["task_id"]))
    if not shared:
        raise ValueError(f"{a} and {b} share no task to compare")
    chains_a, chains_b = (c[c["task_id"].isin(shared)] for c in (chains_a, chains_b))
    rates = pd.DataFrame({"a": _rates(chains_a), "b": _rates(chains_b)}).loc[shared]
    difference = rates["b"] - rates["a"]
    ca, cb = int(chains_a["correct"].sum()), int(chains_b["correct"].sum())
    deff = design_effect(pd.concat([chains_a, chains_b]))
    result = Comparison(a, b, len(shared), len(chains_a), len(chains_b), ca, cb, int((difference > 0).sum()),
                        int((difference < 0).sum()), signed_rank_p(difference.to_numpy()),
                        cb / len(chains_b) - ca / len(chains_a),
                        newcombe_interval(ca / deff, len(chains_a) / deff, cb / deff, len(chains_b) / deff), deff)
    _speed(result, chains_a, chains_b, np.random.default_rng(seed))
    result.adjusted_p = holm({"correctness": result.correctness_p, "speed": result.speed_p})
    result.fast_p = {p: (kernelbench_fast_p(chains_a, p), kernelbench_fast_p(chains_b, p)) for p in FAST_P_GRID}
    result.tasks_for_power = tasks_for_power(difference.to_numpy())
    result.verdict = plain_verdict(result)
    return result


def _rates(chains: pd.DataFrame) -> pd.Series:
    return chains.groupby("task_id")["correct"].mean().astype(float)


def signed_rank_p(differences: np.ndarray) -> float:
    """Two-sided Wilcoxon signed-rank p over tasks; 1 when no task differs."""
    from scipy.stats import wilcoxon

    nonzero = differences[differences != 0]
    if len(nonzero) == 0:
        return 1.0
    return float(wilcoxon(nonzero, zero_method="wilcox", method="exact" if len(nonzero) <= 25 else "auto").pvalue)


def _speed(result: Comparison, chains_a: pd.DataFrame, chains_b: pd.DataFrame, rng: np.random.Generator) -> None:
    logs_a, logs_b = _log_speedups(chains_a), _log_speedups(chains_b)
    tasks = sorted(set(logs_a) & set(logs_b))
    result.speed_tasks = len(tasks)
    if len(tasks) < 2:
        return
    per_task = np.array([logs_b[t].mean() - logs_a[t].mean() for t in tasks])
    result.geomean_ratio = float(np.exp(per_task.mean()))
    result.speed_p = signed_rank_p(per_task)
    result.rank_biserial = float(rank_biserial(per_task[None, :])[0])
    # per task and draw, the difference of its resampled chains' means; then tasks resampled per draw
    within = np.stack([_resampled_means(logs_b[t], rng) - _resampled_means(logs_a[t], rng) for t in tasks])
    picked = rng.integers(0, len(tasks), (BOOTSTRAP, len(tasks)))
    resampled = within[picked, np.arange(BOOTSTRAP)[:, None]]
    result.geomean_ratio_ci = tuple(float(x) for x in np.exp(np.quantile(resampled.mean(axis=1), [0.025, 0.975])))
    effects = rank_biserial(resampled)
    if not np.isnan(effects).all():  # draws where no task differs have no effect size
        result.rank_biserial_ci = tuple(float(x) for x in np.nanquantile(effects, [0.025, 0.975]))


def rank_biserial(differences: np.ndarray) -> np.ndarray:
    """Matched-pairs rank-biserial correlation of each row of per-task differences (zeros left out):
    the share of rank weight in favour of B minus that against; NaN for a row of zeros."""
    from scipy.stats import rankdata

    magnitude = np.where(differences == 0, np.nan, np.abs(differences))
    ranks = rankdata(magnitude, axis=1, nan_policy="omit")
    total = np.nansum(ranks, axis=1)
    signed = np.nansum(np.where(differences > 0, ranks, 0.0), axis=1) - np.nansum(np.where(differences < 0, ranks, 0.0),
                                                                               axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, signed / total, np.nan)


def _resampled_means(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return rng.choice(values, (BOOTSTRAP, len(values))).mean(axis=1)


def _log_speedups(chains: pd.DataFrame) -> dict[str, np.ndarray]:
    timed = chains[chains["correct"].astype(bool) & chains["best_speedup"].notna() & (chains["best_speedup"] > 0)]
    return {task: np.log(group["best_speedup"].to_numpy(dtype=float)) for task, group in timed.groupby("task_id")}


def holm(p_values: dict[str, float]) -> dict[str, float]:
    """Holm-adjusted p-values of the tests that were run (NaN: not run)."""
    from statsmodels.stats.multitest import multipletests

    run = {name: p for name, p in p_values.items() if not math.isnan(p)}
    if not run:
        return {}
    adjusted = multipletests(list(run.values()), method="holm")[1]
    return dict(zip(run, (float(p) for p in adjusted)))


def fewest_tasks(alpha: float = 0.05) -> int:
    """Below this many differing tasks, no two-sided signed-rank test can reach p < alpha."""
    return math.ceil(math.log2(2 / alpha))


def tasks_for_power(differences: np.ndarray, power: float = POWER, alpha: float = 0.05) -> int | None:
    """Tasks a paired test on per-task differences needs to detect the observed mean difference
    (normal approximation, effect = mean / sd); None where nothing differs or every task differs alike."""
    from statsmodels.stats.power import TTestPower

    if len(differences) < 2 or np.std(differences, ddof=1) == 0:
        return None
    effect = abs(float(np.mean(differences) / np.std(differences, ddof=1)))
    if effect < 1e-9:
        return None
    return max(fewest_tasks(alpha), int(np.ceil(TTestPower().solve_power(effect_size=effect, alpha=alpha, power=power))))


def chains_for_power(rate_a: float, rate_b: float, power: float = POWER, alpha: float = 0.05) -> int | None:
    """Chains per arm that a two-sided test of two independent proportions needs to detect `rate_a`
    against `rate_b` with `power` at `alpha` (Cohen's h): a lower bound for planning, since chains of
    one task are not independent. None when the rates are equal."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    effect = abs(float(proportion_effectsize(rate_a, rate_b)))
    if effect < 1e-9:
        return None
    return int(np.ceil(NormalIndPower().solve_power(effect_size=effect, alpha=alpha, power=power, ratio=1.0)))


def plain_verdict(c: Comparison, alpha: float = 0.05) -> str:
    low, high = (100 * x for x in c.rate_difference_ci)
    diff = 100 * c.rate_difference
    p = c.adjusted_p.get("correctness", c.correctness_p)
    counted = (f"{c.tasks} tasks, {c.chains_a} and {c.chains_b} chains; {c.b} better on {c.tasks_b_better}, "
               f"{c.a} on {c.tasks_a_better}")
    if p < alpha:
        better = c.b if diff > 0 else c.a
        text = (f"{better} reaches a correct kernel more often: {diff:+.1f} points for {c.b} over {c.a} "
                f"(95% CI {low:+.1f} to {high:+.1f}; signed-rank test over tasks, Holm-adjusted p = {p:.3g}; "
                f"{counted}).")
    else:
        text = (f"No detectable difference in correctness between {c.a} and {c.b}: {diff:+.1f} points "
                f"(95% CI {low:+.1f} to {high:+.1f}; signed-rank test over tasks, Holm-adjusted p = {p:.3g}; "
                f"{counted}); a difference inside that interval cannot be ruled out.")
    text += _speed_sentence(c, alpha)
    differing = c.tasks_a_better + c.tasks_b_better
    if differing < fewest_tasks(alpha):
        text += (f" With {differing} task(s) differing, no test over tasks can reach p < {alpha:g}: at least "
                 f"{fewest_tasks(alpha)} must differ, so compare on more tasks.")
    elif c.tasks_for_power is not None and c.tasks_for_power > c.tasks:
        text += (f" To detect a per-task difference this size with {100 * POWER:.0f}% power at alpha {alpha:g} "
                 f"takes about {c.tasks_for_power} tasks.")
    return text


def _speed_sentence(c: Comparison, alpha: float) -> str:
    if c.speed_tasks < 2:
        return " Too few tasks have correct, timed chains in both arms to compare speed."
    low, high = c.geomean_ratio_ci
    p = c.adjusted_p.get("speed", c.speed_p)
    detail = (f"{c.b}/{c.a} geometric-mean speedup ratio {c.geomean_ratio:.2f} (95% CI {low:.2f} to {high:.2f}; "
              f"Holm-adjusted p = {p:.3g}; rank-biserial {c.rank_biserial:+.2f}, 95% CI "
              f"{c.rank_biserial_ci[0]:+.2f} to {c.rank_biserial_ci[1]:+.2f}; {c.speed_tasks} tasks)")
    if p < alpha:
        faster = c.b if c.geomean_ratio > 1 else c.a
        return f" Where both are correct, {faster} is faster: {detail}."
    return f" Where both are correct, no detectable difference in speed: {detail}."
