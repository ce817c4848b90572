"""What correctness depends on: a chain's task category, method, feedback set and arm, and an
attempt's round, each tested with its degrees of freedom and shown with per-level intervals.

Chains: logistic regression of "the chain reached a correct kernel". Each factor gets Rao's score
test against the model without it (and without the factors nested in it: an arm belongs to one
method, so testing a method leaves its arms out, and testing an arm keeps its method in). Factors
whose levels coincide (each arm its own method) are one factor. The score test needs only the
smaller model's fit, so separation in the larger one (a level whose chains all pass) cannot inflate
it. A factor's share of the null deviance is shown, but only p-values compare across factors: more
levels explain more deviance by chance.

Rounds: among the model's own attempts, "this attempt is correct" by round, adjusted for the chain
factors, fitted by GEE with attempts clustered in their chain, and a robust Wald test of the round
terms. Chains that stop once correct leave later rounds to harder tasks, so this says where
successes happen, not that later rounds cause them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from traces.frames import CHAIN_KEY, chains_frame, llm_rounds
from traces.intervals import design_effect, wilson

FACTORS = ("category", "method", "feedback", "arm")  # coarse to fine
MIN_CHAINS_PER_PARAMETER = 10
MIN_ATTEMPTS_PER_PARAMETER = 10


def attribution(frame: pd.DataFrame) -> dict:
    """The chain tests ("tests", "levels"), the round test ("round"), and "note" where data are too few."""
    chains = chains_frame(frame)
    if not chains.empty:
        chains = chains.merge(chain_feedback(frame), on=CHAIN_KEY, how="left")
    result = chain_attribution(chains)
    result["round"] = round_attribution(frame)
    return result


def chain_feedback(frame: pd.DataFrame) -> pd.DataFrame:
    """Per chain, the feedback signals its prompts carried (sorted, comma-joined; "none")."""
    rows = []
    for key, chain in llm_rounds(frame).groupby(CHAIN_KEY, sort=True):
        signals = sorted({s for text in chain["feedback"].fillna("") for s in text.split(",") if s})
        rows.append({**dict(zip(CHAIN_KEY, key)), "feedback": ",".join(signals) or "none"})
    return pd.DataFrame(rows, columns=CHAIN_KEY + ["feedback"])


def chain_attribution(chains: pd.DataFrame) -> dict:
    """The score test of each factor over chains (columns of FACTORS present, and correct)."""
    if chains.empty:
        return {"note": "no chains"}
    data = chains.assign(correct=chains["correct"].astype(int))
    factors = [f for f in FACTORS if f in data and data[f].nunique() > 1]
    base = {"chains": len(data), "levels": {f: level_rates(data, f) for f in factors}}
    if data["correct"].nunique() < 2:
        return {**base, "note": "every chain has the same outcome: nothing to attribute"}
    if not factors:
        return {**base, "note": "needs more than one category, method, feedback set or arm"}
    steps = attribution_steps(data, factors)
    parameters = 1 + sum(data[full[-1]].nunique() - 1 for _, full, _ in steps)
    result = {**base, "parameters": parameters, **_tests(data, steps)}
    if len(data) < MIN_CHAINS_PER_PARAMETER * parameters:
        result["note"] = (f"not enough data: {len(data)} chains for {parameters} parameters (about "
                          f"{MIN_CHAINS_PER_PARAMETER} chains per parameter are needed); the tests are rough")
    return result


def _tests(data: pd.DataFrame, steps: list[tuple[str, list[str], list[str]]]) -> dict:
    tests = {name: score_test(data, full, reduced) for name, full, reduced in steps}
    null = next(iter(tests.values()))["null"]
    for test in tests.values():
        del test["null"]
    return {"null_deviance": null, "tests": tests}


def attribution_steps(data: pd.DataFrame, factors: list[str]) -> list[tuple[str, list[str], list[str]]]:
    """(name, factors of the larger model, factors of the smaller) for each test, coarse factors first."""
    groups = sorted(_merged(data, factors), key=lambda g: FACTORS.index(g[0]))
    return [_step(data, groups, group) for group in groups]


def _merged(data: pd.DataFrame, factors: list[str]) -> list[list[str]]:
    """Factors with the same levels as one group, named by its finest member (listed first)."""
    groups: list[list[str]] = []
    for f in reversed(factors):
        same = next((g for g in groups if _nested(data, g[0], f) and _nested(data, f, g[0])), None)
        if same is not None:
            same.append(f)
        else:
            groups.append([f])
    return groups


def _step(data: pd.DataFrame, groups: list[list[str]], group: list[str]) -> tuple[str, list[str], list[str]]:
    """The test of `group` against the model of every other group except those nested in it."""
    tested, others = group[0], [g[0] for g in groups if g is not group]
    within = [o for o in others if _nested(data, tested, o)]
    name = tested + (f" (its {', '.join(group[1:])})" if len(group) > 1 else "")
    name += f" within its {', '.join(within)}" if within else ""
    reduced = [f for f in FACTORS if f in others and not _nested(data, f, tested)]
    return name, reduced + [tested], reduced


def _nested(data: pd.DataFrame, fine: str, coarse: str) -> bool:
    """Every level of `fine` falls within one level of `coarse`."""
    return bool(data.groupby(fine)[coarse].nunique().max() == 1)


def level_rates(data: pd.DataFrame, factor: str) -> dict[str, dict]:
    """Per level: chains, correct, and a 95% Wilson interval of the rate, its counts divided by the
    design effect of chains clustered in tasks."""
    out = {}
    for level, rows in data.groupby(factor, sort=True):
        deff = design_effect(rows.assign(correct=rows["correct"].astype(bool))) if "task_id" in rows else 1.0
        low, high = wilson(float(rows["correct"].sum()) / deff, len(rows) / deff)
        out[str(level)] = {"chains": int(len(rows)), "correct": int(rows["correct"].sum()),
                           "rate": float(rows["correct"].mean()), "ci": (float(low), float(high))}
    return out


def score_test(data: pd.DataFrame, full: list[str], reduced: list[str]) -> dict:
    """Rao's score test of the factors in `full` beyond `reduced` (logistic regression): the
    statistic, its degrees of freedom and p, the null deviance, and the share of it the factors explain."""
    import statsmodels.api as sm

    y, x_full = _design(data, full)
    kept = _independent(_design(data, reduced)[1], [])
    x_small = _design(data, reduced)[1][kept]
    extra = _independent(x_full, [c for c in kept if c in x_full.columns])[len(kept):]
    x_full = pd.concat([x_small, x_full[extra]], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = sm.GLM(y, x_small, family=sm.families.Binomial()).fit()
        big = sm.GLM(y, x_full, family=sm.families.Binomial()).fit()
        constrained = np.array([small.params.get(c, 0.0) for c in x_full.columns])
        statistic = float(np.ravel(sm.GLM(y, x_full, family=sm.families.Binomial()).score_test(
            constrained, k_constraints=len(extra))[0])[0]) if extra else 0.0
    share = (small.deviance - big.deviance) / big.null_deviance if big.null_deviance > 0 else float("nan")
    return {"score": statistic, "df": len(extra), "p": chi2_sf(statistic, len(extra)),
            "deviance_share": float(max(0.0, share)), "null": float(big.null_deviance)}


def _design(data: pd.DataFrame, factors: list[str]):
    import patsy

    return patsy.dmatrices("correct ~ " + (" + ".join(f"C({f})" for f in factors) or "1"), data,
                           return_type="dataframe")


def _independent(columns: pd.DataFrame, kept: list[str]) -> list[str]:
    """`kept`, then each further column of `columns` that is not a combination of those before it."""
    kept = list(kept)
    for column in (c for c in columns.columns if c not in kept):
        if np.linalg.matrix_rank(columns[kept + [column]].to_numpy()) > len(kept):
            kept.append(column)
    return kept


def chi2_sf(statistic: float, df: int) -> float:
    from scipy.stats import chi2

    return float(chi2.sf(statistic, df)) if df > 0 else float("nan")


def round_attribution(frame: pd.DataFrame) -> dict:
    """Attempt correctness by round, adjusted for the chain factors, attempts clustered in chains."""
    attempts = llm_rounds(frame)
    if attempts.empty or attempts["round"].nunique() < 2:
        return {"note": "needs attempts at more than one round"}
    data = attempts.assign(correct=attempts["correct"].astype(int),
                           chain=attempts[CHAIN_KEY].astype(str).agg("/".join, axis=1))
    levels = _round_levels(data)
    if data["correct"].nunique() < 2:
        return {"note": "every attempt has the same outcome: nothing to attribute", "levels": levels}
    adjust = [f for f in ("category", "method", "arm") if data[f].nunique() > 1]
    statistic, df, p = _gee_wald(data, adjust)
    result = {"attempts": len(data), "chains": int(data["chain"].nunique()), "wald": statistic, "df": df,
              "p": p, "levels": levels}
    parameters = 1 + sum(data[f].nunique() - 1 for f in adjust + ["round"])
    if data["chain"].nunique() < MIN_CHAINS_PER_PARAMETER * parameters / 2 or \
            len(data) < MIN_ATTEMPTS_PER_PARAMETER * parameters:
        result["note"] = (f"not enough data: {len(data)} attempts in {data['chain'].nunique()} chains for "
                          f"{parameters} parameters; the test is rough")
    return result


def _round_levels(data: pd.DataFrame) -> dict[str, dict]:
    out = {}
    for round_, rows in data.groupby("round", sort=True):
        deff = design_effect(rows.assign(correct=rows["correct"].astype(bool)))
        low, high = wilson(float(rows["correct"].sum()) / deff, len(rows) / deff)
        out[str(round_)] = {"attempts": int(len(rows)), "correct": int(rows["correct"].sum()),
                            "rate": float(rows["correct"].mean()), "ci": (float(low), float(high))}
    return out


def _gee_wald(data: pd.DataFrame, adjust: list[str]) -> tuple[float, int, float]:
    """Robust Wald test of the round terms in a GEE logistic model (exchangeable within chains)."""
    import statsmodels.api as sm

    y, x = _design(data, adjust + ["round"])
    columns = _independent(x, [])
    x = x[columns]
    terms = [k for k, c in enumerate(columns) if c.startswith("C(round)")]
    if not terms:
        return float("nan"), 0, float("nan")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = sm.GEE(y, x, groups=data["chain"], family=sm.families.Binomial(),
                     cov_struct=sm.cov_struct.Exchangeable()).fit()
        params, cov = np.asarray(fit.params)[terms], np.asarray(fit.cov_params())[np.ix_(terms, terms)]
    try:
        statistic = float(params @ np.linalg.solve(cov, params))
    except np.linalg.LinAlgError:
        return float("nan"), len(terms), float("nan")
    if not np.isfinite(statistic):
        return float("nan"), len(terms), float("nan")
    return statistic, len(terms), chi2_sf(statistic, len(terms))
