"""How many Triton C launchers the reference solutions need: each one's kernels are compiled as the
compile scout compiles them (meta tensors, a GPU's target, no GPU: evaluator/compile_scout.py) on
the configuration of every case its evaluation runs, and each compiled specialization's argument
types are recorded. Where Triton builds a C launcher for each signature (3.6), also how many
distinct launcher sources those make: what the stubs layer holds once the suite has run
(evaluator/triton_launchers.py).

    python benchmarks/launcher_signatures.py [--tasks id ...] [--arch 90] [--builds 5] [--stages] [--json out.json]

Where launchers are per signature, `--builds` of them are then built as the evaluator builds them
(`triton_launchers.build`, into an empty folder), each timed: wall seconds and gcc's CPU seconds.
Each task's compiling is also measured in CPU seconds: this process's (Triton's compiler runs in its
threads, as in the scout) and its children's (ptxas); with `--stages`, the thread CPU seconds of each
of Triton's compile stages in all (the front end that turns the kernel's Python into Triton IR, and
the backend's stages after it).

Runs without a GPU (Triton's compiler and ptxas only). Standard-size inputs are made small (same
dtypes and modes), so a signature that only a standard size's magnitude changes is not seen.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def call_on_meta(task, module_name: str) -> None:
    """The task's reference solution, loaded as a module of `module_name` (a fresh JIT function,
    which finds nothing in memory), called on meta inputs of each of its cases, as the scout calls
    a candidate; standard sizes made small."""
    import torch

    from evaluator import candidate_source
    from evaluator.cases import plan, timing_cases
    from evaluator.sandboxed.candidate_process import resolve_entry

    meta = torch.device("meta")
    module = candidate_source.load_module(str(task.solution_path), module_name)
    entry = resolve_entry(module, task.entry, task.model_init, meta)
    to_meta = lambda v: v.to(meta) if isinstance(v, torch.Tensor) else v  # noqa: E731
    for case in plan(task, True) + timing_cases(task):
        size = "small" if case.size == "standard" else case.size
        inputs = task.make_inputs(case.seed, size, case.mode, case.dtype)
        try:
            entry(*map(to_meta, inputs.args), **{k: to_meta(v) for k, v in inputs.kwargs.items()})
        except Exception:  # noqa: BLE001 - as in the scout, a call on meta tensors may fail
            pass


def compiled_signatures(task, scout, seen: list) -> int:
    """Compiles the task's reference solution on meta inputs of each of its cases; how many
    specializations were compiled. Each compiled kernel's argument types are appended to `seen`."""
    from evaluator.sandboxed.candidate_process import CANDIDATE_MODULE

    call_on_meta(task, f"{CANDIDATE_MODULE}_{len(seen)}")
    compiled = len(scout.compiles)
    for future in scout.compiles:
        future.exception()
    scout.compiles.clear()
    return compiled


def launcher_sources(signatures: list[tuple]) -> int | None:
    from evaluator.triton_launchers import launcher_maker

    make = launcher_maker()
    return None if make is None else len({make({}, dict(enumerate(s)), None) for s in signatures})


def build_times(signatures: list[tuple], count: int) -> list[dict]:
    """The first `count` distinct launchers built into an empty folder, each timed."""
    from evaluator.triton_launchers import build, launcher_maker

    make = launcher_maker()
    if make is None:
        return []
    by_source = {make({}, dict(enumerate(s)), None): s for s in reversed(signatures)}
    stubs, times = Path(tempfile.mkdtemp(prefix="launchers-")), []
    for signature in list(by_source.values())[:count]:
        began, children = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        build(stubs, signature)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append({"seconds": round(time.perf_counter() - began, 3), "gcc_cpu_seconds":
                      round(max(0.0, after.ru_utime + after.ru_stime - children.ru_utime - children.ru_stime), 3)})
    return times


STAGES = ("make_ttir", "make_ttgir", "make_llir", "make_ptx", "make_cubin")


def timed_stages() -> Counter:
    """Thread CPU seconds of each of Triton's compile stages, summed as they run on any thread: the
    front end (`ASTSource.make_ir`, the kernel's Python to Triton IR) and the CUDA backend's stages
    (make_cubin's own part; ptxas, its child process, is not in it)."""
    from triton.backends.nvidia.compiler import CUDABackend
    from triton.compiler.compiler import ASTSource

    spent: Counter = Counter()
    lock = threading.Lock()

    def timed(owner, name: str, label: str) -> None:
        original, static = getattr(owner, name), isinstance(inspect.getattr_static(owner, name), staticmethod)

        def run(*args, **kwargs):
            began = time.thread_time()
            try:
                return original(*args, **kwargs)
            finally:
                with lock:
                    spent[label] += time.thread_time() - began
        setattr(owner, name, staticmethod(run) if static else run)

    timed(ASTSource, "make_ir", "front end (make_ir)")
    for stage in STAGES:
        timed(CUDABackend, stage, stage)
    return spent


def measure(task_ids: list[str] | None, arch: int, builds: int = 0, stages: bool = False) -> dict:
    os.environ.pop("TRITON_INTERPRET", None)
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="launcher-signatures-")
    from triton.compiler import compiler

    from evaluator.compile_scout import Scout
    from evaluator.loader import load_suite

    seen: list[tuple] = []
    original = compiler.CompiledKernel.__init__

    def recorded(kernel, src, metadata_group, hash):
        original(kernel, src, metadata_group, hash)
        seen.append(tuple(getattr(src, "signature", {}).values()))

    compiler.CompiledKernel.__init__ = recorded
    spent = timed_stages() if stages else Counter()
    scout = Scout(2)
    if not scout.install({"backend": "cuda", "arch": arch, "warp_size": 32}):
        raise SystemExit("this Triton has no compile hooks (knobs): nothing to measure")
    rows = {}
    for task in load_suite().values():
        if task_ids and task.id not in task_ids:
            continue
        before, cpu_before = len(seen), cpu_seconds()
        compiled = compiled_signatures(task, scout, seen)
        mine, cpu = seen[before:], [round(b - a, 2) for a, b in zip(cpu_before, cpu_seconds())]
        rows[task.id] = {"compiled": compiled, "signatures": len(set(mine)), "launchers": launcher_sources(mine),
                         "cpu_s": cpu[0], "compiler_cpu_s": cpu[1]}
    return {"tasks": rows, "compiled": len(seen), "signatures": len(set(seen)), "launchers": launcher_sources(seen),
            "cpu_s": round(sum(r["cpu_s"] for r in rows.values()), 1),
            "compiler_cpu_s": round(sum(r["compiler_cpu_s"] for r in rows.values()), 1),
            "stage_cpu_s": {k: round(v, 2) for k, v in spent.items()}, "builds": build_times(seen, builds)}


def cpu_seconds() -> tuple[float, float]:
    """CPU seconds of this process (Triton's compiler runs in it) and of its ended children (ptxas)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", nargs="*")
    parser.add_argument("--arch", type=int, default=90, help="the GPU target compiled for (90: H100/H200)")
    parser.add_argument("--builds", type=int, default=5, help="launchers built and timed afterwards")
    parser.add_argument("--stages", action="store_true", help="also each compile stage's CPU seconds")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    summary = measure(args.tasks, args.arch, args.builds, args.stages)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    launchers = summary["launchers"]
    print(f"{len(summary['tasks'])} tasks: {summary['compiled']} kernel specializations compiled, "
          f"{summary['signatures']} distinct signatures, "
          + (f"{launchers} distinct launchers" if launchers is not None else "one launcher for every kernel")
          + f"; compiling took {summary['cpu_s']} CPU s in this process and {summary['compiler_cpu_s']} in ptxas")
    if summary["stage_cpu_s"]:
        print("CPU s by compile stage: " + ", ".join(f"{k} {v}" for k, v in summary["stage_cpu_s"].items()))
    if summary["builds"]:
        seconds = [b["seconds"] for b in summary["builds"]]
        cpu = [b["gcc_cpu_seconds"] for b in summary["builds"]]
        print(f"{len(seconds)} launchers built: {min(seconds):.2f}-{max(seconds):.2f} s each (median "
              f"{statistics.median(seconds):.2f}), gcc {min(cpu):.2f}-{max(cpu):.2f} CPU s")


if __name__ == "__main__":
    main()
