"""What each kind of process used while a benchmark ran, sampled from /proc: CPU seconds and bytes
written to storage, for the evaluator, the fork servers, the candidates' processes, their compile
scouts, the baselines' processes, the memory checks and the compilers they start (the fork server
names each child by its kind: al-candidate, al-scout, ...). A process is read twice a second, so
what it used in its last half second before it exited is not counted: the figures are a floor.

    with ProcessUse() as use:
        ...
    use.cpu_seconds    # {"evaluator": 196.0, "candidates": 364.1, "compile scouts": 300.0, ...}
    use.written_bytes  # {"evaluator": 1.2e9, ...}

From the command line it samples the whole machine until stopped (SIGTERM or SIGINT), with every
process whose command line runs agentloop counted as the evaluator, and writes the figures as JSON:

    python3 benchmarks/process_use.py --json OUT.json &  ...  kill %1
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.periodic import Periodic  # noqa: E402
from evaluator.sandbox import process_stat  # noqa: E402

PERIOD = 0.5
COMPILERS = {"ptxas", "cc1", "as", "ld", "gcc", "nvdisasm", "cuobjdump"}
BY_NAME = {"al-candidate": "candidates", "al-scout": "compile scouts", "al-ir_compile": "compile scouts",
           "al-baseline": "baselines", "al-memcheck": "memory checks"}
BY_COMMAND = (("memcheck_process", "memory checks"), ("fork_server_process", "fork servers"),
              ("multiprocessing", "evaluator"), ("ray::", "evaluator"), ("-m agentloop", "evaluator"),
              ("bin/agentloop", "evaluator"))


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
    if comm in BY_NAME:
        return BY_NAME[comm]
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
        self._last: dict[int, Reading] = {}
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
            before = self._last.get(pid)
            if before is None or now.ticks < before.ticks:  # new, or a new process under a reused number
                # a new process used all it has since the last sample
                before = now if first else Reading(now.comm, now.command, 0, 0)
            # by its name now: the fork server's children take their kind's name right after the fork
            kind = kind_of(now.comm, now.command, os.getpid(), pid)
            if kind is not None:
                self._ticks[kind] += now.ticks - before.ticks
                self._written[kind] += max(0, now.written - before.written)
            seen[pid] = now
        self._last = seen


def sample_until_stopped(period: float) -> dict:
    """Samples until SIGTERM or SIGINT; the figures, and the seconds sampled."""
    stopped = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopped.set())
    began = time.monotonic()
    with ProcessUse(period) as use:
        print("sampling", flush=True)
        while not stopped.wait(0.2):
            pass
    return {"seconds": round(time.monotonic() - began, 1), "cpu_seconds": use.cpu_seconds,
            "written_bytes": use.written_bytes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--period", type=float, default=PERIOD)
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    args.json.write_text(json.dumps(sample_until_stopped(args.period), indent=1))


if __name__ == "__main__":
    main()
