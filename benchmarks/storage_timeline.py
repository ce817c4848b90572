"""The machine's storage and CPUs while a benchmark runs, every few seconds until stopped (SIGTERM
or Ctrl-C): one tab-separated line per sample of seconds since the start, MB written to the disks
since the start, MB of dirty pages and of pages under writeback, the MB a folder holds (the disk
cache of references, say) and the share of CPU time busy since the previous sample.

    python3 benchmarks/storage_timeline.py --folder DIR [--every 2] > timeline.tsv &
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.machine_counters import cpu_times, disk_written  # noqa: E402

MB = 1 << 20
COLUMNS = ("seconds", "written_mb", "dirty_mb", "writeback_mb", "folder_mb", "cpu_busy")


def memory_mb(*names: str) -> list[float]:
    """Fields of /proc/meminfo in MB (0 where absent)."""
    found = {}
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            key, _, rest = line.partition(":")
            found[key] = int(rest.split()[0]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return [found.get(name, 0.0) for name in names]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--folder", type=Path, required=True)
    parser.add_argument("--every", type=float, default=2.0)
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    from evaluator.sandbox import scratch_bytes  # torch comes with it: imported once stopping is handled
    began, written, cpu = time.time(), disk_written() or 0, cpu_times()
    print("\t".join(COLUMNS), flush=True)
    try:
        while True:
            time.sleep(args.every)
            now_cpu = cpu_times()
            busy = (now_cpu[0] - cpu[0]) / max(1, now_cpu[1] - cpu[1]) if cpu and now_cpu else float("nan")
            cpu = now_cpu
            row = [time.time() - began, ((disk_written() or 0) - written) / MB, *memory_mb("Dirty", "Writeback"),
                   scratch_bytes(args.folder) / MB, busy]
            print("\t".join(f"{v:.2f}" for v in row), flush=True)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
