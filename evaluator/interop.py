"""The KernelBench family's formats.

- KernelBench-X candidate files: the candidate's code, then a line of '#' characters, then the
  benchmark's own test harness (a `test_<name>()` function called at module level). The harness
  is not the candidate's code; it is dropped before evaluation, so such files run unchanged.
- KernelBench problems: a module with `class Model(nn.Module)`, `get_inputs()` and
  `get_init_inputs()`, answered by a candidate defining `class ModelNew(nn.Module)` with the same
  constructor. Both models are built under the same seed, so parameters declared in the same
  order start out equal, as KernelBench's own harness arranges.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Allowance, Cost, Inputs, Task, generator, with_outliers

HARNESS_SEPARATOR = re.compile(r"^#{40,}\s*$", re.MULTILINE)
HARNESS_CALL = re.compile(r"^\w+\s*=\s*test_\w+\(\)\s*$", re.MULTILINE)
MODEL_SEED = 42
KERNELBENCH_CATEGORY = "KernelBench"


def strip_kernelbenchx_harness(source: str) -> str:
    """The code before KernelBench-X's separator when what follows is its test harness."""
    match = HARNESS_SEPARATOR.search(source)
    if match and "def test_" in source[match.end():] and HARNESS_CALL.search(source[match.end():]):
        return source[:match.start()].rstrip() + "\n"
    return source


def _nn_module_names() -> tuple[str, ...]:
    return tuple(f"torch.nn.{name}" for name in dir(torch.nn)
                 if isinstance(getattr(torch.nn, name), type) and issubclass(getattr(torch.nn, name), torch.nn.Module))


NN_MODULES = tuple(Allowance(api=name, aten=(), why="ModelNew declares the same parameters as Model")
                   for name in _nn_module_names())


def _import(path: Path):
    name = f"agentloop_kernelbench.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    for attribute in ("Model", "get_inputs", "get_init_inputs"):
        if not hasattr(module, attribute):
            raise ValueError(f"{path}: a KernelBench problem defines Model, get_inputs and get_init_inputs; "
                             f"{attribute} is missing")
    return module


def _cast(value, dtype: torch.dtype, mode: str, gen: torch.Generator):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        value = with_outliers(value, gen) if mode == "outlier" else value
        return value.to(dtype)
    return value


def load_problem(path: Path) -> Task:
    """A KernelBench problem as a task `KernelBench/<file stem>` (every size is the problem's own)."""
    path = Path(path).resolve()
    module = _import(path)
    init = tuple(module.get_init_inputs())

    def reference(*args):
        dtype = next((a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()), torch.float32)
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("cpu"))
        torch.manual_seed(MODEL_SEED)
        model = module.Model(*init).to(device=device, dtype=dtype)
        with torch.no_grad():
            return model(*args)

    def make_inputs(seed, size, mode, dtype):
        torch.manual_seed(seed)
        args = list(module.get_inputs())
        gen = generator(seed)
        return Inputs(tuple(_cast(a, dtype, mode, gen) for a in args))

    def cost(inputs):
        tensors = [a for a in inputs.args if isinstance(a, torch.Tensor)]
        return Cost(flops=0.0, bytes=float(sum(t.numel() * t.element_size() for t in tensors)))

    doc = (module.Model.__doc__ or "").strip()
    description = (f"Write `class ModelNew(nn.Module)` with the same constructor arguments as this KernelBench "
                   f"problem's Model and a forward that returns what Model.forward returns, computed by Triton "
                   f"kernels. {doc}").strip()
    task = Task(id=f"{KERNELBENCH_CATEGORY}/{path.stem}", difficulty=3, entry="ModelNew.forward",
                signature="class ModelNew(nn.Module): forward(*get_inputs())", description=description,
                reference=reference, make_inputs=make_inputs, cost=cost, dtypes=(torch.float32,),
                contract=Tolerance(tf32=True), allowed=NN_MODULES, model_init=Inputs(init),
                timing_seeds=(0, 2))
    object.__setattr__(task, "source_path", path)
    return task


def load_folder(directory: Path) -> dict[str, Task]:
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"{directory}: not a folder of KernelBench problems")
    tasks = {}
    for path in sorted(directory.glob("*.py")):
        task = load_problem(path)
        tasks[task.id] = task
    if not tasks:
        raise ValueError(f"{directory}: holds no KernelBench problem (*.py with Model, get_inputs, get_init_inputs)")
    return tasks
