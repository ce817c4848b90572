"""How long the eager baseline holds the GPU exclusively, with the spin before each timed call set
from every warm-up call's host time or from the warm calls' alone (the first call left out, as
`timing.warm_up` does).

    python benchmarks/baseline_spin.py [--tasks id ...] [--seconds 200] [--json out.json]

For each task, its timing input sets are built on the GPU and its PyTorch reference (trusted code)
is warmed up as the baseline process warms it up, each call's host time recorded; then it is timed
as the baseline process times it under its hold, once with each spin, in alternating order from
task to task. Reported per task: the first and the warm calls' host time, the seconds each timing
took and its median; in all: the seconds under each rule, and the spread of the ratio of medians.
Tasks are taken in the suite's order until `--seconds` have passed, leaving out the references of
seconds a call (`baseline_stability.SLOW_REFERENCES`: 3 timed calls, where 20 ms of spin is nothing).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.baseline_stability import SLOW_REFERENCES, timing_sets  # noqa: E402

RULES = ("every call", "warm calls")


def host_times(fn, log: list[float]):
    """`fn`, recording each call's host time (ms) in `log`."""
    def recorded(*args, **kwargs):
        began = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            log.append((time.perf_counter() - began) * 1e3)
    return recorded


def measure_task(task, device, order: tuple[str, ...]) -> dict:
    from evaluator.sandboxed.baseline_process import Job, time_reference, warm_up

    sets = timing_sets(task, device)
    hosts: list[float] = []
    job = Job({"id": 0, "policy": {}}, mutates=tuple(task.mutates), sets=sets,
              functions={"eager": host_times(task.reference, hosts)})
    warm_up(job, "eager")
    warmed = {"warm calls": job.warmed["eager"],
              "every call": dataclasses.replace(job.warmed["eager"], host_ms=max(hosts))}
    row = {"task": task.id, "first_host_ms": hosts[0], "warm_host_ms": max(hosts[1:] or hosts)}
    for rule in order:
        job.warmed["eager"], job.samples = warmed[rule], {}
        began = time.perf_counter()
        time_reference(job, "eager", device)
        row[rule] = {"seconds": time.perf_counter() - began, "median_ms": statistics.median(job.samples["eager"]),
                     "calls": len(job.samples["eager"])}
    return row


def summarize(rows: list[dict]) -> dict:
    """Seconds under each rule in all, and the ratio of medians (warm calls / every call)."""
    ratios = sorted(row["warm calls"]["median_ms"] / row["every call"]["median_ms"] for row in rows
                    if row["every call"]["median_ms"] > 0)
    return {"tasks": len(rows), **{rule: round(sum(row[rule]["seconds"] for row in rows), 2) for rule in RULES},
            "median_ratio": {"min": ratios[0], "median": statistics.median(ratios), "max": ratios[-1]} if ratios else None}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", nargs="*", help="task ids (default: the suite in order, less the slow references)")
    parser.add_argument("--seconds", type=float, default=200.0, help="no task is started after this long")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import torch

    from evaluator.loader import load_suite

    if not torch.cuda.is_available():
        sys.exit("baseline_spin.py times references on a GPU; none is visible here")
    suite, device, began, rows = load_suite(), torch.device("cuda:0"), time.perf_counter(), []
    for task_id in args.tasks or [t for t in sorted(suite) if t not in SLOW_REFERENCES]:
        if time.perf_counter() - began > args.seconds:
            break
        order = RULES if len(rows) % 2 == 0 else RULES[::-1]
        try:
            rows.append(measure_task(suite[task_id], device, order))
        except Exception as exc:  # noqa: BLE001 - a reference that fails here is left out, said so
            print(f"{task_id}: {type(exc).__name__}: {exc}", file=sys.stderr)
        if args.json:  # kept as it goes: a run cut short keeps what it measured
            args.json.write_text(json.dumps({"rows": rows, "summary": summarize(rows)}, indent=1))
    print(json.dumps(summarize(rows), indent=1))


if __name__ == "__main__":
    main()
