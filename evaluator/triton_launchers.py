"""Triton's C launchers, built by the evaluator from the kernel signatures candidates' processes name.

A Triton that compiles a C launcher for each kernel signature (3.6: gcc, about 0.2 s and 0.2 CPU
seconds each) has every evaluation build its kernels' launchers again in its private cache
(triton_cache.py), one after another at the first launches of its correctness calls. A launcher's
source depends on the types of the kernel's arguments alone, so the evaluator builds the launcher
of each signature a candidate's process reports, from Triton's own source for it, in a thread of its
own, into the stubs folder that every later candidate's process reads (read-only) below its
private cache. What a candidate's process reports is only a request: a signature of anything but
Triton's scalar and pointer types is refused, and nothing that process wrote reaches the folder.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import sysconfig
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterable

NAME = "__triton_launcher"
SCALARS = ("i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32", "f32", "fp64")
POINTER = re.compile(r"\*[a-z0-9]{1,16}")
MAX_ARGUMENTS = 128
MAX_PER_REPORT = 32  # new signatures taken from one candidate's report
MAX_LAUNCHERS = 4096  # in the stubs folder, which outlives the evaluator (about 20 KB each)


def valid(signature: tuple) -> bool:
    """Argument types Triton writes plain C for: its scalars, pointers and compile-time constants."""
    return 0 < len(signature) <= MAX_ARGUMENTS and all(
        isinstance(t, str) and (t in SCALARS or t == "constexpr" or POINTER.fullmatch(t)) for t in signature)


def launcher_maker():
    """Triton's maker of a launcher's C source from a signature, where this Triton builds one per
    signature (None where one launcher serves every kernel, as in Triton 3.9)."""
    try:
        from triton.backends.nvidia import driver
        from triton.runtime.build import _build, platform_key  # noqa: F401 - both used by `build`
    except ImportError:
        return None
    return getattr(driver, "make_launcher", None)


def launcher_path(stubs: Path, signature: tuple[str, ...]) -> tuple[str, Path]:
    """The C source of `signature`'s launcher, and where Triton's file cache looks for it in
    `stubs`: the folder of the key compile_module_from_src gives the source, as get_cache_manager
    spells it for the cache's manager."""
    from triton.backends.nvidia import driver
    from triton.runtime import cache
    from triton.runtime.build import platform_key

    source = driver.make_launcher({}, dict(enumerate(signature)), None)
    key = hashlib.sha256((source + platform_key()).encode("utf-8")).hexdigest()
    spelled = getattr(cache, "_base32", lambda hex_key: hex_key)(key)
    return source, stubs / spelled / f"{NAME}{sysconfig.get_config_var('EXT_SUFFIX')}"


def build(stubs: Path, signature: tuple[str, ...]) -> Path:
    """The launcher of `signature` in `stubs`, built unless there already."""
    from triton.backends.nvidia import driver
    from triton.runtime.build import _build

    source, target = launcher_path(stubs, signature)
    if target.is_file():
        return target
    with tempfile.TemporaryDirectory() as work:
        source_path = os.path.join(work, f"{NAME}.c")
        Path(source_path).write_text(source)
        built = _build(NAME, source_path, work, driver.library_dirs(), driver.include_dirs, driver.libraries, [])
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.parent / f".{target.name}.{os.getpid()}.{threading.get_ident()}"
        shutil.copyfile(built, partial)
        os.chmod(partial, 0o644)  # candidates' processes read it
        os.replace(partial, target)
    return target


def _entries(stubs: Path | None) -> int:
    try:
        return len(os.listdir(stubs)) if stubs is not None else 0
    except OSError:
        return 0


class LauncherBuilder:
    """One thread building the launchers of signatures reported by candidates' processes, each once."""

    def __init__(self, stubs: Path | None):
        self.stubs = stubs if stubs is not None and launcher_maker() is not None else None
        self._room = MAX_LAUNCHERS - _entries(self.stubs)
        self._asked: set[tuple[str, ...]] = set()
        self._lock = threading.Lock()
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="triton launchers")
        self._pending: list[Future] = []

    def request(self, signatures: Iterable[tuple]) -> int:
        """Queues the valid signatures not asked for before; how many were queued."""
        if self.stubs is None:
            return 0
        with self._lock:
            new = [s for s in dict.fromkeys(tuple(s) for s in signatures) if valid(s) and s not in self._asked]
            new = new[:max(0, min(MAX_PER_REPORT, self._room - len(self._asked)))]
            self._asked.update(new)
            self._pending = [f for f in self._pending if not f.done()]
            self._pending += [self._pool.submit(self._build, s) for s in new]
        return len(new)

    def _build(self, signature: tuple[str, ...]) -> None:
        try:
            build(self.stubs, signature)
        except Exception:  # noqa: BLE001 - without it, candidates' processes build their own
            pass

    def wait(self) -> None:
        """Until every launcher asked for so far is built (or failed)."""
        with self._lock:
            pending = list(self._pending)
        for future in pending:
            future.result()

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)
