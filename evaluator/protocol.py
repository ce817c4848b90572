"""The messages between the evaluator and the processes it starts (those that run candidate code,
the baseline's, and the fork server that forks them all), as types.

Each message is a frozen dataclass; on the wire it is one JSON object, its kind under "event"
(child to evaluator) or "op" (evaluator to child) and its fields beside it. `parse_event` is the
one way the evaluator reads what a candidate's process sent: every field must be present (or have
a default) with exactly its declared type (an int is not a bool, a float is finite), and nothing
else may be there; anything else raises ProtocolError, which the evaluator turns into
CONTRACT_FAIL. What a field claims is still the child's word: the evaluator judges outputs itself,
and takes counts and timings only where it can check them (see SECURITY.md).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from evaluator.plain_data import to_plain
from evaluator.result import KernelInfo

MAX_TEXT = 1 << 16  # characters of any one string field
MAX_ITEMS = 1 << 16  # items of any one list field


class ProtocolError(ValueError):
    pass


# evaluator -> a sandboxed process, as job.json in its scratch folder before it starts ---------
@dataclass(frozen=True)
class Job:
    """What a sandboxed process is told of its work; each kind of process reads the fields it needs."""
    task: str
    device: str
    lock_dir: str | None = None
    entry: str = ""
    mutates: tuple[int, ...] = ()
    allowed_aten: tuple[str, ...] = ()
    denied_aten: tuple[str, ...] = ()
    check_memory: bool = False
    gpu_memory_fraction: float | None = None
    model_init: str | None = None
    compile_markers: str | None = None  # the compile scout's markers (compile_markers.py)
    triton_target: dict | None = None  # what the compile scout compiles for
    ir_store: bool = False  # whether the compile scout asks the evaluator's IR store (ir_store.py)
    sanitizer: str | None = None  # Compute Sanitizer, for the memcheck process


def write_job(job: Job, path: Path) -> None:
    path.write_text(json.dumps(to_plain(job)))


def read_job(path: Path) -> Job:
    return _record(Job, json.loads(Path(path).read_text()))


# child -> evaluator ---------------------------------------------------------------------------
@dataclass(frozen=True)
class DeviceReady:
    """The process's device is set up; sent before the candidate's module runs, so that a device
    failure reported before it cannot come from candidate code."""
    EVENT: ClassVar[str] = "device_ready"


@dataclass(frozen=True)
class Imported:
    EVENT: ClassVar[str] = "imported"
    # how the process looks for out-of-bounds accesses, where it does (sandboxed/access_bounds.py)
    memory_check: str = ""


@dataclass(frozen=True)
class Failed:
    EVENT: ClassVar[str] = "failed"
    phase: str
    verdict: str
    reason: str
    traceback: str = ""
    case: int | None = None
    run: int | None = None
    fatal: bool = False
    out_of_gpu_memory: bool = False  # torch's OutOfMemoryError, whatever its message says


@dataclass(frozen=True)
class CallDone:
    """One run of one case: its outputs are in `file`, for the evaluator to read and judge."""
    EVENT: ClassVar[str] = "call"
    case: int
    run: int
    file: str
    launches: int
    violations: tuple[str, ...]
    new_threads: int
    mutated: tuple[str, ...]
    seconds: float


@dataclass(frozen=True)
class CasesDone:
    EVENT: ClassVar[str] = "cases_done"
    kernels: tuple[KernelInfo, ...]
    compile_seconds: float
    scout_wait_seconds: float
    launchers: tuple[tuple[str, ...], ...] = ()  # kernels' argument types (triton_launchers.py)


@dataclass(frozen=True)
class Timed:
    """Timing samples of the rotation and of the probe calls (probes.py); outputs are in files."""
    EVENT: ClassVar[str] = "timed"
    samples_ms: tuple[float, ...]
    probe_ms: tuple[float, ...]
    side_stream: bool
    calls_without_launch: int
    violations: tuple[str, ...]


@dataclass(frozen=True)
class MemoryChecked:
    """One case ran to its end under Compute Sanitizer (sandboxed/memcheck_process.py)."""
    EVENT: ClassVar[str] = "memchecked"
    case: int


@dataclass(frozen=True)
class Scouted:
    EVENT: ClassVar[str] = "scouted"
    compiled: int
    failed: int
    answered: int = 0  # of the compiled, those whose later stages came from the IR store


@dataclass(frozen=True)
class IRAsked:
    """A compile scout asks for the kernel compiled from the Triton IR in its scratch folder's
    `file`, with these launch options (evaluator/ir_store.py)."""
    EVENT: ClassVar[str] = "ir_asked"
    id: int
    file: str
    options: dict


@dataclass(frozen=True)
class IRCompiled:
    """The IR compile child wrote its stages (sandboxed/ir_compile_process.py)."""
    EVENT: ClassVar[str] = "ir_compiled"


@dataclass(frozen=True)
class LockWaiting:
    """The process blocks on the GPU lock: the time until LockHeld is not its own (gpu_lock.py)."""
    EVENT: ClassVar[str] = "lock_wait"


@dataclass(frozen=True)
class LockHeld:
    EVENT: ClassVar[str] = "lock_held"


@dataclass(frozen=True)
class BaselineReady:
    """The baseline's process has its CUDA context (sandboxed/baseline_process.py)."""
    EVENT: ClassVar[str] = "baseline_ready"


@dataclass(frozen=True)
class BaselineTimed:
    """One request's timing samples, per way of running the reference (eager, compiled)."""
    EVENT: ClassVar[str] = "baseline"
    id: int
    eager_ms: tuple[float, ...] | None = None
    compiled_ms: tuple[float, ...] | None = None


@dataclass(frozen=True)
class BaselineFailed:
    EVENT: ClassVar[str] = "baseline_failed"
    id: int
    reason: str
    out_of_gpu_memory: bool = False


# evaluator -> child ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RunCase:
    OP: ClassVar[str] = "case"
    index: int
    inputs: str


@dataclass(frozen=True)
class CasesEnd:
    OP: ClassVar[str] = "cases_end"


@dataclass(frozen=True)
class IRAnswer:
    """The compiled kernel a scout asked for, in a folder it may read; None: compile it yourself."""
    OP: ClassVar[str] = "ir_answer"
    id: int
    folder: str | None = None


@dataclass(frozen=True)
class TimeCalls:
    OP: ClassVar[str] = "time"
    sets: tuple[str, ...]
    probes: tuple[str, ...] = ()
    policy: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MeasureBaselines:
    """Requests for the baseline's process (baseline_server.py builds them)."""
    OP: ClassVar[str] = "measure"
    jobs: tuple[dict, ...]


# evaluator <-> the fork server (sandboxed/fork_server_process.py): trusted on both sides, typed all the same --
@dataclass(frozen=True)
class Spawn:
    """Fork a child of `kind` in `scratch`; a child that runs candidate code is confined to see the
    system, `readable` (read-only) and `writable`, with `emptied` seen empty, the GPU's devices if
    `gpu` (`gpu_node` the one GPU's own node, where the evaluator knows it; else every GPU's), and
    `triton_cache` as Triton's cache."""
    OP: ClassVar[str] = "spawn"
    id: int
    kind: str
    scratch: str
    limits: dict = field(default_factory=dict)
    writable: tuple[str, ...] = ()
    readable: tuple[str, ...] = ()
    emptied: tuple[str, ...] = ()
    gpu: bool = False
    gpu_node: str | None = None
    triton_cache: str | None = None


@dataclass(frozen=True)
class ServerReady:
    EVENT: ClassVar[str] = "server_ready"
    pid: int


@dataclass(frozen=True)
class Spawned:
    EVENT: ClassVar[str] = "spawned"
    id: int
    pid: int


@dataclass(frozen=True)
class Exited:
    EVENT: ClassVar[str] = "exited"
    pid: int
    code: int | None = None
    signal: int | None = None
    cpu_s: float | None = None  # user and system time of the process and of its reaped descendants


SERVER_EVENTS = {kind.EVENT: kind for kind in (ServerReady, Spawned, Exited)}


def parse_spawn(raw: Any) -> Spawn:
    return _parse(raw, "op", {Spawn.OP: Spawn})


def parse_server_event(raw: Any) -> Any:
    return _parse(raw, "event", SERVER_EVENTS)


EVENTS = {kind.EVENT: kind for kind in (DeviceReady, Imported, Failed, CallDone, CasesDone, Timed, Scouted,
                                         MemoryChecked, LockWaiting, LockHeld, BaselineReady, BaselineTimed,
                                         BaselineFailed, IRAsked, IRCompiled)}
COMMANDS = {kind.OP: kind for kind in (RunCase, CasesEnd, TimeCalls, MeasureBaselines, IRAnswer)}
LOCK_EVENTS = (LockWaiting.EVENT, LockHeld.EVENT)


def encode(message: Any) -> dict[str, Any]:
    key, name = ("event", message.EVENT) if hasattr(message, "EVENT") else ("op", message.OP)
    return {key: name, **to_plain(message)}


def parse_event(raw: Any) -> Any:
    return _parse(raw, "event", EVENTS)


def parse_command(raw: Any) -> Any:
    return _parse(raw, "op", COMMANDS)


def _parse(raw: Any, key: str, kinds: dict[str, type]) -> Any:
    if not isinstance(raw, dict):
        raise ProtocolError("a message is not a JSON object")
    kind = kinds.get(raw.get(key))
    if kind is None:
        raise ProtocolError(f"unknown message {str(raw.get(key))[:40]!r}")
    return _record(kind, raw, key)


def _record(kind: type, raw: dict, key: str | None = None) -> Any:
    fields = {f.name: f for f in dataclasses.fields(kind)}
    unknown = set(raw) - set(fields) - {key}
    if unknown:
        raise ProtocolError(f"{kind.__name__} has no field {sorted(unknown)[0][:40]!r}")
    values = {}
    for name, spec in fields.items():
        if name in raw:
            values[name] = _typed(_hints(kind)[name], raw[name], f"{kind.__name__}.{name}")
        elif spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING:
            raise ProtocolError(f"{kind.__name__} lacks {name!r}")
    return kind(**values)


@functools.lru_cache(maxsize=None)
def _hints(kind: type) -> dict[str, Any]:
    return typing.get_type_hints(kind)


def _typed(tp: Any, value: Any, where: str) -> Any:
    form = _FORMS.get(typing.get_origin(tp))
    if form is not None:
        return form(typing.get_args(tp), value, where)
    if dataclasses.is_dataclass(tp):
        return _nested(tp, value, where)
    return _scalar(tp, value, where)


def _optional(args: tuple, value: Any, where: str) -> Any:
    if value is None and type(None) in args:
        return None
    return _typed(next(a for a in args if a is not type(None)), value, where)


def _items(args: tuple, value: Any, where: str) -> tuple:
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise ProtocolError(f"{where} is not a list")
    return tuple(_typed(args[0], v, where) for v in value)


def _nested(kind: type, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise ProtocolError(f"{where} is not an object")
    return _record(kind, value)


# Readers of the typing forms fields are declared with, by their origin (`X | None` and
# `Optional[X]` both unions).
_FORMS = {typing.Union: _optional, types.UnionType: _optional, tuple: _items}


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# What a scalar field's value must be, by its declared type: an int is not a bool, a float is finite.
SCALAR_CHECKS = {
    bool: lambda v: isinstance(v, bool),
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: _is_number(v) and math.isfinite(v),
    str: lambda v: isinstance(v, str) and len(v) <= MAX_TEXT,
    dict: lambda v: isinstance(v, dict),
}


def _scalar(tp: Any, value: Any, where: str) -> Any:
    check = SCALAR_CHECKS.get(tp)
    if check is None:  # pragma: no cover - a field type this module does not declare
        raise TypeError(f"unsupported field type {tp!r}")
    if not check(value):
        raise ProtocolError(f"{where} is not a {getattr(tp, '__name__', tp)}")
    return float(value) if tp is float else value
