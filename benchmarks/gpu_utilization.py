"""Each GPU's utilization while a benchmark runs: `nvidia-smi` asked once a second between entering
and leaving the `with` block; the mean per GPU index (empty where there is no nvidia-smi)."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections import defaultdict

QUERY = ["nvidia-smi", "--query-gpu=index,utilization.gpu", "--format=csv,noheader,nounits", "-lms", "1000"]


def reading(line: str) -> tuple[int, float] | None:
    """(GPU index, busy fraction) from one line of the query's output; None for anything else."""
    fields = [f.strip() for f in line.split(",")]
    if len(fields) != 2 or not all(f.isdigit() for f in fields):
        return None
    return int(fields[0]), int(fields[1]) / 100


class GpuUtilization:
    def __init__(self):
        self.samples: dict[int, list[float]] = defaultdict(list)
        self._process: subprocess.Popen | None = None
        self._thread = threading.Thread(target=self._read, name="GPU utilization", daemon=True)

    def __enter__(self) -> "GpuUtilization":
        if shutil.which("nvidia-smi"):
            self._process = subprocess.Popen(QUERY, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._process is not None:
            self._process.terminate()
            self._thread.join()
            self._process.wait()

    def means(self) -> dict[int, float]:
        return {index: round(sum(v) / len(v), 3) for index, v in sorted(self.samples.items()) if v}

    def _read(self) -> None:
        for line in self._process.stdout:
            found = reading(line)
            if found is not None:
                self.samples[found[0]].append(found[1])
