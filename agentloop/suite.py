"""Score many (task, candidate) pairs concurrently, with a progress bar and a summary table."""

from __future__ import annotations

import asyncio
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from traces.untrusted_text import plain

if TYPE_CHECKING:  # the command line imports this module for --help, which must not wait for torch
    from agentloop.evaluation import Evaluates
    from evaluator.result import EvalResult
    from evaluator.task import Task


@dataclass
class Submission:
    task: Task
    source: str
    origin: Path


@dataclass
class Scored:
    results: list[EvalResult]  # those that finished, in the submissions' order
    interrupted: bool = False  # Ctrl-C or SIGTERM came before every submission was scored
    unscored: list[tuple[str, str]] = field(default_factory=list)  # (task id, the evaluator's error)


def score(evaluations: Evaluates, submissions: list[Submission], console: Console) -> Scored:
    """Every submission through `evaluations` (every visible GPU, each with its own workers), started
    in `interleaved` order; the results come back in the submissions' order. An
    interrupt (SIGINT, SIGTERM) stops the scoring and keeps what had finished; an evaluation that
    raised (the evaluator's error, not a verdict) leaves its submission unscored and the rest go on."""
    return asyncio.run(_score(evaluations, submissions, console))


async def _score(evaluations: Evaluates, submissions: list[Submission], console: Console) -> Scored:
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    finished: dict[int, EvalResult] = {}
    unscored: dict[int, tuple[str, str]] = {}
    loop, scoring = asyncio.get_running_loop(), asyncio.current_task()
    loop.add_signal_handler(signal.SIGTERM, scoring.cancel)  # asyncio.run turns Ctrl-C into the same
    interrupted = False
    try:
        with Progress(*columns, console=console, transient=not console.is_terminal) as progress:
            bar = progress.add_task("scoring", total=len(submissions))

            async def one(index: int, submission: Submission) -> None:
                try:
                    result = await evaluations.evaluate(submission.task, submission.source)
                except Exception as exc:  # noqa: BLE001 - the evaluator's error: this one alone goes unscored
                    unscored[index] = (submission.task.id, _error_text(exc))
                    said = f"{submission.task.id}: not scored"
                else:
                    finished[index] = result
                    said = f"{result.task_id}: {result.verdict.value}"
                progress.update(bar, advance=1, description=said)
                if not console.is_terminal:  # no live bar there: a line per candidate scored
                    done = len(finished) + len(unscored)
                    console.print(f"{said} ({done} of {len(submissions)})", highlight=False)

            await asyncio.gather(*(one(i, submissions[i]) for i in interleaved(submissions)))
    except asyncio.CancelledError:
        interrupted = True
    finally:
        loop.remove_signal_handler(signal.SIGTERM)
    return Scored([finished[i] for i in sorted(finished)], interrupted, [unscored[i] for i in sorted(unscored)])


def interleaved(submissions: list[Submission]) -> list[int]:
    """The order in which submissions start: one of each category in turn (each category's in their
    own order). A suite sorted by name puts tasks of like cost together, such as seventeen linear-algebra
    tasks whose float64 references and eager baselines each take seconds of GPU time; taken in turn,
    they run beside lighter ones instead of all at once."""
    queues: dict[str, list[int]] = {}
    for index, submission in enumerate(submissions):
        queues.setdefault(submission.task.category, []).append(index)
    order: list[int] = []
    while queues:
        for category in list(queues):
            order.append(queues[category].pop(0))
            if not queues[category]:
                del queues[category]
    return order


def _error_text(exc: Exception) -> str:
    """The error's first line and, where it carries a traceback (an evaluator process's), its last:
    what was raised in the end."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = lines[0][:300] if lines else ""
    if len(lines) > 1:
        text += " ... " + lines[-1][:300]
    return f"{type(exc).__name__}: {text}"


REASON_CHARS = 160  # on a terminal; the whole reason otherwise


def _shown(reason: str, full: bool) -> str:
    return reason if full or len(reason) <= REASON_CHARS else reason[:REASON_CHARS - 1] + "…"


TIMING_COLUMNS = ["time (ms)", "speedup", "roofline"]


def _timing_cells(perf) -> list[str]:
    """Median time, speedup and share of the roofline; "-" for what was not measured."""
    if not perf:
        return ["-", "-", "-"]
    return [f"{perf.candidate.median_ms:.4f}",
            f"{perf.speedup:.2f}x" if perf.speedup else "-",
            f"{perf.roofline_fraction:.0%}" if perf.roofline_fraction else "-"]


def _row(r: EvalResult, timed: bool, full_reasons: bool) -> list:
    cells = [r.task_id, r.verdict.value, r.stage.value, f"{sum(c.passed for c in r.cases)}/{len(r.cases)}"]
    if timed:
        cells += _timing_cells(r.performance)
    reason = "" if r.correct else _shown(plain(r.reason), full_reasons)
    return cells + [f"{r.phases.get('total', 0):.1f}", Text(reason)]


def summary_table(results: list[EvalResult], full_reasons: bool = False) -> Table:
    """One row per result; timing columns only when something was timed (never on the CPU)."""
    timed = any(r.performance for r in results)
    table = Table(title="Evaluation")
    columns = ["task", "verdict", "stage", "cases"] + (TIMING_COLUMNS if timed else [])
    for column in columns + ["seconds", "reason"]:
        table.add_column(column, overflow="fold")
    for r in results:
        table.add_row(*_row(r, timed, full_reasons))
    return table
