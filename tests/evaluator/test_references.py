"""The reference cache: bounded in bytes (inputs and expected outputs), least recently used first,
never evicting a task that is being evaluated, and its input files go with its entries."""

import torch

from evaluator.cases import plan
from evaluator.references import ReferenceStore


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
