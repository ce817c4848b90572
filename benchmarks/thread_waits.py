"""Where the threads of a benchmark's processes are, sampled from /proc: running (or ready to run),
or waiting in which system call; for an ioctl, on which device file (threads queued on a GPU
driver's locks wait in ioctls on /dev/nvidiactl or /dev/nvidia-uvm, and for the NVIDIA driver which of
its calls), and for a wait the process
cannot be woken from, the kernel function it waits in. The figure is the mean number of threads
per sample in each place, by kind of process (process_use.kind_of). System call numbers are
x86-64's; elsewhere calls are named by number.

    with ThreadWaits() as waits:
        ...
    waits.mean_threads()  # {("candidates", "ioctl /dev/nvidiactl RM_ALLOC [os_acquire_rwlock_write]"): 2.8, ...}
"""

from __future__ import annotations

import os
import threading
from collections import Counter

from benchmarks.periodic import Periodic
from benchmarks.process_use import command_line, kind_of
from evaluator.sandbox import process_stat

PERIOD = 0.5
SYSCALLS = {0: "read", 1: "write", 7: "poll", 9: "mmap", 16: "ioctl", 23: "select", 35: "nanosleep", 45: "recvfrom",
            61: "wait4", 73: "flock", 202: "futex", 230: "clock_nanosleep", 232: "epoll_wait", 247: "waitid",
            257: "openat", 270: "pselect6", 271: "ppoll", 281: "epoll_pwait"}
IOCTL = 16
# the NVIDIA driver's ioctl commands (its nv_escape.h and nv-ioctl-numbers.h): which of its calls a
# thread waits in (an ioctl number's low byte, its type byte "F")
NVIDIA_TYPE = ord("F")
NVIDIA_CALLS = {0x27: "RM_ALLOC_MEMORY", 0x28: "RM_ALLOC_OBJECT", 0x29: "RM_FREE", 0x2A: "RM_CONTROL",
                0x2B: "RM_ALLOC", 0x34: "RM_DUP_OBJECT", 0x35: "RM_SHARE", 0x41: "RM_IDLE_CHANNELS",
                0x4A: "RM_VID_HEAP_CONTROL", 0x4E: "RM_MAP_MEMORY", 0x4F: "RM_UNMAP_MEMORY",
                0x52: "RM_GET_EVENT_DATA", 0x54: "RM_ALLOC_CONTEXT_DMA2", 0x57: "RM_MAP_MEMORY_DMA",
                0x58: "RM_UNMAP_MEMORY_DMA", 0x59: "RM_BIND_CONTEXT_DMA", 0x5C: "RM_EXPORT_OBJECT_TO_FD",
                0x5D: "RM_IMPORT_OBJECT_FROM_FD", 0x5E: "RM_UPDATE_DEVICE_MAPPING_INFO", 200: "CARD_INFO",
                201: "REGISTER_FD", 210: "CHECK_VERSION_STR", 211: "IOCTL_XFER_CMD", 212: "ATTACH_GPUS_TO_FD",
                213: "QUERY_DEVICE_INTR", 214: "SYS_PARAMS", 217: "EXPORT_TO_DMABUF_FD", 218: "WAIT_OPEN_COMPLETE"}


def place(state: str, syscall: str, fd_target: str | None = None, wchan: str = "") -> str:
    """Where a thread is, from its state letter, its /proc syscall line, the file its ioctl's
    descriptor names and its kernel wait function."""
    fields = syscall.split()
    if state == "R" or not fields or fields[0] == "running":
        return "running"
    if fields[0] == "-1":  # blocked outside a system call (a page fault, a stop)
        where = "outside a system call"
    else:
        number = int(fields[0])
        where = SYSCALLS.get(number, f"system call {number}")
        if number == IOCTL and fd_target:
            where += " " + fd_target + _driver_call(fd_target, fields[2] if len(fields) > 2 else "")
    if state == "D" and wchan not in ("", "0"):
        where += f" [{wchan}]"
    return where


def _driver_call(target: str, request: str) -> str:
    """' RM_ALLOC' and the like for an ioctl on an NVIDIA device file; its number on the UVM one."""
    if not target.startswith("/dev/nvidia"):
        return ""
    try:
        number = int(request, 16)
    except ValueError:
        return ""
    if target == "/dev/nvidia-uvm":
        return f" {number:#x}"
    if (number >> 8) & 0xFF != NVIDIA_TYPE:
        return ""
    return " " + NVIDIA_CALLS.get(number & 0xFF, f"{number & 0xFF:#x}")


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _thread_place(pid: int, tid: str) -> str | None:
    """None for a thread gone, a zombie, or one whose call this process may not read."""
    base = f"/proc/{pid}/task/{tid}"
    try:
        stat = _read(f"{base}/stat")
        state = stat[stat.rindex(")") + 2]
        if state in "ZX":
            return None
        if state == "R":
            return "running"
        syscall = _read(f"{base}/syscall")
        fields = syscall.split()
        target = None
        if len(fields) > 1 and fields[0] == str(IOCTL):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{int(fields[1], 16)}")
            except (OSError, ValueError):
                target = "?"
        wchan = _read(f"{base}/wchan").strip() if state == "D" else ""
        return place(state, syscall, target, wchan)
    except (OSError, ValueError, IndexError):
        return None


class ThreadWaits(Periodic):
    """Samples the threads of every process of the benchmark's kinds every `period` seconds."""

    def __init__(self, period: float = PERIOD, benchmark_pid: int | None = None, pids: set[int] | None = None):
        """`pids`: only these processes (of those whose kind is known); None: all of them."""
        super().__init__(period, "thread waits")
        self.benchmark_pid = os.getpid() if benchmark_pid is None else benchmark_pid
        self.pids = pids
        self.samples = 0
        self._counts: Counter = Counter()
        self._kinds: dict[tuple[int, str], str | None] = {}

    def mean_threads(self) -> dict[tuple[str, str], float]:
        """(kind of process, place) -> threads there per sample, most first."""
        return {key: n / max(1, self.samples) for key, n in self._counts.most_common()}

    def _kind(self, pid: int) -> str | None:
        """By its name now: a fork server's child takes its kind's name right after the fork."""
        stat = process_stat(pid)
        if stat is None:
            return None
        if (pid, stat[0]) not in self._kinds:
            command = command_line(pid)
            if command is None:
                return None
            self._kinds[pid, stat[0]] = kind_of(stat[0], command, self.benchmark_pid, pid)
        return self._kinds[pid, stat[0]]

    def sample(self) -> None:
        me = threading.get_native_id()
        live = set()
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            pid = int(name)
            if self.pids is not None and pid not in self.pids:
                continue
            live.add(pid)
            kind = self._kind(pid)
            if kind is None:
                continue
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                where = None if int(tid) == me else _thread_place(pid, tid)
                if where is not None:
                    self._counts[(kind, where)] += 1
        self._kinds = {pid: kind for pid, kind in self._kinds.items() if pid in live}  # numbers are reused
        self.samples += 1


def table(mean: dict[tuple[str, str], float], limit: int = 25) -> str:
    """The places where threads were running or blocked first (a blocked one's place names its
    kernel wait), then those asleep in waits of their own (idle pools, polls), most first in each."""
    ordered = sorted(mean.items(), key=lambda item: (not _busy(item[0][1]), -item[1]))
    rows = [f"| {kind} | {where} | {n:.2f} |" for (kind, where), n in ordered[:limit]]
    return "| process | where its threads are | threads (mean) |\n|---|---|---|\n" + "\n".join(rows)


def _busy(where: str) -> bool:
    return where == "running" or where.endswith("]")
