"""Where a task's evaluator-side time goes, no candidate running: per case of its plan, building the
inputs and expected outputs (ReferenceStore.get) and judging the reference's own outputs.

    python benchmarks/reference_building.py TASK [TASK ...] [--threads N] [--default-stream]

With --threads N, N tasks are built at once in one process (as the evaluator's threads do).
--default-stream builds on the shared default CUDA stream instead of one stream per thread, for
comparison. Prints one line per case and a total per task.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--default-stream", action="store_true",
                        help="build on the default CUDA stream (as before each thread had its own)")
    parser.add_argument("--device", default=None, help="default: cuda when present, else cpu")
    args = parser.parse_args()

    import torch

    from evaluator import references
    from evaluator.cases import plan
    from evaluator.loader import load_suite

    if args.default_stream:
        references.own_stream = lambda device: contextlib.nullcontext()
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    suite = load_suite()
    unknown = [t for t in args.tasks if t not in suite]
    if unknown:
        parser.error(f"unknown tasks: {', '.join(unknown)}")
    with tempfile.TemporaryDirectory() as work, tempfile.TemporaryDirectory() as locks:
        store = references.ReferenceStore(Path(work), device, lock_dir=Path(locks) if device.type == "cuda" else None)

        def probe(task_id: str) -> None:
            task = suite[task_id]
            began, build, judge = time.perf_counter(), 0.0, 0.0
            for case in plan(task, on_gpu=device.type == "cuda"):
                t0 = time.perf_counter()
                data = store.get(task, case)
                t1 = time.perf_counter()
                task.contract.judge(data.expected, [data.expected.lo, data.expected.lo], data.inputs)
                t2 = time.perf_counter()
                build, judge = build + t1 - t0, judge + t2 - t1
                print(f"  {task_id} {case.key}: build {t1 - t0:.1f} s, judge {t2 - t1:.1f} s", flush=True)
            print(f"{task_id}: {time.perf_counter() - began:.1f} s (build {build:.1f} s, judge {judge:.1f} s)",
                  flush=True)

        print(f"{device}, {args.threads} thread(s), "
              f"{'the default stream' if args.default_stream else 'a stream per thread'}", flush=True)
        began = time.perf_counter()
        with ThreadPoolExecutor(args.threads) as pool:
            list(pool.map(probe, args.tasks))
        print(f"wall {time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()
