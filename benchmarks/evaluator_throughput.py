"""Evaluator throughput: reference solutions scored end to end, cold caches included. By default the
15 foundation tasks (one per category, issue 2's target); `--tasks all` takes the whole suite.

    python benchmarks/evaluator_throughput.py [--workers N] [--processes K] [--json out.json] [--cache-root DIR]
                                              [--warm] [--tasks ID ... | all] [--where] [--switch-interval S]
                                              [--candidate-processes N] [--no-scout]

Caches (Triton's kernel cache, agentloop's baselines and calibration) live under --cache-root.
Cold (the default) empties them first; --warm reuses what an earlier run left there. Prints a
markdown table (per task: verdict, latency and where it went, speedup, roofline fraction) and the
total wall time. --where adds where the time went: how long the GPU lock was held exclusively
(timing) and how long shared users (correctness calls, references) waited for it, from every
process's lock log; per task, when its cases last reached each step (built, sent, run, judged;
timed, timed results checked, baseline in), from the evaluator's case log; what the evaluator's
threads were doing, sampled every 20 ms; and the peak GPU memory of each process (the evaluator,
each task's candidate and eager baseline), from nvidia-smi.
--processes K splits the tasks over K evaluator processes on the same GPU (an experiment: is one
evaluator process, its threads sharing one interpreter, the bottleneck?).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
PROJECT = str(Path(__file__).resolve().parents[1])

from benchmarks.periodic import Periodic  # noqa: E402


class ThreadSampler(Periodic):
    """Counts, every `period` seconds, the innermost project frame of each thread but the caller's
    and the samplers'."""

    def __init__(self, period: float = 0.02):
        super().__init__(period, "sampler: threads")
        self.counts: collections.Counter = collections.Counter()
        self._caller = threading.get_ident()

    def sample(self) -> None:
        skip = {self._caller} | {t.ident for t in threading.enumerate() if t.name.startswith("sampler")}
        for ident, frame in sys._current_frames().items():
            if ident not in skip:
                self.counts[_where(frame)] += 1

    def report(self, top: int = 20) -> str:
        total = sum(self.counts.values()) or 1
        rows = [f"| {where} | {n / total:.1%} |" for where, n in self.counts.most_common(top)]
        return "| evaluator thread in | share of samples |\n|---|---|\n" + "\n".join(rows)


def _where(frame) -> str:
    leaf = f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"
    while frame is not None and not (frame.f_code.co_filename.startswith(PROJECT) and "benchmarks" not in
                                     frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return leaf
    own = f"{Path(frame.f_code.co_filename).name}:{frame.f_code.co_name}"
    return own if own == leaf else f"{own} > {leaf}"


class GpuMemorySampler:
    """Every process's GPU memory from `nvidia-smi` every 0.5 s (nothing without it): the peak per
    process and of the sum over processes."""

    QUERY = ["nvidia-smi", "--query-compute-apps=timestamp,pid,used_memory", "--format=csv,noheader,nounits",
             "-lms", "500"]

    UTILIZATION = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-lms", "500"]

    def __init__(self):
        self.peaks: collections.Counter = collections.Counter()
        self.totals: collections.Counter = collections.Counter()
        self.utilization: list[float] = []
        self._processes: list[subprocess.Popen] = []
        self._threads = [threading.Thread(target=self._read, name="sampler: GPU memory", daemon=True),
                         threading.Thread(target=self._read_utilization, name="sampler: GPU use", daemon=True)]

    def __enter__(self) -> "GpuMemorySampler":
        if shutil.which("nvidia-smi"):
            for query in (self.QUERY, self.UTILIZATION):
                self._processes.append(subprocess.Popen(query, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                                        text=True))
            for thread in self._threads:
                thread.start()
        return self

    def __exit__(self, *exc) -> None:
        for process in self._processes:
            process.terminate()
        if self._processes:
            for thread in self._threads:
                thread.join()

    def _read_utilization(self) -> None:
        for line in self._processes[1].stdout:
            if line.strip().isdigit():
                self.utilization.append(int(line) / 100)

    def _read(self) -> None:
        for line in self._processes[0].stdout:
            fields = [f.strip() for f in line.split(",")]
            if len(fields) == 3 and fields[1].isdigit() and fields[2].isdigit():
                pid, mib = int(fields[1]), int(fields[2])
                self.peaks[pid] = max(self.peaks[pid], mib)
                self.totals[fields[0]] += mib

    def report(self, processes: ProcessLog, top: int = 12) -> str:
        if not self.peaks:
            return "GPU memory: no per-process samples (no nvidia-smi)"
        rows = [f"| {processes.role(pid)} | {mib:,} | {processes.torch_peaks.get(pid, '-')} |"
                for pid, mib in self.peaks.most_common(top)]
        use = self.utilization or [0.0]
        return (f"GPU busy (nvidia-smi utilization) {sum(use) / len(use):.0%} on average; per 5 s: "
                f"{timeline(use, 10)}\n\n"
                f"GPU memory, the most that all processes held at once: {max(self.totals.values()):,} MiB\n\n"
                "| process | peak MiB (nvidia-smi) | torch's peak, allocated / reserved MiB |\n|---|---|---|\n" + "\n".join(rows))


class ProcessLog:
    """The evaluator's process log (AGENTLOOP_PROCESS_LOG), read as it grows: what each child was
    for, and torch's own GPU memory peak in it."""

    def __init__(self, path: Path):
        self.path, self._offset = path, 0
        evaluator = os.getpid()
        self.kinds = {evaluator: "the evaluator (this process)"}
        self.tasks: dict[int, str] = {}
        self.torch_peaks: dict[int, str] = {}

    def refresh(self) -> "ProcessLog":
        if self.path.exists():
            with open(self.path, "rb") as log:
                log.seek(self._offset)
                complete = log.read().rpartition(b"\n")[0]
            self._offset += len(complete) + 1 if complete else 0
            for line in complete.decode().splitlines():
                with contextlib.suppress(ValueError, KeyError):
                    self._note(json.loads(line))
        return self

    def _note(self, entry: dict) -> None:
        pid = entry["pid"]
        if "kind" in entry:
            self.kinds[pid], self.tasks[pid] = entry["kind"], entry["task"]
        if "reserved_mib" in entry:
            self.torch_peaks[pid] = f"{entry['allocated_mib']:,} / {entry['reserved_mib']:,}"

    def children(self) -> set[int]:
        return set(self.kinds) - {os.getpid()}

    def role(self, pid: int) -> str:
        if pid in self.tasks:
            return f"{self.kinds[pid]} of {self.tasks[pid]}"
        return self.kinds.get(pid, f"process {pid}")


class CpuSampler:
    """Every 0.5 s: how busy the machine's CPUs are (/proc/stat), and the CPU seconds of every
    process the evaluator started (its process log names them) and of the evaluator itself."""

    def __init__(self, processes: ProcessLog, period: float = 0.5):
        self.processes, self.period = processes, period
        self.busy: list[float] = []
        self.seconds: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sampler: CPU", daemon=True)

    def __enter__(self) -> "CpuSampler":
        if Path("/proc/stat").exists():
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    @staticmethod
    def _totals() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + fields[4]
        return sum(fields) - idle, sum(fields)

    def _run(self) -> None:
        ticks = os.sysconf("SC_CLK_TCK")
        last = self._totals()
        while not self._stop.wait(self.period):
            now = self._totals()
            self.busy.append((now[0] - last[0]) / max(1, now[1] - last[1]))
            last = now
            for pid in self.processes.refresh().children() | {os.getpid()}:
                with contextlib.suppress(OSError, ValueError, IndexError):
                    stat = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                    self.seconds[pid] = sum(int(v) for v in stat[11:15]) / ticks  # utime stime cutime cstime

    def report(self) -> str:
        if not self.busy:
            return "CPU: no samples"
        by_kind: collections.Counter = collections.Counter()
        for pid, seconds in self.seconds.items():
            by_kind[self.processes.kinds.get(pid, "other")] += seconds
        saturated = sum(b >= 0.9 for b in self.busy) / len(self.busy)
        rows = "\n".join(f"| {kind} | {s:.1f} |" for kind, s in by_kind.most_common())
        return (f"CPU ({os.cpu_count()} cores): busy {sum(self.busy) / len(self.busy):.0%} on average, "
                f">= 90% busy in {saturated:.0%} of the samples; per 5 s: {timeline(self.busy, 10)}"
                f"\n\n| processes | CPU seconds (children "
                f"included) |\n|---|---|\n{rows}")


def timeline(fractions: list[float], per: int) -> str:
    """Means of consecutive groups of `per` samples, as percentages."""
    groups = [fractions[i:i + per] for i in range(0, len(fractions), per)]
    return " ".join(f"{sum(g) / len(g):.0%}" for g in groups)


def _performance_cells(p) -> str:
    speedup = f"{p.speedup:.2f}x" if p.speedup is not None else "-"
    return f"{speedup} | {p.gbps or 0:.0f} | {p.tflops or 0:.1f} | {p.roofline_fraction or 0:.0%} |"


def _by_holder(holds: list[dict], kinds: dict[int, str]) -> list[tuple[tuple[str, str], list[dict]]]:
    """Holds grouped by (kind of process, what for), sorted."""
    groups = collections.defaultdict(list)
    for h in holds:
        groups[(kinds.get(h["pid"], "other"), h.get("what") or "-")].append(h)
    return sorted(groups.items())


def lock_timeline(holds: list[dict], started: float, kinds: dict[int, str]) -> str:
    """When things happened, in seconds from the run's start: the candidates' first calls (the end
    of start-up), the span of each kind of exclusive hold, and the longest shared holds (each keeps
    a waiting timing, and everything queued behind it, waiting)."""
    first_call: dict[int, float] = {}
    for h in holds:
        if h.get("what") == "call":
            first_call[h["pid"]] = min(first_call.get(h["pid"], math.inf), h["asked"] - started)
    lines = []
    if first_call:
        lines.append(f"candidates' first calls asked for the lock at {min(first_call.values()):.1f}-"
                     f"{max(first_call.values()):.1f} s")
    for (kind, what), hs in _by_holder([h for h in holds if h["mode"] == "exclusive"], kinds):
        lines.append(f"exclusive {what} ({kind}, {len(hs)}): held from {min(h['got'] for h in hs) - started:.1f} s "
                     f"to {max(h['released'] for h in hs) - started:.1f} s")
    longest = sorted((h for h in holds if h["mode"] == "shared"), key=lambda h: h["got"] - h["released"])[:5]
    lines += [f"long shared hold: {h.get('what') or '-'} ({kinds.get(h['pid'], 'other')}) {h['released'] - h['got']:.2f} s "
              f"from {h['got'] - started:.1f} s" for h in longest]
    return "\n".join(lines)


def covered_seconds(spans: list[tuple[float, float]]) -> float:
    """Seconds covered by at least one of the (start, end) spans."""
    total, end = 0.0, -math.inf
    for start, stop in sorted(spans):
        if stop > end:
            total += stop - max(start, end)
            end = stop
    return total


def drain_waits(holds: list[dict], kinds: dict[int, str]) -> list[tuple[tuple[str, str], int, float]]:
    """What each exclusive hold waited for: its wait (asked to got) counted against the hold in its
    way that let go last (the one it waited for to the end), by (kind, what), most seconds first."""
    exclusive = [h for h in holds if h["mode"] == "exclusive"]
    blamed: dict[tuple[str, str], list[float]] = collections.defaultdict(list)
    for e in exclusive:
        wait = e["got"] - e["asked"]
        in_way = [h for h in holds if h is not e and h["got"] < e["got"] and e["asked"] < h["released"] <= e["got"]]
        if wait <= 0 or not in_way:
            continue
        last = max(in_way, key=lambda h: h["released"])
        mode = "" if last["mode"] == "shared" else "exclusive "
        blamed[(kinds.get(last["pid"], "other"), mode + (last.get("what") or "-"))].append(wait)
    return sorted(((key, len(w), sum(w)) for key, w in blamed.items()), key=lambda row: -row[2])


class ExclusiveUse(NamedTuple):
    """One GPU's exclusive holds: seconds held; seconds one was waiting or holding (new shared holds
    queued meanwhile); seconds one waited with none holding (the shared holders draining); how many
    asked while another was waiting or holding, of how many."""

    held: float
    pending: float
    draining: float
    asked_behind_another: int
    holds: int


def exclusive_by_gpu(holds: list[dict]) -> dict[str, ExclusiveUse]:
    """Per GPU (the lock log's `gpu` field), the use of its lock's exclusive holds."""
    by_gpu: dict[str, list[dict]] = collections.defaultdict(list)
    for h in holds:
        if h["mode"] == "exclusive":
            by_gpu[h.get("gpu", "-")].append(h)
    return {gpu: _exclusive_use(hs) for gpu, hs in sorted(by_gpu.items())}


def _exclusive_use(exclusive: list[dict]) -> ExclusiveUse:
    held, pending = held_and_pending(exclusive)
    holding = covered_seconds([(h["got"], h["released"]) for h in exclusive])
    behind = sum(1 for e in exclusive if any(o is not e and o["asked"] <= e["asked"] < o["released"] for o in exclusive))
    return ExclusiveUse(held, pending, pending - holding, behind, len(exclusive))


def held_and_pending(exclusive: list[dict]) -> tuple[float, float]:
    """Exclusive holds' seconds held, and the seconds one of them was waiting or holding."""
    return (sum(h["released"] - h["got"] for h in exclusive),
            covered_seconds([(h["asked"], h["released"]) for h in exclusive]))


def lock_report(path: Path, wall: float, processes: ProcessLog, started: float | None = None) -> str:
    holds = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    exclusive = [h for h in holds if h["mode"] == "exclusive"]
    shared = [h for h in holds if h["mode"] == "shared"]
    held, pending = held_and_pending(exclusive)
    rows = []
    for mode, group in (("exclusive", exclusive), ("shared", shared)):
        rows += [f"| {mode} | {kind} | {what} | {len(hs)} | {sum(h['got'] - h['asked'] for h in hs):.1f} | "
                 f"{max(h['got'] - h['asked'] for h in hs):.2f} | {sum(h['released'] - h['got'] for h in hs):.1f} | "
                 f"{max(h['released'] - h['got'] for h in hs):.2f} |"
                 for (kind, what), hs in _by_holder(group, processes.kinds)]
    timeline = "" if started is None else "\n\n" + lock_timeline(holds, started, processes.kinds)
    drains = "\n".join(f"| {kind} | {what} | {n} | {seconds:.1f} |"
                        for (kind, what), n, seconds in drain_waits(holds, processes.kinds))
    return (f"GPU lock: held exclusively {held:.1f} s in {len(exclusive)} holds ({held / wall:.0%} of the wall "
            f"time); a timing waiting for it or holding it, so that new shared holds queue, {pending:.1f} s "
            f"({pending / wall:.0%})\n\n| mode | holder | for | holds | waited s | longest wait s | held s | longest hold s |\n"
            f"|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + timeline
            + "\n\nWhat exclusive holds waited for (each wait counted against the hold in its way that let go last):\n\n"
            "| holder | for | waits | seconds |\n|---|---|---|---|\n" + drains)


def case_report(path: Path, started: float) -> str:
    """Per task, when each step of its cases' way last happened (seconds from the start), from the
    evaluator's case log; and how long its judgements waited for a turn and took."""
    events = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    by_task: dict[str, list[dict]] = collections.defaultdict(list)
    for e in events:
        by_task[e["task"]].append(e)

    def last(es: list[dict], name: str, **match) -> str:
        ts = [e["t"] for e in es if e["event"] == name and all(e.get(k) == v for k, v in match.items())]
        return f"{max(ts) - started:.1f}" if ts else "-"

    rows = []
    for task, es in sorted(by_task.items(), key=lambda kv: max(e["t"] for e in kv[1])):
        asked = [e["t"] for e in es if e["event"] == "judge_asked"]
        got = [e["t"] for e in es if e["event"] == "judge_got"]
        second = {e["case"]: e["t"] for e in es if e["event"] == "run_in" and e.get("run") == 1}
        judging = sum(e["t"] - second[e["case"]] for e in es if e["event"] == "judged" and e["case"] in second)
        first_run = min((e["t"] for e in es if e["event"] == "run_in"), default=math.nan) - started
        rows.append(f"| {task} | {last(es, 'imported')} | {first_run:.1f} | {last(es, 'built')} | "
                    f"{last(es, 'sent', to='candidate')} | {last(es, 'run_in')} | {last(es, 'judged')} | "
                    f"{last(es, 'timing_asked')} | {last(es, 'timed')} | {last(es, 'timed_checked')} | "
                    f"{last(es, 'baseline_in')} | {sum(g - a for a, g in zip(asked, got)):.2f} | {judging:.2f} |")
    return ("| task | imported | first run in | last case built | last sent | last run in | last judged | timing asked "
            "| timed | timed results checked | baseline in | judging waited s | second run in to judged s |\n"
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows))


def score(suite: dict, workers: int, cache: Path, options: dict | None = None) -> tuple[list, dict[str, float]]:
    """One evaluator (EvaluatorConfig `options` beside the cache), `workers` evaluations at once: the
    results, and when each task finished (seconds since the epoch)."""
    from evaluator.evaluate import Evaluator, EvaluatorConfig

    finished: dict[str, float] = {}
    config = EvaluatorConfig(cache_dir=cache, **(options or {}))
    with Evaluator(config) as evaluator, ThreadPoolExecutor(workers) as pool:
        def evaluate(task):
            result = evaluator.evaluate(task, task.solution_path.read_text())
            finished[task.id] = time.time()
            return result
        return list(pool.map(evaluate, suite.values())), finished


def _score_shard(task_ids: list[str], workers: int, cache: Path, options: dict) -> tuple[list[dict], dict[str, float]]:
    from evaluator.loader import load_suite

    suite = load_suite()
    results, finished = score({i: suite[i] for i in task_ids}, workers, cache, options)
    return [r.to_dict() for r in results], finished


def score_in_processes(task_ids: list[str], workers: int, processes: int, cache: Path,
                       options: dict | None = None) -> tuple[list, dict[str, float]]:
    """`processes` evaluators, each in a process of its own with its own fork server, scoring every
    `processes`-th task with workers/processes threads; they share the GPU's lock and the caches."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from evaluator.result import EvalResult

    shards = [task_ids[k::processes] for k in range(processes) if task_ids[k::processes]]
    per_process = max(1, -(-workers // processes))
    with ProcessPoolExecutor(len(shards), mp_context=multiprocessing.get_context("spawn")) as pool:
        done = list(pool.map(_score_shard, shards, [per_process] * len(shards), [cache] * len(shards),
                             [options or {}] * len(shards)))
    by_id = {r["task_id"]: EvalResult.from_dict(r) for dicts, _ in done for r in dicts}
    finished = {task_id: t for _, times in done for task_id, t in times.items()}
    return [by_id[i] for i in task_ids], finished


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cache-root", type=Path)
    parser.add_argument("--warm", action="store_true", help="reuse the caches under --cache-root")
    parser.add_argument("--tasks", nargs="+", default=None, help="task ids, or `all` (default: the 15 foundation tasks)")
    parser.add_argument("--where", action="store_true", help="report GPU lock holds, evaluator thread samples and each process's GPU memory")
    parser.add_argument("--processes", type=int, default=1,
                        help="evaluator processes sharing the GPU (and its lock), each scoring every K-th task "
                             "with workers/K threads (default 1: one evaluator, as the local executor runs)")
    parser.add_argument("--candidate-processes", type=int, default=0,
                        help="processes per candidate for its correctness cases, split by dtype (default 0: the "
                             "evaluator's choice: on a GPU three while few evaluations are in flight, else one)")
    parser.add_argument("--no-scout", action="store_true", help="no compile scout beside each candidate (it "
                        "compiles the candidate's kernels ahead, many at once)")
    parser.add_argument("--switch-interval", type=float, help="the evaluator process's GIL switch interval, s "
                        "(sys.setswitchinterval; Python's default is 0.005)")
    args = parser.parse_args()
    if args.candidate_processes < 0:
        parser.error("--candidate-processes must be 0 (the evaluator's choice) or more")
    if args.switch_interval:
        sys.setswitchinterval(args.switch_interval)
    root = args.cache_root or Path(tempfile.mkdtemp(prefix="agentloop-bench-"))
    if not args.warm:
        shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True, exist_ok=True)
    os.environ["TRITON_CACHE_DIR"] = str(root / "triton")
    cache = root / "agentloop"
    lock_log, process_log, case_log = root / "locks.jsonl", root / "processes.jsonl", root / "cases.jsonl"
    for log in (lock_log, process_log, case_log):
        log.unlink(missing_ok=True)
    if args.where:
        os.environ["AGENTLOOP_LOCK_LOG"] = str(lock_log)
        os.environ["AGENTLOOP_PROCESS_LOG"] = str(process_log)
        os.environ["AGENTLOOP_CASE_LOG"] = str(case_log)

    from evaluator.loader import FOUNDATION_TASKS, load_suite

    suite = load_suite()
    if args.tasks != ["all"]:
        suite = {i: suite[i] for i in (args.tasks or FOUNDATION_TASKS)}
    options = {"candidate_processes": args.candidate_processes, "compile_scout": False if args.no_scout else None}
    began, started = time.perf_counter(), time.time()
    processes = ProcessLog(process_log)
    sampler, memory, cpu = ThreadSampler(), GpuMemorySampler(), CpuSampler(processes)
    where = contextlib.ExitStack()
    if args.where:  # the thread sampler sees only this process's evaluator
        for each in (sampler, memory, cpu) if args.processes == 1 else (memory, cpu):
            where.enter_context(each)
    with where:
        if args.processes > 1:
            results, finished = score_in_processes(list(suite), args.workers, args.processes, cache, options)
        else:
            results, finished = score(suite, args.workers, cache, options)
    wall = time.perf_counter() - began
    last_result = max(finished.values()) - started
    if args.json:  # first: nothing below may lose it
        args.json.write_text(json.dumps({"wall_s": wall, "last_result_s": last_result, "workers": args.workers,
                                         "processes": args.processes,
                                         "cold": not args.warm,
                                         "results": [r.to_dict() for r in results]}, indent=1))
    env = results[0].environment
    print(f"{len(results)} reference solutions on {env.gpu or 'CPU (interpreter)'}, driver {env.driver}, "
          f"torch {env.torch}, triton {env.triton}; workers {args.workers}; evaluator processes {args.processes}; "
          f"{'warm' if args.warm else 'cold'} caches; {'no compile scout' if args.no_scout else 'compile scouts'}; "
          f"wall {wall:.1f} s (the evaluator's start-up and shut-down included; the last result came at "
          f"{last_result:.1f} s)\n")
    print("| task | verdict | done at s | latency s | references | spawn | start+import | calls | of them compiling "
          "| of that waiting for the scout | scout | correctness | timing | speedup | GB/s | TFLOP/s | roofline |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        p, ph = r.performance, r.phases
        print(f"| {r.task_id} | {r.verdict.value} | {finished[r.task_id] - started:.1f} | {ph.get('total', 0):.2f} | {ph.get('references', 0):.2f} | "
              f"{ph.get('spawn', 0):.2f} | {ph.get('start_and_import', 0):.2f} | {ph.get('calls', 0):.2f} | "
              f"{ph.get('compile', 0):.2f} | {ph.get('scout_wait', 0):.2f} | {ph.get('scout', 0):.2f} | "
              f"{ph.get('correctness', 0):.2f} | {ph.get('timing', 0):.2f} | "
              + (_performance_cells(p) if p else "- | - | - | - |"))
    for r in results:
        if r.performance and r.performance.baseline_error:
            print(f"\n{r.task_id}: no eager baseline: {r.performance.baseline_error}")
    if args.where:
        processes.refresh()
        threads = sampler.report() if args.processes == 1 else "(evaluator threads not sampled: several processes)"
        print("\n" + lock_report(lock_log, wall, processes, started) + "\n\n" + case_report(case_log, started)
              + "\n\n" + threads + "\n\n" + memory.report(processes) + "\n\n" + cpu.report())


if __name__ == "__main__":
    main()
