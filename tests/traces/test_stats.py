"""Repair-bias statistics against values worked out by hand from known_store.CHAINS."""

import math

import numpy as np
import pytest
from scipy.stats import wilcoxon

from traces import ab, stats
from traces.frames import chains_frame, load_frame
from tests.traces.known_store import build


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    store = build(tmp_path_factory.mktemp("known") / "t.db")
    yield load_frame(store, "r")
    store.close()


def test_per_round_rates(frame):
    table = stats.per_round(frame).set_index("round")
    assert table.loc[0, "attempts"] == 12 and table.loc[1, "attempts"] == 9 and table.loc[2, "attempts"] == 3
    assert table.loc[0, "compile_rate"] == pytest.approx(9 / 12)
    assert table.loc[0, "correct_rate"] == pytest.approx(7 / 12)
    assert [table.loc[0, f"attempt_fast_{p}"] for p in ("0", "1", "1.5", "2")] == \
        pytest.approx([7 / 12, 5 / 12, 3 / 12, 1 / 12])
    assert table.loc[0, "mean_speedup"] == pytest.approx(10.5 / 7) and table.loc[0, "median_speedup"] == 1.4
    assert table.loc[1, "compile_rate"] == 1.0 and table.loc[1, "correct_rate"] == pytest.approx(7 / 9)
    assert table.loc[1, "attempt_fast_1"] == pytest.approx(6 / 9)
    assert table.loc[2, "correct_rate"] == pytest.approx(2 / 3) and table.loc[2, "attempt_fast_1"] == pytest.approx(1 / 3)
    assert list(table["correct_by_round"]) == pytest.approx([7 / 12, 10 / 12, 11 / 12])


def test_fast_p_by_round_is_kernelbenchs_over_tasks_with_each_chains_best_so_far(frame):
    """Per task (4 chains: two per arm), chains correct and faster than 1x by round r:
    round 0: softmax 3/4, sum 0/4, gelu 2/4; round 1: softmax 4/4, sum 2/4 (B's 1.1 and 1.3), gelu 2/4
    (A's 1.0 is not faster); round 2: no chain gains, though round 2's own attempts are slower."""
    table = stats.per_round(frame).set_index("round")
    assert list(table["fast_1_by_round"]) == pytest.approx([(3 / 4 + 0 + 2 / 4) / 3, 2 / 3, 2 / 3])
    assert table.loc[2, "attempt_fast_1.5"] == 0 and table.loc[2, "fast_1.5_by_round"] == pytest.approx(1 / 3)
    assert list(table["fast_1_by_round_with_tuning"]) == pytest.approx(list(table["fast_1_by_round"]))  # no trials


def test_a_tuning_trial_counts_only_with_tuning_and_an_untimed_kernel_is_unknown(tmp_path):
    from tests.agentloop.scripted import fake_result
    from traces.records import Attempt

    store = build(tmp_path / "t.db")
    # a tuning trial at round 0 of A's Reduce/sum sample 0 (wrong at round 0) reaches 3x
    store.add_attempt(Attempt(run_id="r", task_id="Reduce/sum", arm="A", sample=0, round=0, trial=1, mode="tune",
                              decision="d", prompt=[], response="", code="# tuned\n",
                              result=fake_result("Reduce/sum", "CORRECT", 3.0)))
    table = stats.per_round(load_frame(store, "r")).set_index("round")
    assert table.loc[0, "fast_1_by_round"] == pytest.approx((3 / 4 + 0 + 2 / 4) / 3)
    assert table.loc[0, "fast_1_by_round_with_tuning"] == pytest.approx((3 / 4 + 1 / 4 + 2 / 4) / 3)
    store.add_attempt(Attempt(run_id="r", task_id="Reduce/sum", arm="B", sample=0, round=0, trial=1, mode="tune",
                              decision="d", prompt=[], response="", code="# untimed\n",
                              result=fake_result("Reduce/sum", "CORRECT", None)))
    with_untimed = stats.fast_p_by_round(load_frame(store, "r"), with_trials=True).set_index("round")
    assert math.isnan(with_untimed.loc[0, "fast_1"])
    store.close()


def test_rescued_kernels_against_kernels_correct_from_the_start(frame):
    result = stats.rescued_vs_start(frame)
    assert result["start"]["n"] == 7 and result["start"]["mean"] == pytest.approx(1.5)
    assert result["rescued"]["n"] == 4 and result["rescued"]["mean"] == pytest.approx(1.05)
    # within task and arm: softmax A 1.2 - 2.0, gelu A 1.0 - 1.6, sum B 1.1 - 1.0, gelu B 0.9 - 1.2
    assert result["difference"]["mean"] == pytest.approx((-0.8 - 0.6 + 0.1 - 0.3) / 4)
    assert (result["difference"]["strata"], result["difference"]["tasks"]) == (4, 3)
    low, high = result["rescued"]["ci"]
    assert 0.9 <= low <= 1.05 <= high <= 1.2
    dlow, dhigh = result["difference"]["ci"]
    assert dlow < -0.4 < dhigh


def test_rescued_against_start_is_compared_within_tasks_where_pooling_flips_the_sign():
    """Rescued chains are mostly on the slow task, chains correct at once mostly on the fast one:
    pooled, rescued look 1.1 slower; within each task they are 0.2 faster."""
    import pandas as pd
    from unittest import mock

    rows = [("slow", 0, 1.0)] * 1 + [("slow", 1, 1.2)] * 5 + [("fast", 0, 3.0)] * 5 + [("fast", 1, 3.2)] * 1
    chains = pd.DataFrame([{"run_id": "r", "task_id": t, "arm": "A", "sample": k, "correct": True,
                            "first_correct_round": r, "first_correct_speedup": v}
                           for k, (t, r, v) in enumerate(rows)])
    with mock.patch.object(stats, "chains_frame", lambda frame: chains):
        result = stats.rescued_vs_start(None)
    assert result["rescued"]["mean"] < result["start"]["mean"]
    assert result["difference"]["mean"] == pytest.approx(0.2) and result["difference"]["strata"] == 2


def test_transition_matrix(frame):
    table = stats.transition_matrix(frame)
    expected = {("CORRECT", "CORRECT"): 5, ("COMPILE_FAIL", "CORRECT"): 2, ("INCORRECT", "INCORRECT"): 1,
                ("INCORRECT", "OUTLIER_FAIL"): 1, ("STATIC_REJECT", "CORRECT"): 1, ("RUNTIME_FAIL", "INCORRECT"): 1,
                ("INCORRECT", "CORRECT"): 1}
    got = {(a, b): int(table.loc[a, b]) for a in table.index for b in table.columns if table.loc[a, b]}
    assert got == expected and int(table.to_numpy().sum()) == 12


def test_per_category(frame):
    rates = stats.by_category(frame, lambda rows: float(chains_frame(rows)["correct"].mean()))
    assert rates == {"Activation": 1.0, "Math": 1.0, "Reduce": 0.75}


def test_ab_comparison_of_two_arms(frame):
    chains = chains_frame(frame)
    result = ab.compare(chains[chains["arm"] == "A"], chains[chains["arm"] == "B"], "A", "B")
    # per task, A: softmax 2/2, sum 1/2, gelu 2/2 correct; B: 2/2 everywhere
    assert (result.tasks, result.chains_a, result.correct_a, result.correct_b) == (3, 6, 5, 6)
    assert (result.tasks_b_better, result.tasks_a_better) == (1, 0) and result.correctness_p == pytest.approx(1.0)
    assert result.rate_difference == pytest.approx(1 / 6)
    # speed, per task: geometric means of the chains' best correct speedups, B over A
    best_a = {"Math/softmax": [1.5, 2.3], "Reduce/sum": [0.8], "Activation/gelu": [1.0, 1.7]}
    best_b = {"Math/softmax": [1.9, 2.5], "Reduce/sum": [1.1, 1.3], "Activation/gelu": [1.2, 0.9]}
    logs = np.array([np.log(best_b[t]).mean() - np.log(best_a[t]).mean() for t in sorted(best_a)])
    assert result.speed_tasks == 3
    assert result.geomean_ratio == pytest.approx(float(np.exp(logs.mean())))
    assert result.speed_p == pytest.approx(float(wilcoxon(logs).pvalue))
    # KernelBench's fast_1 over tasks: A 1, 0, 1/2 -> 1/2; B 1, 1, 1/2 -> 5/6
    assert result.fast_p[1.0] == pytest.approx((1 / 2, 5 / 6))
    assert "No detectable difference in correctness" in result.verdict and "cannot be ruled out" in result.verdict


def test_summary(frame):
    s = stats.summary(frame)
    assert (s["attempts"], s["chains"], s["correct_chains"]) == (24, 12, 11)
    assert s["tokens"] == 24 * 150 and s["cost_usd"] == pytest.approx(0.024)
    low, high = stats.correct_rate_interval(chains_frame(frame))
    assert low < 11 / 12 < high <= 1 and s["correct_rate_95ci"] == f"{low:.0%} to {high:.0%}"


def test_by_device_reports_each_gpu_model_apart(frame):
    table = stats.by_device(frame).set_index("device")
    # known_store: the 16 correct attempts were timed on an H100 (node-1), the 8 others ran on a CPU
    assert list(table.index) == ["CPU interpreter", "H100"]
    assert table.loc["H100", ["hosts", "attempts", "correct"]].tolist() == [1, 16, 16]
    assert table.loc["H100", "median_speedup"] == pytest.approx(1.35)
    assert table.loc["CPU interpreter", ["attempts", "correct"]].tolist() == [8, 0]
    assert math.isnan(table.loc["CPU interpreter", "median_speedup"])


def test_chains_that_produced_no_attempt_count_as_failed_chains(tmp_path):
    """Two chains of arm A ended without any attempt (their generator failed): the report's figures
    and the A/B frame count them as chains that did not reach a correct kernel, not as nothing."""
    from traces.frames import NO_ATTEMPT, load_frame
    from traces.report import build_context
    store = build(tmp_path / "t.db")
    before = build_context(store, "r")["summary"]
    for sample in (2, 3):
        store.record_chain_end("r", "Math/softmax", "A", sample, 0, "generator failed: connection refused")
    store.record_chain_end("r", "Math/softmax", "A", 0, 3, "stop: 3 rounds done")  # has attempts: not a stand-in
    after = build_context(store, "r")["summary"]
    assert after["chains"] == before["chains"] + 2 and after["correct_chains"] == before["correct_chains"]
    assert after["attempts"] == before["attempts"]
    chains = chains_frame(load_frame(store, "r", with_empty_chains=True))
    empty = chains[chains["final_verdict"] == NO_ATTEMPT]
    assert sorted(empty["sample"]) == [2, 3] and not empty["correct"].any()
    assert len(load_frame(store, "r")) == before["attempts"], "exports of attempts hold real attempts only"
    store.close()


def test_rescued_chains_are_counted_when_nothing_was_timed(tmp_path):
    """On the CPU no kernel is timed: the groups still count their chains, and the summary says
    "not timed" instead of printing nan."""
    import jinja2

    from traces.report import TEMPLATES
    frame = load_frame(build(tmp_path / "t.db"), "r")
    frame["speedup"] = float("nan")
    result = stats.rescued_vs_start(frame)
    assert (result["start"]["n"], result["rescued"]["n"]) == (7, 4)
    assert result["start"]["timed"] == result["rescued"]["timed"] == 0 and "difference" not in result
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES))
    source = env.loader.get_source(env, "summary.md.j2")[0]
    start = source.index("{% if rescued %}")  # the summary's rescued block, rendered with what it needs
    end = source.index("## By category", start)
    text = env.from_string(source[start:end]).render(rescued=result)
    assert "| start | 7 | not timed | - |" in text and "| rescued | 4 | not timed | - |" in text
    assert "nan" not in text


def test_the_geometric_mean_speedup_has_an_interval_over_tasks(frame):
    s = stats.summary(frame)
    low, high = (float(x.rstrip("x")) for x in s["geomean_best_speedup_95ci"].split(" to "))
    assert low < s["geomean_best_speedup"] < high
    one_task = frame[frame["task_id"] == "Reduce/sum"]
    assert stats.summary(one_task)["geomean_best_speedup_95ci"] == "-"  # one task: nothing to resample
