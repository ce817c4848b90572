"""Detect changes to the project's own files (the evaluator, the task references, the loop, the
prompts) while candidates run: a snapshot when the evaluator starts, compared after every
evaluation. File sizes and modification times are compared first; a file that looks changed is
hashed again, so a touched but unchanged file is not a false alarm."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from pathlib import Path

WATCHED_SUFFIXES = {".py", ".j2", ".yaml", ".jsonl", ".md", ".toml"}


@dataclass(frozen=True)
class FileState:
    size: int
    mtime_ns: int
    digest: str


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _files(roots: list[Path]) -> list[Path]:
    found = []
    for root in roots:
        if root.is_dir():
            found += [p for p in root.rglob("*") if p.is_file() and p.suffix in WATCHED_SUFFIXES
                      and "__pycache__" not in p.parts]
    return sorted(found)


class ProjectIntegrity:
    def __init__(self, roots: list[Path]):
        self.roots = [Path(r) for r in roots]
        self._lock = threading.Lock()
        self.snapshot = self._take()

    def _take(self) -> dict[Path, FileState]:
        states = {}
        for path in _files(self.roots):
            stat = path.stat()
            states[path] = FileState(stat.st_size, stat.st_mtime_ns, _digest(path))
        return states

    def changes(self) -> list[str]:
        """Files added, removed or modified since the snapshot (paths relative to their root)."""
        with self._lock:
            now = _files(self.roots)
            present = set(now)
            changed = [p for p in self.snapshot if p not in present]
            changed += [p for p in now if p not in self.snapshot]
            changed += [p for p in now if p in self.snapshot and self._modified(p)]
            return sorted(str(p) for p in changed)

    def _modified(self, path: Path) -> bool:
        """Gone unreadable, or of another size or time and, hashed again, other contents."""
        before = self.snapshot[path]
        try:
            stat = path.stat()
        except OSError:
            return True
        return (stat.st_size, stat.st_mtime_ns) != (before.size, before.mtime_ns) and _digest(path) != before.digest
