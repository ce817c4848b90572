"""How often a statistical check fails its task's own reference solution: the solution called on the
task's inputs (on a GPU when there is one), in groups of calls judged together as an evaluation
judges them, every failure printed. `--task-file` judges with the check of another version of the
task's file (an older commit's, say), on the same calls.

    python3 benchmarks/statistical_false_failures.py --task Fusion/fused_transformer_block --seeds 8
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from evaluator.loader import import_path, load_suite  # noqa: E402
from evaluator.task import Inputs, on_device  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", required=True)
    parser.add_argument("--task-file", type=Path, action="append", default=[],
                        help="judge also with the `check` of this file (repeatable)")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--groups", type=int, default=3, help="groups of calls per seed")
    parser.add_argument("--calls", type=int, default=3, help="calls judged together")
    parser.add_argument("--size", default="standard")
    args = parser.parse_args()
    task = load_suite()[args.task]
    if getattr(task.contract, "kind", None) != "statistical" or task.solution_path is None:
        sys.exit(f"{args.task}: not a task with a statistical check and a reference solution")
    solution = getattr(import_path(task.solution_path, "solution"), task.entry)
    checks = {"this checkout": task.contract.check}
    checks.update({str(path): import_path(path, f"other{k}").check for k, path in enumerate(args.task_file)})
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    failing, groups, began = dict.fromkeys(checks, 0), 0, time.perf_counter()
    for seed in range(args.seeds):
        made = task.make_inputs(seed, args.size, "standard", task.primary_dtype)
        inputs = Inputs(on_device(made.args, device), on_device(made.kwargs, device))
        for group in range(args.groups):
            runs = [solution(*inputs.args, **inputs.kwargs) for _ in range(args.calls)]
            groups += 1
            for name, check in checks.items():
                failures = check(inputs, runs)
                if failures:
                    failing[name] += 1
                    print(f"seed {seed} group {group} ({name}): {failures[0][:300]}")
    print(f"{args.task} on {device}: {groups} groups of {args.calls} calls in {time.perf_counter() - began:.1f} s; "
          f"groups failing: " + ", ".join(f"{n} {k}" for n, k in failing.items()))


if __name__ == "__main__":
    main()
