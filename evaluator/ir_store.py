"""Compiled Triton kernels shared between evaluations, keyed by their Triton IR.

Everything Triton's CUDA backend does after the Triton IR (the GPU dialect, LLVM, PTX, ptxas: 84% of
the compile's CPU for the scaling workload's kernels, benchmarks/RESULTS.md) is a function of that
IR's text, the compile options and the target: compiled from the IR text alone, a kernel's cubin and
PTX are the bytes the JIT path makes. So an IR that evaluations meet again need not be compiled
again, provided what is stored under its key is the compile of exactly that IR, made by code the
candidate does not control:

- the key is computed by the evaluator from the IR text, the options (only those a launch may set,
  `OPTIONS`; a request with any other option changed is not answered) and the target;
- an entry is written by the evaluator alone, from what a confined child that runs no candidate code
  compiled from that text (`evaluator/sandboxed/ir_compile_process.py`);
- the folder is never shown to a sandbox: a listing would show other evaluations' kernels. A
  candidate's compile scout asks for one key at a time, and learns the compile of an IR it already
  has, which it could have made itself.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaluator import wire

MAX_IR_CHARS = 4 << 20
MAX_ENTRY_BYTES = 64 << 20
MAX_STORE_BYTES = 4 << 30  # past this the oldest entries go, down to three quarters of it
MAX_SEEN = 1 << 16  # keys remembered as asked for once; past this they are forgotten together
STORE_FOLDER = "triton-ir"  # in the evaluator's cache folder
SEEN = ".seen"
CLAIMS = ".compiling"  # a file per key being compiled by one of the machine's evaluators
CLAIM_SECONDS = 300.0  # a claim older than this is taken for that of an evaluator that died
STAGES = ("ttgir", "llir", "ptx", "cubin")
# The compile options a kernel's launch may set, with their types; every other option keeps
# Triton's default (those include paths: extern libraries, an IR override, ptxas options).
OPTIONS: dict[str, tuple[type, ...]] = {
    "num_warps": (int,), "num_ctas": (int,), "num_stages": (int,), "maxnreg": (int, type(None)),
    "enable_fp_fusion": (bool,), "launch_cooperative_grid": (bool,), "launch_pdl": (bool,),
    "debug": (bool,), "sanitize_overflow": (bool,),
}
# Metadata the compile records about the request rather than about the compiled code.
OWN_METADATA = frozenset({"hash", "target"})


def requested_options(options: dict[str, Any]) -> dict[str, Any] | None:
    """The launch options of a request, each of its type (a bool is not taken for an int); None if
    anything else is asked."""
    if not isinstance(options, dict) or not set(options) <= set(OPTIONS):
        return None
    for name, value in options.items():
        types = OPTIONS[name]
        if type(value) not in types:
            return None
    return dict(sorted(options.items()))


def ir_key(ir_text: str, options: dict[str, Any], target: dict[str, Any], triton_key: str) -> str:
    blob = json.dumps({"ir": ir_text, "options": options, "target": target, "triton": triton_key}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class Compiled:
    """What Triton's backend made of one IR: each stage's output and the kernel's metadata."""

    stages: dict[str, bytes]
    metadata: dict[str, Any]

    def size(self) -> int:
        return sum(len(v) for v in self.stages.values()) + len(json.dumps(self.metadata))


class IRStore:
    """A folder of entries, one per key, each written whole (a folder renamed into place), at most
    MAX_STORE_BYTES in all (the evaluators of a machine share it; each counts what it finds)."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        self.lock = threading.Lock()
        self.bytes = sum(size for _, size in self._entries())
        (folder / SEEN).mkdir(exist_ok=True)
        (folder / CLAIMS).mkdir(exist_ok=True)
        self.seen_count = sum(1 for _ in os.scandir(folder / SEEN))

    def seen_before(self, key: str) -> bool:
        """Was `key` asked for before, by this evaluator, another of the machine's, or an earlier
        run? It is marked as asked for now (a file per key, made only if missing)."""
        with self.lock:
            if self.seen_count >= MAX_SEEN:
                shutil.rmtree(self.folder / SEEN, ignore_errors=True)
                (self.folder / SEEN).mkdir(exist_ok=True)
                self.seen_count = 0
            try:
                os.close(os.open(self.folder / SEEN / key, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                return True
            except OSError:
                return False
            self.seen_count += 1
            return False

    def claim(self, key: str) -> bool:
        """Takes the compile of `key` for this evaluator, unless another of the machine's has it
        under way (a claim younger than CLAIM_SECONDS)."""
        path = self.folder / CLAIMS / key
        for _ in range(2):
            try:
                os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
                return True
            except FileExistsError:
                try:
                    if time.time() - path.stat().st_mtime < CLAIM_SECONDS:
                        return False
                    path.unlink()
                except FileNotFoundError:
                    continue
                except OSError:
                    return False
            except OSError:
                return False
        return False

    def release(self, key: str) -> None:
        with contextlib.suppress(OSError):
            (self.folder / CLAIMS / key).unlink()

    def seen(self) -> set[str]:
        return {entry.name for entry in os.scandir(self.folder / SEEN)}

    def has(self, key: str) -> bool:
        return (self.folder / key).is_dir()

    def get(self, key: str) -> Compiled | None:
        entry = self.folder / key
        try:
            metadata = json.loads((entry / "metadata.json").read_text())
            stages = {stage: (entry / stage).read_bytes() for stage in STAGES}
        except (OSError, ValueError):
            return None
        return Compiled(stages, metadata)

    def put(self, key: str, compiled: Compiled) -> bool:
        if compiled.size() > MAX_ENTRY_BYTES or set(compiled.stages) != set(STAGES) or self.has(key):
            return False
        staging = Path(tempfile.mkdtemp(prefix=".entry-", dir=self.folder))
        try:
            for stage, content in compiled.stages.items():
                (staging / stage).write_bytes(content)
            (staging / "metadata.json").write_text(json.dumps(compiled.metadata))
            os.rename(staging, self.folder / key)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return False
        with self.lock:
            self.bytes += compiled.size()
            if self.bytes > MAX_STORE_BYTES:
                self._evict()
        return True

    def _entries(self) -> list[tuple[Path, int]]:
        """Each entry with its bytes, the oldest first."""
        found = []
        for entry in self.folder.iterdir():
            if entry.name.startswith("."):
                continue
            try:
                found.append((entry.stat().st_mtime, entry, sum(f.stat().st_size for f in entry.iterdir())))
            except OSError:
                continue
        return [(entry, size) for _, entry, size in sorted(found)]

    def _evict(self) -> None:
        entries = self._entries()
        self.bytes = sum(size for _, size in entries)
        for entry, size in entries:
            if self.bytes <= MAX_STORE_BYTES * 3 // 4:
                break
            shutil.rmtree(entry, ignore_errors=True)
            self.bytes -= size


def read_regular(path: Path, limit: int) -> bytes | None:
    """At most `limit` bytes of a regular file that a confined process could have replaced: never
    through a link, never a pipe; None if it is not one or is larger."""
    try:
        fd = wire.open_regular(path)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size > limit:
            return None
        with os.fdopen(fd, "rb", closefd=False) as file:
            data = file.read(limit + 1)
    finally:
        os.close(fd)
    return data if len(data) <= limit else None


def read_compiled(folder: Path) -> Compiled | None:
    """Each stage and the metadata a child wrote in `folder` (a folder, not a link to one)."""
    try:
        if not stat.S_ISDIR(os.lstat(folder).st_mode):
            return None
    except OSError:
        return None
    stages, left = {}, MAX_ENTRY_BYTES
    for name in (*STAGES, "metadata.json"):
        data = read_regular(folder / name, left)
        if data is None:
            return None
        stages[name], left = data, left - len(data)
    try:
        metadata = json.loads(stages.pop("metadata.json"))
    except ValueError:
        return None
    return Compiled(stages, metadata) if isinstance(metadata, dict) else None
