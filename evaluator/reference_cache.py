"""Cases' inputs and expected outputs on disk, shared by every evaluator of this machine and kept
across runs: they are pure functions of the task's files, the case, the library versions and the
device model, all of which name an entry. Only cases dearer to build than to read back are kept
(`worth_keeping`).

Only evaluators write here, and an entry is read only if the OS says nobody else could have written
it: the folder, the entry and its files belong to this user, are writable by nobody else and are
not links; its manifest names the same identity, and its files' SHA-256 digests match. Anything else
is removed and built anew. Candidates never see this folder: the evaluator uses it only while
confined processes are seen fully isolated (one of no candidate code as it starts, then each
candidate's), and every confined process sees it empty even where it lies inside a folder they may
read (evaluate.py)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
import threading
import time
from functools import lru_cache
from pathlib import Path

import numpy
import torch

from evaluator import wire
from evaluator.cases import Case
from evaluator.judgement import Expected
from evaluator.task import Task

FORMAT = 1
EVALUATOR_FILES = ("task.py", "references.py", "kernelbench_formats.py", "cases.py", "wire.py")
INPUTS, EXPECTED, MANIFEST = "inputs.pt", "expected.pt", "manifest.json"


def _digest(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


_source_digest = lru_cache(maxsize=None)(_digest)  # the task's and the evaluator's files: read once
_checked: dict[tuple[int, int, int, int], str] = {}
CHECKED_MAX = 1 << 16
SETTLED_SECONDS = 1.0
# A case is kept only where building it again would take longer than reading it back (its files read,
# hashed and copied into the evaluator's folder): where it took at least this many seconds per GiB to
# build. Most standard-size cases are drawn and computed on a GPU faster than that (the suite's come
# to about 200 GiB, far above the folder's bound); the costly ones (batches of float64
# decompositions, inputs drawn on the host) are what the folder is for.
READ_SECONDS_PER_GIB = 1.0
GIB = 1 << 30


def _entry_digest(path: Path) -> str:
    """An entry file's SHA-256, read once per process while the file stays as it was: a write to it
    sets its status-change time, which not even its owner can set back. Only a file unchanged for
    SETTLED_SECONDS before the reading began is remembered, so that a write within the same tick of
    the file system's clock cannot leave that time as it was."""
    began = time.time()
    with open(path, "rb") as f:
        info = os.fstat(f.fileno())
        key = (info.st_dev, info.st_ino, info.st_size, info.st_ctime_ns)
        known = _checked.get(key)
        if known is not None:
            return known
        digest = hashlib.file_digest(f, "sha256").hexdigest()
    if info.st_ctime_ns < (began - SETTLED_SECONDS) * 1e9:
        if len(_checked) >= CHECKED_MAX:
            _checked.clear()
        _checked[key] = digest
    return digest


def default_bytes(folder: Path) -> int:
    """A quarter of the free space on the folder's file system, between 8 and 64 GiB: the cases of
    the tasks an experiment cycles through stay, rather than each pushing out the next one needed."""
    try:
        free = shutil.disk_usage(folder).free
    except OSError:
        return 8 << 30
    return max(8 << 30, min(64 << 30, free // 4))


def device_model(device: torch.device) -> str:
    if device.type != "cuda":
        return "cpu"
    props = torch.cuda.get_device_properties(device)
    return f"{props.name} sm{props.major}{props.minor} cuda {torch.version.cuda}"


class ReferenceCache:
    """One folder of entries; other evaluators may add or remove entries at any moment."""

    def __init__(self, directory: Path, device: torch.device, max_bytes: int | None = None,
                 read_seconds_per_gib: float = READ_SECONDS_PER_GIB):
        """`max_bytes`: the folder's bound; None: default_bytes. `read_seconds_per_gib`: see
        READ_SECONDS_PER_GIB (0: every case is kept)."""
        self.directory = Path(directory)
        self.device = device
        self.read_seconds_per_gib = read_seconds_per_gib
        self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.max_bytes = max_bytes if max_bytes is not None else default_bytes(self.directory)
        self._estimate: int | None = None  # bytes in the folder: scanned, plus what this process added since
        self._estimate_lock = threading.Lock()
        self._machine = {"format": FORMAT, "torch": torch.__version__, "numpy": numpy.__version__,
                         "device": device_model(device),
                         "evaluator": {name: _source_digest(Path(__file__).parent / name) for name in EVALUATOR_FILES}}

    def identity(self, task: Task, case: Case) -> dict | None:
        """What an entry is a function of; None where the task has no file to name it by."""
        if task.source_path is None:
            return None
        builders = [f"{fn.__module__}.{fn.__qualname__}" for fn in (task.make_inputs, task.reference)]
        return {**self._machine, "task": task.id, "task_file": _source_digest(Path(task.source_path)),
                "builders": builders, "case": case.key}

    def _entry(self, identity: dict) -> Path:
        name = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
        return self.directory / name

    def worth_keeping(self, build_seconds: float, nbytes: int) -> bool:
        """Is a case that took `build_seconds` to build, and fills `nbytes`, dearer to build than to read?"""
        return build_seconds >= self.read_seconds_per_gib * nbytes / GIB

    def load(self, task: Task, case: Case) -> tuple[Path, Expected] | None:
        """The entry's inputs file and its expected outputs (on the host), or None."""
        identity = self.identity(task, case)
        if identity is None or not _owned_and_closed(self.directory):
            return None
        entry = self._entry(identity)
        try:
            if not entry.exists():
                return None
            if not _valid(entry, identity):
                shutil.rmtree(entry, ignore_errors=True)
                return None
            os.utime(entry / MANIFEST)  # recently used: evicted last
            lo, hi = wire.load(entry / EXPECTED, "cpu")
        except (OSError, wire.WireError):  # removed meanwhile by another evaluator's trimming
            return None
        return entry / INPUTS, Expected(lo=lo, hi=hi)

    def store(self, task: Task, case: Case, inputs_file: Path, expected: Expected) -> None:
        """Keeps the case: `expected` on the host (the caller copies it there, under the GPU lock)."""
        identity = self.identity(task, case)
        if identity is None or not _owned_and_closed(self.directory):
            return
        entry = self._entry(identity)
        if entry.exists():
            return
        building = Path(tempfile.mkdtemp(prefix=".building-", dir=self.directory))
        try:
            shutil.copyfile(inputs_file, building / INPUTS)
            wire.save((expected.lo, expected.hi), building / EXPECTED)
            files = {name: _digest(building / name) for name in (INPUTS, EXPECTED)}
            manifest = {"identity": identity, "files": files}
            (building / MANIFEST).write_text(json.dumps(manifest, sort_keys=True))
            for name in (INPUTS, EXPECTED, MANIFEST):
                os.chmod(building / name, 0o600)
            size = sum(f.stat().st_size for f in building.iterdir())
            os.rename(building, entry)  # whole or not at all; another evaluator's entry stays
        except OSError:
            return
        finally:
            shutil.rmtree(building, ignore_errors=True)
        self._added(size)

    def _added(self, size: int) -> None:
        """The folder is scanned (and trimmed) when this process's estimate of it passes the bound, not
        at every entry: other evaluators' entries are counted at the next scan."""
        with self._estimate_lock:
            if self._estimate is None:
                self._estimate = self.nbytes()
            else:
                self._estimate += size
            if self._estimate > self.max_bytes:
                self._estimate = self._evict()

    def _evict(self) -> int:
        """Oldest-used entries out until the folder is within its bound; the bytes left."""
        entries = []
        for entry in self.directory.iterdir():
            if entry.name.startswith("."):
                continue
            try:
                size = sum(f.stat().st_size for f in entry.iterdir())
                entries.append(((entry / MANIFEST).stat().st_mtime, size, entry))
            except OSError:  # being removed by another evaluator, or not an entry
                continue
        total = sum(size for _, size, _ in entries)
        for _, size, entry in sorted(entries):
            if total <= self.max_bytes:
                break
            shutil.rmtree(entry, ignore_errors=True)
            total -= size
        return total

    def nbytes(self) -> int:
        """The files' bytes; a folder or file another evaluator removes during the walk is not counted."""
        total = 0
        for folder, _, names in os.walk(self.directory):
            for name in names:
                try:
                    total += os.lstat(os.path.join(folder, name)).st_size
                except OSError:
                    continue
        return total


def _owned_and_closed(path: Path) -> bool:
    """This user's, writable by nobody else, and not a link."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) \
        and not stat.S_ISLNK(info.st_mode)


def _valid(entry: Path, identity: dict) -> bool:
    if not _owned_and_closed(entry) or not stat.S_ISDIR(os.lstat(entry).st_mode):
        return False
    names = (INPUTS, EXPECTED, MANIFEST)
    if sorted(p.name for p in entry.iterdir()) != sorted(names):
        return False
    if not all(_owned_and_closed(entry / name) and stat.S_ISREG(os.lstat(entry / name).st_mode) for name in names):
        return False
    try:
        manifest = json.loads((entry / MANIFEST).read_text())
    except (OSError, ValueError):
        return False
    if not isinstance(manifest, dict) or manifest.get("identity") != identity:
        return False
    files = manifest.get("files")
    return isinstance(files, dict) and all(
        files.get(name) == _entry_digest(entry / name) for name in (INPUTS, EXPECTED))
