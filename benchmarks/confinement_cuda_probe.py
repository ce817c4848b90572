"""Where a confined process's CUDA start goes: a child forked from a process with torch imported
creates its CUDA context unconfined, fully confined, and confined with one step left out at a time.

    python benchmarks/confinement_cuda_probe.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from evaluator import confinement  # noqa: E402

VARIANTS = {
    "unconfined": None,
    "confined": {},
    "no seccomp": {"_load_seccomp": lambda applied: None},
    "no sandbox uid": {"_become_sandbox_user": lambda applied: None},
    "no fresh root": {"_build_root": lambda scratch, view, gpu: None},
}


def child(variant: str, pipe: int) -> None:
    try:
        _measure(variant, pipe)
    except BaseException as exc:  # noqa: BLE001 - reported to the parent
        os.write(pipe, json.dumps({"error": f"{type(exc).__name__}: {exc}"}).encode())
    os._exit(0)


def _measure(variant: str, pipe: int) -> None:
    scratch = tempfile.mkdtemp(prefix="al-probe-", dir="/dev/shm")
    if os.geteuid() == 0:
        os.chown(scratch, confinement.SANDBOX_UID, confinement.SANDBOX_UID)
    began = time.perf_counter()
    if VARIANTS[variant] is not None:
        for name, replacement in VARIANTS[variant].items():
            setattr(confinement, name, replacement)
        confinement.confine(scratch, confinement.View(), gpu=True)
    confined = time.perf_counter()
    torch.cuda.set_device(0)
    torch.empty(1, device="cuda")
    torch.cuda.synchronize()
    done = time.perf_counter()
    os.write(pipe, json.dumps({"confine_ms": 1e3 * (confined - began), "cuda_ms": 1e3 * (done - confined)}).encode())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    results = {}
    for variant in VARIANTS:
        samples = []
        for _ in range(args.repeat):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.close(read)
                child(variant, write)
            os.close(write)
            data = os.read(read, 4096)
            os.waitpid(pid, 0)
            sample = json.loads(data or b'{"error": "no answer"}')
            if "error" in sample:
                raise SystemExit(f"{variant}: {sample['error']}")
            samples.append(sample)
        results[variant] = {key: round(statistics.median(s[key] for s in samples), 1) for key in samples[0]}
        print(variant, results[variant], flush=True)


if __name__ == "__main__":
    main()
