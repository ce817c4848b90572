"""This GPU's measured ceilings: copy bandwidth and matrix throughput per dtype, cached per
device and software versions. IOU, MFU and the roofline floor are computed from them."""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch

from evaluator import gpu_lock
from evaluator.cache_entries import parse_entry, read_table
from evaluator.environment import device_key

COPY_BYTES = 1 << 30
METHOD = 2  # bump when the measurement changes, so cached peaks are measured again
MATMUL_SIZE = 8192


@dataclass
class Peaks:
    device: str
    copy_gbps: float
    tflops: dict[str, float] = field(default_factory=dict)
    measured_at: str = ""


def _time_ms(fn, reps: int = 10, warmup: int = 3, best: bool = False) -> float:
    """Median (or, for ceilings, best) time of `fn` in milliseconds."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    samples = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        samples.append(start.elapsed_time(end))
    return min(samples) if best else statistics.median(samples)


def _matmul_tflops(dtype: torch.dtype, device: torch.device, tf32: bool = False) -> float:
    n = MATMUL_SIZE
    if dtype == torch.int8:
        a = torch.randint(-127, 127, (n, n), dtype=torch.int8, device=device)
        b = torch.randint(-127, 127, (n, n), dtype=torch.int8, device=device).t().contiguous().t()
        fn = lambda: torch._int_mm(a, b)  # noqa: E731 - the int8 tensor-core path
    else:
        a = torch.randn(n, n, device=device, dtype=dtype)
        b = torch.randn(n, n, device=device, dtype=dtype)
        fn = lambda: a @ b  # noqa: E731
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        ms = _time_ms(fn, best=True)
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    return 2 * n ** 3 / (ms * 1e-3) / 1e12


def _bandwidth_gbps(device: torch.device) -> float:
    """The best of a copy (read + write), a fill (write) and a sum (read) over 1 GiB buffers."""
    src = torch.rand(COPY_BYTES // 4, device=device)
    dst = torch.empty_like(src)
    total = torch.empty((), device=device)
    rates = [
        2 * COPY_BYTES / _time_ms(lambda: dst.copy_(src), reps=30, best=True),
        COPY_BYTES / _time_ms(lambda: dst.fill_(1.0), reps=30, best=True),
        COPY_BYTES / _time_ms(lambda: torch.sum(src, dim=0, out=total), reps=30, best=True),
    ]
    return max(rates) / 1e6


def measure_peaks(device: torch.device) -> Peaks:
    """Matrix throughput first (it also brings the clocks up), then memory bandwidth."""
    tflops = {
        "float32": _matmul_tflops(torch.float32, device, tf32=False),
        "tf32": _matmul_tflops(torch.float32, device, tf32=True),
        "float16": _matmul_tflops(torch.float16, device),
        "bfloat16": _matmul_tflops(torch.bfloat16, device),
    }
    try:
        tflops["int8"] = _matmul_tflops(torch.int8, device)
    except RuntimeError:
        pass
    copy_gbps = _bandwidth_gbps(device)
    torch.cuda.empty_cache()
    return Peaks(device=device_key(device), copy_gbps=copy_gbps, tflops=tflops,
                 measured_at=time.strftime("%Y-%m-%dT%H:%M:%S"))


def _key(device: torch.device) -> str:
    return f"{device_key(device)}|method {METHOD}"


def cache_path(cache_dir: Path) -> Path:
    return cache_dir / "calibration.json"


def load(cache_dir: Path, device: torch.device) -> Peaks | None:
    """The cached peaks; None when missing or not a valid entry (then they are measured again)."""
    return parse_entry(Peaks, read_table(cache_path(cache_dir)).get(_key(device)))


def calibrate(cache_dir: Path, device: torch.device, lock_dir: Path | None, force: bool = False) -> Peaks:
    """Measured peaks for this device, from the cache unless `force` or not yet measured."""
    if not force:
        cached = load(cache_dir, device)
        if cached is not None:
            return cached
    with gpu_lock.exclusive(lock_dir, "calibration"):
        # another process (an evaluator per shard or Ray actor on this GPU) may have measured while
        # this one waited for the lock
        cached = None if force else load(cache_dir, device)
        if cached is not None:
            return cached
        peaks = measure_peaks(device)
        _store(cache_dir, device, peaks)
    return peaks


def _store(cache_dir: Path, device: torch.device, peaks: Peaks) -> None:
    """Written whole and renamed into place: a reader never sees half a file."""
    path = cache_path(cache_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = read_table(path)
    table[_key(device)] = asdict(peaks)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".calibration-")
    with os.fdopen(fd, "w") as f:
        f.write(json.dumps(table, indent=2))
    os.replace(tmp, path)
