"""Which kernel specializations the compile scout is compiling right now: a folder of one marker
file each, private to one evaluation. The candidate's process, about to compile a kernel the
scout has under way, waits for it and then loads it from Triton's cache, instead of compiling it
a second time beside the scout.

Both processes run the candidate's code, so a marker is only a hint: the wait is bounded, and
at worst a candidate slows its own evaluation down."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

WAIT_SECONDS = 60.0  # a compile of one kernel takes well under this even on a loaded host
POLL_SECONDS = 0.005


def marker_name(fn: Any, key: Any) -> str:
    """Names a specialization the same way in both processes: Triton's `jit_cache_hook` passes the
    kernel (`fn`, with `module` and `name`) and its in-memory cache key."""
    kernel = f"{getattr(fn, 'module', '')}.{getattr(fn, 'name', '')}"
    return hashlib.sha256(f"{kernel}\n{key}".encode()).hexdigest()[:32]


class CompileMarkers:
    def __init__(self, folder: str | Path):
        self.folder = Path(folder)

    def _marker(self, name: str) -> Path:
        return self.folder / f"{name}.compiling"

    def claim(self, name: str) -> None:
        try:
            self._marker(name).touch()
        except OSError:
            pass

    def settle(self, name: str) -> None:
        self._marker(name).unlink(missing_ok=True)

    def clear(self) -> None:
        """The scout is gone: every marker it left settles."""
        for marker in self.folder.glob("*.compiling"):
            marker.unlink(missing_ok=True)

    def wait(self, name: str, timeout: float = WAIT_SECONDS) -> float:
        """Until the scout settles `name` (or `timeout` passes); the seconds waited."""
        marker, began = self._marker(name), time.perf_counter()
        while marker.exists() and time.perf_counter() - began < timeout:
            time.sleep(POLL_SECONDS)
        return time.perf_counter() - began
