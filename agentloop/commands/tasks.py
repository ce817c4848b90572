"""`agentloop tasks list` and `agentloop tasks show`: the task suite, in summary and one task in full."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

from agentloop.commands.common import KernelBenchOption, out, task_named, task_suite

DIFFICULTIES = range(1, 6)
SHOWN_SIZES = ("small", "edge", "standard")


def dtype_name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


def task_record(task) -> dict:
    return {"id": task.id, "difficulty": task.difficulty, "contract": task.contract.kind,
            "dtypes": [dtype_name(d) for d in task.dtypes]}


def by_category(suite: dict) -> dict[str, list]:
    grouped: dict[str, list] = {}
    for t in suite.values():
        grouped.setdefault(t.category, []).append(t)
    return grouped


def category_table(suite: dict) -> Table:
    """One row per category: its task count, the count at each difficulty, and the task names."""
    table = Table(title=f"{len(suite)} tasks")
    for column in ("category", "tasks", "difficulty 1-5", "names"):
        table.add_column(column, overflow="fold")
    for category, items in sorted(by_category(suite).items()):
        counts = [sum(t.difficulty == d for t in items) for d in DIFFICULTIES]
        table.add_row(category, str(len(items)), " ".join(str(c) for c in counts), ", ".join(t.name for t in items))
    return table


def tasks_list(as_json: bool = typer.Option(False, "--json", help="Print the tasks as JSON."),
               kernelbench: Optional[Path] = KernelBenchOption) -> None:
    """Tasks with counts per category and difficulty."""
    suite = task_suite(kernelbench)
    if as_json:
        out.print_json(json.dumps([task_record(t) for t in suite.values()]))
        return
    out.print(category_table(suite))


def sizes_table(task) -> Table:
    """The arguments and cost of each input size, at seed 0 in the primary dtype."""
    table = Table(title="sizes (seed 0, standard mode, primary dtype)")
    for column in ("size", "arguments", "MFLOP", "MB moved"):
        table.add_column(column, overflow="fold")
    for size in SHOWN_SIZES:
        inputs = task.make_inputs(0, size, "standard", task.primary_dtype)
        cost = task.cost(inputs)
        table.add_row(size, describe_args(inputs), f"{cost.flops / 1e6:.1f}", f"{cost.bytes / 1e6:.1f}")
    return table


def tasks_show(name: str = typer.Argument(..., help="Task id or name."),
               kernelbench: Optional[Path] = KernelBenchOption) -> None:
    """Description, signature, sizes, contract and cost model of one task."""
    task = task_named(name, kernelbench)
    out.print(f"[bold]{task.id}[/bold]  difficulty {task.difficulty}  contract {task.contract.kind}")
    out.print(f"signature: {task.signature}   (entry `{task.entry}`)")
    out.print(task.description)
    if task.kernelbenchx_difference:
        out.print(f"differs from KernelBench-X's definition: {task.kernelbenchx_difference}")
    out.print("dtypes: " + ", ".join(dtype_name(d) for d in task.dtypes))
    if task.mutates:
        out.print(f"mutates arguments: {list(task.mutates)}")
    for allowance in task.allowed:
        out.print(f"may call {allowance.api}: {allowance.why}")
    out.print(sizes_table(task))
    out.print(f"reference solution: {task.solution_path or 'none'}")


def describe_args(inputs) -> str:
    import torch

    def one(v):
        if isinstance(v, torch.Tensor):
            return f"{tuple(v.shape)} {dtype_name(v.dtype)}"
        return repr(v)
    return ", ".join([one(v) for v in inputs.args] + [f"{k}={one(v)}" for k, v in inputs.kwargs.items()])
