"""Evaluation throughput by executor: the local executor on 1 GPU and on every visible GPU (an
evaluator process per GPU; `local-one-process`: every GPU's Evaluator in this one process), and the
Ray executor (a local Ray instance) on the same GPUs; `localN`: the first N GPUs; scaling efficiency against one GPU.

    python benchmarks/executor_scaling.py [--tasks ID|CATEGORY ...] [--copies 2] [--failing 0] [--json out.json]
                                          [--no-ir-store] [--no-memcheck] [--memcheck-start first_pass]
                                          [--threads]
                                          [--executors local1 local local-one-process ray]

The workload: the reference solutions of the chosen tasks (default: the first task of every
category), each submitted `--copies` times with a distinct trailing comment (distinct sources, the
same kernels); with `--failing N`, copies 1 to N of each task fail on their first case after their
kernels ran (a model's candidates mostly fail). A first pass through the local executor, one copy
of each task, warms the baseline, calibration and reference caches, so every measured configuration
sees the same warm caches (the IR store of compiled kernels, evaluator/ir_store.py, is emptied
before each configuration and left out of the first pass: each starts with its scouts compiling
every kernel, and the copies after the second are answered from the store; `--no-ir-store` turns
it off; `--no-memcheck` leaves out the memory check's process, `--memcheck-start first_pass` starts
it once a case has passed); each configuration then scores the
whole workload, and throughput is evaluations per second of wall time. For each configuration it
also reports how busy the machine's CPUs were and the busy CPU seconds per evaluation (from
/proc/stat, where there is one: every process of the machine counts), those seconds and the bytes
written to storage by kind of process (process_use.py: the evaluator, the candidates' processes and
scouts, the memory checks, the compilers), and the evaluations' phases summed, to tell a GPU-bound
run from a CPU-bound one.
While a configuration runs, a line on stderr every 25 results gives how many are done and when.
Each GPU's utilization is read from `nvidia-smi` once a second (gpu_utilization.py).
`--threads` also samples where the threads of each kind of process are (thread_waits.py: running,
or waiting in which system call, as in a GPU driver's ioctls), twice a second.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agentloop.evaluation import EvaluationQueue  # noqa: E402
from benchmarks.gpu_utilization import GpuUtilization  # noqa: E402
from benchmarks.machine_counters import cpu_times, cpu_use, disk_written  # noqa: E402
from benchmarks.process_use import ProcessUse  # noqa: E402
from benchmarks.thread_waits import ThreadWaits, table  # noqa: E402
from evaluator.ir_store import STORE_FOLDER  # noqa: E402
from evaluator.loader import load_suite  # noqa: E402
from evaluator.settings import default_cache_dir  # noqa: E402


def workload(suite: dict, wanted: list[str], copies: int, failing: int = 0) -> list[tuple]:
    """Each task's reference solution `copies` times, distinct by a trailing comment; copies 1 to
    `failing` of each fail (failing_copy), as most of a model's candidates do."""
    if wanted:
        tasks = [t for i, t in sorted(suite.items()) if i in wanted or t.category in wanted]
    else:
        firsts: dict = {}
        for task_id, task in sorted(suite.items()):
            firsts.setdefault(task.category, task)
        tasks = list(firsts.values())
    return [(t, failing_copy(t.solution_path.read_text(), t.entry, c) if 1 <= c <= failing
             else t.solution_path.read_text() + f"\n# copy {c}\n") for c in range(copies) for t in tasks]


def failing_copy(source: str, entry: str, copy: int) -> str:
    """The solution, its entry point raising once its kernels have run: a candidate that compiles,
    launches and then fails on its first case (RUNTIME_FAIL)."""
    return (source + f"\n\n_solution_{copy} = {entry}\n\n\ndef {entry}(*args, **kwargs):\n"
            f"    _solution_{copy}(*args, **kwargs)\n    raise ValueError('copy {copy}: wrong after its kernels ran')\n")


async def score(evaluations, jobs: list[tuple], name: str = "", every: int = 25) -> tuple[float, list]:
    """Wall time, and each job's result in the order of `jobs`; every `every` results a line on
    stderr with the seconds so far, so that a run stopped early still tells its rate."""
    began, done = time.perf_counter(), 0

    async def one(task, code):
        nonlocal done
        result = await evaluations.evaluate(task, code)
        done += 1
        if name and (done % every == 0 or done == len(jobs)):
            print(f"{name}: {done} of {len(jobs)} in {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)
        return result

    results = await asyncio.gather(*(one(task, code) for task, code in jobs))
    return time.perf_counter() - began, list(results)


def phase_sums(results: list) -> dict[str, float]:
    sums: Counter = Counter()
    for result in results:
        sums.update({k: v for k, v in result.phases.items() if isinstance(v, (int, float))})
    return {k: round(v, 1) for k, v in sums.most_common()}


def executor(name: str, workers: int, ir_store: bool = True, memcheck: bool = True, memcheck_start: str = "spawn"):
    import torch

    options = {"workers": workers, "ir_store": ir_store, "memcheck": memcheck, "memcheck_start": memcheck_start}
    if name == "local1":
        return EvaluationQueue("cuda:0" if torch.cuda.is_available() else "cpu", **options)
    if name == "local":
        return EvaluationQueue("auto", **options)
    if name.startswith("local") and name[5:].isdigit():  # the first N GPUs, an evaluator process each
        return EvaluationQueue("cuda:" + ",".join(map(str, range(int(name[5:])))), **options)
    if name == "local-one-process":  # every device's Evaluator in this process, as before evaluator processes
        return EvaluationQueue("auto", processes=False, **options)
    from agentloop.ray_evaluation import RayEvaluations

    return RayEvaluations(device="auto", **options)


def emptied_ir_store() -> None:
    """Every executor starts from an empty IR store (evaluator/ir_store.py): what one executor's
    runs stored would otherwise answer the next one's first copies."""
    shutil.rmtree(default_cache_dir() / STORE_FOLDER, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", nargs="*", default=[])
    parser.add_argument("--copies", type=int, default=2)
    parser.add_argument("--failing", type=int, default=0, help="copies of each task (from the second) that fail")
    parser.add_argument("--workers", type=int, default=0, help="evaluations at once per device (local)")
    parser.add_argument("--executors", nargs="*", default=["local1", "local", "ray"])
    parser.add_argument("--no-ir-store", action="store_true", help="every scout compiles every kernel (no IR store)")
    parser.add_argument("--no-memcheck", action="store_true", help="no memory check (one CUDA process an evaluation)")
    parser.add_argument("--memcheck-start", choices=("spawn", "first_pass"), default="spawn",
                        help="when the memory check's process starts (EvaluatorConfig.memcheck_start)")
    parser.add_argument("--threads", action="store_true", help="sample where the processes' threads are")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if not 0 <= args.failing < args.copies:
        parser.error("--failing: from 0 to one less than --copies (the first copy warms the caches)")
    jobs = workload(load_suite(), args.tasks, args.copies, args.failing)
    warm = EvaluationQueue("auto", args.workers, ir_store=False)
    try:
        asyncio.run(score(warm, jobs[:len(jobs) // args.copies]))
    finally:
        warm.close()
    rows, first = [], None
    for name in args.executors:
        emptied_ir_store()
        evaluations = executor(name, args.workers, ir_store=not args.no_ir_store, memcheck=not args.no_memcheck,
                               memcheck_start=args.memcheck_start)
        try:
            devices = len(getattr(evaluations, "devices", [])) or 1
            if hasattr(evaluations, "pids"):
                evaluations.pids()  # Ray actors finish starting before the clock does
            cpu_before, disk_before, began = cpu_times(), disk_written(), time.time()
            with ProcessUse() as by_kind, GpuUtilization() as gpus, \
                    (ThreadWaits() if args.threads else contextlib.nullcontext()) as waits:
                wall, results = asyncio.run(score(evaluations, jobs, name))
            cpu_busy, cpu_seconds = cpu_use(cpu_before, cpu_times())
            disk_after = disk_written()
        finally:
            evaluations.close()
        verdicts = [r.verdict.value for r in results]
        first = first or (name, verdicts)
        differing = [f"{task.id} (job {i}): {a} under {first[0]}, {b} here"
                     for i, ((task, _), a, b) in enumerate(zip(jobs, first[1], verdicts)) if a != b]
        rows.append({"executor": name, "devices": devices, "began": round(began, 1), "evaluations": len(jobs),
                     "wall_s": round(wall, 1),
                     "per_s": round(len(jobs) / wall, 3), "cpu_busy": cpu_busy, "cpus": os.cpu_count(),
                     "cpu_s_per_evaluation": round(cpu_seconds / len(jobs), 2) if cpu_seconds is not None else None,
                     "cpu_s_per_evaluation_by_process": {k: round(v / len(jobs), 2) for k, v in by_kind.cpu_seconds.items()},
                     "disk_written_mb": round((disk_after - disk_before) / 1e6) if disk_before is not None else None,
                     "written_mb_per_evaluation_by_process": {k: round(v / len(jobs) / 1e6, 1)
                                                              for k, v in by_kind.written_bytes.items()},
                     "gpu_utilization": gpus.means(),
                     "phase_sums_s": phase_sums(results), "verdicts": dict(Counter(verdicts)),
                     "verdicts_differing_from_first_executor": differing})
        if waits is not None:
            rows[-1]["threads"] = [[kind, where, round(n, 2)] for (kind, where), n in waits.mean_threads().items()]
        print(json.dumps(rows[-1]), flush=True)
    one = next((r["per_s"] for r in rows if r["executor"] == "local1"), None)
    print("\n| executor | GPUs | evaluations | wall s | evaluations/s | vs 1 GPU | efficiency | CPUs busy | "
          "CPU s per evaluation | verdicts differing |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        ratio = r["per_s"] / one if one else float("nan")
        print(f"| {r['executor']} | {r['devices']} | {r['evaluations']} | {r['wall_s']} | {r['per_s']} | "
              f"{ratio:.2f}x | {ratio / r['devices']:.0%} | {_percent(r['cpu_busy'])} of {r['cpus']} | "
              f"{r['cpu_s_per_evaluation'] if r['cpu_s_per_evaluation'] is not None else '-'} | "
              f"{len(r['verdicts_differing_from_first_executor'])} |")
    if any(r["gpu_utilization"] for r in rows):
        print("\nEach GPU's utilization, mean of nvidia-smi once a second\n\n| executor | GPUs |\n|---|---|")
        for r in rows:
            print(f"| {r['executor']} | " + ", ".join(f"{i}: {u:.0%}" for i, u in r["gpu_utilization"].items()) + " |")
    for figure, title in (("cpu_s_per_evaluation_by_process", "CPU seconds"),
                          ("written_mb_per_evaluation_by_process", "MB written to storage")):
        print_by_process(rows, figure, title)
    for r in (r for r in rows if "threads" in r):
        print(f"\nWhere the threads were under {r['executor']} (sampled twice a second)\n")
        print(table({(kind, where): n for kind, where, n in r["threads"]}))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


def print_by_process(rows: list[dict], figure: str, title: str) -> None:
    kinds = list(dict.fromkeys(k for r in rows for k in r[figure]))
    print(f"\n{title} per evaluation, by process (sampled twice a second: a floor)\n\n| executor | "
          + " | ".join(kinds) + " |\n|---|" + "---|" * len(kinds))
    for r in rows:
        print(f"| {r['executor']} | " + " | ".join(str(r[figure].get(k, "-")) for k in kinds) + " |")


def _percent(fraction: float | None) -> str:
    return "-" if fraction is None else f"{fraction:.0%}"


if __name__ == "__main__":
    main()
