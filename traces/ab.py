"""A/B comparison of two arms (or two runs) on the same tasks and samples: paired tests, fast_p
curves, effect sizes, and a verdict in plain words that states its uncertainty.

Chains are paired by (task, sample). Correctness (the chain reached a CORRECT kernel) is compared
with McNemar's exact test on the discordant pairs; speed (best correct speedup, pairs where both
are correct and timed) with the Wilcoxon signed-rank test and a bootstrap interval for the
geometric-mean speedup ratio.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

BOOTSTRAP = 4000
POWER = 0.8
FAST_P_GRID = tuple(np.round(np.arange(0.0, 3.01, 0.25), 2))


@dataclass
class Comparison:
    a: str
    b: str
    pairs: int
    correct_a: int
    correct_b: int
    only_a: int
    only_b: int
    mcnemar_p: float
    rate_difference: float
    rate_difference_ci: tuple[float, float]
    speed_pairs: int = 0
    wilcoxon_p: float = float("nan")
    geomean_ratio: float = float("nan")
    geomean_ratio_ci: tuple[float, float] = (float("nan"), float("nan"))
    rank_biserial: float = float("nan")
    fast_p: dict[float, tuple[float, float]] = field(default_factory=dict)
    chains_for_power: int | None = None  # per arm, to detect the observed rates' difference (80%, alpha 0.05)
    verdict: str = ""


def _paired(chains_a: pd.DataFrame, chains_b: pd.DataFrame) -> pd.DataFrame:
    keys = ["task_id", "sample"]
    return chains_a.merge(chains_b, on=keys, suffixes=("_a", "_b"))


def _fast_p(speedups: pd.Series, correct: pd.Series, p: float) -> float:
    return float(((speedups > p) & correct).mean())


def compare(chains_a: pd.DataFrame, chains_b: pd.DataFrame, a: str = "A", b: str = "B", seed: int = 0) -> Comparison:
    from scipy.stats import wilcoxon
    from statsmodels.stats.contingency_tables import mcnemar

    paired = _paired(chains_a, chains_b)
    if paired.empty:
        raise ValueError(f"{a} and {b} share no (task, sample) chains to compare")
    ca, cb = paired["correct_a"].astype(bool), paired["correct_b"].astype(bool)
    only_a, only_b = int((ca & ~cb).sum()), int((~ca & cb).sum())
    table = [[int((ca & cb).sum()), only_a], [only_b, int((~ca & ~cb).sum())]]
    mcnemar_p = float(mcnemar(table, exact=True).pvalue) if only_a + only_b else 1.0
    rng = np.random.default_rng(seed)
    diff = (cb.astype(float) - ca.astype(float)).to_numpy()
    draws = rng.choice(diff, (BOOTSTRAP, len(diff))).mean(axis=1)
    result = Comparison(a, b, len(paired), int(ca.sum()), int(cb.sum()), only_a, only_b, mcnemar_p,
                        float(diff.mean()), tuple(float(x) for x in np.quantile(draws, [0.025, 0.975])))
    both = paired[ca & cb].dropna(subset=["best_speedup_a", "best_speedup_b"])
    result.speed_pairs = len(both)
    if len(both) >= 2:
        logs = np.log(both["best_speedup_b"].to_numpy()) - np.log(both["best_speedup_a"].to_numpy())
        result.geomean_ratio = float(np.exp(logs.mean()))
        boot = np.exp(rng.choice(logs, (BOOTSTRAP, len(logs))).mean(axis=1))
        result.geomean_ratio_ci = tuple(float(x) for x in np.quantile(boot, [0.025, 0.975]))
        nonzero = logs[logs != 0]
        if len(nonzero):
            result.wilcoxon_p = float(wilcoxon(logs, zero_method="wilcox").pvalue)
            ranks = pd.Series(np.abs(nonzero)).rank().to_numpy()
            result.rank_biserial = float((ranks[nonzero > 0].sum() - ranks[nonzero < 0].sum()) / ranks.sum())
    timed = paired.dropna(subset=["best_speedup_a", "best_speedup_b"], how="all")
    if len(timed):
        result.fast_p = {p: (_fast_p(paired["best_speedup_a"].fillna(0), ca, p),
                             _fast_p(paired["best_speedup_b"].fillna(0), cb, p)) for p in FAST_P_GRID}
    result.chains_for_power = chains_for_power(result.correct_a / result.pairs, result.correct_b / result.pairs)
    result.verdict = plain_verdict(result)
    return result


def chains_for_power(rate_a: float, rate_b: float, power: float = POWER, alpha: float = 0.05) -> int | None:
    """Chains per arm that a two-sided test of two proportions needs to detect `rate_a` against
    `rate_b` with `power` at `alpha` (Cohen's h; paired chains need somewhat fewer). None when the
    rates are equal: there is no difference to size."""
    from statsmodels.stats.power import NormalIndPower
    from statsmodels.stats.proportion import proportion_effectsize

    effect = abs(float(proportion_effectsize(rate_a, rate_b)))
    if effect < 1e-9:
        return None
    return int(np.ceil(NormalIndPower().solve_power(effect_size=effect, alpha=alpha, power=power, ratio=1.0)))


def plain_verdict(c: Comparison, alpha: float = 0.05) -> str:
    low, high = (100 * x for x in c.rate_difference_ci)
    diff = 100 * c.rate_difference
    if c.mcnemar_p < alpha:
        better = c.b if diff > 0 else c.a
        text = (f"{better} reaches a correct kernel more often: {diff:+.1f} points for {c.b} over {c.a} "
                f"(95% CI {low:+.1f} to {high:+.1f}; McNemar p = {c.mcnemar_p:.3g}, {c.pairs} paired chains).")
    else:
        text = (f"No detectable difference in correctness between {c.a} and {c.b}: {diff:+.1f} points "
                f"(95% CI {low:+.1f} to {high:+.1f}; McNemar p = {c.mcnemar_p:.3g}, {c.pairs} paired chains); "
                f"a difference inside that interval cannot be ruled out.")
    if c.speed_pairs >= 2:
        rlow, rhigh = c.geomean_ratio_ci
        if not np.isnan(c.wilcoxon_p) and c.wilcoxon_p < alpha:
            faster = c.b if c.geomean_ratio > 1 else c.a
            text += (f" Where both are correct, {faster} is faster: {c.b}/{c.a} geometric-mean speedup ratio "
                     f"{c.geomean_ratio:.2f} (95% CI {rlow:.2f} to {rhigh:.2f}; Wilcoxon p = {c.wilcoxon_p:.3g}, "
                     f"{c.speed_pairs} pairs).")
        else:
            text += (f" Where both are correct, no detectable difference in speed: ratio {c.geomean_ratio:.2f} "
                     f"(95% CI {rlow:.2f} to {rhigh:.2f}; {c.speed_pairs} pairs).")
    else:
        text += " Too few chains are correct and timed in both arms to compare speed."
    if c.chains_for_power is not None:
        text += (f" To detect a difference this size ({100 * c.correct_a / c.pairs:.0f}% against "
                 f"{100 * c.correct_b / c.pairs:.0f}% correct) with {100 * POWER:.0f}% power at alpha {alpha:g} "
                 f"takes about {c.chains_for_power} chains per arm (two-proportion approximation).")
    return text
