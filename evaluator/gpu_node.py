"""A GPU's own device node, so that a confined process is given its evaluation's GPU and no other.

Every NVIDIA GPU of a host is a character device, /dev/nvidiaN, beside the driver's shared nodes
(nvidiactl, nvidia-uvm, ...). A process that can open every GPU's node initializes every GPU when it
starts CUDA (on a 4-GPU host 1.2 s against 0.45 s for one, and contended across the machine) and
could launch work on another evaluation's GPU while that one is timed. The confined processes get
their GPU's node only: the trusted evaluator finds it through NVML (the node's minor number, by the
GPU's UUID, which is the same however CUDA_VISIBLE_DEVICES numbers the GPUs), and inside the
confinement that GPU is the only one CUDA finds: device 0.
"""

from __future__ import annotations

import ctypes
import os
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch

ONE_GPU_VARIABLE = "AGENTLOOP_ONE_GPU"  # set inside a confinement that holds one GPU's node
NODE = re.compile(r"nvidia\d+")


def is_gpu_node(path: str) -> bool:
    """nvidiaN: one GPU's own node (not the driver's shared ones: nvidiactl, nvidia-uvm, ...)."""
    return NODE.fullmatch(os.path.basename(path)) is not None


def machine_gpus() -> int:
    """The machine's GPUs, however few this process may see (a per-GPU worker sees one); at least 1."""
    import torch

    try:
        count = torch.cuda._raw_device_count_nvml()
    except (AttributeError, OSError, RuntimeError):
        count = -1
    return count if count > 0 else max(1, torch.cuda.device_count())


def device_node(index: int) -> str | None:
    """The node of CUDA device `index` of this process; None where NVML cannot tell (no NVML, a MIG
    instance): then confined processes get every GPU's node, as without this module."""
    from evaluator.gpu_lock import physical_gpu_id

    uuid = physical_gpu_id(index)  # the device's number where CUDA gives no UUID: NVML then finds none
    try:
        nvml = ctypes.CDLL("libnvidia-ml.so.1")
        if nvml.nvmlInit_v2() != 0:
            return None
        handle, minor = ctypes.c_void_p(), ctypes.c_uint()
        if nvml.nvmlDeviceGetHandleByUUID(f"GPU-{uuid}".encode(), ctypes.byref(handle)) != 0:
            return None
        if nvml.nvmlDeviceGetMinorNumber(handle, ctypes.byref(minor)) != 0:
            return None
    except (OSError, AttributeError):
        return None
    node = f"/dev/nvidia{minor.value}"
    return node if os.path.exists(node) else None


def own_device(job_device: str) -> "torch.device":
    """In a confined process: the device the job names, which is device 0 where the confinement
    holds that one GPU's node."""
    import torch

    if job_device.startswith("cuda") and os.environ.get(ONE_GPU_VARIABLE):
        return torch.device("cuda:0")
    return torch.device(job_device)
