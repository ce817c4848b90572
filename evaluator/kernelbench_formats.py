"""The KernelBench family's formats.

- KernelBench-X candidate files: the candidate's code, then a line of '#' characters, then the
  benchmark's own test harness (a `test_<name>()` function called at module level). The harness
  is not the candidate's code; it is dropped before evaluation, so such files run unchanged.
- KernelBench problems: a module with `class Model(nn.Module)`, `get_inputs()` and
  `get_init_inputs()`, answered by a candidate defining `class ModelNew(nn.Module)` with the same
  constructor. Both models are built under the same seed, so parameters declared in the same
  order start out equal, as KernelBench's own harness arranges. A problem file's `.cuda()` and
  `device="cuda"` mean the evaluator's device (inputs are built on the host and moved there). Its
  standard size is its own; small and edge inputs shrink the integer size constants that
  `get_inputs` reads and `get_init_inputs` does not (the model's shape stays), where the reference
  runs on them; otherwise every size is the problem's own, and the task's description says so.
"""

from __future__ import annotations

import importlib.util
import re
import sys
import types
from pathlib import Path

import torch
from torch.overrides import TorchFunctionMode

from evaluator.contracts import Tolerance
from evaluator.task import Allowance, Cost, Inputs, Task, generator, with_outliers

HARNESS_SEPARATOR = re.compile(r"^#{40,}\s*$", re.MULTILINE)
HARNESS_CALL = re.compile(r"^\w+\s*=\s*test_\w+\(\)\s*$", re.MULTILINE)
MODEL_SEED = 42
KERNELBENCH_CATEGORY = "KernelBench"
PROBLEM_PARTS = ("Model", "get_inputs", "get_init_inputs")
# Small and edge inputs: each size constant above the limit becomes this (one value per distinct
# original, so constants that were equal stay equal); smaller ones stay as they are.
SHRUNK = {"small": 16, "edge": 37}


class NotAProblem(ValueError):
    """A Python file in a problems folder that defines none of Model, get_inputs, get_init_inputs."""


class OnDevice(TorchFunctionMode):
    """Inside, `.cuda()` and any CUDA device named to a tensor factory or `.to` mean `device`."""

    def __init__(self, device: torch.device):
        super().__init__()
        self.device = torch.device(device)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if func is torch.Tensor.cuda:
            return args[0].to(self.device)
        if _is_cuda(kwargs.get("device")):
            kwargs["device"] = self.device
        args = tuple(self.device if _is_cuda(a) else a for a in args)
        return func(*args, **kwargs)


def _is_cuda(value) -> bool:
    return (isinstance(value, str) and value.startswith("cuda")) or \
        (isinstance(value, torch.device) and value.type == "cuda")


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
    try:
        with OnDevice(torch.device("cpu")):
            spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - the problem file's own error, said in a sentence
        raise ValueError(f"{path}: the problem file failed to import: {type(exc).__name__}: {exc}") from None
    present = [attribute for attribute in PROBLEM_PARTS if hasattr(module, attribute)]
    if not present:
        raise NotAProblem(f"{path}: not a KernelBench problem")
    for attribute in PROBLEM_PARTS:
        if attribute not in present:
            raise ValueError(f"{path}: a KernelBench problem defines Model, get_inputs and get_init_inputs; "
                             f"{attribute} is missing")
    return module


def _called(path: Path, what: str, fn, *args):
    """A problem function's result, built on the host; its error as a sentence naming the file."""
    try:
        with OnDevice(torch.device("cpu")):
            return fn(*args)
    except Exception as exc:  # noqa: BLE001
        raise ValueError(f"{path}: {what} failed: {type(exc).__name__}: {exc}") from None


def size_constants(module) -> dict[str, int]:
    """The module's integer constants that `get_inputs` reads and `get_init_inputs` does not."""
    read = set(module.get_inputs.__code__.co_names) - set(module.get_init_inputs.__code__.co_names)
    return {name: value for name, value in vars(module).items()
            if name in read and isinstance(value, int) and not isinstance(value, bool)}


def shrunk_inputs(module, size: str):
    """`get_inputs` with its size constants shrunk for `size`, or None where none is above the limit."""
    limit = SHRUNK[size]
    constants = size_constants(module)
    big = sorted({v for v in constants.values() if v > limit}, reverse=True)
    if not big:
        return None
    value_for = {v: max(1, limit - k) for k, v in enumerate(big)}  # distinct originals stay distinct
    changed = {name: value_for[v] for name, v in constants.items() if v in value_for}
    fn = module.get_inputs
    return types.FunctionType(fn.__code__, {**vars(module), **changed}, fn.__name__, fn.__defaults__, fn.__closure__)


def _cast(value, dtype: torch.dtype, mode: str, gen: torch.Generator):
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        value = with_outliers(value, gen) if mode == "outlier" else value
        return value.to(dtype)
    return value


def load_problem(path: Path) -> Task:
    """A KernelBench problem as a task `KernelBench/<file stem>`."""
    path = Path(path).resolve()
    module = _import(path)
    init = tuple(_called(path, "get_init_inputs()", module.get_init_inputs))

    def reference(*args):
        dtype = next((a.dtype for a in args if isinstance(a, torch.Tensor) and a.is_floating_point()), torch.float32)
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), torch.device("cpu"))
        torch.manual_seed(MODEL_SEED)
        with OnDevice(device):
            model = module.Model(*init).to(device=device, dtype=dtype)
            with torch.no_grad():
                return model(*args)

    checked: dict[str, object] = {}  # size -> its shrunk get_inputs, or None: checked on first use

    def inputs_for(size: str):
        if size not in SHRUNK:
            return module.get_inputs
        if size not in checked:
            checked[size] = _checked_shrink(module, size, reference)
        return checked[size] or module.get_inputs

    def make_inputs(seed, size, mode, dtype):
        torch.manual_seed(seed)
        args = list(_called(path, "get_inputs()", inputs_for(size)))
        gen = generator(seed)
        return Inputs(tuple(_cast(a, dtype, mode, gen) for a in args))

    def cost(inputs):
        tensors = [a for a in inputs.args if isinstance(a, torch.Tensor)]
        return Cost(flops=0.0, bytes=float(sum(t.numel() * t.element_size() for t in tensors)))

    task = Task(id=f"{KERNELBENCH_CATEGORY}/{path.stem}", difficulty=3, entry="ModelNew.forward",
                signature="class ModelNew(nn.Module): forward(*get_inputs())",
                description=_description(module), reference=reference, make_inputs=make_inputs,
                cost=cost, dtypes=(torch.float32,), contract=Tolerance(tf32=True), allowed=NN_MODULES,
                model_init=Inputs(init), timing_seeds=(0, 2))
    object.__setattr__(task, "source_path", path)
    return task


def _checked_shrink(module, size: str, reference):
    """The shrunk `get_inputs` for `size` if the reference runs on its inputs, else None."""
    shrunk = shrunk_inputs(module, size)
    if shrunk is None:
        return None
    try:
        torch.manual_seed(0)
        with OnDevice(torch.device("cpu")):
            reference(*shrunk())
    except Exception:  # noqa: BLE001 - sizes that only work together: the problem's own are used
        return None
    return shrunk


def _description(module) -> str:
    doc = (module.Model.__doc__ or "").strip()
    shrinking = any(shrunk_inputs(module, size) for size in SHRUNK)
    sizes = (f"Small and edge inputs shrink {', '.join(sorted(size_constants(module)))} where the reference runs "
             "on them; the standard size is the problem's own." if shrinking
             else "Every size is the problem's own: only its own inputs are checked.")
    return (f"Write `class ModelNew(nn.Module)` with the same constructor arguments as this KernelBench "
            f"problem's Model and a forward that returns what Model.forward returns, computed by Triton "
            f"kernels. {doc} {sizes}").strip()


def load_folder(directory: Path, skipped: list[Path] | None = None) -> dict[str, Task]:
    """Every problem of a folder; files that are no problem at all go to `skipped` (or stderr, once)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ValueError(f"{directory}: not a folder of KernelBench problems")
    tasks, passed_over = {}, []
    for path in sorted(directory.glob("*.py")):
        try:
            task = load_problem(path)
        except NotAProblem:
            passed_over.append(path)
            continue
        tasks[task.id] = task
    if skipped is not None:
        skipped.extend(passed_over)
    elif passed_over:
        print(f"{directory}: skipped {len(passed_over)} files that define none of Model, get_inputs, "
              f"get_init_inputs: {', '.join(p.name for p in passed_over)}", file=sys.stderr)
    if not tasks:
        raise ValueError(f"{directory}: holds no KernelBench problem (*.py with Model, get_inputs, get_init_inputs)")
    return tasks
