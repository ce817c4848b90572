"""Where an evaluation ran: device, driver, library versions, interpreter or not."""

from __future__ import annotations

import functools
import platform
import socket
import subprocess

import torch
import triton

from evaluator.result import Environment


@functools.lru_cache(maxsize=None)
def driver_version() -> str | None:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip().splitlines()[0] if out.returncode == 0 and out.stdout.strip() else None


@functools.lru_cache(maxsize=None)
def environment(device_type: str, device_index: int = 0) -> Environment:
    on_gpu = device_type == "cuda"
    return Environment(
        device=f"cuda:{device_index}" if on_gpu else "cpu",
        interpreter=not on_gpu,
        torch=torch.__version__,
        triton=triton.__version__,
        python=platform.python_version(),
        gpu=torch.cuda.get_device_name(device_index) if on_gpu else None,
        driver=driver_version() if on_gpu else None,
        host=socket.gethostname(),
    )


def device_key(device: torch.device) -> str:
    """Identifies a device and the software that measured it, for caches of timings and peaks."""
    index = device.index if device.index is not None else 0
    return (f"{torch.cuda.get_device_name(index)}|driver {driver_version()}|torch {torch.__version__}|"
            f"triton {triton.__version__}")
