"""Every task is called as KernelBench-X's own tests call its function: a candidate defined with the
parameters of KernelBench-X's reference function (kernelbenchx_definitions.tsv, see
data/make_kernelbenchx_data.py) receives each case's arguments in the places that mean the same
thing, or the task says how and why it differs."""

import ast
import csv
import inspect
from pathlib import Path

import pytest
import torch

from evaluator.contracts import flatten
from evaluator.loader import load_suite
from evaluator.task import clone_inputs, judged_outputs, on_device

from tests.tasks.data.make_kernelbenchx_data import normalized

DATA = Path(__file__).resolve().parent / "data"
SUITE = load_suite()
TASK_IDS = sorted(SUITE)
CPU = torch.device("cpu")


def definitions() -> dict[str, str]:
    with open(DATA / "kernelbenchx_definitions.tsv") as f:
        return {f"{r['category']}/{r['task']}": r["definition"] for r in csv.DictReader(f, delimiter="\t")}


DEFINITIONS = definitions()


def parsed(signature: str) -> str:
    """A signature text as the definitions file writes it (no annotations, no module prefix)."""
    head, _, params = signature.split(" -> ")[0].strip().partition("(")
    return normalized(ast.parse(f"def {head.rsplit('.', 1)[-1]}({params}: pass").body[0])


def kernelbenchx_candidate(definition: str):
    """A function with exactly KernelBench-X's parameters, returning what each one received."""
    name, _, params = definition.partition("(")
    namespace = {"torch": torch}
    exec(f"def {name}({params}:\n    return dict(locals())", namespace)  # noqa: S102 - our own test text
    return namespace[name]


def by_name(function, received: dict):
    """Calls `function` with each received value under its KernelBench-X name."""
    args, kwargs = [], {}
    for param in inspect.signature(function).parameters.values():
        if param.kind is param.VAR_POSITIONAL:
            args.extend(received.pop(param.name, ()))
    return function(*args, **kwargs, **received)


def cases(task):
    for dtype in task.dtypes:
        for size in ("small", "edge"):
            for mode in ("standard", "outlier"):
                yield size, mode, dtype, on_device(task.make_inputs(task.seeds[0], size, mode, dtype), CPU)


def judged(task, inputs, call):
    torch.manual_seed(0)
    work = clone_inputs(inputs)
    return flatten(judged_outputs(task.mutates, call(work), work))


def same(a, b) -> bool:
    return len(a) == len(b) and all(
        torch.equal(x, y) or (x.is_floating_point() and torch.equal(x.isnan(), y.isnan())
                              and torch.equal(x.nan_to_num(), y.nan_to_num()))
        if isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) else x == y for x, y in zip(a, b))


def test_every_task_has_kernelbenchx_definition():
    assert set(DEFINITIONS) == set(SUITE)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_signature_is_kernelbenchx_definition_or_says_why_not(task_id):
    task = SUITE[task_id]
    if task.kernelbenchx_difference:
        assert parsed(task.signature) != DEFINITIONS[task_id], "the difference is gone: drop the note"
    else:
        assert parsed(task.signature) == DEFINITIONS[task_id]
    assert task.entry == DEFINITIONS[task_id].partition("(")[0], "the entry keeps KernelBench-X's function name"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_a_candidate_in_kernelbenchx_convention_is_called_correctly(task_id):
    """Each case's arguments bind to KernelBench-X's parameters, and handed to the reference by those
    names they give what the evaluator's call gives: every value went where it means the same."""
    task = SUITE[task_id]
    candidate = kernelbenchx_candidate(DEFINITIONS[task_id])
    for size, mode, dtype, inputs in cases(task):
        where = f"{size} {mode} {dtype}"
        if task.kernelbenchx_difference:
            with pytest.raises(TypeError):
                candidate(*inputs.args, **inputs.kwargs)
            return
        received = candidate(*inputs.args, **inputs.kwargs)
        expected = judged(task, inputs, lambda work: task.reference(*work.args, **work.kwargs))
        named = judged(task, inputs, lambda work: by_name(task.reference, candidate(*work.args, **work.kwargs)))
        assert set(received) == set(inspect.signature(candidate).parameters), where
        assert same(expected, named), f"{where}: arguments land in other places than KernelBench-X's"


def test_a_swapped_convention_is_caught():
    """The check above fails for a task whose arguments arrive in another order than its definition's."""
    task = SUITE["Index/index_fill_"]
    swapped = kernelbenchx_candidate("index_fill_(x, dim, index, value)")
    inputs = on_device(task.make_inputs(0, "small", "standard", torch.float32), CPU)
    with pytest.raises((TypeError, AttributeError)):
        judged(task, inputs, lambda work: by_name(task.reference, swapped(*work.args, **work.kwargs)))
