"""Attribution of correctness to category, method, feedback set, arm and round (traces/attribution.py)."""

import math

import numpy as np
import pytest

from traces import attribution
from traces.frames import load_frame
from tests.traces.known_store import build


@pytest.fixture(scope="module")
def frame(tmp_path_factory):
    store = build(tmp_path_factory.mktemp("known") / "t.db")
    yield load_frame(store, "r")
    store.close()


def deviance(successes, n):
    p = successes / n
    return -2 * (successes * math.log(p) + (n - successes) * math.log(1 - p)) if 0 < p < 1 else 0.0


def test_attribution_tests_each_factor_with_its_degrees_of_freedom(frame):
    result = attribution.attribution(frame)
    assert set(result["tests"]) == {"category", "arm (its method)"}  # each arm has its own method
    category, arm = result["tests"]["category"], result["tests"]["arm (its method)"]
    assert (category["df"], arm["df"]) == (2, 1)
    # arm alone: one binary predictor, so the score test is Pearson's chi-squared of the 2x2 table
    # A 5/6, B 6/6 correct (within categories here, so only approximately that)
    assert 0 < arm["p"] < 1 and 0 < category["p"] < 1
    assert result["null_deviance"] == pytest.approx(deviance(11, 12))
    assert "not enough data" in result["note"]  # 12 chains for 4 parameters
    assert result["levels"]["arm"]["B"]["chains"] == 6 and result["levels"]["arm"]["B"]["correct"] == 6
    assert result["round"]["levels"]["0"]["attempts"] == 12  # every chain's first round


def test_attribution_does_not_favour_the_factor_with_more_levels_on_noise():
    """200 runs of pure noise (8 categories x 4 tasks x 2 arms x 3 chains, every chain correct with
    probability 1/2): each factor is 'significant' at most 5% of the time."""
    import pandas as pd

    rng = np.random.default_rng(0)
    hits = {"category": 0, "arm (its method)": 0}
    for _ in range(200):
        chains = pd.DataFrame([{"category": f"C{c}", "arm": arm, "method": arm, "correct": bool(rng.random() < 0.5)}
                               for c in range(8) for _ in range(4) for arm in ("A", "B") for _ in range(3)])
        tests = attribution.chain_attribution(chains)["tests"]
        for name in hits:
            hits[name] += tests[name]["p"] < 0.05
    assert hits["category"] <= 10 and hits["arm (its method)"] <= 10, hits


def test_arms_sharing_a_method_are_tested_within_it():
    import pandas as pd

    rows = [{"category": c, "arm": arm, "method": method, "correct": (k + len(arm)) % 3 != 0}
            for c in ("X", "Y") for arm, method in (("a1", "m"), ("a2", "m"), ("b", "n")) for k in range(12)]
    tests = attribution.chain_attribution(pd.DataFrame(rows))["tests"]
    assert set(tests) == {"category", "method", "arm within its method"}
    assert tests["method"]["df"] == 1 and tests["arm within its method"]["df"] == 1 and tests["category"]["df"] == 1


def test_a_feedback_set_shared_by_arms_is_its_own_factor_and_arms_are_tested_within_it():
    import pandas as pd

    rng = np.random.default_rng(1)
    rows = [{"task_id": f"{c}/t{t}", "category": c, "arm": arm, "method": "iterative", "feedback": feedback,
             "correct": bool(rng.random() < (0.85 if feedback == "compile,profile" else 0.25))}
            for c in ("X", "Y") for t in range(4) for arm, feedback in
            (("a1", "compile,profile"), ("a2", "compile,profile"), ("b1", "compile"), ("b2", "compile"))
            for _ in range(6)]
    result = attribution.chain_attribution(pd.DataFrame(rows))
    tests = result["tests"]
    assert set(tests) == {"category", "feedback", "arm within its feedback"}
    assert tests["feedback"]["df"] == 1 and tests["arm within its feedback"]["df"] == 2
    assert tests["feedback"]["p"] < 1e-6 < tests["arm within its feedback"]["p"]
    strong = result["levels"]["feedback"]["compile,profile"]
    low, high = strong["ci"]
    assert strong["chains"] == 96 and low < strong["rate"] < high


def test_a_level_where_every_chain_passes_still_has_an_interval_of_some_width():
    import pandas as pd

    rows = [{"task_id": f"T/t{t}", "category": "T", "arm": arm, "method": arm, "correct": arm == "A" or k == 0}
            for t in range(3) for arm in ("A", "B") for k in range(3)]
    levels = attribution.chain_attribution(pd.DataFrame(rows))["levels"]["arm"]
    assert levels["A"]["rate"] == 1.0 and levels["A"]["ci"][0] < 1.0 <= levels["A"]["ci"][1] + 1e-12
    assert 0 < levels["B"]["ci"][0] < 1 / 3 < levels["B"]["ci"][1]


def _rounds_frame(rate_by_round, chains=60, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for c in range(chains):
        for r, rate in enumerate(rate_by_round):
            rows.append({"run_id": "r", "task_id": f"K/t{c % 10}", "category": "K", "arm": "A", "method": "A",
                         "sample": c, "round": r, "trial": 0, "feedback": "", "correct": bool(rng.random() < rate)})
    return pd.DataFrame(rows)


def test_the_round_test_finds_a_round_effect_and_none_in_noise():
    found = attribution.round_attribution(_rounds_frame([0.1, 0.5, 0.9]))
    assert found["df"] == 2 and found["p"] < 1e-6 and found["chains"] == 60
    assert found["levels"]["0"]["rate"] < found["levels"]["2"]["rate"]
    hits = sum(attribution.round_attribution(_rounds_frame([0.4, 0.4, 0.4], seed=s))["p"] < 0.05 for s in range(100))
    assert hits <= 10, hits
    assert "more than one round" in attribution.round_attribution(_rounds_frame([0.5]))["note"]
