"""Does building references leave memory behind per task, and does it come back on a second pass?

    python benchmarks/first_touch_memory.py [--tasks 60] [--passes 2]

Builds every CPU case of the first N tasks through a ReferenceStore that evicts at once (so the
cache holds nothing), in passes over the same tasks, and prints the process's resident memory
growth every 20 tasks, before and after glibc's malloc_trim. Growth in the first pass that the
second does not repeat is state kept once per operator or shape (torch's and its libraries'), not
a leak per evaluation.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
import tempfile
from pathlib import Path

import psutil
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evaluator.cases import plan  # noqa: E402
from evaluator.loader import load_suite  # noqa: E402
from evaluator.references import ReferenceStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=60)
    parser.add_argument("--passes", type=int, default=2)
    args = parser.parse_args()
    libc = ctypes.CDLL("libc.so.6")
    me = psutil.Process()

    def rss_mib() -> float:
        return me.memory_info().rss / 2**20

    tasks = list(load_suite().values())[:args.tasks]
    store = ReferenceStore(Path(tempfile.mkdtemp()), torch.device("cpu"), max_bytes=1)
    start = rss_mib()
    print("| pass | tasks built | RSS growth MiB | after malloc_trim | reference cache MiB |")
    print("|---|---|---|---|---|")
    for done, task in enumerate(tasks * args.passes, start=1):
        with store.using(task):
            for case in plan(task, on_gpu=False):
                store.get(task, case)
        if done % 20 == 0 or done == len(tasks) * args.passes:
            before = rss_mib()
            libc.malloc_trim(0)
            print(f"| {(done - 1) // len(tasks) + 1} | {done} | {before - start:.0f} | {rss_mib() - start:.0f} | "
                  f"{store.nbytes() / 2**20:.1f} |", flush=True)


if __name__ == "__main__":
    main()
