"""The scaling benchmark's machine-wide readings (it runs on any Linux machine)."""

import importlib.util
import os
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "executor_scaling.py"


def _benchmark():
    spec = importlib.util.spec_from_file_location("executor_scaling", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def file_system_type(path: Path) -> str:
    mounts = [line.split()[1:3] for line in Path("/proc/mounts").read_text().splitlines()]
    return max((m for m in mounts if str(path).startswith(m[0])), key=lambda m: len(m[0]))[1]


@pytest.mark.skipif(not Path("/proc/diskstats").exists(), reason="reads /proc")
def test_bytes_synced_to_a_disk_show_in_the_machines_disk_writes(tmp_path):
    if file_system_type(tmp_path) in ("tmpfs", "ramfs"):
        pytest.skip("the temporary folder is in memory")
    bench = _benchmark()
    before = bench.disk_written()
    with open(tmp_path / "block", "wb") as f:
        f.write(os.urandom(8 << 20))
        f.flush()
        os.fsync(f.fileno())
    assert bench.disk_written() - before >= 8 << 20


def test_cpu_use_is_the_busy_share_between_two_readings():
    """Arithmetic on two given readings of /proc/stat (busy, total jiffies), nothing measured."""
    bench = _benchmark()
    share, seconds = bench.cpu_use((100, 1000), (400, 2000))
    assert share == 0.3 and seconds == 300 / os.sysconf("SC_CLK_TCK")
    assert bench.cpu_use(None, (1, 2)) == (None, None)


def test_each_executor_starts_from_an_empty_ir_store(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTLOOP_CACHE_DIR", str(tmp_path))
    (tmp_path / "triton-ir" / ("a" * 64)).mkdir(parents=True)
    (tmp_path / "references").mkdir()
    _benchmark().emptied_ir_store()
    assert not (tmp_path / "triton-ir").exists() and (tmp_path / "references").exists(), "the other caches stay warm"


def test_scoring_says_how_many_are_done_as_it_goes(capsys):
    """A run stopped early (a device's time running out) still tells its rate from these lines."""
    import asyncio

    class Evaluations:
        async def evaluate(self, task, code):
            await asyncio.sleep(0)
            return (task, code)

    jobs = [(f"task{n}", f"code{n}") for n in range(5)]
    wall, results = asyncio.run(_benchmark().score(Evaluations(), jobs, "local1", every=2))
    assert results == jobs, "results in the order of the jobs"
    lines = capsys.readouterr().err.splitlines()
    assert [line.split(" in ")[0] for line in lines] == ["local1: 2 of 5", "local1: 4 of 5", "local1: 5 of 5"]


def test_a_failing_copy_fails_on_its_first_case_after_its_kernels_ran_and_the_others_pass(suite, cpu_evaluator):
    jobs = _benchmark().workload(suite, ["Math/abs"], copies=3, failing=1)
    assert [code.count("wrong after its kernels ran") for _, code in jobs] == [0, 1, 0]
    assert len({code for _, code in jobs}) == 3, "distinct sources"
    results = [cpu_evaluator.evaluate(task, code) for task, code in jobs[:2]]
    assert results[0].correct, results[0].reason
    failed = results[1]
    assert failed.verdict.value == "RUNTIME_FAIL" and "wrong after its kernels ran" in failed.reason, failed.reason
    assert failed.stage.value == "call" and failed.reason.startswith("on "), "on a case, not at its import"
