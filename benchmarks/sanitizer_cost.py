"""What Compute Sanitizer's tools cost per candidate: a task's reference solution called on the
memory check's cases (small and edge inputs of every dtype) in a fresh process, plain, under
memcheck (caching allocator off, as the evaluator runs it) and under racecheck, one process each.
Prints the calls' time, the whole process's wall time and the tool's summary line.
Usage (repo root, on a GPU machine): python3 benchmarks/sanitizer_cost.py TASK_ID [TASK_ID ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

TOOLS = ("plain", "memcheck", "racecheck")


def call_cases(task_id: str) -> None:
    """In the measured process: the solution's calls on the checked cases, timed."""
    import torch

    from evaluator.loader import import_path, load_suite
    from evaluator.memcheck import checked_cases
    from evaluator.task import clone_inputs, on_device

    task = load_suite()[task_id]
    solution = import_path(task.solution_path, "solution")
    entry, device = getattr(solution, task.entry), torch.device("cuda")
    began = time.perf_counter()
    for case in checked_cases(task):
        call = clone_inputs(on_device(task.make_inputs(case.seed, case.size, case.mode, case.dtype), device))
        entry(*call.args, **call.kwargs)
        torch.cuda.synchronize()
    print(f"CALLS_S {time.perf_counter() - began:.3f}", flush=True)
    os._exit(0)


def measure(task_id: str, tool: str, sanitizer: str) -> str:
    command = [sys.executable, __file__, "--calls", task_id]
    if tool != "plain":
        command = [sanitizer, "--tool", tool, "--print-limit", "4", "--show-backtrace", "no", *command]
    env = dict(os.environ, PYTORCH_NO_CUDA_MEMORY_CACHING="1" if tool == "memcheck" else "0")
    began = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    wall = time.perf_counter() - began
    lines = (done.stdout + done.stderr).splitlines()
    calls = next((line.split()[1] for line in lines if line.startswith("CALLS_S")), "?")
    summary = next((line.strip("= ") for line in lines if "SUMMARY" in line), "")
    return f"{task_id:45s} {tool:9s} exit {done.returncode} calls {calls} s wall {wall:.2f} s {summary}"


def main(task_ids: list[str]) -> None:
    from evaluator.memcheck import sanitizer_path
    sanitizer = sanitizer_path()
    if sanitizer is None:
        sys.exit("compute-sanitizer was not found")
    for task_id in task_ids:
        for tool in ("plain", *TOOLS):  # plain twice: the first pays the machine's cold start
            print(measure(task_id, tool, sanitizer), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--calls":
        call_cases(sys.argv[2])
    else:
        main(sys.argv[1:])
