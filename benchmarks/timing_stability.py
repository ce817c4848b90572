"""Timing stability: the same candidate scored several times; the CV of its median across runs.

    python benchmarks/timing_stability.py [--repeats 5] [--tasks id ...] [--json out.json]

Each repetition is a full evaluation (fresh candidate process, warm compile cache). The target is
a CV <= 1% for kernels of 50 us or more.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tasks", nargs="*", help="task ids (default: the 15 foundation tasks)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    from evaluator.evaluate import Evaluator, EvaluatorConfig
    from evaluator.loader import FOUNDATION_TASKS, load_suite

    suite = load_suite()
    chosen = [suite[t] for t in (args.tasks or FOUNDATION_TASKS)]
    rows = []
    with Evaluator(EvaluatorConfig()) as evaluator:
        for task in chosen:
            medians = []
            for _ in range(args.repeats):
                result = evaluator.evaluate(task, task.solution_path.read_text())
                if not result.performance:
                    break
                medians.append(result.performance.candidate.median_ms)
            if len(medians) == args.repeats:
                mean = statistics.fmean(medians)
                rows.append({"task": task.id, "medians_ms": medians, "mean_ms": mean,
                             "cv": statistics.pstdev(medians) / mean})
    print(f"| task | median of medians (ms) | CV across {args.repeats} evaluations | >= 50 us |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['task']} | {statistics.median(row['medians_ms']):.4f} | {row['cv']:.2%} | "
              f"{'yes' if row['mean_ms'] >= 0.05 else 'no'} |")
    long = [r["cv"] for r in rows if r["mean_ms"] >= 0.05]
    if long:
        print(f"\nworst CV among kernels >= 50 us: {max(long):.2%} over {len(long)} tasks")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
