"""Achieved bandwidth and throughput against this GPU's measured peaks, and the floor below which
no kernel can run."""

from __future__ import annotations

import torch

from evaluator.calibration import Peaks
from evaluator.contracts import dtype_name
from evaluator.task import Cost

# A time is impossible when it implies more than this multiple of the calibrated peaks (the best
# achieved by PyTorch's own copy, fill, sum and matmul, not datasheet figures): such a result is
# rejected, never reported as a speedup. The margin absorbs kernels that beat those baselines.
IMPOSSIBLE_FACTOR = 1.5


def peak_tflops(peaks: Peaks, dtype: torch.dtype, tf32: bool) -> float | None:
    name = dtype_name(dtype)
    if name == "float32" and tf32:
        name = "tf32"
    return peaks.tflops.get(name) or peaks.tflops.get("float32")


def floor_ms(cost: Cost, peaks: Peaks, dtype: torch.dtype, tf32: bool) -> float:
    memory = cost.bytes / (peaks.copy_gbps * 1e9)
    flops = peak_tflops(peaks, dtype, tf32)
    compute = cost.flops / (flops * 1e12) if flops else 0.0
    return max(memory, compute) * 1e3


def figures(cost: Cost, peaks: Peaks, dtype: torch.dtype, tf32: bool, median_ms: float) -> dict[str, float]:
    seconds = median_ms * 1e-3
    flops_peak = peak_tflops(peaks, dtype, tf32)
    floor = floor_ms(cost, peaks, dtype, tf32)
    return {
        "gbps": cost.bytes / seconds / 1e9,
        "tflops": cost.flops / seconds / 1e12,
        "iou": cost.bytes / seconds / 1e9 / peaks.copy_gbps,
        "mfu": cost.flops / seconds / 1e12 / flops_peak if flops_peak else None,
        "roofline_floor_ms": floor,
        "roofline_fraction": floor / median_ms,
    }


def impossible(fraction: float) -> bool:
    return fraction > IMPOSSIBLE_FACTOR
