"""The reference cache: bounded in bytes (inputs and expected outputs), least recently used first,
never evicting a task that is being evaluated, and its input files go with its entries."""

import multiprocessing

import pytest
import torch

from evaluator import gpu_lock
from evaluator.cases import plan
from evaluator.contracts import Expected
from evaluator.references import CaseData, ReferenceStore
from evaluator.task import Inputs


def test_the_cache_stays_within_its_bound_and_keeps_tasks_in_use(tmp_path, suite):
    gelu, softmax, total = suite["Activation/gelu"], suite["Math/softmax"], suite["Reduce/sum"]
    store = ReferenceStore(tmp_path, torch.device("cpu"), max_bytes=1)  # smaller than any case
    with store.using(gelu):
        kept = [store.get(gelu, case) for case in plan(gelu, on_gpu=False)[:3]]
        for task in (softmax, total):
            store.get(task, plan(task, on_gpu=False)[0])
        assert store.tasks() == {"Activation/gelu"}, "other tasks' cases were evicted; gelu's, in use, stayed"
        assert all(data.inputs_file.exists() for data in kept)
        assert len(list(tmp_path.glob("*.pt"))) == 3, "evicted cases took their input files with them"
    assert not store.tasks() and not list(tmp_path.glob("*.pt")), "released, gelu's cases go too"


def test_the_default_bound_counts_inputs(tmp_path, suite):
    task = suite["Math/softmax"]
    store = ReferenceStore(tmp_path, torch.device("cpu"))
    data = store.get(task, plan(task, on_gpu=False)[0])
    inputs = data.inputs.args[0]
    assert data.nbytes >= inputs.numel() * inputs.element_size() + data.expected.lo.numel() * 4
    assert store.max_bytes == 256 << 20


def test_expected_outputs_kept_on_the_gpu_have_a_bound_of_their_own(tmp_path, suite, monkeypatch):
    """Meta tensors stand in for expected outputs on a GPU: 1 MiB each, against a 3 MiB bound."""
    gelu, softmax = suite["Activation/gelu"], suite["Math/softmax"]
    store = ReferenceStore(tmp_path, torch.device("cpu"), max_device_bytes=3 << 20)

    def build(task, case):
        path = tmp_path / f"{task.id.replace('/', '__')}__{case.key}.pt"
        path.write_bytes(b"inputs")
        return CaseData(Inputs((torch.zeros(256),), {}), path, Expected(lo=torch.empty(1 << 18, device="meta")))

    monkeypatch.setattr(store, "_build", build)
    with store.using(gelu):
        for case in plan(gelu, on_gpu=False)[:4]:
            assert store.get(gelu, case).resident
        assert store.device_bytes() == 4 << 20, "a task being evaluated keeps its cases beyond the bound"
        store.get(softmax, plan(softmax, on_gpu=False)[0])
        assert store.tasks() == {"Activation/gelu"}, "the case of a task not in use went first"
    assert store.device_bytes() == 3 << 20, "released, the oldest cases go down to the bound"
    assert store.nbytes() == 3 * 256 * 4, "host bytes count the inputs alone"
    assert len(list(tmp_path.glob("*.pt"))) == 3


def _time_when_asked(lock_dir, asked, got):
    asked.wait(60)
    with gpu_lock.exclusive(lock_dir, "timing"):
        got.set()


class WaitingTiming:
    """A timing in another process that asks for the GPU lock exclusively once told to."""

    def __init__(self, lock_dir):
        self.lock_dir = lock_dir
        self.asked, self.got = multiprocessing.Event(), multiprocessing.Event()
        self.process = multiprocessing.Process(target=_time_when_asked, args=(lock_dir, self.asked, self.got))
        self.process.start()

    def ask(self):
        """Tells it to ask; returns once it waits for the lock (or has had it)."""
        self.asked.set()
        for _ in range(6000):
            if gpu_lock._writer_waiting(self.lock_dir):
                break
            self.got.wait(0.01)

    def state(self) -> str:
        return "timing done" if self.got.is_set() else "timing waiting"


def test_a_timing_waiting_on_a_case_build_goes_between_its_two_reference_runs(tmp_path, suite, monkeypatch):
    """A case whose expected outputs are computed twice (in the task's precision and in float64)
    lets a timing that asked for the GPU during the first run go before the second, instead of
    waiting for both (the GPU lock is real; the device is the CPU)."""
    from evaluator import references
    task = suite["Activation/gelu"]
    assert task.contract.needs_hi
    lock_dir = tmp_path / "lock"
    store = ReferenceStore(tmp_path / "work", torch.device("cpu"), lock_dir=lock_dir)
    timing = WaitingTiming(lock_dir)
    seen, real = [], references.run_reference

    def run_reference(task, inputs, device):
        if not seen:  # the first run: a timing asks for the GPU meanwhile and waits for this hold
            timing.ask()
        seen.append(timing.state())
        return real(task, inputs, device)

    monkeypatch.setattr(references, "run_reference", run_reference)
    (tmp_path / "work").mkdir()
    data = store.get(task, plan(task, on_gpu=False)[0])
    timing.process.join(60)
    assert seen == ["timing waiting", "timing done"]
    assert data.expected.hi is not None


@pytest.mark.gpu
def test_on_a_gpu_a_timing_waiting_on_a_standard_case_goes_before_its_reference_runs(tmp_path, suite):
    """A standard-size case built on the GPU lets a timing that asked for the GPU while its inputs
    were drawn go before its first reference run, not after the whole build."""
    import dataclasses

    from evaluator import references
    gelu = suite["Activation/gelu"]
    lock_dir = tmp_path / "lock"
    store = ReferenceStore(tmp_path / "work", torch.device("cuda"), lock_dir=lock_dir)
    timing = WaitingTiming(lock_dir)
    seen, real = [], references.run_reference

    def make_inputs(*args):
        timing.ask()
        return gelu.make_inputs(*args)

    def run_reference(task, inputs, device):
        seen.append(timing.state())
        return real(task, inputs, device)

    task = dataclasses.replace(gelu, make_inputs=make_inputs)
    standard = next(case for case in plan(task, on_gpu=True) if case.size == "standard")
    (tmp_path / "work").mkdir()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(references, "run_reference", run_reference)
        store.get(task, standard)
    timing.process.join(60)
    assert seen[0] == "timing done", seen
