"""What the commands share: the two consoles, the error exit, common options and the task suite."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from traces.untrusted_text import plain

EXIT_INTERRUPTED = 130  # as a shell reports a command stopped by Ctrl-C
OFF_TERMINAL_WIDTH = 200  # wide enough for every table; longer cells fold, whole


def for_stream(stderr: bool) -> Console:
    """A console for stdout or stderr: the terminal's width on a terminal (or COLUMNS); off one (a
    log, a pipe), wide enough that tables are not squeezed, and messages are not wrapped."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty() or os.environ.get("COLUMNS"):
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=OFF_TERMINAL_WIDTH, soft_wrap=True)


console = for_stream(stderr=True)
out = for_stream(stderr=False)

DeviceOption = typer.Option("auto", "--device", help="auto (every GPU when present), cpu, cuda[:N], or several GPUs (cuda:0,1).")
WorkersOption = typer.Option(0, "--workers", help="Candidates evaluated at once on each device (0: one per CPU core on the CPU; on GPUs, one per 2 cores shared among them, at most 8 each).")
KernelBenchOption = typer.Option(None, "--kernelbench", help="Also load KernelBench problems (Model, get_inputs, "
                                 "get_init_inputs) from this folder, as tasks KernelBench/<file>.")


def fail(message: str, code: int = 2) -> None:
    console.print(f"[red]error:[/red] {escape(plain(message))}")
    raise typer.Exit(code)


def task_suite(kernelbench: Path | None = None):
    """The task suite, with the KernelBench problems of `kernelbench` where given."""
    from evaluator.kernelbench_formats import load_folder
    from evaluator.loader import TaskLoadError, load_suite
    try:
        suite = load_suite()
        if kernelbench is not None:
            suite.update(load_folder(kernelbench))
        return suite
    except (TaskLoadError, ValueError) as exc:
        fail(str(exc))


def task_named(name: str, kernelbench: Path | None = None):
    from evaluator.loader import TaskLoadError, find_task
    try:
        return find_task(name, task_suite(kernelbench))
    except TaskLoadError as exc:
        fail(str(exc))
