import os

# One compute thread per test process and the processes it starts: the test workers are one per
# core, and torch's OpenMP threads spin-wait for each other, which on a machine whose cores are all
# busy made CPU-bound tests up to ten times slower (benchmarks/RESULTS.md, "The test suite's threads").
os.environ.setdefault("OMP_NUM_THREADS", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

from evaluator.evaluate import Evaluator, EvaluatorConfig  # noqa: E402
from evaluator.loader import load_suite  # noqa: E402
from evaluator.sandbox import Limits  # noqa: E402

HAS_GPU = torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def suite():
    return load_suite()


@pytest.fixture(scope="session")
def evaluators(tmp_path_factory):
    """Evaluators by configuration, shared across the session (each keeps its fork server warm)."""
    made: dict[tuple, Evaluator] = {}
    cache = tmp_path_factory.mktemp("cache")

    def get(static: bool = True, step_seconds: float | None = None, watchdog_bytes: int | None = None,
            device: str = "cpu", timing: bool = True, disk_bytes: int | None = None, memcheck: bool = True,
            memcheck_start: str = "spawn") -> Evaluator:
        key = (static, step_seconds, watchdog_bytes, device, timing, disk_bytes, memcheck, memcheck_start)
        if key not in made:
            limits = None
            if step_seconds or watchdog_bytes or disk_bytes:
                limits = Limits(step_seconds=step_seconds or 120, total_seconds=900,
                                memory_bytes=watchdog_bytes or 6 << 30, address_space=watchdog_bytes is None,
                                disk_bytes=disk_bytes or 8 << 30)
            made[key] = Evaluator(EvaluatorConfig(device=device, static_checks=static, limits=limits,
                                                  cache_dir=cache, timing=timing, memcheck=memcheck,
                                                  memcheck_start=memcheck_start))
        return made[key]

    yield get
    for evaluator in made.values():
        evaluator.close()


@pytest.fixture(scope="session")
def cpu_evaluator(evaluators):
    return evaluators()
