"""A long run's memory does not grow with its attempts beyond what the live chains keep of them:
the Python heap (traced across every thread: orchestrator, chains, evaluation queue, evaluator,
trace store) is measured from the generator as two chains reach round 4 and round 15, with the real
loop, sandbox and SQLite store. A live chain keeps its attempts' records for its prompts (6-8 KiB
per attempt here, with the trace store's and caches' share); anything that kept 8 KiB more per
attempt fails (a 6 KiB leak per attempt failed when tried; 5 KiB passed)."""

import asyncio
import gc
import io
import os
import tracemalloc

from rich.console import Console

from agentloop.config import Arm, Budgets, Evaluation, Experiment, TaskSelection
from agentloop.evaluation import EvaluationQueue
from agentloop.generators.base import GeneratorSpec, Request
from agentloop.generators.scripted import ScriptedGenerator
from agentloop.run import run_experiment
from tests.agentloop.test_faults import RAISING_GELU
from traces.store import TraceStore

NO_CODE = "A blocked kernel with one program per row would do; code next round."
ROUNDS = 16
SAMPLES = 2
MEASURED_FROM = 4  # the first rounds fill the reference cache and torch's per-operator state


def test_the_heap_and_open_files_stay_flat_as_attempts_accumulate(tmp_path, suite):
    heap_at_round: dict[int, list[int]] = {}
    files_at_round: dict[int, list[int]] = {}

    def answer(request: Request) -> str:
        if request.round in (MEASURED_FROM, ROUNDS - 1):
            gc.collect()
            heap_at_round.setdefault(request.round, []).append(tracemalloc.get_traced_memory()[0])
            files_at_round.setdefault(request.round, []).append(len(os.listdir("/proc/self/fd")))
        return RAISING_GELU if request.round % 2 == 0 else NO_CODE

    experiment = Experiment(name="memory", tasks=TaskSelection(ids=["Activation/gelu"]), samples=SAMPLES,
                            generator=GeneratorSpec(provider="scripted", model="memory"), arms=[Arm("memory")],
                            budgets=Budgets(max_rounds=ROUNDS, stagnation_rounds=0),
                            evaluation=Evaluation(device="cpu", workers=1, timing=False))
    store = TraceStore(tmp_path / "memory.db")
    evaluations = EvaluationQueue("cpu", 1, timing=False)
    generator = ScriptedGenerator(experiment.generator, answer=answer)
    tracemalloc.start()
    try:
        summary = asyncio.run(run_experiment(experiment, suite, store, evaluations, Console(file=io.StringIO()),
                                             generators={"memory": generator}))
    finally:
        tracemalloc.stop()
        evaluations.close()
    attempts = store.attempts(summary.run_id)
    store.close()

    assert len(attempts) == SAMPLES * ROUNDS
    assert {a.verdict for a in attempts} >= {"RUNTIME_FAIL", "NO_CODE"}
    # Each end takes the lower of the two chains' readings: the other chain's evaluation in flight
    # adds up to 150 KiB of passing objects under load, a leak shows in both readings.
    grown = min(heap_at_round[ROUNDS - 1]) - min(heap_at_round[MEASURED_FROM])
    attempts_between = SAMPLES * (ROUNDS - 1 - MEASURED_FROM)
    assert grown < 12 * 1024 * attempts_between, (
        f"the heap grew by {grown / 1024:.0f} KiB over {attempts_between} attempts")
    # a sandbox in flight holds a few descriptors; one left behind per attempt would be 22
    assert max(files_at_round[ROUNDS - 1]) <= max(files_at_round[MEASURED_FROM]) + 4, files_at_round
