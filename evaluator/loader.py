"""Find and load task modules: tasks/<Category>/<name>.py, each binding `TASK`."""

from __future__ import annotations

import difflib
import importlib.util
import os
import sys
from functools import lru_cache
from pathlib import Path

from evaluator.task import Task

SOLUTION_SUFFIX = "_solution"
TASKS_ENV = "AGENTLOOP_TASKS_DIR"
# One task per category: the evaluator's own GPU tests and its throughput benchmark use these.
FOUNDATION_TASKS = ("Activation/gelu", "Convolution/conv2d", "Fusion/fused_layer_norm_relu_linear", "Index/scatter",
                    "LinearAlgebra/cholesky", "Loss/cross_entropy", "Math/softmax", "MatrixMultiply/matmul",
                    "Normalization/batch_norm", "Optimizer/AdamW", "Pooling/avg_pool1d", "Quantization/matmul_w8a8",
                    "Random/rand", "Reduce/sum", "SpatialOps/interpolate")


class TaskLoadError(Exception):
    """A task module is missing, malformed, or does not declare a valid TASK."""


def tasks_root() -> Path:
    """The task suite: $AGENTLOOP_TASKS_DIR, the checkout's tasks/, or the copy inside the wheel."""
    if os.environ.get(TASKS_ENV):
        return Path(os.environ[TASKS_ENV])
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "tasks", here / "_tasks"):
        if candidate.is_dir():
            return candidate
    raise TaskLoadError(f"no task suite found next to {here}; set {TASKS_ENV}")


def import_path(path: Path, module_name: str):
    """The Python file at `path`, imported as `module_name`."""
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise TaskLoadError(f"{path}: not a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        sys.modules.pop(module_name, None)
        raise TaskLoadError(f"{path}: failed to import: {type(exc).__name__}: {exc}") from exc
    return module


def load_task(path: Path) -> Task:
    path = Path(path).resolve()
    category, name = path.parent.name, path.stem
    module = import_path(path, f"agentloop_tasks.{category}.{name}")
    task = getattr(module, "TASK", None)
    if not isinstance(task, Task):
        raise TaskLoadError(f"{path}: must bind TASK to an evaluator.task.Task")
    expected_id = f"{category}/{name}"
    if task.id != expected_id:
        raise TaskLoadError(f"{path}: TASK.id is {task.id!r} but the file says {expected_id!r}")
    if not task.entry.isidentifier():
        raise TaskLoadError(f"{path}: entry {task.entry!r} is not a Python identifier")
    if not task.dtypes:
        raise TaskLoadError(f"{path}: TASK.dtypes is empty")
    solution = path.with_name(name + SOLUTION_SUFFIX + ".py")
    return _with_paths(task, path, solution if solution.exists() else None)


def _with_paths(task: Task, source: Path, solution: Path | None) -> Task:
    object.__setattr__(task, "source_path", source)
    object.__setattr__(task, "solution_path", solution)
    return task


def task_files(root: Path) -> list[Path]:
    return sorted(p for p in root.glob("*/*.py")
                  if not p.stem.endswith(SOLUTION_SUFFIX) and not p.name.startswith("_"))


@lru_cache(maxsize=8)
def _load_suite_cached(root: str) -> dict[str, Task]:
    tasks = {}
    for path in task_files(Path(root)):
        task = load_task(path)
        tasks[task.id] = task
    return tasks


def load_suite(root: Path | None = None) -> dict[str, Task]:
    return dict(_load_suite_cached(str((root or tasks_root()).resolve())))


def find_task(name: str, suite: dict[str, Task]) -> Task:
    """A task by id ('Math/softmax') or by bare name ('softmax') when that is unambiguous."""
    if name in suite:
        return suite[name]
    by_name = [t for t in suite.values() if t.name == name]
    if len(by_name) == 1:
        return by_name[0]
    if len(by_name) > 1:
        raise TaskLoadError(f"{name!r} is ambiguous: " + ", ".join(t.id for t in by_name))
    close = difflib.get_close_matches(name, list(suite) + [t.name for t in suite.values()], n=3)
    hint = f"; did you mean {', '.join(close)}?" if close else "; `agentloop tasks list` shows them all"
    raise TaskLoadError(f"unknown task {name!r}{hint}")
