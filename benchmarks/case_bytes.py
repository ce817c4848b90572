"""How many bytes the disk cache of references would hold for every task's standard-size cases (those
of the task's own and timing seeds, as a GPU plan builds them): the inputs, drawn on the host, and
the expected outputs, whose shapes and dtypes the reference gives on the meta device (plus their
float64 copies where the contract compares against float64). Runs on any machine; the whole suite
draws about 80 GiB of inputs, one task at a time.

    python3 benchmarks/case_bytes.py [--tasks Math/sub ...] [--top 10]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from evaluator.cases import plan  # noqa: E402
from evaluator.loader import load_suite  # noqa: E402
from evaluator.task import Task, element_bytes, on_device, tensors_in  # noqa: E402

GIB = 1 << 30
META = torch.device("meta")


def expected_bytes(task: Task, inputs) -> int | None:
    """The expected outputs' bytes (lo, and hi in float64 where needed); None where the reference
    does not run on the meta device."""
    meta = on_device(inputs, META)
    try:
        outputs = tensors_in(task.reference(*meta.args, **meta.kwargs))
    except Exception:  # noqa: BLE001 - an operator without a meta kernel: not counted
        return None
    hi = sum(t.numel() * 8 for t in outputs if t.is_floating_point()) if task.contract.needs_hi else 0
    return element_bytes(*outputs) + hi


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", nargs="*", default=[])
    parser.add_argument("--top", type=int, default=10)
    args = parser.parse_args()
    suite = load_suite()
    tasks = [suite[t] for t in args.tasks] if args.tasks else list(suite.values())
    rows, uncounted, began = [], [], time.perf_counter()
    for task in tasks:
        inputs_total = outputs_total = 0
        for case in plan(task, on_gpu=True):
            if case.size != "standard" or case.seed not in (*task.seeds, *task.timing_seeds):
                continue
            inputs = task.make_inputs(case.seed, case.size, case.mode, case.dtype)
            inputs_total += element_bytes(*tensors_in(inputs))
            outputs = expected_bytes(task, inputs)
            outputs_total += outputs or 0
            if outputs is None:
                uncounted.append(task.id)
            del inputs
        rows.append((inputs_total + outputs_total, inputs_total, outputs_total, task.id))
    inputs_sum, outputs_sum = sum(r[1] for r in rows), sum(r[2] for r in rows)
    print(f"{len(rows)} tasks in {time.perf_counter() - began:.0f} s: inputs {inputs_sum / GIB:.1f} GiB, expected "
          f"outputs {outputs_sum / GIB:.1f} GiB, together {(inputs_sum + outputs_sum) / GIB:.1f} GiB; outputs not "
          f"counted (no meta kernel) for {len(set(uncounted))} tasks: {', '.join(sorted(set(uncounted))) or 'none'}")
    for total, inputs_bytes, outputs_bytes, task_id in sorted(rows, reverse=True)[:args.top]:
        print(f"  {task_id}: {total / GIB:.2f} GiB ({inputs_bytes / GIB:.2f} inputs, {outputs_bytes / GIB:.2f} outputs)")


if __name__ == "__main__":
    main()
