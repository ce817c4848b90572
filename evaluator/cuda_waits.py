"""How a process's threads wait for its GPU work: spinning on a core, or asleep until the GPU signals.

CUDA spins by default in a process of one context on a machine of several cores. A candidate's
process or its memory check waits on a GPU that many others' work shares (and, under Compute
Sanitizer, on kernels many times slower), and spinning there burns a core the compile scouts and
the other evaluations need: those processes sleep in their waits (blocking synchronization). Timing
spins, as the eager baseline it is held against spins, so that a call's own host syncs wake no later
than the baseline's did. Candidates sleep only where the driver can switch a live context back to
spinning (cuCtxSetFlags, CUDA 12.1): otherwise nothing changes.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
from typing import Iterator

import torch

SCHED_SPIN, SCHED_BLOCKING_SYNC, SCHED_MASK = 0x01, 0x04, 0x07


@functools.lru_cache(maxsize=1)
def _driver() -> ctypes.CDLL | None:
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return None
    return cuda if cuda.cuInit(0) == 0 else None


def can_switch() -> bool:
    """The driver can change a live context's way of waiting."""
    cuda = _driver()
    return cuda is not None and hasattr(cuda, "cuCtxSetFlags")


def wait_by(device: torch.device, flag: int) -> bool:
    """Before this process makes its context on `device`: the context will wait by `flag`
    (SCHED_SPIN or SCHED_BLOCKING_SYNC). False where it could not be said."""
    cuda = _driver() if device.type == "cuda" else None
    if cuda is None:
        return False
    handle = ctypes.c_int()
    if cuda.cuDeviceGet(ctypes.byref(handle), device.index or 0) != 0:
        return False
    set_flags = getattr(cuda, "cuDevicePrimaryCtxSetFlags_v2", None) or cuda.cuDevicePrimaryCtxSetFlags
    return set_flags(handle, flag) == 0


def sleep_in_waits(device: torch.device) -> bool:
    """Before the context is made: its waits sleep, where timing can later spin (`spinning`)."""
    return device.type == "cuda" and can_switch() and wait_by(device, SCHED_BLOCKING_SYNC)


def current_flag() -> int | None:
    """How the calling thread's current context waits (a SCHED_ flag), or None."""
    cuda, flags = _driver(), ctypes.c_uint()
    if cuda is None or not hasattr(cuda, "cuCtxGetFlags") or cuda.cuCtxGetFlags(ctypes.byref(flags)) != 0:
        return None
    return flags.value & SCHED_MASK


@contextlib.contextmanager
def spinning(device: torch.device) -> Iterator[None]:
    """The calling thread's current context (on `device`) spins in its waits inside; as it was after."""
    cuda, flags = _driver() if device.type == "cuda" else None, ctypes.c_uint()
    switched = (cuda is not None and can_switch() and cuda.cuCtxGetFlags(ctypes.byref(flags)) == 0
                and flags.value & SCHED_MASK != SCHED_SPIN
                and cuda.cuCtxSetFlags((flags.value & ~SCHED_MASK) | SCHED_SPIN) == 0)
    try:
        yield
    finally:
        if switched:
            cuda.cuCtxSetFlags(flags.value)
