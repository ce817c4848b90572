"""Repair-bias statistics from any trace store, as KernelBench-X measured them by hand.

Definitions (all over the model's own rounds; tuning trials are left out):
- compile rate: verdict beyond NO_CODE, STATIC_REJECT and COMPILE_FAIL;
- fast_p, as KernelBench defines it: per task, the share of its chains whose best correct kernel so
  far is faster than eager PyTorch by more than p (speedup > p), averaged over tasks; by round, a
  chain's best kernel up to that round counts (chains that stopped carry theirs forward); with or
  without tuning trials. Unknown (NaN) where a correct kernel has no timing (the CPU interpreter);
- attempt fast_p: the same test over the attempts made at a round (a rate of attempts, not of tasks);
- rescued: a chain whose first correct attempt comes at round >= 1; correct from the start: at
  round 0; each compared by the speedup of that first correct attempt, within task and arm.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from traces.frames import CHAIN_KEY, NO_ATTEMPT, chains_frame, llm_rounds
from traces.intervals import cluster_bootstrap_ci, design_effect, wilson

P_VALUES = (0.0, 1.0, 1.5, 2.0)


def kernelbench_fast_p(chains: pd.DataFrame, p: float) -> float:
    """KernelBench's fast_p over `chains` (task_id, correct, best_speedup per chain): per task, the
    share of its chains correct and faster than p x eager, averaged over tasks; NaN where a correct
    chain is untimed."""
    if chains.empty:
        return float("nan")
    correct = chains["correct"].astype(bool)
    if (correct & chains["best_speedup"].isna()).any():
        return float("nan")
    fast = correct & (chains["best_speedup"] > p)
    return float(fast.groupby(chains["task_id"]).mean().mean())


def fast_p_by_round(frame: pd.DataFrame, with_trials: bool = False) -> pd.DataFrame:
    """Per round, KernelBench's fast_p with each chain's best kernel up to that round."""
    attempts = frame if with_trials else llm_rounds(frame)
    chains = chains_frame(frame)[CHAIN_KEY]
    if attempts.empty or chains.empty:
        return pd.DataFrame()
    rows = []
    for r in range(int(attempts["round"].max()) + 1):
        upto = attempts[(attempts["round"] <= r) & attempts["correct"].astype(bool)]
        best = upto.groupby(CHAIN_KEY)["speedup"].agg(best="max", untimed=lambda v: v.isna().any()).reset_index()
        so_far = chains.merge(best, on=CHAIN_KEY, how="left")
        so_far["correct"] = so_far["untimed"].notna()  # the chain has a correct kernel by round r
        so_far["best_speedup"] = so_far["best"].where(so_far["untimed"] != True)  # noqa: E712 - NaN-aware
        rows.append({"round": r, **{f"fast_{p:g}": kernelbench_fast_p(so_far, p) for p in P_VALUES}})
    return pd.DataFrame(rows)


def fast_p(rows: pd.DataFrame, p: float) -> float:
    """Attempt fast_p: the attempts in `rows` that are correct and faster than p x eager, over all of them."""
    if rows.empty:
        return float("nan")
    correct = rows[rows["correct"]]
    if correct["speedup"].isna().any():
        return float("nan")
    return float((correct["speedup"] > p).sum() / len(rows))


def per_round(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per round: attempts, compile and correct rates of its attempts, attempt fast_p,
    speedups of correct kernels, the share of chains correct by that round (carrying finished chains
    forward), and KernelBench's fast_p by that round over tasks, without and with tuning trials."""
    rounds = llm_rounds(frame)
    if rounds.empty:
        return pd.DataFrame()
    first_correct = chains_frame(frame)["first_correct_round"]
    out = []
    for r, rows in rounds.groupby("round", sort=True):
        speedups = rows.loc[rows["correct"], "speedup"].dropna()
        row = {"round": int(r), "attempts": len(rows), "compile_rate": rows["compiled"].mean(),
               "correct_rate": rows["correct"].mean()}
        row.update({f"attempt_fast_{p:g}": fast_p(rows, p) for p in P_VALUES})
        row["mean_speedup"] = speedups.mean() if len(speedups) else float("nan")
        row["median_speedup"] = speedups.median() if len(speedups) else float("nan")
        row["correct_by_round"] = float((first_correct.dropna() <= r).sum() / len(first_correct))
        out.append(row)
    table = pd.DataFrame(out)
    cumulative = fast_p_by_round(frame).rename(columns=lambda c: c if c == "round" else f"{c}_by_round")
    tuned = fast_p_by_round(frame, with_trials=True)[["round", "fast_1"]].rename(
        columns={"fast_1": "fast_1_by_round_with_tuning"})
    return table.merge(cumulative, on="round", how="left").merge(tuned, on="round", how="left")


def rescued_vs_start(frame: pd.DataFrame, seed: int = 0) -> dict:
    """Speedup of the first correct kernel: chains rescued by repair against chains correct at round 0.

    Each group: its chains, how many were timed, the mean (with an interval resampling tasks) and the
    median. The difference is taken within each task and arm that has timed chains of both kinds,
    then averaged over those strata (pooling them would compare easy tasks with hard ones: the sign
    can flip), with an interval resampling tasks."""
    chains = chains_frame(frame)
    if chains.empty:
        return {}
    correct = chains[chains["correct"]]
    members = {"start": correct[correct["first_correct_round"] == 0],
               "rescued": correct[correct["first_correct_round"] >= 1]}
    out = {}
    for name, rows in members.items():
        timed = rows.dropna(subset=["first_correct_speedup"])
        values = timed["first_correct_speedup"].to_numpy()
        # n: the group's chains; timed: those with a speedup (none on the CPU, where nothing is timed)
        out[name] = {"n": int(len(rows)), "timed": int(len(values)),
                     "mean": float(values.mean()) if len(values) else float("nan"),
                     "median": float(np.median(values)) if len(values) else float("nan"),
                     "ci": cluster_bootstrap_ci([g.to_numpy() for _, g in
                                                 timed.groupby("task_id")["first_correct_speedup"]], seed)}
    difference = _within_task_difference(members, seed + 1)
    if difference:
        out["difference"] = difference
    return out


def _within_task_difference(members: dict[str, pd.DataFrame], seed: int) -> dict:
    """Rescued minus start, per (task, arm) with timed chains of both, averaged; interval over tasks."""
    means = {name: rows.dropna(subset=["first_correct_speedup"]).groupby(["task_id", "arm"])["first_correct_speedup"].mean()
             for name, rows in members.items()}
    strata = (means["rescued"] - means["start"]).dropna()
    if strata.empty:
        return {}
    by_task = [g.to_numpy() for _, g in strata.groupby(level="task_id")]
    return {"mean": float(strata.mean()), "strata": int(len(strata)), "tasks": len(by_task),
            "ci": cluster_bootstrap_ci(by_task, seed)}


def transition_matrix(frame: pd.DataFrame) -> pd.DataFrame:
    """Counts of verdict at round r (rows) to verdict at round r + 1 (columns), within chains."""
    rounds = llm_rounds(frame)
    pairs = []
    for _, chain in rounds.groupby(CHAIN_KEY, sort=False):
        verdicts = chain.sort_values("round")["verdict"].tolist()
        pairs += list(zip(verdicts, verdicts[1:]))
    if not pairs:
        return pd.DataFrame()
    table = pd.crosstab(pd.Series([a for a, _ in pairs], name="from"), pd.Series([b for _, b in pairs], name="to"))
    return table


def by_category(frame: pd.DataFrame, statistic) -> dict[str, object]:
    return {category: statistic(rows) for category, rows in frame.groupby("category", sort=True)}


def correct_rate_interval(chains: pd.DataFrame) -> tuple[float, float]:
    """95% Wilson interval of the share of chains correct, its counts divided by the design effect of
    chains clustered in tasks (a task's chains count as fewer where they agree)."""
    if chains.empty:
        return (float("nan"), float("nan"))
    deff = design_effect(chains)
    return wilson(float(chains["correct"].sum()) / deff, len(chains) / deff)


def summary(frame: pd.DataFrame) -> dict:
    chains = chains_frame(frame)
    timed = chains["best_speedup"].dropna() if not chains.empty else pd.Series(dtype=float)
    real = frame[frame["verdict"] != NO_ATTEMPT] if len(frame) else frame  # stand-ins of empty chains are no attempts
    return {
        "attempts": int(len(real)), "llm_attempts": int((real["trial"] == 0).sum()) if len(real) else 0,
        "chains": int(len(chains)), "correct_chains": int(chains["correct"].sum()) if len(chains) else 0,
        "correct_rate": float(chains["correct"].mean()) if len(chains) else float("nan"),
        "correct_rate_95ci": "{:.0%} to {:.0%}".format(*correct_rate_interval(chains)) if len(chains) else "-",
        "geomean_best_speedup": float(math.exp(np.log(timed).mean())) if len(timed) else float("nan"),
        "geomean_best_speedup_95ci": _geomean_interval(chains),
        "tokens": int(frame["tokens_in"].sum() + frame["tokens_out"].sum()) if len(frame) else 0,
        "cost_usd": float(frame["cost_usd"].sum()) if len(frame) else 0.0,
    }


def _geomean_interval(chains: pd.DataFrame) -> str:
    """95% interval of the geometric mean of chains' best timed speedups, resampling tasks; "-"
    where fewer than two tasks have a timed chain."""
    if chains.empty:
        return "-"
    timed = chains.dropna(subset=["best_speedup"])
    clusters = [np.log(rows["best_speedup"].to_numpy()) for _, rows in timed.groupby("task_id")]
    low, high = cluster_bootstrap_ci(clusters)
    return f"{math.exp(low):.2f}x to {math.exp(high):.2f}x" if len(clusters) >= 2 else "-"


def by_device(frame: pd.DataFrame) -> pd.DataFrame:
    """Where evaluations ran: per GPU model (a mixed cluster reports each apart), its hosts, attempts,
    correct attempts and the median speedup of the correct, timed ones."""
    evaluated = frame[frame["device"].notna()]
    rows = []
    for device, rows_of in evaluated.groupby("device", sort=True):
        timed = rows_of[rows_of["correct"]]["speedup"].dropna()
        rows.append({"device": device, "hosts": int(rows_of["host"].nunique()), "attempts": int(len(rows_of)),
                     "correct": int(rows_of["correct"].sum()),
                     "median_speedup": float(timed.median()) if len(timed) else float("nan")})
    return pd.DataFrame(rows, columns=["device", "hosts", "attempts", "correct", "median_speedup"])
