"""Orchestrator overhead: 1,000 attempts through the real loop (state machine, prompt rendering,
code extraction, SQLite trace store, retry/concurrency wrapper) with a generator and an
evaluation of fixed latency, against the ideal schedule.

    python benchmarks/orchestrator_overhead.py [--chains 200] [--rounds 5] [--llm-s 0.2] [--eval-s 0.05]
                                               [--llm-slots 32] [--eval-slots 8]

Ideal wall time, a lower bound for any schedule: the largest of one chain's rounds x (LLM +
evaluation latency); the first answer's latency plus all evaluations over the evaluation slots; the
first evaluation's latency plus all LLM calls over the LLM slots. Overhead = measured / ideal - 1.
Also reports the LLM concurrency achieved (calls in flight, peak and sampled mean).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentloop.config import Arm, Budgets  # noqa: E402
from agentloop.generators.base import GeneratorSpec  # noqa: E402
from agentloop.generators.resilience import Resilient  # noqa: E402
from agentloop.generators.scripted import ScriptedGenerator  # noqa: E402
from agentloop.loop import Chain, LoopContext  # noqa: E402
from evaluator.loader import load_suite  # noqa: E402
from tests.agentloop.scripted import MarkerEvaluations, answer  # noqa: E402
from traces.store import TraceStore  # noqa: E402


class SlottedEvaluations(MarkerEvaluations):
    def __init__(self, latency_s: float, slots: int):
        super().__init__(latency_s=latency_s)
        self.slots = asyncio.Semaphore(slots)

    async def evaluate(self, task, code):
        async with self.slots:
            return await super().evaluate(task, code)


class ConcurrencyMeter:
    def __init__(self, generator: ScriptedGenerator):
        self.generator = generator
        self.samples: list[int] = []

    async def sample(self, every: float) -> None:
        while True:
            self.samples.append(self.generator.in_flight)
            await asyncio.sleep(every)


async def main(args) -> None:
    suite = load_suite()
    tasks = list(suite.values())
    store = TraceStore(Path(tempfile.mkdtemp()) / "overhead.db")
    store.ensure_run("overhead", {})
    spec = GeneratorSpec(provider="scripted", model="fixed-latency", max_concurrency=args.llm_slots,
                         options={"latency_s": args.llm_s})
    scripted = ScriptedGenerator(spec, lambda request: answer("INCORRECT"))
    generator = Resilient(scripted, spec)
    evaluations = SlottedEvaluations(args.eval_s, args.eval_slots)
    ctx = LoopContext(run_id="overhead", store=store, evaluations=evaluations,
                      budgets=Budgets(max_rounds=args.rounds, stagnation_rounds=0))
    chains = [Chain(tasks[i % len(tasks)], Arm("a"), i // len(tasks), generator, spec.model, ctx)
              for i in range(args.chains)]
    meter = ConcurrencyMeter(scripted)
    sampler = asyncio.create_task(meter.sample(0.01))
    began = time.perf_counter()
    await asyncio.gather(*(chain.run() for chain in chains))
    wall = time.perf_counter() - began
    sampler.cancel()
    attempts = len(store.attempts("overhead"))
    ideal = max(args.rounds * (args.llm_s + args.eval_s), args.llm_s + attempts * args.eval_s / args.eval_slots,
                args.eval_s + attempts * args.llm_s / args.llm_slots)
    mean_in_flight = sum(meter.samples) / max(1, len(meter.samples))
    print(f"attempts {attempts} in {args.chains} chains of {args.rounds} rounds; LLM {args.llm_s} s x "
          f"{args.llm_slots} slots; evaluation {args.eval_s} s x {args.eval_slots} slots")
    print(f"wall {wall:.2f} s, ideal {ideal:.2f} s, overhead {wall / ideal - 1:.1%}")
    print(f"LLM calls in flight: peak {scripted.max_in_flight}, mean {mean_in_flight:.1f} (limit {args.llm_slots}); "
          f"evaluations in flight: peak {evaluations.max_in_flight} (limit {args.eval_slots})")
    store.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--chains", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--llm-s", type=float, default=0.2)
    parser.add_argument("--eval-s", type=float, default=0.05)
    parser.add_argument("--llm-slots", type=int, default=64)
    parser.add_argument("--eval-slots", type=int, default=8)
    asyncio.run(main(parser.parse_args()))
