"""How fast a machine makes CUDA contexts, alone and many at once: fresh processes forked from one
with torch imported (as the fork server's children are), spread over the machine's GPUs
(`CUDA_VISIBLE_DEVICES` one each), each timing `cuInit` alone, `cuInit` and its device's primary
context (the driver API through ctypes), or a tensor on the GPU through torch; each with CUDA's
default hardware work queues and with `CUDA_DEVICE_MAX_CONNECTIONS=1`.

    python benchmarks/cuda_contexts.py [--at-once 1 16] [--gpus N] [--json out.json]

Prints per way and number at once: each process's median and longest seconds, its CPU seconds,
the round's wall time and contexts per second for the whole machine.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import multiprocessing
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.sync_waits import cuda_driver  # noqa: E402

WAYS = (("cuInit", {}), ("context", {}), ("context", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}),
        ("torch", {}), ("torch", {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}))


def _start(way: str) -> None:
    if way == "torch":
        import torch

        torch.zeros(1, device="cuda")
        torch.cuda.synchronize()
        return
    cuda = cuda_driver()
    if way == "context":
        device, context, pointer = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_uint64()
        cuda.cuDeviceGet(ctypes.byref(device), 0)
        if cuda.cuDevicePrimaryCtxRetain(ctypes.byref(context), device) != 0:
            raise RuntimeError("no primary context")
        cuda.cuCtxSetCurrent(context)
        cuda.cuMemAlloc_v2(ctypes.byref(pointer), ctypes.c_size_t(1 << 20))
        cuda.cuCtxSynchronize()


def starter(gpu: int, way: str, results) -> None:
    os.environ["CUDA_VISIBLE_DEVICES"] = str(gpu)
    began, cpu = time.perf_counter(), time.process_time()
    _start(way)
    results.put((time.perf_counter() - began, time.process_time() - cpu))


def measure(way: str, settings: dict[str, str], at_once: int, gpus: int) -> dict:
    """One round: `at_once` processes started together, GPU k % gpus each."""
    saved = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    context, began = multiprocessing.get_context("fork"), time.perf_counter()
    results = context.Queue()
    processes = [context.Process(target=starter, args=(k % gpus, way, results)) for k in range(at_once)]
    try:
        for process in processes:
            process.start()
        rows = [results.get(timeout=300) for _ in processes]
        for process in processes:
            process.join()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    wall = time.perf_counter() - began
    seconds = sorted(r[0] for r in rows)
    return {"way": way, "settings": settings, "at_once": at_once, "gpus": gpus,
            "median_s": round(statistics.median(seconds), 2), "max_s": round(seconds[-1], 2),
            "cpu_s": round(statistics.median(r[1] for r in rows), 2), "wall_s": round(wall, 2),
            "per_s": round(at_once / wall, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at-once", type=int, nargs="*", default=[1, 16])
    parser.add_argument("--gpus", type=int, default=0, help="GPUs to spread over (0: all of them)")
    parser.add_argument("--json")
    args = parser.parse_args()
    try:  # loaded, not started: a child forked after cuInit could not use CUDA
        ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        sys.exit(f"no CUDA driver here: {exc}")
    import torch  # noqa: F401 - before the forks, as in the fork server; CUDA itself is not started here

    from evaluator.gpu_node import machine_gpus

    gpus = args.gpus or machine_gpus()
    rows = [measure(way, settings, n, gpus) for n in args.at_once for way, settings in WAYS]
    print("| way | queues | at once | GPUs | each: median s | longest s | CPU s | wall s | contexts/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        queues = r["settings"].get("CUDA_DEVICE_MAX_CONNECTIONS", "default")
        print(f"| {r['way']} | {queues} | {r['at_once']} | {r['gpus']} | {r['median_s']} | {r['max_s']} | "
              f"{r['cpu_s']} | {r['wall_s']} | {r['per_s']} |")
    if args.json:
        with open(args.json, "w") as out:
            json.dump(rows, out, indent=1)


if __name__ == "__main__":
    main()
