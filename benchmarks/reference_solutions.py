"""Every reference solution on the GPU: speedup over eager PyTorch, achieved GB/s and TFLOP/s, the
fraction of the roofline floor; per-category geometric means; the tasks below the aims.

    python benchmarks/reference_solutions.py [--workers 8] [--tasks ID|CATEGORY ...] [--shard K/N]
                                             [--jsonl results.jsonl] [--skip-done earlier.jsonl ...]
    python benchmarks/reference_solutions.py --summarize results*.jsonl
    python benchmarks/reference_solutions.py --from-tables benchmarks/RESULTS.md

Each result is appended to --jsonl as it finishes, so a run cut short keeps what it measured; shards
split the suite between processes (one per GPU: CUDA_VISIBLE_DEVICES=K). --summarize prints the
tables from any number of such files. --skip-done leaves out the tasks an earlier, cut-short run
already scored, so a second run finishes the suite. --from-tables reads back the tables printed
into a file (RESULTS.md) and prints them as one: the suite as several runs scored it.

Aims (issue 5): geometric-mean speedup >= 1.0x overall, median roofline fraction >= 50%.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.result import EvalResult  # noqa: E402


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def category(task_id: str) -> str:
    return task_id.split("/")[0]


def select(suite: dict, wanted: list[str], shard: str | None, done: set[str] = frozenset()) -> list:
    tasks = [t for i, t in sorted(suite.items())
             if (not wanted or i in wanted or t.category in wanted) and i not in done]
    if shard:
        k, n = (int(x) for x in shard.split("/"))
        tasks = tasks[k::n]
    return interleaved(tasks)


def interleaved(tasks: list) -> list:
    """One task of each category in turn, so that a category of slow tasks (LinearAlgebra's, on a GPU)
    does not take every worker at once."""
    by_category: dict[str, list] = {}
    for task in tasks:
        by_category.setdefault(task.category, []).append(task)
    return [t for turn in itertools.zip_longest(*by_category.values()) for t in turn if t is not None]


def measure(tasks: list, workers: int, jsonl: Path | None, timing_seconds: float | None,
            memcheck: bool = True) -> list[EvalResult]:
    from evaluator.evaluate import Evaluator, EvaluatorConfig

    results = []
    policy = {"max_seconds": timing_seconds} if timing_seconds else {}
    started: dict[str, float] = {}

    def evaluate(evaluator, task):
        started[task.id] = time.monotonic()
        try:
            return evaluator.evaluate(task, task.solution_path.read_text())
        finally:
            started.pop(task.id, None)

    began = time.monotonic()
    with Evaluator(EvaluatorConfig(timing_policy=policy, memcheck=memcheck)) as evaluator, ThreadPoolExecutor(workers) as pool, \
            heartbeat(started):
        futures = {pool.submit(evaluate, evaluator, t): t for t in tasks}
        for done, future in enumerate(as_completed(futures), 1):
            try:
                result = future.result()
            except Exception as exc:  # noqa: BLE001 - an evaluator failure on one task is reported, not fatal
                print(f"[{done}/{len(tasks)}] {futures[future].id}: evaluator error {type(exc).__name__}: {exc}",
                      file=sys.stderr, flush=True)
                continue
            results.append(result)
            print(f"[{done}/{len(tasks)}] {futures[future].id}: {result.verdict.value}", file=sys.stderr, flush=True)
            if jsonl:
                with open(jsonl, "a") as f:
                    f.write(json.dumps(result.to_dict()) + "\n")
    print(f"scored {len(results)} of {len(tasks)} in {time.monotonic() - began:.0f} s", file=sys.stderr, flush=True)
    return results


@contextlib.contextmanager
def heartbeat(started: dict[str, float], every: float = 30.0):
    """Every `every` seconds, the evaluations in flight and how long each has run (on stderr)."""
    stop = threading.Event()

    def beat():
        while not stop.wait(every):
            now = time.monotonic()
            running = sorted(started.items(), key=lambda kv: kv[1])
            print("in flight: " + ", ".join(f"{t} {now - t0:.0f}s" for t, t0 in running), file=sys.stderr, flush=True)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()


@dataclass(frozen=True)
class Row:
    """One task's line of the tables: from an EvalResult, or read back from a table printed earlier."""
    task_id: str
    verdict: str
    ms: float | None = None
    eager_ms: float | None = None
    speedup: float | None = None
    gbps: float | None = None
    tflops: float | None = None
    roofline: float | None = None
    note: str = ""

    @classmethod
    def of(cls, r: EvalResult) -> "Row":
        p = r.performance
        if not (p and p.speedup):
            return cls(r.task_id, r.verdict.value, note=r.reason[:100])
        return cls(r.task_id, r.verdict.value, p.candidate.median_ms, p.eager.median_ms, p.speedup, p.gbps,
                   p.tflops, p.roofline_fraction)

    @property
    def timed(self) -> bool:
        return self.speedup is not None

    def line(self) -> str:
        if not self.timed:
            return f"| {self.task_id} | {self.verdict} | - | - | - | - | - | - |  {self.note}"
        return (f"| {self.task_id} | {self.verdict} | {self.ms:.4f} | {self.eager_ms:.4f} | {self.speedup:.2f}x | "
                f"{self.gbps:.0f} | {self.tflops:.2f} | {self.roofline:.0%} |")


TABLE_HEADER = "| task | verdict | ms | eager ms | speedup | GB/s | TFLOP/s | roofline |"


def rows_from_tables(text: str) -> dict[str, Row]:
    """The rows of every table `report` printed into `text` (RESULTS.md): the last row of a task wins."""
    rows: dict[str, Row] = {}
    in_table = False
    for line in text.splitlines():
        if line.strip() == TABLE_HEADER:
            in_table = True
            continue
        if not line.startswith("|"):
            in_table = False
        if not in_table or line.startswith("|---"):
            continue
        cells = [c.strip() for c in line.strip().split("|")[1:]]
        task_id, verdict, values = cells[0], cells[1], cells[2:8]
        if "-" in values:
            rows[task_id] = Row(task_id, verdict, note=cells[8] if len(cells) > 8 else "")
            continue
        ms, eager, speedup, gbps, tflops, roofline = values
        rows[task_id] = Row(task_id, verdict, float(ms), float(eager), float(speedup.rstrip("x")), float(gbps),
                            float(tflops), float(roofline.rstrip("%")) / 100)
    return rows


def report(rows: list[Row], title: str) -> None:
    rows = sorted(rows, key=lambda r: r.task_id)
    print(title + "\n")
    print(TABLE_HEADER)
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row.line())
    timed = [r for r in rows if r.timed]
    print("\n| category | tasks | geomean speedup | median roofline |")
    print("|---|---|---|---|")
    for name in sorted({category(r.task_id) for r in timed}):
        mine = [r for r in timed if category(r.task_id) == name]
        print(f"| {name} | {len(mine)} | {geomean([r.speedup for r in mine]):.2f}x | "
              f"{statistics.median(r.roofline for r in mine):.0%} |")
    correct = sum(r.verdict == "CORRECT" for r in rows)
    overall = geomean([r.speedup for r in timed])
    median_roofline = statistics.median(r.roofline for r in timed) if timed else float("nan")
    print(f"\noverall: {correct}/{len(rows)} CORRECT, {len(timed)} timed, geomean speedup {overall:.2f}x "
          f"(aim >= 1.0x), median roofline {median_roofline:.0%} (aim >= 50%)")
    print(f"not CORRECT: {', '.join(r.task_id for r in rows if r.verdict != 'CORRECT') or 'none'}")
    print(f"below 1.0x eager: {', '.join(r.task_id for r in timed if r.speedup < 1.0) or 'none'}")
    print(f"below 50% of the roofline floor: {', '.join(r.task_id for r in timed if r.roofline < 0.5) or 'none'}")


def report_results(results: list[EvalResult]) -> None:
    if not results:
        print("no task was scored")
        return
    env = results[0].environment
    report([Row.of(r) for r in results], f"{len(results)} reference solutions on {env.gpu}, driver {env.driver}, "
                                         f"torch {env.torch}, triton {env.triton}")


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
    parser.add_argument("--from-tables", type=Path,
                        help="print the tables again from a file holding earlier ones (RESULTS.md): the suite "
                             "assembled from several runs, the latest row of each task")
    parser.add_argument("--timing-seconds", type=float,
                        help="cap on each timing run (default: the evaluator's policy, 3 s)")
    parser.add_argument("--no-memcheck", action="store_true", help="skip the out-of-bounds access check")
    parser.add_argument("--skip-done", nargs="+", type=Path, default=[],
                        help="leave out the tasks already scored in these JSONL files")
    args = parser.parse_args()
    if args.summarize:
        report_results(load(args.summarize))
        return
    if args.from_tables:
        rows = rows_from_tables(args.from_tables.read_text())
        report(list(rows.values()), f"{len(rows)} reference solutions, the latest row of each in {args.from_tables}")
        return
    from evaluator.loader import load_suite

    done = {r.task_id for r in load([p for p in args.skip_done if p.exists()])}
    tasks = select(load_suite(), args.tasks or [], args.shard, done)
    print(f"{len(tasks)} tasks to score ({len(done)} already scored)", file=sys.stderr, flush=True)
    report_results(measure(tasks, args.workers, args.jsonl, args.timing_seconds, not args.no_memcheck))


if __name__ == "__main__":
    main()
