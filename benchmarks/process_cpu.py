"""CPU seconds by kind of process, sampled from /proc while a benchmark runs: which of the evaluator,
the candidates' processes (and their compile scouts), the memory checks and the compilers they start
use the machine's CPUs. A process's ticks are read twice a second, so the part of its last half second
before it exits is not counted: the figures are a floor.

    with ProcessCPU() as cpu:
        ...
    cpu.seconds  # {"evaluator": 196.0, "candidates and scouts": 664.1, ...}
"""

from __future__ import annotations

import os
import threading
from collections import Counter
from pathlib import Path

PERIOD = 0.5
COMPILERS = {"ptxas", "cc1", "as", "ld", "gcc", "nvdisasm", "cuobjdump"}
BY_COMMAND = (("memcheck_process", "memory checks"), ("fork_server_process", "candidates and scouts"),
              ("multiprocessing", "evaluator"), ("ray::", "evaluator"))


def kind_of(comm: str, command: str, benchmark_pid: int, pid: int) -> str | None:
    """What a process is for, from its name and command line; None for processes not the benchmark's."""
    if pid == benchmark_pid:
        return "evaluator"
    if comm in COMPILERS:
        return "compilers"
    if comm.startswith("compute-sanit"):
        return "memory checks"
    return next((kind for key, kind in BY_COMMAND if key in command), None)


def _read(pid: int) -> tuple[str, str, int] | None:
    """(name, command line, user + system ticks) of a process; None once it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        command = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return None
    comm = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2:].split()
    return comm, command, int(fields[11]) + int(fields[12])


class ProcessCPU:
    """Samples every process of the machine every `period` seconds between enter and exit."""

    def __init__(self, period: float = PERIOD):
        self.period = period
        self.seconds: dict[str, float] = {}
        self._ticks: Counter = Counter()
        self._last: dict[int, tuple[str | None, int]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="process CPU")
        self._hz = os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> "ProcessCPU":
        self._sample(first=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()
        self.seconds = {k: round(v / self._hz, 1) for k, v in self._ticks.most_common()}

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self._sample()

    def _sample(self, first: bool = False) -> None:
        seen = {}
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            read = _read(pid)
            if read is None:
                continue
            comm, command, ticks = read
            kind, before = self._last.get(pid, (None, None))
            if before is None or ticks < before:  # new, or a new process under a reused number
                kind = kind_of(comm, command, os.getpid(), pid)
                before = ticks if first else 0  # a new process: its ticks all fell since the last sample
            if kind is not None:
                self._ticks[kind] += ticks - before
            seen[pid] = (kind, ticks)
        self._last = seen


def available() -> bool:
    return Path("/proc/self/stat").exists()
