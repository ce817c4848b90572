"""What each kind of process used while a benchmark ran, sampled from /proc: CPU seconds and bytes
written to storage, for the evaluator, the candidates' processes (and their compile scouts), the
memory checks and the compilers they start. A process is read twice a second, so what it used in
its last half second before it exited is not counted: the figures are a floor.

    with ProcessUse() as use:
        ...
    use.cpu_seconds    # {"evaluator": 196.0, "candidates and scouts": 664.1, ...}
    use.written_bytes  # {"evaluator": 1.2e9, ...}
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import NamedTuple

from benchmarks.periodic import Periodic
from evaluator.sandbox import process_stat

PERIOD = 0.5
COMPILERS = {"ptxas", "cc1", "as", "ld", "gcc", "nvdisasm", "cuobjdump"}
BY_COMMAND = (("memcheck_process", "memory checks"), ("fork_server_process", "candidates and scouts"),
              ("multiprocessing", "evaluator"), ("ray::", "evaluator"))


class Reading(NamedTuple):
    comm: str
    command: str
    ticks: int    # user + system
    written: int  # bytes sent, or to be sent, to storage


def kind_of(comm: str, command: str, benchmark_pid: int, pid: int) -> str | None:
    """What a process is for, from its name and command line; None for processes not the benchmark's."""
    if pid == benchmark_pid:
        return "evaluator"
    if comm in COMPILERS:
        return "compilers"
    if comm.startswith("compute-sanit"):
        return "memory checks"
    return next((kind for key, kind in BY_COMMAND if key in command), None)


def command_line(pid: int) -> str | None:
    """A process's command line, its words joined by spaces; None once it is gone."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None


def _read(pid: int) -> Reading | None:
    """One process's name, command line and use so far; None once it is gone."""
    stat, command = process_stat(pid), command_line(pid)
    if stat is None or command is None:
        return None
    comm, fields = stat
    return Reading(comm, command, int(fields[11]) + int(fields[12]), _written(pid))


def _written(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/io").read_text().splitlines():
            if line.startswith("write_bytes:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class ProcessUse(Periodic):
    """Samples every process of the machine every `period` seconds between enter and exit."""

    def __init__(self, period: float = PERIOD):
        super().__init__(period, "process use")
        self.cpu_seconds: dict[str, float] = {}
        self.written_bytes: dict[str, int] = {}
        self._ticks: Counter = Counter()
        self._written: Counter = Counter()
        self._last: dict[int, tuple[str | None, Reading]] = {}
        self._hz = os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> "ProcessUse":
        self.sample(first=True)
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        super().__exit__(*exc)
        self.sample()
        self.cpu_seconds = {k: round(v / self._hz, 1) for k, v in self._ticks.most_common()}
        self.written_bytes = dict(self._written.most_common())

    def sample(self, first: bool = False) -> None:
        seen = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            now = _read(pid)
            if now is None:
                continue
            kind, before = self._last.get(pid, (None, None))
            if before is None or now.ticks < before.ticks:  # new, or a new process under a reused number
                kind = kind_of(now.comm, now.command, os.getpid(), pid)
                # a new process used all it has since the last sample
                before = now if first else Reading(now.comm, now.command, 0, 0)
            if kind is not None:
                self._ticks[kind] += now.ticks - before.ticks
                self._written[kind] += max(0, now.written - before.written)
            seen[pid] = (kind, now)
        self._last = seen
