"""The task suite: names and signatures match KernelBench-X, each task is well-formed, and every
reference solution scores CORRECT through the evaluator (Triton's interpreter on the CPU). The
KernelBench-X facts come from data/ (see data/make_kernelbenchx_data.py)."""

import csv
import re
from pathlib import Path

import pytest
import torch
from torch._subclasses.fake_tensor import (DataDependentOutputException, DynamicOutputShapeException, FakeTensorMode,
                                           UnsupportedOperatorException)

from evaluator.contracts import dtype_name, flatten
from evaluator.loader import load_suite
from evaluator.task import DEVICE, SIZES

from tests.tasks.data.make_kernelbenchx_data import shingles

DATA = Path(__file__).resolve().parent / "data"
SUITE = load_suite()
TASK_IDS = sorted(SUITE)


def kernelbenchx_rows() -> dict[str, dict]:
    with open(DATA / "kernelbenchx_tasks.tsv") as f:
        return {f"{r['category']}/{r['task']}": r for r in csv.DictReader(f, delimiter="\t")}


KERNELBENCHX_SHINGLES = set((DATA / "kernelbenchx_shingles.txt").read_text().split())


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_name_category_difficulty_and_signature_match_kernelbenchx(task_id):
    row = kernelbenchx_rows().get(task_id)
    assert row is not None, f"{task_id} is not a KernelBench-X task"
    task = SUITE[task_id]
    assert task.difficulty == int(row["difficulty"])
    assert (task.kernelbenchx_signature or task.signature) == row["signature"].removeprefix("def ").strip()
    assert task.entry == re.match(r"(?:[\w.]*\.)?(\w+)\(", task.signature).group(1)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_description_is_our_own_words(task_id):
    words = SUITE[task_id].description.split()
    copied = [" ".join(words[i:i + 8]) for i in range(len(words) - 7)
              if shingles(" ".join(words[i:i + 8])) <= KERNELBENCHX_SHINGLES]
    assert not copied, f"description copies KernelBench-X text: {copied[0]!r}"


def test_copied_wording_is_found():
    """The shingle check finds a run of 8 words taken from a KernelBench-X description (the check
    above would pass vacuously if the hashes were not KernelBench-X's)."""
    assert len(KERNELBENCHX_SHINGLES) > 10_000
    assert shingles("scaled by the multiplier `alpha`, to the input tensor") & KERNELBENCHX_SHINGLES


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_is_well_formed(task_id):
    task = SUITE[task_id]
    assert task.solution_path is not None, "every task ships a reference Triton solution"
    assert len(task.description.split()) >= 15
    for size in ("small", "edge"):
        inputs = task.make_inputs(task.seeds[0], size, "standard", task.primary_dtype)
        again = task.make_inputs(task.seeds[0], size, "standard", task.primary_dtype)
        for a, b in zip(flatten(list(inputs.args)), flatten(list(again.args))):
            if isinstance(a, torch.Tensor):
                assert torch.equal(a, b), "inputs are a deterministic function of the seed"
        cost = task.cost(inputs)
        assert cost.bytes > 0 and cost.flops >= 0


def _configuration(inputs):
    def shape(v):
        if isinstance(v, torch.Tensor):
            return ("tensor", tuple(v.shape), v.dtype)
        if isinstance(v, (list, tuple)):
            return type(v)(shape(x) for x in v)
        if isinstance(v, dict):
            return {k: shape(x) for k, x in v.items()}
        return v
    return shape(list(inputs.args)), shape(inputs.kwargs)


def standard_timing_sets(task):
    """The task's timing sets at standard size as fake tensors (shapes and dtypes without data: the
    GPU-sized values would take seconds a task to draw on the CPU); drawn for real where making
    them reads values (a fake tensor refuses to answer `.item()` and the like)."""
    def made():
        return [task.make_inputs(seed, "standard", "standard", task.primary_dtype) for seed in task.timing_seeds]
    try:
        with FakeTensorMode(allow_non_fake_inputs=True):
            return made()
    except (DataDependentOutputException, DynamicOutputShapeException, UnsupportedOperatorException):
        return made()


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_standard_inputs_fit_and_timing_sets_share_one_configuration(task_id):
    task = SUITE[task_id]
    sets = standard_timing_sets(task)
    assert len({repr(_configuration(s)) for s in sets}) == 1, "timing seeds must differ only in values"
    total = sum(t.numel() * t.element_size() for t in flatten(list(sets[0].args) + list(sets[0].kwargs.values()))
                if isinstance(t, torch.Tensor))
    assert total <= 8 << 30


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_solution_is_correct_on_the_interpreter(task_id, cpu_evaluator):
    task = SUITE[task_id]
    result = cpu_evaluator.evaluate(task, task.solution_path.read_text())
    assert result.verdict.value == "CORRECT", f"{result.reason}\n{result.traceback or ''}"
    # dtypes this Triton's interpreter computes wrongly are not run on the CPU (interpreter_probe.py)
    judged = [dtype_name(d) for d in task.dtypes if dtype_name(d) not in cpu_evaluator.unjudgeable]
    judged = judged or [dtype_name(d) for d in task.dtypes]
    assert all(c.passed for c in result.cases) and len(result.cases) >= 8 * len(judged)
    assert {c.dtype for c in result.cases} == set(judged)
    assert result.performance is None, "no timing is invented on the CPU"


def test_every_contract_kind_and_in_place_semantics_are_covered():
    kinds = {t.contract.kind for t in SUITE.values()}
    assert {"tolerance", "exact", "approximate", "statistical"} <= kinds  # and "property" for decompositions
    assert any(t.mutates for t in SUITE.values())
    assert all(size in SIZES for size in ("small", "standard", "edge")) and DEVICE is not None
