"""The storage timeline sampled beside a benchmark: a header, then rows with the folder's size, until
it is stopped by SIGTERM, which ends it cleanly."""

import signal
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "storage_timeline.py"


def test_rows_report_the_folders_size_until_stopped(tmp_path):
    (tmp_path / "kept").mkdir()
    (tmp_path / "kept" / "entry").write_bytes(b"\0" * (3 << 20))
    with subprocess.Popen([sys.executable, str(SCRIPT), "--folder", str(tmp_path), "--every", "0.2"],
                          stdout=subprocess.PIPE, text=True) as sampling:
        header = sampling.stdout.readline().split()
        row = dict(zip(header, map(float, sampling.stdout.readline().split())))
        sampling.send_signal(signal.SIGTERM)
        sampling.communicate(timeout=60)
    assert header == ["seconds", "written_mb", "dirty_mb", "writeback_mb", "folder_mb", "cpu_busy"]
    assert row["folder_mb"] == 3.0 and 0 <= row["cpu_busy"] <= 1
    assert sampling.returncode == 0
