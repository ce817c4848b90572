"""Stress run: the whole suite x samples x rounds through the real loop, trace store and sandboxed
evaluator, with a fast scripted generator; the orchestrator's memory, open files and threads are
sampled throughout and must stay flat.

    python benchmarks/stress_run.py [--samples 4] [--rounds 5] [--tasks ID|CATEGORY ...] [--json out.json]

The generator answers at once with a rotation of candidates that fail in different places: a
kernel that launches and then raises (a sandboxed process each time), a torch fallback (rejected
statically), prose without code, and code that does not compile. Nothing is timed on the CPU, so
the loop never stops early on success and every chain runs its full rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
import structlog

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402

from agentloop.config import Arm, Budgets, Evaluation, Experiment, TaskSelection  # noqa: E402
from agentloop.evaluation import EvaluationQueue  # noqa: E402
from agentloop.generators.base import GeneratorSpec, Request  # noqa: E402
from agentloop.generators.scripted import ScriptedGenerator  # noqa: E402
from agentloop.run import run_experiment  # noqa: E402
from evaluator.loader import load_suite  # noqa: E402
from traces.store import TraceStore  # noqa: E402

RAISES = """```python
import triton
import triton.language as tl

@triton.jit
def nothing(x_ptr):
    pass

def {entry}(*args, **kwargs):
    nothing[(1,)](next(a for a in args if hasattr(a, "data_ptr")))
    raise ValueError("stress: not finished")
```"""
FALLBACK = """```python
import torch
import triton

def {entry}(*args, **kwargs):
    return torch.nn.functional.relu(args[0])
```"""
PROSE = "I would start with a blocked kernel, but I have no code yet."
BROKEN = """```python
import triton
def {entry}(x:
```"""
ROTATION = (RAISES, FALLBACK, RAISES, PROSE, BROKEN)


class Sampler:
    """The orchestrator process (and its fork servers) every `every` seconds, and the bytes held by
    the evaluators' reference caches (bounded by design)."""

    def __init__(self, evaluations: EvaluationQueue, every: float = 1.0):
        self.evaluations = evaluations
        self.every, self.rows, self._stop = every, [], threading.Event()
        self.me = psutil.Process()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        began = time.monotonic()
        while not self._stop.wait(self.every):
            children = self.me.children(recursive=True)
            self.rows.append({"t": time.monotonic() - began, "rss_mib": self.me.memory_info().rss / 2**20,
                              "fds": self.me.num_fds(), "threads": self.me.num_threads(),
                              "children": len(children), "reference_cache_mib": self._cached() / 2**20})

    def _cached(self) -> int:
        return sum(backend.evaluator.references.nbytes() for backend in self.evaluations.backends)

    def __enter__(self) -> "Sampler":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.thread.join()


def window(rows: list[dict], key: str, part: slice) -> float:
    chosen = rows[part] or rows
    return statistics.median(r[key] for r in chosen)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", nargs="*", default=[])
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))

    suite = load_suite()
    categories = sorted({t.category for t in suite.values()})
    ids = [t for t in args.tasks if t not in categories]
    selection = TaskSelection(ids=ids, categories=[t for t in args.tasks if t in categories])
    experiment = Experiment(name="stress", tasks=selection, samples=args.samples,
                            generator=GeneratorSpec(provider="scripted", model="stress"),
                            arms=[Arm("stress")], budgets=Budgets(max_rounds=args.rounds, stagnation_rounds=0),
                            evaluation=Evaluation(device="cpu", workers=args.workers, timing=False))

    def answer(request: Request) -> str:
        entry = suite[request.task_id].entry
        return ROTATION[(request.sample + request.round) % len(ROTATION)].replace("{entry}", entry)

    with tempfile.TemporaryDirectory() as folder:
        store = TraceStore(Path(folder) / "stress.db")
        evaluations = EvaluationQueue("cpu", args.workers, timing=False)
        generator = ScriptedGenerator(experiment.generator, answer=answer)
        began = time.perf_counter()
        try:
            with Sampler(evaluations) as sampler:
                summary = asyncio.run(run_experiment(experiment, suite, store, evaluations, Console(stderr=True),
                                                     generators={"stress": generator}))
        finally:
            evaluations.close()
        wall = time.perf_counter() - began
        attempts = store.attempts(summary.run_id)
        keys = {(a.task_id, a.sample, a.round, a.trial) for a in attempts}
        store.close()

    rows = sampler.rows
    tenth = max(1, len(rows) // 10)
    first, last = slice(tenth, 2 * tenth), slice(-tenth, None)  # skip the first tenth: start-up
    figures = {
        "chains": len(summary.chains), "attempts": len(attempts), "distinct_attempts": len(keys),
        "expected_attempts": len(summary.chains) * args.rounds, "wall_s": round(wall, 1),
        "attempts_per_s": round(len(attempts) / wall, 2), "samples": len(rows),
        "verdicts": dict(sorted(Counter(a.verdict for a in attempts).items())),
    }
    for key in ("rss_mib", "reference_cache_mib", "fds", "threads", "children"):
        figures[key] = {"early": window(rows, key, first), "late": window(rows, key, last),
                        "max": max(r[key] for r in rows)}
    print(json.dumps(figures, indent=1))
    if args.json:
        args.json.write_text(json.dumps({"figures": figures, "samples": rows}, indent=1))



if __name__ == "__main__":
    main()
