"""Out-of-bounds accesses of interpreted kernels (the CPU path), caught before they happen.

Runs in the candidate's process. Triton's interpreter hands each launch's tensors to the kernel as
raw addresses and performs every load, store and atomic through them; `install` wraps those
operations so that each active lane's address range is checked against the storages of the tensors
the launch was given. An access outside all of them is refused, recorded and raised as
`OutOfBounds`, which names the kernel, the source line, the access and where it fell. The record
outlives the exception, so a candidate that catches it is still caught.

This holds for mistakes, not against a candidate that undoes the wrapping (it runs in the same
process); on a GPU, Compute Sanitizer checks from outside (memcheck.py).
"""

from __future__ import annotations

import linecache
import sys
from dataclasses import dataclass, field

import numpy as np

ACCESSES = {"create_masked_load": ("read", 0, 1), "create_masked_store": ("wrote", 0, 2),
            "create_atomic_rmw": ("atomically updated", 1, 3), "create_atomic_cas": ("atomically swapped", 0, None)}


class OutOfBounds(RuntimeError):
    """A kernel's access outside every tensor of its launch."""


@dataclass
class Region:
    start: int
    end: int
    name: str


@dataclass
class Launch:
    kernel: str
    regions: list[Region] = field(default_factory=list)
    starts: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))
    ends: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.uint64))


_state: dict[str, object] = {"launch": None, "source": None}
recorded: list[str] = []


def install(candidate_path: str) -> str:
    """Wraps the interpreter; what the evaluator is told of the check ("interpreter", or why not)."""
    try:
        from triton.runtime import interpreter
        executor, builder = interpreter.GridExecutor, interpreter.InterpreterBuilder
        originals = {name: getattr(builder, name) for name in ACCESSES}
        init_args = executor._init_args_hst
    except (ImportError, AttributeError) as exc:
        return f"unavailable: this Triton's interpreter has no {exc.name if hasattr(exc, 'name') else exc}"
    _state["source"] = candidate_path
    executor._init_args_hst = _recording_launch(init_args)
    for name, original in originals.items():
        setattr(builder, name, _checked(original, *ACCESSES[name]))
    return "interpreter"


def take() -> str | None:
    """The first out-of-bounds access recorded since the last call, if any."""
    first = recorded[0] if recorded else None
    recorded.clear()
    return first


def caused(exc: BaseException | None) -> bool:
    """Whether `exc` is, or was raised because of, an out-of-bounds access."""
    seen = 0
    while exc is not None and seen < 16:
        if isinstance(exc, OutOfBounds):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _recording_launch(init_args):
    def wrapped(self, args_dev, kwargs):
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        launch = Launch(getattr(self.fn, "__name__", "kernel"))
        names = list(getattr(self, "arg_names", ()))
        for position, value in enumerate(args_hst):
            _regions(value, names[position] if position < len(names) else f"argument {position}", launch.regions)
        for name, value in kwargs_hst.items():
            _regions(value, name, launch.regions)
        launch.starts = np.array([r.start for r in launch.regions], dtype=np.uint64)
        launch.ends = np.array([r.end for r in launch.regions], dtype=np.uint64)
        _state["launch"] = launch
        return args_hst, kwargs_hst
    return wrapped


def _regions(value, name: str, into: list[Region]) -> None:
    if isinstance(value, (tuple, list)):
        for item in value:
            _regions(item, name, into)
    elif hasattr(value, "base") and hasattr(value, "block_shape"):  # a tensor descriptor
        _regions(value.base, name, into)
    elif hasattr(value, "untyped_storage"):
        storage = value.untyped_storage()
        start = storage.data_ptr()
        if all(r.start != start for r in into):
            into.append(Region(start, start + storage.nbytes(), name))


def _checked(original, verb: str, pointer_at: int, mask_at: int | None):
    def wrapped(self, *args, **kwargs):
        launch = _state["launch"]
        if isinstance(launch, Launch):
            pointers = args[pointer_at]
            mask = args[mask_at] if mask_at is not None and mask_at < len(args) else None
            _check(launch, verb, pointers, mask)
        return original(self, *args, **kwargs)
    return wrapped


def _check(launch: Launch, verb: str, pointers, mask) -> None:
    addresses = np.asarray(pointers.data).astype(np.uint64, copy=False).reshape(-1)
    if mask is not None:
        active = np.broadcast_to(np.asarray(mask.data, dtype=bool), np.shape(pointers.data)).reshape(-1)
        addresses = addresses[active]
    if addresses.size == 0:
        return
    size = max(1, getattr(pointers.get_element_ty(), "primitive_bitwidth", 8) // 8)
    starts, ends = launch.starts, launch.ends
    inside = ((addresses[:, None] >= starts[None, :]) & (addresses[:, None] + np.uint64(size) <= ends[None, :])).any(1)
    if inside.all():
        return
    outside = addresses[~inside]
    noun = {"read": "read", "wrote": "write"}.get(verb, "atomic")
    message = (f"kernel `{launch.kernel}` {verb} out of bounds{_line()}: {outside.size} of {addresses.size} active "
               f"lanes fell outside every tensor passed to the launch; the first is a {size}-byte {noun} "
               f"{_where(int(outside[0]), launch.regions)} (check the mask and the offsets)")
    recorded.append(message)
    raise OutOfBounds(message)


def _where(address: int, regions: list[Region]) -> str:
    """Where `address` fell, as a byte offset into the nearest tensor of the launch."""
    if not regions:
        return "through a pointer, but the launch was given no tensor"
    nearest = min(regions, key=lambda r: r.start - address if address < r.start else address - r.end)
    offset, held = address - nearest.start, nearest.end - nearest.start
    side = "before its start" if offset < 0 else "past its end" if offset >= held else "straddling its end"
    return f"at byte offset {offset} of `{nearest.name}`, which holds {held} bytes ({side})"


def _line() -> str:
    """ at line N (`code`), the innermost line of the candidate's file that is running."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename != _state["source"]:
        frame = frame.f_back
    if frame is None:
        return ""
    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f" at line {frame.f_lineno} (`{code[:160]}`)"
