"""Runtime guards inside a candidate's process.

- LaunchRecorder counts Triton kernel launches (compiled and interpreted) and keeps each kernel's
  compile metadata (registers, spills, shared memory, warps, stages).
- TorchGuard sees every PyTorch operator the candidate runs on the host; operators beyond
  allocation, metadata and data movement are violations. It also poisons every uninitialized
  allocation, so elements a kernel never writes cannot pass by luck or by reading stale memory.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from evaluator.compile_markers import CompileMarkers, marker_name
from evaluator.result import KernelInfo

ALLOCATING_OPS = {"empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted"}
ALLOWED_OPS = ALLOCATING_OPS | {
    "zeros", "zeros_like", "new_zeros", "ones", "ones_like", "new_ones", "full", "full_like", "new_full",
    "fill", "fill_", "zero", "zero_", "arange", "scalar_tensor", "lift_fresh", "lift_fresh_copy",
    "view", "_unsafe_view", "reshape", "_reshape_alias", "as_strided", "as_strided_", "expand", "permute",
    "transpose", "transpose_", "t", "t_", "unsqueeze", "unsqueeze_", "squeeze", "squeeze_", "select",
    "slice", "alias", "detach", "detach_", "diagonal", "unfold", "split", "split_with_sizes", "unbind",
    "narrow", "chunk", "movedim", "unflatten", "flatten", "view_as", "expand_as", "view_as_complex",
    "view_as_real",
    "clone", "copy", "copy_", "_to_copy", "to", "contiguous", "_local_scalar_dense", "is_same_size",
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "_has_compatible_shallow_copy_type",
    "resize_",
}

# Operators that copy data: allowed on the host (a .contiguous() before a launch), except in tasks
# whose whole work is a copy (Task.host_copies).
COPY_OPS = frozenset({"clone", "copy", "copy_", "_to_copy", "to", "contiguous"})

# Two poison patterns: the candidate runs twice, once with each, so an element nobody writes
# fails the comparison or the agreement between runs whatever value it would have held.
POISON_FLOAT = (math.nan, -31337.0)


def poison_value(dtype: torch.dtype, run: int):
    if dtype.is_floating_point or dtype.is_complex:
        return POISON_FLOAT[run % 2]
    if dtype == torch.bool:
        return run % 2 == 0
    info = torch.iinfo(dtype)
    return info.min + 7 if run % 2 == 0 else info.max - 5


@dataclass
class LaunchRecorder:
    """Counts launches. With `lock_dir` set and `locking` on, the first launch of a call compiles
    the kernel first, then takes the GPU lock shared (held until `release()`), so compilation
    never holds up another candidate's timing."""

    launches: int = 0
    in_kernel: int = 0
    kernels: dict[str, KernelInfo] = field(default_factory=dict)
    lock_dir: str | None = None
    locking: bool = False
    lock_what: str = "call"  # the holds' name in the lock log
    # While set (GPU timing), the CUDA stream of every launch is collected.
    track_streams: bool = False
    streams: set[int] = field(default_factory=set)
    # Seconds spent compiling kernels (or loading them from Triton's cache) before launches, with
    # the lock let go; of them, waiting for the compile scout (compile_markers.py).
    compile_seconds: float = 0.0
    scout_wait_seconds: float = 0.0
    # The argument types of each kernel whose launcher this process made (triton_launchers.py).
    launchers: set[tuple[str, ...]] = field(default_factory=set)
    _held: object = None

    def acquire(self) -> None:
        if self.locking and self.lock_dir and self._held is None:
            from evaluator import gpu_lock
            self._held = gpu_lock.shared(self.lock_dir, self.lock_what)
            self._held.__enter__()

    def compile_unlocked(self, warm_up: Callable[[], object]) -> None:
        """Before a launch: compiles it (when not compiled yet) and loads it without the lock, then holds it. A
        call's later kernels, compiled while the lock was held, could keep other candidates' timing
        waiting for seconds; so the call's GPU work so far is finished and the lock let go first."""
        if not self.lock_dir:
            return
        if self._held is not None:
            if torch.cuda.is_available():
                torch.cuda.synchronize()
            self.release()
        began = time.perf_counter()
        kernel = warm_up()
        init_handles = getattr(kernel, "_init_handles", None)
        if callable(init_handles):
            init_handles()  # loads the module and builds its launcher: the launch needs no lock for that
            self._note_launcher(kernel)
        self.compile_seconds += time.perf_counter() - began
        self.acquire()

    def _note_launcher(self, kernel) -> None:
        signature = getattr(getattr(kernel, "src", None), "signature", None)
        if isinstance(signature, dict) and all(isinstance(t, str) for t in signature.values()):
            self.launchers.add(tuple(signature.values()))

    def wait_for_scout(self, board: CompileMarkers) -> None:
        """Before compiling a kernel, waits while the compile scout compiles the same one."""
        try:
            from triton import knobs
        except ImportError:
            return

        def cache_miss(*, key, fn=None, **_):
            self.scout_wait_seconds += board.wait(marker_name(fn, key))

        knobs.runtime.jit_cache_hook = cache_miss

    def release(self) -> None:
        if self._held is not None:
            held, self._held = self._held, None
            held.__exit__(None, None, None)

    def install(self) -> None:
        from triton.runtime.jit import JITFunction
        _patch_run(JITFunction, self)
        try:
            from triton.runtime.interpreter import InterpretedFunction
        except ImportError:
            return
        _patch_run(InterpretedFunction, self)

    def note(self, fn, kernel) -> None:
        name = getattr(fn, "__name__", None) or getattr(getattr(fn, "fn", None), "__name__", "kernel")
        meta = self.kernels.setdefault(name, KernelInfo(name))
        metadata = getattr(kernel, "metadata", None)
        if metadata is None:
            return
        meta.registers = _int_or_none(getattr(kernel, "n_regs", None))
        meta.spills = _int_or_none(getattr(kernel, "n_spills", None))
        meta.shared_bytes = _int_or_none(getattr(metadata, "shared", None))
        meta.num_warps = _int_or_none(getattr(metadata, "num_warps", None))
        meta.num_stages = _int_or_none(getattr(metadata, "num_stages", None))


def _int_or_none(value):
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _patch_run(cls, recorder: LaunchRecorder) -> None:
    original = cls.run
    if getattr(original, "_agentloop_recorder", None) is not None:
        return

    def run(self, *args, **kwargs):
        if kwargs.get("warmup", False):
            return original(self, *args, **kwargs)
        if callable(kwargs.get("grid")):
            kwargs["grid"] = _outside_kernel(kwargs["grid"], recorder)
        hooks = getattr(self, "pre_run_hooks", None)
        if hooks:
            self.pre_run_hooks = [_outside_kernel(hook, recorder) for hook in hooks]
        recorder.in_kernel += 1
        if recorder.track_streams:
            recorder.streams.add(torch.cuda.current_stream().cuda_stream)
        try:
            if recorder.locking:
                recorder.compile_unlocked(lambda: original(self, *args, **{**kwargs, "warmup": True}))
            kernel = original(self, *args, **kwargs)
        finally:
            recorder.in_kernel -= 1
            if hooks:
                self.pre_run_hooks = hooks
        recorder.launches += 1
        recorder.note(self, kernel)
        return kernel

    run._agentloop_recorder = recorder  # type: ignore[attr-defined]
    cls.run = run


def _outside_kernel(fn: Callable, recorder: LaunchRecorder) -> Callable:
    """The candidate's grid callable and pre-run hooks run inside the launch, but they are the
    candidate's host code: while they run, the guard sees their PyTorch operators."""
    def candidate_code(*args, **kwargs):
        depth, recorder.in_kernel = recorder.in_kernel, 0
        try:
            return fn(*args, **kwargs)
        finally:
            recorder.in_kernel = depth
    return candidate_code


class TorchGuard(TorchDispatchMode):
    """Records host-side PyTorch operators outside Triton launches; poisons fresh allocations."""

    def __init__(self, recorder: LaunchRecorder, extra_allowed: frozenset[str] = frozenset(), run: int | None = 0,
                 denied: frozenset[str] = frozenset()):
        super().__init__()
        self.recorder = recorder
        self.allowed = (ALLOWED_OPS | set(extra_allowed)) - set(denied)
        self.run = run
        self.violations: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self.recorder.in_kernel:
            return out
        name = func.overloadpacket.__name__
        if name not in self.allowed:
            if f"aten.{name}" not in self.violations:
                self.violations.append(f"aten.{name}")
        elif name in ALLOCATING_OPS and self.run is not None and isinstance(out, torch.Tensor):
            out.fill_(poison_value(out.dtype, self.run))
        return out


def live_threads() -> set[int]:
    return {t.ident for t in threading.enumerate() if t.is_alive() and t.ident is not None}
