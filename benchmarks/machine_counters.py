"""Machine-wide counters read from /proc: busy and total CPU time, bytes written to the disks."""

from __future__ import annotations

import os
from pathlib import Path


def cpu_times() -> tuple[int, int] | None:
    """(busy, total) jiffies of every CPU of the machine since boot; None without /proc/stat."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle and iowait
    return sum(fields) - idle, sum(fields)


def disk_written() -> int | None:
    """Bytes written to the machine's disks since boot (whole disks, not their partitions); None
    without /proc/diskstats."""
    disks = {p.name for p in Path("/sys/block").glob("*") if not p.name.startswith(("loop", "ram", "zram"))}
    try:
        lines = Path("/proc/diskstats").read_text().splitlines()
    except OSError:
        return None
    return sum(int(f[9]) * 512 for f in map(str.split, lines) if len(f) > 9 and f[2] in disks)


def cpu_use(before: tuple[int, int] | None, after: tuple[int, int] | None) -> tuple[float | None, float | None]:
    """The share of the machine's CPU time that was busy, and the busy CPU seconds, between two readings."""
    if before is None or after is None or after[1] <= before[1]:
        return None, None
    busy = after[0] - before[0]
    return round(busy / (after[1] - before[1]), 3), busy / os.sysconf("SC_CLK_TCK")
