"""What a task declares: semantics, inputs, contract, cost, and what a candidate may call.

A task module (tasks/<Category>/<name>.py) builds one `Task` and binds it to the name `TASK`.
Everything here is trusted code: it runs in the evaluator's own process, never in a candidate's.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Literal

import torch

from evaluator.contracts import Contract, Tolerance

SIZES = ("small", "standard", "edge")
MODES = ("standard", "outlier")
Size = Literal["small", "standard", "edge"]
Mode = Literal["standard", "outlier"]

OUTLIER_FRACTION = 0.001
OUTLIER_FACTOR = 50.0

FLOAT_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


class TargetDevice:
    """Stands in an argument list for the device the call runs on (e.g. rand's device=)."""

    def __repr__(self) -> str:
        return "DEVICE"

    def __eq__(self, other) -> bool:
        return isinstance(other, TargetDevice)

    def __hash__(self) -> int:
        return hash("TargetDevice")


DEVICE = TargetDevice()


@dataclass(frozen=True)
class Inputs:
    """Positional and keyword arguments of one call, as the reference takes them."""

    args: tuple
    kwargs: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Cost:
    """Useful floating-point (or integer) operations and the fewest bytes a kernel must move."""

    flops: float
    bytes: float


@dataclass(frozen=True)
class Allowance:
    """A torch call a candidate may make beyond allocation and metadata, and why.

    `api` names the Python spelling the static check accepts (e.g. "torch.randint");
    `aten` names the operators the runtime guard accepts (e.g. "randint").
    """

    api: str
    aten: tuple[str, ...]
    why: str


@dataclass(frozen=True)
class Task:
    id: str
    difficulty: int
    entry: str
    signature: str
    description: str
    reference: Callable[..., Any]
    make_inputs: Callable[[int, str, str, torch.dtype], Inputs]
    cost: Callable[[Inputs], Cost]
    dtypes: tuple[torch.dtype, ...] = FLOAT_DTYPES
    contract: Contract = field(default_factory=Tolerance)
    allowed: tuple[Allowance, ...] = ()
    # False where the task's whole work is a copy (permute_copy): host copies are then refused too,
    # since `input.permute(dims).contiguous()` would be the answer.
    host_copies: bool = True
    mutates: tuple[int, ...] = ()
    # The dtype whose matrix-unit peak bounds the arithmetic (e.g. int8 for W8A8 kernels);
    # None: the evaluated dtype.
    compute_dtype: torch.dtype | None = None
    seeds: tuple[int, ...] = (0, 1)
    # Seeds of the standard-size input sets that rotate during timing: they must give the same
    # non-tensor arguments (one configuration) with different values.
    timing_seeds: tuple[int, ...] = (0, 2)
    # KernelBench-X's signature text where it is not a callable function as written (an optimizer
    # constructor, a tensor method, a signature without its input); `signature` is then the call.
    kernelbenchx_signature: str | None = None
    # Where the call deliberately differs from the function KernelBench-X's reference module defines
    # (what its own tests call): how, and why. `agentloop tasks show` prints it.
    kernelbenchx_difference: str | None = None
    # KernelBench problems: the constructor arguments of Model (and of the candidate's ModelNew).
    model_init: Inputs | None = None
    source_path: Path | None = None
    solution_path: Path | None = None

    @property
    def category(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.id.split("/", 1)[1]

    @property
    def primary_dtype(self) -> torch.dtype:
        return self.dtypes[0]


# Input builders shared by task modules. They draw from a seeded generator on the CPU, so a small or
# edge (task, seed, size, mode, dtype) case names the same numbers on every machine. Standard-size
# cases, which only a GPU runs, are drawn on that GPU (see `drawing_on`): the same numbers for the
# same GPU model and torch version.

_drawing = threading.local()


@contextlib.contextmanager
def drawing_on(device: torch.device):
    """Builders called inside (on this thread) draw on `device`: `generator` seeds a generator there
    and factory calls without a device (torch.randn, torch.arange, ...) allocate there. Drawing
    hundreds of MiB of normal samples takes about a second on the CPU and milliseconds on a GPU."""
    previous = getattr(_drawing, "device", None)
    _drawing.device = device
    try:
        with torch.device(device):
            yield
    finally:
        _drawing.device = previous


def generator(seed: int) -> torch.Generator:
    return torch.Generator(device=getattr(_drawing, "device", None) or "cpu").manual_seed(seed)


def with_outliers(x: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Multiply 0.1% of the elements (at least one) by 50, as KernelBench-X's outlier mode does."""
    flat = x.reshape(-1).clone()
    count = max(1, round(flat.numel() * OUTLIER_FRACTION))
    picked = torch.randint(0, flat.numel(), (count,), generator=gen)
    flat[picked] *= OUTLIER_FACTOR
    return flat.reshape(x.shape)


def randn(shape, gen: torch.Generator, dtype: torch.dtype, mode: str, scale: float = 1.0,
          shift: float = 0.0) -> torch.Tensor:
    """Normal samples in float32, outliers applied in outlier mode, then cast to `dtype`."""
    x = torch.randn(shape, generator=gen, dtype=torch.float32) * scale + shift
    if mode == "outlier":
        x = with_outliers(x, gen)
    return x.to(dtype)


def uniform(shape, gen: torch.Generator, dtype: torch.dtype, low: float, high: float) -> torch.Tensor:
    x = torch.rand(shape, generator=gen, dtype=torch.float32) * (high - low) + low
    return x.to(dtype)


def pick(size: str, **shapes):
    """The shape (or any value) a size names: pick(size, small=..., standard=..., edge=...)."""
    if size not in shapes:
        raise ValueError(f"unknown size {size!r}; expected one of {sorted(shapes)}")
    return shapes[size]


def element_bytes(*tensors: torch.Tensor) -> int:
    return sum(t.numel() * t.element_size() for t in tensors if isinstance(t, torch.Tensor))


def upcast(value):
    """The same arguments with every floating tensor (and floating dtype argument) in float64, for
    the high-precision reference."""
    if isinstance(value, torch.dtype):
        return _upcast_dtype(value)
    if isinstance(value, torch.Tensor):
        return _upcast_tensor(value)
    if isinstance(value, Inputs):
        return Inputs(upcast(value.args), upcast(value.kwargs))
    if isinstance(value, (tuple, list)):
        return type(value)(upcast(v) for v in value)
    if isinstance(value, dict):
        return {k: upcast(v) for k, v in value.items()}
    return value


def _upcast_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float64 if dtype.is_floating_point else torch.complex128 if dtype.is_complex else dtype


def _upcast_tensor(t: torch.Tensor) -> torch.Tensor:
    """`t` in float64 (complex128 when complex); a tensor of another dtype copied as it is."""
    if t.is_complex():
        return t.to(torch.complex128)
    return t.to(torch.float64) if t.is_floating_point() else t.clone()


def on_device(value, device: torch.device, keep_markers: bool = False):
    """The same arguments with tensors moved to `device` and DEVICE markers replaced by it (kept, with
    `keep_markers`)."""
    if isinstance(value, TargetDevice):
        return value if keep_markers else device
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(on_device(v, device, keep_markers) for v in value)
    if isinstance(value, dict):
        return {k: on_device(v, device, keep_markers) for k, v in value.items()}
    if isinstance(value, Inputs):
        return Inputs(on_device(value.args, device, keep_markers), on_device(value.kwargs, device, keep_markers))
    return value


def map_tensors(value, fn):
    """The same tree (tuples, lists, dicts, Inputs) with `fn` applied to every tensor."""
    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, (tuple, list)):
        return type(value)(map_tensors(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: map_tensors(v, fn) for k, v in value.items()}
    if isinstance(value, Inputs):
        return Inputs(map_tensors(value.args, fn), map_tensors(value.kwargs, fn))
    return value


def tensors_in(value) -> list[torch.Tensor]:
    """The tensors in a tree (tuples, lists, dicts, Inputs), in order.

    Plain recursion: a nested recursive function would be a reference cycle holding its list of
    tensors until the garbage collector ran (a timed call's output per repetition: gigabytes)."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, Inputs):
        return tensors_in([value.args, value.kwargs])
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []


def pinned_copy(t: torch.Tensor) -> torch.Tensor:
    """`t` copied to page-locked host memory, its strides kept. Copies between it and a GPU run at
    the DMA engines' speed; a pageable copy goes through CUDA's staging buffers at the speed of a
    host memcpy, and holds the GPU lock that long."""
    return torch.empty_like(t, device="cpu", pin_memory=True).copy_(t)


def on_pinned_host(value):
    """The same tree with tensors copied to page-locked host memory (markers kept)."""
    return map_tensors(value, pinned_copy)


def clone_inputs(inputs: Inputs) -> Inputs:
    return map_tensors(inputs, torch.Tensor.clone)


def judged_outputs(mutates: tuple[int, ...], returned, inputs: Inputs):
    """What a call is judged on: its return value, plus the arguments the task's semantics mutate."""
    if not mutates:
        return returned
    return (returned, tuple(inputs.args[i] for i in mutates))
