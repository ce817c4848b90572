"""Evaluator throughput: reference solutions scored end to end, cold caches included. By default the
15 foundation tasks (one per category, issue 2's target); `--tasks all` takes the whole suite.

    python benchmarks/evaluator_throughput.py [--workers N] [--json out.json] [--cache-root DIR] [--warm]
                                              [--tasks ID ... | all]

Caches (Triton's kernel cache, agentloop's baselines and calibration) live under --cache-root.
Cold (the default) empties them first; --warm reuses what an earlier run left there. Prints a
markdown table (per task: verdict, latency and where it went, speedup, roofline fraction) and the
total wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))



def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cache-root", type=Path)
    parser.add_argument("--warm", action="store_true", help="reuse the caches under --cache-root")
    parser.add_argument("--tasks", nargs="+", default=None, help="task ids, or `all` (default: the 15 foundation tasks)")
    args = parser.parse_args()
    root = args.cache_root or Path(tempfile.mkdtemp(prefix="agentloop-bench-"))
    if not args.warm:
        shutil.rmtree(root, ignore_errors=True)
    os.environ["TRITON_CACHE_DIR"] = str(root / "triton")
    cache = root / "agentloop"

    from evaluator.evaluate import Evaluator, EvaluatorConfig
    from evaluator.loader import FOUNDATION_TASKS, load_suite

    suite = load_suite()
    if args.tasks != ["all"]:
        suite = {i: suite[i] for i in (args.tasks or FOUNDATION_TASKS)}
    began = time.perf_counter()
    config = EvaluatorConfig(cache_dir=cache)
    with Evaluator(config) as evaluator:
        with ThreadPoolExecutor(args.workers) as pool:
            results = list(pool.map(lambda t: evaluator.evaluate(t, t.solution_path.read_text()), suite.values()))
    wall = time.perf_counter() - began
    env = results[0].environment
    print(f"{len(results)} reference solutions on {env.gpu or 'CPU (interpreter)'}, driver {env.driver}, "
          f"torch {env.torch}, triton {env.triton}; workers {args.workers}; "
          f"{'warm' if args.warm else 'cold'} caches; wall {wall:.1f} s (evaluator start-up included)\n")
    print("| task | verdict | latency s | references | start+import | calls (compile incl.) | correctness | "
          "timing | speedup | GB/s | TFLOP/s | roofline |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        p, ph = r.performance, r.phases
        print(f"| {r.task_id} | {r.verdict.value} | {ph.get('total', 0):.2f} | {ph.get('references', 0):.2f} | "
              f"{ph.get('start_and_import', 0):.2f} | {ph.get('calls', 0):.2f} | "
              f"{ph.get('correctness', 0):.2f} | {ph.get('timing', 0):.2f} | "
              + (f"{p.speedup:.2f}x | {p.gbps:.0f} | {p.tflops:.1f} | {p.roofline_fraction:.0%} |" if p else "- | - | - | - |"))
    if args.json:
        args.json.write_text(json.dumps({"wall_s": wall, "workers": args.workers, "cold": not args.warm,
                                         "results": [r.to_dict() for r in results]}, indent=1))


if __name__ == "__main__":
    main()
