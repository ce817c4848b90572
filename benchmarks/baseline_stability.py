"""How many timed calls the eager baseline of a slow reference needs: the references whose one call
takes a quarter second to seconds hold the GPU exclusively longest of anything in a cold run (each
timed at least BASELINE_FLOOR times), and every other GPU user waits meanwhile.

    python benchmarks/baseline_stability.py [--repeats 5] [--floor K] [--tasks id ...] [--json out.json]

For each task, its timing input sets (standard size, primary dtype, its timing seeds) are built on
the GPU and its PyTorch reference, trusted code, is timed in this process `--repeats` times as the
baseline process times it (its warm-up calls, then `baseline_policy`'s timed calls).
Reported per task: the call's median, the seconds each measurement took, and the CV across the
measurements of the median of their first k timed calls, for each k up to the fewest any took: what
a floor of k timed calls would have given, for k up to `--floor` (the baseline process's
BASELINE_FLOOR unless given).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# The references whose eager call took 250 ms or more on an H100 (benchmarks/RESULTS.md's table).
SLOW_REFERENCES = ("Fusion/fused_qr_solve", "LinearAlgebra/qr", "Normalization/spectral_norm_eig",
                   "LinearAlgebra/matrix_power_eig", "LinearAlgebra/eig", "LinearAlgebra/determinant_via_qr",
                   "LinearAlgebra/svd", "Fusion/fused_svd_reconstruct", "LinearAlgebra/low_rank_svd_approximation",
                   "LinearAlgebra/pseudoinverse_svd", "LinearAlgebra/ldl_factor", "LinearAlgebra/solve_symmetric_ldl")


def cv(values: list[float]) -> float:
    mean = statistics.fmean(values)
    return statistics.pstdev(values) / mean if mean > 0 else 0.0


def summarize(task_id: str, measurements: list[list[float]], seconds: list[float]) -> dict:
    """Each measurement's timed calls (ms, in order) and how long it took: the CV across measurements
    of the median of their first k calls, for k from 1 to the fewest calls any measurement had."""
    fewest = min(len(samples) for samples in measurements)
    by_floor = {k: cv([statistics.median(samples[:k]) for samples in measurements]) for k in range(1, fewest + 1)}
    return {"task": task_id, "median_ms": statistics.median([s for m in measurements for s in m]),
            "calls": [len(m) for m in measurements], "seconds": seconds, "cv_by_floor": by_floor,
            "cv_all": cv([statistics.median(m) for m in measurements])}


def timing_sets(task, device) -> list:
    """The task's timing input sets (standard size, primary dtype, its timing seeds) on `device`."""
    from evaluator.cases import timing_cases
    from evaluator.task import on_device

    return [on_device(task.make_inputs(c.seed, c.size, c.mode, c.dtype), device) for c in timing_cases(task)]


def measure_task(task, repeats: int, device, floor: int | None = None) -> dict:
    from evaluator.sandboxed.baseline_process import Job, time_reference, warm_up

    sets = timing_sets(task, device)
    measurements, seconds = [], []
    for _ in range(repeats):
        policy = {} if floor is None else {"min_reps_floor": floor}
        job = Job({"id": 0, "policy": policy}, mutates=tuple(task.mutates), sets=sets, functions={"eager": task.reference})
        began = time.perf_counter()
        warm_up(job, "eager")  # as the baseline process warms a reference up before its hold
        time_reference(job, "eager", device)
        seconds.append(time.perf_counter() - began)
        measurements.append(list(job.samples["eager"]))
    return summarize(task.id, measurements, seconds)


def table(rows: list[dict]) -> str:
    floors = sorted({k for row in rows for k in row["cv_by_floor"]})
    lines = ["| task | median ms | timed calls | seconds per measurement | " +
             " | ".join(f"CV, first {k}" for k in floors) + " | CV, all |",
             "|---|---|---|---|" + "---|" * (len(floors) + 1)]
    for row in rows:
        cells = [f"{row['cv_by_floor'][k]:.2%}" if k in row["cv_by_floor"] else "-" for k in floors]
        lines.append(f"| {row['task']} | {row['median_ms']:.1f} | {min(row['calls'])}-{max(row['calls'])} | "
                     f"{statistics.median(row['seconds']):.1f} | " + " | ".join(cells) + f" | {row['cv_all']:.2%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--floor", type=int, help="timed calls at least (default: the baseline process's)")
    parser.add_argument("--tasks", nargs="*", help="task ids (default: the slow references)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    import torch

    from evaluator.loader import load_suite

    if not torch.cuda.is_available():
        sys.exit("baseline_stability.py times references on a GPU; none is visible here")
    suite = load_suite()
    device = torch.device("cuda:0")
    rows = []
    for task_id in args.tasks or SLOW_REFERENCES:
        rows.append(measure_task(suite[task_id], args.repeats, device, args.floor))
        print(f"{task_id}: done", file=sys.stderr, flush=True)
        if args.json:  # kept as it goes: a run cut short keeps what it measured
            args.json.write_text(json.dumps(rows, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
