"""How an Evaluator is set up: its configuration, the device it scores on, its cache folder, and
the project files it watches for tampering."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from evaluator.loader import TaskLoadError, tasks_root
from evaluator.sandbox import Limits


def default_cache_dir() -> Path:
    if os.environ.get("AGENTLOOP_CACHE_DIR"):
        return Path(os.environ["AGENTLOOP_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "agentloop"


def resolve_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(f"unsupported device {name!r}; use auto, cpu or cuda[:N]") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("--device cuda was asked for, but no CUDA GPU is visible")
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda:0")
    if device.type not in ("cpu", "cuda"):
        raise ValueError(f"unsupported device {name!r}; use auto, cpu or cuda[:N]")
    return device


@dataclass
class EvaluatorConfig:
    device: str = "auto"
    timing: bool = True
    compile_baseline: bool = False
    profile: bool = False
    cache_dir: Path = field(default_factory=default_cache_dir)
    limits: Limits | None = None
    timing_policy: dict[str, Any] = field(default_factory=dict)
    gpu_memory_fraction: float = 0.6
    # Cases' inputs and expected outputs kept on disk for every evaluator of this machine and later
    # runs (reference_cache.py), at most this many bytes; 0: none kept; None: a quarter of the free
    # space where the cache lies, between 8 and 64 GiB (reference_cache.default_bytes).
    reference_cache_bytes: int | None = None
    # Processes per candidate for its correctness cases, split by dtype (case_partition.py). 0: on a GPU,
    # three while the evaluator has cores to spare (see Evaluator.candidate_processes), else one; one on
    # the CPU, where the interpreter compiles nothing.
    candidate_processes: int = 0
    # The machine's cores this evaluator may count on (for the split above); 0: all of them on the
    # CPU, on a GPU its GPU's share (the machine's cores over its GPUs).
    cores: int = 0
    # A compile scout runs beside the candidate's process and compiles its kernels ahead, many at
    # once (compile_scout.py). None: on an NVIDIA GPU only (the CPU interpreter compiles nothing).
    compile_scout: bool | None = None
    # Kernels the scouts meet again are answered from a store of compiles of their Triton IR, made
    # in a confined child from an IR asked for twice (ir_store.py); False: every scout compiles all.
    ir_store: bool = True
    # Out-of-bounds accesses: Compute Sanitizer on a GPU (memcheck.py), the interpreter's own on the CPU.
    memcheck: bool = True
    # When the memory check's process starts: "spawn", beside the candidate's (its instrumented calls
    # overlap the candidate's cases and timing), or "first_pass", once one of the candidate's cases
    # has passed (a candidate failing on its first case then costs no second process and CUDA context).
    memcheck_start: str = "spawn"
    # The Compute Sanitizer to run; None: the one found on a GPU machine. Tests name a stand-in, with
    # which the memory check's process runs on the CPU too.
    sanitizer: str | None = None
    # On the CPU, leave out the cases of dtypes this Triton's interpreter computes wrongly
    # (interpreter_probe.py); False runs them all (tests of the case plumbing use wrong dtypes freely).
    skip_unjudgeable: bool = True
    # Tests switch the static checks off to prove each runtime guard holds on its own.
    static_checks: bool = True
    # Snapshot the project's files and compare after every evaluation (see integrity.py).
    watch_project: bool = True
    watched: list[Path] | None = None


def default_limits(asked: Limits | None, on_gpu: bool) -> Limits:
    """The candidate's process limits: those asked for, else these; on a GPU never an address-space
    limit (CUDA cannot start under RLIMIT_AS; the watchdog's memory limit holds)."""
    limits = asked or (Limits(step_seconds=180, total_seconds=600, memory_bytes=16 << 30, address_space=False)
                       if on_gpu else Limits(step_seconds=120, total_seconds=900, memory_bytes=6 << 30,
                                             address_space=True))
    return dataclasses.replace(limits, address_space=False) if on_gpu else limits


def default_watched() -> list[Path]:
    """The evaluator, the loop, the trace code, the prompts and the task suite with its references."""
    root = Path(__file__).resolve().parent
    watched = [root, root.parent / "agentloop", root.parent / "traces", root.parent / "prompts"]
    try:
        suite = tasks_root().resolve()
    except TaskLoadError:
        return watched
    return watched + ([] if suite.is_relative_to(root) else [suite])
