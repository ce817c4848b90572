"""Inputs and expected outputs per case, computed once in the evaluator's process and reused by
every candidate of the task. Inputs are also written as wire files for candidate processes.
On a GPU, standard-size inputs are drawn there (drawing them on the CPU was most of the time
a cold evaluation took), and their expected outputs stay there, within a budget: copying them to
the host and back for every judgement was most of the time the evaluator held the GPU lock."""

from __future__ import annotations

import contextlib
import shutil
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterator

import psutil
import torch

from evaluator import gpu_lock, gpu_node, memory_gate, wire
from evaluator.cases import Case
from evaluator.contracts import Expected
from evaluator.reference_cache import ReferenceCache
from evaluator.task import (Inputs, Task, clone_inputs, drawing_on, element_bytes, judged_outputs, on_device,
                            on_pinned_host, tensors_in, upcast)

HOST = torch.device("cpu")
# Expected outputs at least this large are judged on the GPU, and stay there when built there.
GPU_JUDGING_BYTES = 8 << 20
# Of the GPU's memory, the share that expected outputs kept there may take (candidates need the rest).
RESIDENT_FRACTION = 0.2


def _expected_tensors(expected: Expected) -> list[torch.Tensor]:
    return tensors_in(expected.lo) + tensors_in(expected.hi)


def _moved(expected: Expected, device: torch.device) -> Expected:
    return Expected(lo=on_device(expected.lo, device), hi=on_device(expected.hi, device))


@dataclass
class CaseData:
    """Built once and never changed: its sizes are computed once (the store sums them on every
    build and eviction)."""

    inputs: Inputs            # on the host, as the task built them
    inputs_file: Path
    expected: Expected        # on the host, or (large standard-size outputs) on the GPU
    build_seconds: float = 0.0  # drawing the inputs and computing the outputs, waits for locks aside

    def expected_on(self, device: torch.device) -> Expected:
        return _moved(self.expected, device)

    @cached_property
    def expected_bytes(self) -> int:
        return element_bytes(*_expected_tensors(self.expected))

    @cached_property
    def resident(self) -> bool:
        """Are the expected outputs on the GPU?"""
        return any(t.device.type != "cpu" for t in _expected_tensors(self.expected))

    @cached_property
    def nbytes(self) -> int:
        """Host memory held: the inputs, and the expected outputs unless they are on the GPU."""
        leaves = tensors_in(self.inputs)
        return element_bytes(*[t for t in leaves + _expected_tensors(self.expected) if t.device.type == "cpu"])

    @property
    def device_bytes(self) -> int:
        return self.expected_bytes if self.resident else 0


def run_reference(task: Task, inputs: Inputs, device: torch.device) -> Any:
    call = clone_inputs(on_device(inputs, device))
    return judged_outputs(task.mutates, task.reference(*call.args, **call.kwargs), call)


def expected_outputs(task: Task, inputs: Inputs, device: torch.device, keep_on: torch.device = HOST) -> Expected:
    """Computed on `device`, kept on `keep_on` (the host by default: GPU memory then holds only the
    cases being judged, however many tasks are being evaluated at once)."""
    there = on_device(inputs, device)  # copied once; the float64 inputs are made on the device
    lo = on_device(run_reference(task, there, device), keep_on)
    if not task.contract.needs_hi:
        return Expected(lo=lo, hi=None)
    let_timings_go(device)  # a waiting timing goes between the runs
    hi = on_device(run_reference(task, upcast(there), device), keep_on)
    return Expected(lo=lo, hi=hi)


def let_timings_go(device: torch.device) -> None:
    """Where a timing waits for the GPU: this thread's GPU work so far finished (its stream drained,
    so that none of it runs beside the timing), then its yielding holds let the timing go first."""
    gpu_lock.yield_to_writers(finish=lambda: _finish_gpu_work(device))


def _finish_gpu_work(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.current_stream(device).synchronize()


_thread = threading.local()


def slot_waited_by_this_thread() -> float:
    """Seconds this thread has waited for a slot to build a standard-size case on the GPU, so far."""
    return getattr(_thread, "slot_waited", 0.0)


@contextlib.contextmanager
def own_stream(device: torch.device) -> Iterator[None]:
    """GPU work of this thread on a stream of its own. On the shared default stream, torch routines
    that sync the host once per matrix (LDL, SVD, eig over a batch) wait at every sync for all the
    work other threads queued: 8 LinearAlgebra tasks built by 8 threads took 39.7 s on the default
    stream of an H100, 18.5 s on a stream each."""
    if device.type != "cuda":
        yield
        return
    stream = getattr(_thread, "stream", None)
    if stream is None:
        stream = _thread.stream = torch.cuda.Stream(device)
    with torch.cuda.stream(stream):
        yield
    stream.synchronize()


_linalg_lock = threading.Lock()
_linalg_loaded: set[torch.device] = set()


def load_cuda_linalg(device: torch.device) -> None:
    """torch loads its CUDA linear-algebra kernels at the first linalg call in the process; two
    threads making their first calls at once race there ("lazy wrapper should be called at most
    once", seen with eig and matrix_power_eig built together). Loaded once, before any build."""
    if device.type != "cuda":
        return
    with _linalg_lock:
        if device not in _linalg_loaded:
            torch.linalg.cholesky(torch.eye(1, device=device))
            _linalg_loaded.add(device)


def host_budget() -> int:
    """Host bytes of cached cases for one GPU's evaluator: an eighth of the machine's memory per GPU,
    between 8 and 32 GiB (an experiment cycling through a few dozen tasks keeps them all)."""
    share = psutil.virtual_memory().total // (8 * gpu_node.machine_gpus())
    return max(8 << 30, min(32 << 30, share))


class ReferenceStore:
    """LRU of case data, bounded in host bytes and in GPU bytes (expected outputs kept there);
    the cases of tasks being evaluated stay whatever the bounds."""

    def __init__(self, directory: Path, device: torch.device, max_bytes: int | None = None,
                 lock_dir: Path | None = None, max_device_bytes: int | None = None):
        self.directory = directory
        self.lock_dir = lock_dir
        self.device = device
        self.max_bytes = max_bytes or (host_budget() if device.type == "cuda" else (256 << 20))
        if max_device_bytes is None and device.type == "cuda":
            max_device_bytes = int(RESIDENT_FRACTION * torch.cuda.get_device_properties(device).total_memory)
        self.max_device_bytes = max_device_bytes or 0
        self._data: OrderedDict[tuple[str, str], CaseData] = OrderedDict()
        self._in_use: dict[str, int] = {}
        self._lock = threading.Lock()
        self._key_locks: dict[tuple[str, str], threading.Lock] = {}
        # A few standard-size cases are built on the GPU at once: each takes several copies of its
        # inputs there (float64 among them), and candidates need the rest of its memory.
        self._computing = threading.Semaphore(3)
        # cases kept on disk across evaluators and runs (reference_cache.py), once the evaluator
        # knows candidates cannot see them
        self.disk: ReferenceCache | None = None

    def get(self, task: Task, case: Case) -> CaseData:
        key = (task.id, case.key)
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
                return self._data[key]
            key_lock = self._key_locks.setdefault(key, threading.Lock())
        with key_lock:
            with self._lock:
                if key in self._data:
                    return self._data[key]
            data = self._build(task, case)
            with self._lock:
                self._data[key] = data
                self._evict()
            return data

    def _build(self, task: Task, case: Case) -> CaseData:
        """From the disk cache, or computed. Only cases of the task's own seeds (its cases' and its
        timing sets') go to the disk: a probe's seed is secret to this evaluator and never asked for
        by another (probes.py), so its standard-size sets, kept, would be gigabytes written for no
        one to read and would push out entries that others read."""
        path = self.directory / f"{task.id.replace('/', '__')}__{case.key}.pt"
        disk = self.disk
        kept = disk.load(task, case) if disk is not None else None
        if kept is not None:
            try:
                return self._from_disk(case, path, *kept)
            except OSError:  # the entry was trimmed away by another evaluator meanwhile
                pass
        data = self._compute(task, case, path)
        if disk is not None and case.seed in (*task.seeds, *task.timing_seeds) and disk.worth_keeping(
                data.build_seconds, data.inputs_file.stat().st_size + data.expected_bytes):
            disk.store(task, case, data.inputs_file, self._on_host(data))
        return data

    def _on_host(self, data: CaseData) -> Expected:
        """The expected outputs on the host; those kept on the GPU copied under the GPU lock (a transfer
        is GPU traffic, which must not overlap another candidate's timing)."""
        if not data.resident:
            return data.expected
        with gpu_lock.shared(self.lock_dir, "standard case kept"), own_stream(self.device):
            return data.expected_on(HOST)

    def _from_disk(self, case: Case, path: Path, inputs_file: Path, expected: Expected) -> CaseData:
        shutil.copyfile(inputs_file, path)  # a copy: candidates read the work folder's files
        if self.device.type == "cuda" and case.size == "standard" and self._keeps_on_device(expected):
            with gpu_lock.shared(self.lock_dir, "standard case built"), own_stream(self.device):
                expected = _moved(expected, self.device)
        return CaseData(wire.load(path), path, expected)

    def _compute(self, task: Task, case: Case, path: Path) -> CaseData:
        load_cuda_linalg(self.device)
        if self.device.type == "cuda" and case.size == "standard":
            staged, expected, seconds = self._build_on_gpu(task, case)
            wire.save(staged, path)
            del staged  # page-locked; the file's pages serve from here on
            return CaseData(wire.load(path), path, expected, seconds)
        began = time.perf_counter()
        inputs = task.make_inputs(case.seed, case.size, case.mode, case.dtype)
        seconds = time.perf_counter() - began
        # small and edge cases take little of the GPU's memory
        with gpu_lock.shared(self.lock_dir, "small case built", yielding=True) as hold:
            began = time.perf_counter()
            with own_stream(self.device):
                expected = expected_outputs(task, inputs, self.device)
            seconds += time.perf_counter() - began - hold.yielded
        wire.save(inputs, path)
        return CaseData(inputs, path, expected, seconds)

    def _build_on_gpu(self, task: Task, case: Case) -> tuple[Inputs, Expected, float]:
        """Inputs drawn on the GPU, staged in page-locked host memory; expected outputs kept on the
        GPU when large and within the budget, otherwise on the host; the seconds it took once the
        locks were held, less any wait after letting a timing go first (the stream's end waits for
        the GPU)."""
        with self._build_slot(), gpu_lock.shared(self.lock_dir, "standard case built", yielding=True) as hold:
            began = time.perf_counter()
            with own_stream(self.device):
                with drawing_on(self.device):
                    drawn = task.make_inputs(case.seed, case.size, case.mode, case.dtype)
                let_timings_go(self.device)
                expected = expected_outputs(task, drawn, self.device, keep_on=self.device)
                let_timings_go(self.device)  # before the inputs' copy to the host
                staged = on_pinned_host(drawn)
                del drawn
                if not self._keeps_on_device(expected):
                    expected = _moved(expected, HOST)
                memory_gate.trim_cached(self.device)  # the drawn inputs and the float64 temporaries
            seconds = time.perf_counter() - began - hold.yielded
        return staged, expected, seconds

    @contextlib.contextmanager
    def _build_slot(self) -> Iterator[None]:
        """One of the few standard-size builds on the GPU at once; the wait for it is counted."""
        asked = time.perf_counter()
        with self._computing:
            _thread.slot_waited = slot_waited_by_this_thread() + time.perf_counter() - asked
            yield

    def _keeps_on_device(self, expected: Expected) -> bool:
        size = element_bytes(*_expected_tensors(expected))
        if size < GPU_JUDGING_BYTES:
            return False
        with self._lock:
            return self._device_held() + size <= self.max_device_bytes

    def model_init_file(self, task: Task) -> Path:
        """KernelBench problems: Model's constructor arguments, for the candidate's ModelNew."""
        path = self.directory / f"{task.id.replace('/', '__')}__init.pt"
        if not path.exists():
            wire.save(task.model_init, path)
        return path

    @contextlib.contextmanager
    def using(self, task: Task) -> Iterator[None]:
        """While held, the task's cases stay cached (their input files are read by candidates)."""
        with self._lock:
            self._in_use[task.id] = self._in_use.get(task.id, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                self._in_use[task.id] -= 1
                self._evict()

    def nbytes(self) -> int:
        """Host bytes held now (inputs, and expected outputs kept on the host, of every cached case)."""
        with self._lock:
            return self._held()

    def device_bytes(self) -> int:
        """GPU bytes held now (expected outputs kept there)."""
        with self._lock:
            return self._device_held()

    def tasks(self) -> set[str]:
        """Tasks with cases in the cache."""
        with self._lock:
            return {task_id for task_id, _ in self._data}

    def _held(self) -> int:
        return sum(d.nbytes for d in self._data.values())

    def _device_held(self) -> int:
        return sum(d.device_bytes for d in self._data.values())

    def _evict(self) -> None:
        host, device = self._held(), self._device_held()
        for key in list(self._data):
            if host <= self.max_bytes and device <= self.max_device_bytes:
                return
            if self._in_use.get(key[0]):
                continue
            old = self._data.pop(key)
            self._key_locks.pop(key, None)
            host, device = host - old.nbytes, device - old.device_bytes
            old.inputs_file.unlink(missing_ok=True)
