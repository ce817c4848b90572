"""Each GPU's utilization from nvidia-smi's lines (benchmarks/gpu_utilization.py)."""

import os
import time

from benchmarks import gpu_utilization

# stands in for nvidia-smi: the query's lines for two GPUs, and a line of something else
FAKE = "#!/bin/sh\nwhile true; do echo '0, 13'; echo '1, 40'; echo 'No devices were found'; sleep 0.05; done\n"


def test_a_line_is_read_as_a_gpu_and_its_busy_share_and_others_are_not():
    assert gpu_utilization.reading("3, 87\n") == (3, 0.87)
    assert gpu_utilization.reading("[N/A]") is None and gpu_utilization.reading("0, [N/A]") is None


def test_the_means_are_per_gpu_over_what_nvidia_smi_printed_meanwhile(tmp_path, monkeypatch):
    fake = tmp_path / "nvidia-smi"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with gpu_utilization.GpuUtilization() as gpus:
        while len(gpus.samples[1]) < 3:
            time.sleep(0.05)
    assert gpus.means() == {0: 0.13, 1: 0.4}


def test_without_nvidia_smi_there_is_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with gpu_utilization.GpuUtilization() as gpus:
        pass
    assert gpus.means() == {}
