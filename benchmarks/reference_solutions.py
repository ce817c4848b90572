"""Every reference solution on the GPU: speedup over eager PyTorch, achieved GB/s and TFLOP/s, the
fraction of the roofline floor; per-category geometric means; the tasks below the aims.

    python benchmarks/reference_solutions.py [--workers 8] [--tasks ID|CATEGORY ...] [--shard K/N]
                                             [--jsonl results.jsonl]
    python benchmarks/reference_solutions.py --summarize results*.jsonl

Each result is appended to --jsonl as it finishes, so a run cut short keeps what it measured; shards
split the suite between processes (one per GPU: CUDA_VISIBLE_DEVICES=K). --summarize prints the
tables from any number of such files.

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

from evaluator.result import EvalResult  # noqa: E402


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def category(task_id: str) -> str:
    return task_id.split("/")[0]


def select(suite: dict, wanted: list[str], shard: str | None) -> list:
    tasks = [t for i, t in sorted(suite.items()) if not wanted or i in wanted or t.category in wanted]
    if shard:
        k, n = (int(x) for x in shard.split("/"))
        tasks = tasks[k::n]
    return tasks


def measure(tasks: list, workers: int, jsonl: Path | None) -> list[EvalResult]:
    from evaluator.evaluate import Evaluator, EvaluatorConfig

    results = []
    with Evaluator(EvaluatorConfig()) as evaluator, ThreadPoolExecutor(workers) as pool:
        futures = {pool.submit(evaluator.evaluate, t, t.solution_path.read_text()): t for t in tasks}
        for done, future in enumerate(as_completed(futures), 1):
            result = future.result()
            results.append(result)
            print(f"[{done}/{len(tasks)}] {futures[future].id}: {result.verdict.value}", file=sys.stderr, flush=True)
            if jsonl:
                with open(jsonl, "a") as f:
                    f.write(json.dumps(result.to_dict()) + "\n")
    return results


def report(results: list[EvalResult]) -> None:
    results = sorted(results, key=lambda r: r.task_id)
    env = results[0].environment
    print(f"{len(results)} reference solutions on {env.gpu}, driver {env.driver}, torch {env.torch}, "
          f"triton {env.triton}\n")
    print("| task | verdict | ms | eager ms | speedup | GB/s | TFLOP/s | roofline |")
    print("|---|---|---|---|---|---|---|---|")
    timed = []
    for r in results:
        p = r.performance
        if p and p.speedup:
            timed.append((r.task_id, p))
            print(f"| {r.task_id} | {r.verdict.value} | {p.candidate.median_ms:.4f} | {p.eager.median_ms:.4f} | "
                  f"{p.speedup:.2f}x | {p.gbps:.0f} | {p.tflops:.2f} | {p.roofline_fraction:.0%} |")
        else:
            print(f"| {r.task_id} | {r.verdict.value} | - | - | - | - | - | - |  {r.reason[:100]}")
    print("\n| category | tasks | geomean speedup | median roofline |")
    print("|---|---|---|---|")
    for name in sorted({category(t) for t, _ in timed}):
        mine = [p for t, p in timed if category(t) == name]
        print(f"| {name} | {len(mine)} | {geomean([p.speedup for p in mine]):.2f}x | "
              f"{statistics.median(p.roofline_fraction for p in mine):.0%} |")
    correct = sum(r.verdict.value == "CORRECT" for r in results)
    overall = geomean([p.speedup for _, p in timed])
    median_roofline = statistics.median(p.roofline_fraction for _, p in timed) if timed else float("nan")
    print(f"\noverall: {correct}/{len(results)} CORRECT, {len(timed)} timed, geomean speedup {overall:.2f}x "
          f"(aim >= 1.0x), median roofline {median_roofline:.0%} (aim >= 50%)")
    print(f"not CORRECT: {', '.join(r.task_id for r in results if r.verdict.value != 'CORRECT') or 'none'}")
    print(f"below 1.0x eager: {', '.join(t for t, p in timed if p.speedup < 1.0) or 'none'}")
    print(f"below 50% of the roofline floor: {', '.join(t for t, p in timed if p.roofline_fraction < 0.5) or 'none'}")


def load(paths: list[Path]) -> list[EvalResult]:
    latest = {}
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                result = EvalResult.from_dict(json.loads(line))
                latest[result.task_id] = result
    return list(latest.values())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--tasks", nargs="*", help="task ids or categories (default: the whole suite)")
    parser.add_argument("--shard", help="K/N: every N-th task starting at K")
    parser.add_argument("--jsonl", type=Path, help="append each result as it finishes (survives a timeout)")
    parser.add_argument("--summarize", nargs="+", type=Path, help="print the tables from JSONL files")
    args = parser.parse_args()
    if args.summarize:
        report(load(args.summarize))
        return
    from evaluator.loader import load_suite

    report(measure(select(load_suite(), args.tasks or [], args.shard), args.workers, args.jsonl))


if __name__ == "__main__":
    main()
