"""A/B tests with the task as the unit: constructed chains with answers worked out by hand.
Each test holds a case the chain-paired analysis got wrong (see traces/ab.py)."""

import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from agentloop.cli import app
from tests.traces.known_store import build
from traces import ab


def chains(arm: str, spec: dict[str, list[tuple[bool, float]]], first_sample: int = 0) -> pd.DataFrame:
    rows = [{"task_id": task, "arm": arm, "sample": first_sample + k, "correct": correct, "best_speedup": speedup}
            for task, outcomes in spec.items() for k, (correct, speedup) in enumerate(outcomes)]
    return pd.DataFrame(rows)


RIGHT, WRONG = (True, 1.0), (False, float("nan"))


def test_samples_are_not_pairs_renumbering_one_arm_changes_nothing():
    spec_a = {"t1": [RIGHT, WRONG, RIGHT, WRONG], "t2": [WRONG, WRONG, RIGHT, WRONG], "t3": [RIGHT] * 4}
    spec_b = {"t1": [RIGHT, RIGHT, RIGHT, WRONG], "t2": [RIGHT, WRONG, RIGHT, RIGHT], "t3": [RIGHT] * 4}
    a = chains("A", spec_a)
    shuffled = chains("A", {task: list(reversed(outcomes)) for task, outcomes in spec_a.items()}, first_sample=7)
    first, second = ab.compare(a, chains("B", spec_b)), ab.compare(shuffled, chains("B", spec_b))
    assert first.correctness_p == second.correctness_p and first.rate_difference_ci == second.rate_difference_ci
    assert first.verdict == second.verdict


def test_one_task_of_three_is_not_significant_however_many_samples():
    spec_a = {"t1": [WRONG] * 8, "t2": [RIGHT] * 8, "t3": [RIGHT] * 8}
    spec_b = {"t1": [RIGHT] * 8, "t2": [RIGHT] * 8, "t3": [RIGHT] * 8}
    result = ab.compare(chains("A", spec_a), chains("B", spec_b))
    assert result.correctness_p == pytest.approx(1.0) and (result.tasks_b_better, result.tasks_a_better) == (1, 0)
    assert "No detectable difference" in result.verdict
    assert "at least 6 must differ" in result.verdict


def test_a_consistent_difference_over_enough_tasks_is_found():
    tasks = [f"t{k}" for k in range(8)]
    result = ab.compare(chains("A", {t: [WRONG, WRONG, RIGHT] for t in tasks}),
                        chains("B", {t: [RIGHT, RIGHT, RIGHT] for t in tasks}))
    assert result.correctness_p == pytest.approx(2 / 2 ** 8)  # exact signed-rank: every task the same way
    assert result.verdict.startswith("B reaches a correct kernel more often: +66.7 points")


def test_intervals_never_collapse_to_zero_width():
    tasks = [f"t{k}" for k in range(3)]
    all_wrong = ab.compare(chains("A", {t: [RIGHT] * 9 for t in tasks}), chains("B", {t: [WRONG] * 9 for t in tasks}))
    low, high = all_wrong.rate_difference_ci
    assert low < high and -1.0 <= low and high < 0 and all_wrong.rate_difference == -1.0
    assert all_wrong.design_effect == pytest.approx(9.0)  # every task's chains agree: 27 chains count as 3
    same = ab.compare(chains("A", {t: [RIGHT, WRONG] for t in tasks}), chains("B", {t: [RIGHT, WRONG] for t in tasks}))
    assert same.rate_difference == 0 and same.rate_difference_ci[0] < 0 < same.rate_difference_ci[1]


def test_the_speed_interval_resamples_chains_within_tasks():
    tasks = {f"t{k}": [(True, 1.0 + 0.1 * k), (True, 1.2 + 0.1 * k)] for k in range(4)}
    faster = {t: [(True, 2 * s) for _, s in outcomes] for t, outcomes in tasks.items()}
    faster["t0"] = [(True, 2.4), (True, 2.0)]  # the same ratio over the task, chain by chain not
    result = ab.compare(chains("A", tasks), chains("B", faster))
    low, high = result.geomean_ratio_ci
    assert result.geomean_ratio == pytest.approx(2.0) and low < 2.0 < high
    assert result.rank_biserial == pytest.approx(1.0) and "rank-biserial +1.00" in result.verdict
    low, high = result.rank_biserial_ci
    assert -1.0 <= low <= high <= 1.0 and "95% CI" in result.verdict.split("rank-biserial")[1]


def test_the_rank_biserial_counts_rank_weight_for_and_against():
    effects = ab.rank_biserial(np.array([[0.3, -0.1, 0.2, 0.0], [0.0, 0.0, 0.0, 0.0], [-1.0, -2.0, 0.5, -3.0]]))
    assert effects[0] == pytest.approx((3 + 2 - 1) / 6) and math.isnan(effects[1])
    assert effects[2] == pytest.approx((1 - 2 - 3 - 4) / 10)


def test_fast_p_is_kernelbenchs_over_tasks_and_unknown_when_untimed():
    a = chains("A", {"t1": [(True, 2.0), (True, 0.5)], "t2": [(True, 1.5), WRONG, WRONG, WRONG]})
    b = chains("B", {"t1": [(True, 2.0), (True, float("nan"))], "t2": [WRONG] * 4})
    result = ab.compare(a, b)
    assert result.fast_p[1.0][0] == pytest.approx((1 / 2 + 1 / 4) / 2)  # per task, then over tasks
    assert math.isnan(result.fast_p[1.0][1])  # a correct chain without a timing: not "slow"


def test_both_tests_are_holm_adjusted_in_the_verdict():
    assert ab.holm({"correctness": 0.01, "speed": 0.04}) == pytest.approx({"correctness": 0.02, "speed": 0.04})
    assert ab.holm({"correctness": 0.2, "speed": float("nan")}) == {"correctness": 0.2}


def test_a_frame_of_several_arms_is_refused():
    mixed = pd.concat([chains("A", {"t1": [RIGHT]}), chains("C", {"t1": [WRONG]})])
    with pytest.raises(ValueError, match="several arms"):
        ab.compare(mixed, chains("B", {"t1": [RIGHT]}))


def test_two_runs_are_compared_arm_to_arm_by_name(tmp_path):
    store = build(tmp_path / "t.db", run_id="r1")
    store.close()
    build(tmp_path / "t.db", run_id="r2").close()
    runner = CliRunner()
    refused = runner.invoke(app, ["ab", "r1", "r2", "--store", str(tmp_path / "t.db")])
    assert refused.exit_code == 2 and "name the one to compare with --arm" in refused.output
    missing = runner.invoke(app, ["ab", "r1", "r2", "--arm", "Z", "--store", str(tmp_path / "t.db")])
    assert missing.exit_code == 2 and "no arm 'Z'" in missing.output
    compared = runner.invoke(app, ["ab", "r1", "r2", "--arm", "A", "--store", str(tmp_path / "t.db")])
    assert compared.exit_code == 0, compared.output
    assert "over 3 tasks" in compared.output and "5/6" in compared.output  # arm A's six chains, not 36 pairs
