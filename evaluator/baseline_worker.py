"""A trusted child that times the task's PyTorch reference (eager, and optionally torch.compile)
with the same protocol as candidates. It never runs candidate code."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

import torch

from evaluator import gpu_lock, wire
from evaluator.loader import load_task
from evaluator.task import on_device
from evaluator.timing import TimingPolicy
from evaluator.worker import Channel, log_gpu_memory, time_function


def serve(scratch: Path) -> None:
    job = json.loads((scratch / "job.json").read_text())
    channel = Channel(scratch / "ctl.sock")
    channel.report_lock_waits()
    device = torch.device(job["device"])
    torch.cuda.set_device(device)
    task = load_task(Path(job["task_path"]))
    files = [wire.load(path) for path in job["sets"]]
    # no GPU traffic while another process is timed
    with gpu_lock.shared(job.get("lock_dir"), "baseline inputs"):
        sets = [on_device(inputs, device) for inputs in files]
        torch.cuda.synchronize(device)
    policy = TimingPolicy(**job.get("policy", {}))
    functions = {"eager": task.reference}
    if job.get("compile"):
        functions["compiled"] = torch.compile(task.reference)
    results = {}
    for label, fn in functions.items():
        # libraries loaded and (torch.compile) kernels compiled before timing; compiling takes
        # seconds of CPU, which must not hold the lock up
        warming = gpu_lock.shared(job.get("lock_dir"), "baseline warm-up")
        with warming if label == "eager" else contextlib.nullcontext():
            for _ in range(2):
                fn(*sets[0].args, **sets[0].kwargs)
            torch.cuda.synchronize(device)
        with gpu_lock.exclusive(job.get("lock_dir"), "baseline timing"):
            timed = time_function(fn, sets, task.mutates, None, frozenset(), policy, device, keep_outputs=False)
        results[label] = {"samples_ms": timed["samples_ms"]}
    channel.send({"event": "baseline", **results})
    log_gpu_memory("timing", device)


def main(scratch: str) -> None:
    os.chdir(scratch)
    serve(Path(scratch))
