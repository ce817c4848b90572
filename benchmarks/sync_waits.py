"""CPU time a process spends waiting for its GPU work, by how CUDA waits: spinning (CUDA's choice
for a process with fewer contexts than the machine has cores), blocking until the GPU signals
(`blocking`, set before the context is made), or blocking set on the live context (`switched`,
cuCtxSetFlags, which a process could use to spin only while it is timed). Each waiter launches a
~1 ms kernel and synchronizes, over and over, alone on the GPU or beside `--others` processes that
keep it busy with long kernels (as other evaluations' processes do).

    python benchmarks/sync_waits.py [--others 0 7] [--seconds 10] [--json out.json]

Prints, per way of waiting and number of other processes: the waiter's CPU seconds per second of
wall time and its kernels per second.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import multiprocessing
import sys
import time

SCHED_SPIN, SCHED_BLOCKING_SYNC = 0x01, 0x04
WAYS = ("spin", "blocking", "switched")


def cuda_driver():
    cuda = ctypes.CDLL("libcuda.so.1")
    if cuda.cuInit(0) != 0:
        raise RuntimeError("cuInit failed")
    return cuda


def _set_flags(way: str) -> str:
    """Before torch makes the context (spin, blocking) or on the live one (switched): what was done."""
    cuda = cuda_driver()
    if way in ("spin", "blocking"):
        device = ctypes.c_int()
        cuda.cuDeviceGet(ctypes.byref(device), 0)
        flag = SCHED_SPIN if way == "spin" else SCHED_BLOCKING_SYNC
        return f"primary context flags: {cuda.cuDevicePrimaryCtxSetFlags(device, flag)}"
    return f"context flags: {cuda.cuCtxSetFlags(SCHED_BLOCKING_SYNC)}"


def waiter(way: str, seconds: float, results) -> None:
    import torch

    status = _set_flags(way) if way != "switched" else ""
    torch.zeros(1, device="cuda")
    if way == "switched":
        status = _set_flags(way)
    cycles = _cycles_per_ms(torch)
    began, cpu, kernels = time.perf_counter(), time.process_time(), 0
    while time.perf_counter() - began < seconds:
        torch.cuda._sleep(cycles)
        torch.cuda.synchronize()
        kernels += 1
    wall = time.perf_counter() - began
    results.put({"way": way, "status": status, "cpu_per_wall": round((time.process_time() - cpu) / wall, 3),
                 "kernels_per_s": round(kernels / wall, 1)})


def _cycles_per_ms(torch) -> int:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    torch.cuda._sleep(1_000_000)
    end.record()
    torch.cuda.synchronize()
    return int(1_000_000 / max(start.elapsed_time(end), 1e-3))


def occupier(stop) -> None:
    """Keeps the GPU busy with 50 ms kernels until told to stop; waits blocking, to spare the CPU."""
    import torch

    _set_flags("blocking")
    torch.zeros(1, device="cuda")
    cycles = 50 * _cycles_per_ms(torch)
    while not stop.is_set():
        torch.cuda._sleep(cycles)
        torch.cuda.synchronize()


def measure(way: str, others: int, seconds: float) -> dict:
    context = multiprocessing.get_context("spawn")
    stop, results = context.Event(), context.Queue()
    busy = [context.Process(target=occupier, args=(stop,)) for _ in range(others)]
    for process in busy:
        process.start()
    time.sleep(5 if others else 0)  # their contexts made and their kernels running
    process = context.Process(target=waiter, args=(way, seconds, results))
    process.start()
    row = results.get(timeout=seconds + 120)
    process.join()
    stop.set()
    for each in busy:
        each.join(timeout=30)
    return {**row, "others": others}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--others", type=int, nargs="*", default=[0, 7])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--json", type=str)
    args = parser.parse_args()
    try:
        cuda_driver()
    except (OSError, RuntimeError) as exc:
        sys.exit(f"no CUDA driver here: {exc}")
    rows = [measure(way, others, args.seconds) for others in args.others for way in WAYS]
    print("| waiting | other processes | CPU s per wall s | kernels/s | flags set (0: done) |\n|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['way']} | {row['others']} | {row['cpu_per_wall']} | {row['kernels_per_s']} | {row['status']} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
