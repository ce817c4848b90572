"""The GPU suite runner's choice and order of tasks (it runs on any machine)."""

import importlib.util
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "reference_solutions.py"


def _runner():
    spec = importlib.util.spec_from_file_location("reference_solutions", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_tasks_start_one_category_after_another_and_shards_split_the_suite(suite):
    runner = _runner()
    picked = runner.select(suite, [], None)
    assert sorted(t.id for t in picked) == sorted(suite)
    categories = sorted({t.category for t in suite.values()})
    assert [t.category for t in picked[:len(categories)]] == categories  # one of each first
    linear_algebra = [i for i, t in enumerate(picked) if t.category == "LinearAlgebra"]
    assert all(b - a > 1 for a, b in zip(linear_algebra, linear_algebra[1:]))  # never two in a row
    shards = [runner.select(suite, [], f"{k}/2") for k in range(2)]
    assert sorted(t.id for shard in shards for t in shard) == sorted(suite)
    assert not {t.id for t in shards[0]} & {t.id for t in shards[1]}


def test_chosen_categories_and_tasks_already_scored_are_respected(suite):
    runner = _runner()
    picked = runner.select(suite, ["Math", "Reduce/sum"], None, done={"Math/cos"})
    ids = {t.id for t in picked}
    assert "Reduce/sum" in ids and "Math/cos" not in ids and "Math/div" in ids
    assert {t.category for t in picked} == {"Math", "Reduce"}
