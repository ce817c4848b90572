"""Every reference solution on the GPU: speedup over eager PyTorch, achieved GB/s and TFLOP/s, the
fraction of the roofline floor; per-category geometric means; the tasks below the aims.

    python benchmarks/reference_solutions.py [--workers 8] [--json out.json] [--tasks ID ...]

Aims (issue 5): geometric-mean speedup >= 1.0x overall, median roofline fraction >= 50%.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--tasks", nargs="*", help="task ids or categories (default: the whole suite)")
    parser.add_argument("--jsonl", type=Path, help="append each result as it finishes (survives a timeout)")
    args = parser.parse_args()

    from evaluator.evaluate import Evaluator, EvaluatorConfig
    from evaluator.loader import load_suite

    suite = load_suite()
    wanted = args.tasks or []
    tasks = [t for i, t in sorted(suite.items()) if not wanted or i in wanted or t.category in wanted]
    by_task = {}
    with Evaluator(EvaluatorConfig()) as evaluator, ThreadPoolExecutor(args.workers) as pool:
        futures = {pool.submit(evaluator.evaluate, t, t.solution_path.read_text()): t for t in tasks}
        for done, future in enumerate(as_completed(futures), 1):
            task, result = futures[future], future.result()
            by_task[task.id] = result
            print(f"[{done}/{len(tasks)}] {task.id}: {result.verdict.value}", file=sys.stderr, flush=True)
            if args.jsonl:
                with open(args.jsonl, "a") as f:
                    f.write(json.dumps(result.to_dict()) + "\n")
    results = [by_task[t.id] for t in tasks]
    env = results[0].environment
    print(f"{len(results)} reference solutions on {env.gpu}, driver {env.driver}, torch {env.torch}, "
          f"triton {env.triton}\n")
    print("| task | verdict | ms | eager ms | speedup | GB/s | TFLOP/s | roofline |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for task, r in zip(tasks, results):
        p = r.performance
        if p and p.speedup:
            rows.append((task, p))
            print(f"| {task.id} | {r.verdict.value} | {p.candidate.median_ms:.4f} | {p.eager.median_ms:.4f} | "
                  f"{p.speedup:.2f}x | {p.gbps:.0f} | {p.tflops:.2f} | {p.roofline_fraction:.0%} |")
        else:
            print(f"| {task.id} | {r.verdict.value} | - | - | - | - | - | - |  {r.reason[:100]}")
    print("\n| category | tasks | geomean speedup | median roofline |")
    print("|---|---|---|---|")
    categories = sorted({t.category for t, _ in rows})
    for category in categories:
        mine = [p for t, p in rows if t.category == category]
        print(f"| {category} | {len(mine)} | {geomean([p.speedup for p in mine]):.2f}x | "
              f"{statistics.median(p.roofline_fraction for p in mine):.0%} |")
    overall = geomean([p.speedup for _, p in rows])
    median_roofline = statistics.median(p.roofline_fraction for _, p in rows) if rows else float("nan")
    print(f"\noverall: {len(rows)} timed, geomean speedup {overall:.2f}x (aim >= 1.0x), median roofline "
          f"{median_roofline:.0%} (aim >= 50%)")
    slow = [t.id for t, p in rows if p.speedup < 1.0]
    low = [t.id for t, p in rows if p.roofline_fraction < 0.5]
    print(f"below 1.0x eager: {', '.join(slow) or 'none'}")
    print(f"below 50% of the roofline floor: {', '.join(low) or 'none'}")
    if args.json:
        args.json.write_text(json.dumps([r.to_dict() for r in results], indent=1))


if __name__ == "__main__":
    main()
