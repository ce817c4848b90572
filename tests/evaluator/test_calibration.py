"""Calibration's cache under several processes (CPU-testable parts; the measurement is a GPU test)."""

import json
import multiprocessing
import time

import torch

from evaluator import calibration


def _calibrate_in_child(cache_dir, lock_dir, log):
    def slow_measurement(device):
        with open(log, "a") as f:
            f.write("measured\n")
        time.sleep(0.5)
        return calibration.Peaks(device="cpu", copy_gbps=100.0, tflops={"float32": 1.0})

    calibration.measure_peaks = slow_measurement
    calibration._key = lambda device: "a test GPU"  # device_key asks CUDA for the GPU's name
    calibration.calibrate(cache_dir, torch.device("cpu"), lock_dir)


def test_evaluators_starting_together_measure_the_gpu_once(tmp_path):
    """Several evaluators on one GPU (a shard or Ray actor each) start cold at the same moment: the
    first measures under the exclusive lock, the others wait and then read its result instead of
    measuring again (and perturbing each other's figures)."""
    cache_dir, lock_dir, log = tmp_path / "cache", tmp_path / "locks", tmp_path / "measured.log"
    ctx = multiprocessing.get_context("fork")
    children = [ctx.Process(target=_calibrate_in_child, args=(cache_dir, lock_dir, log)) for _ in range(3)]
    for child in children:
        child.start()
    for child in children:
        child.join(30)
    assert [c.exitcode for c in children] == [0, 0, 0]
    assert log.read_text().count("measured") == 1
    table = json.loads(calibration.cache_path(cache_dir).read_text())
    assert [entry["copy_gbps"] for entry in table.values()] == [100.0]
    assert table["a test GPU"]["tflops"] == {"float32": 1.0}
