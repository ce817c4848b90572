"""The GPU suite runner's choice and order of tasks (it runs on any machine)."""

import importlib.util
import sys
from pathlib import Path

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "reference_solutions.py"


def _runner():
    spec = importlib.util.spec_from_file_location("reference_solutions", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
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


def test_printed_tables_read_back_to_the_same_rows_and_the_latest_row_wins(capsys):
    bench = _runner()
    first = [bench.Row("Math/exp", "CORRECT", 0.1819, 0.1818, 1.0, 2951.0, 0.37, 0.92),
             bench.Row("Math/log", "CORRECT", note="(eager baseline failed: out of GPU memory under load)")]
    later = [bench.Row("Math/log", "CORRECT", 0.1819, 0.1819, 1.0, 2951.0, 0.37, 0.92),
             bench.Row("Reduce/sum", "OUTLIER_FAIL", note="on edge float32 inputs")]
    bench.report(first, "run 1")
    bench.report(later, "run 2")
    text = "notes\n" + capsys.readouterr().out + "\n| task | ms |\n|---|---|\n| Math/exp | 9.0 |\n"
    rows = bench.rows_from_tables(text)
    assert sorted(rows) == ["Math/exp", "Math/log", "Reduce/sum"]
    assert rows["Math/exp"] == first[0]
    assert rows["Math/log"] == later[0]
    assert rows["Reduce/sum"].verdict == "OUTLIER_FAIL" and not rows["Reduce/sum"].timed
