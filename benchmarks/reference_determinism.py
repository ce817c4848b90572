"""Are the expected outputs the same every time? Each task's reference, called in float64 on the GPU
many times for its small and edge cases while other threads keep the GPU busy on streams of their
own (as the evaluator's do while it builds references beside candidates), against its first call
and against the CPU. A reference whose GPU calls differ among themselves computes a different
expected output from one evaluation to the next, and so fails a correct kernel now and then.

    python benchmarks/reference_determinism.py [--tasks ID|CATEGORY ...] [--calls 20] [--busy 3]
                                               [--seconds 540] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import threading
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.loader import load_suite  # noqa: E402
from evaluator.references import run_reference  # noqa: E402
from evaluator.task import Task, tensors_in, upcast  # noqa: E402

SPREAD_LIMIT = 1e-9  # relative to the output's largest magnitude: far above float64 rounding


def spread(a, b) -> float:
    """Largest difference between two outputs, relative to the first's largest magnitude
    (inf where their shapes or NaN patterns differ)."""
    worst = 0.0
    for x, y in zip(tensors_in(a), tensors_in(b), strict=True):
        x, y = x.detach().cpu(), y.detach().cpu()
        if x.shape != y.shape or x.dtype != y.dtype:
            return float("inf")
        if not x.is_floating_point() and not x.is_complex():
            worst = max(worst, 0.0 if torch.equal(x, y) else float("inf"))
            continue
        if not torch.equal(torch.isnan(x), torch.isnan(y)):
            return float("inf")
        ok = ~torch.isnan(x)
        if ok.any():
            scale = x[ok].abs().max().item() or 1.0
            worst = max(worst, (x[ok] - y[ok]).abs().max().item() / scale)
    return worst


def keep_busy(stop: threading.Event, device: torch.device) -> None:
    stream = torch.cuda.Stream(device)
    a = torch.randn(4096, 4096, device=device)
    with torch.cuda.stream(stream):
        while not stop.is_set():
            a = (a @ a).clamp_(-1, 1)
            stream.synchronize()  # a short queue: the calls checked meet this work, not a backlog
    stream.synchronize()


def own_stream(device: torch.device) -> torch.cuda.Stream | None:
    return torch.cuda.Stream(device) if device.type == "cuda" else None


def check_task(task: Task, calls: int, device: torch.device) -> dict:
    stream = own_stream(device)
    worst_between, worst_cpu = 0.0, 0.0
    for size in ("small", "edge"):
        for seed in task.seeds:
            inputs = upcast(task.make_inputs(seed, size, "standard", task.primary_dtype))
            on_cpu = run_reference(task, inputs, torch.device("cpu"))
            first = None
            for _ in range(calls):
                with torch.cuda.stream(stream) if stream else contextlib.nullcontext():
                    out = run_reference(task, inputs, device)
                if stream:
                    stream.synchronize()  # this stream only: the busy ones never drain
                if first is None:
                    first = out
                    worst_cpu = max(worst_cpu, spread(on_cpu, out))
                else:
                    worst_between = max(worst_between, spread(first, out))
    return {"task": task.id, "between_gpu_calls": worst_between, "gpu_against_cpu": worst_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=None, help="task ids or categories (default: all)")
    parser.add_argument("--calls", type=int, default=20, help="GPU calls per case")
    parser.add_argument("--busy", type=int, default=3, help="threads keeping the GPU busy meanwhile")
    parser.add_argument("--seconds", type=float, default=540.0, help="stop starting new tasks after this")
    parser.add_argument("--device", default="cuda:0", help="cpu: a dry run of the script, nothing busy")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        parser.error("no GPU here (--device cpu for a dry run)")
    suite = load_suite()
    tasks = [t for i, t in sorted(suite.items())
             if not args.tasks or i in args.tasks or t.category in args.tasks]
    stop = threading.Event()
    busy = [threading.Thread(target=keep_busy, args=(stop, device), daemon=True)
            for _ in range(args.busy if device.type == "cuda" else 0)]
    for thread in busy:
        thread.start()
    began, rows = time.perf_counter(), []
    try:
        for task in tasks:
            if time.perf_counter() - began > args.seconds:
                print(f"stopped after {len(rows)} of {len(tasks)} tasks (--seconds)", file=sys.stderr)
                break
            if task.contract.kind == "statistical":
                rows.append({"task": task.id, "skipped": "random by design (statistical contract)"})
                continue
            try:
                rows.append(check_task(task, args.calls, device))
                print(json.dumps(rows[-1]), file=sys.stderr, flush=True)
            except Exception as exc:  # noqa: BLE001 - a task that cannot run here is reported, not fatal
                rows.append({"task": task.id, "error": f"{type(exc).__name__}: {exc}"})
    finally:
        stop.set()
        for thread in busy:
            thread.join()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    unstable = [r for r in rows if r.get("between_gpu_calls", 0.0) > SPREAD_LIMIT]
    skipped = sum("skipped" in r for r in rows)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "the CPU"
    print(f"{len(rows)} tasks on {name}, torch {torch.__version__}, "
          f"{args.calls} GPU calls (float64 where the task is in floats) per small and edge case with {args.busy} threads busy; "
          f"{len(unstable)} whose GPU calls differ by more than {SPREAD_LIMIT:g} of their largest output; "
          f"{skipped} with a statistical contract skipped (random by design)")
    print("| task | spread between GPU calls | GPU against CPU |\n|---|---|---|")
    for r in sorted(rows, key=lambda r: -r.get("between_gpu_calls", float("inf"))):
        if "skipped" in r:
            continue
        if "error" in r:
            print(f"| {r['task']} | {r['error']} | |")
        elif r["between_gpu_calls"] > SPREAD_LIMIT or r["gpu_against_cpu"] > 1e-6:
            print(f"| {r['task']} | {r['between_gpu_calls']:.3g} | {r['gpu_against_cpu']:.3g} |")


if __name__ == "__main__":
    main()
