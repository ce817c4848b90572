"""Run an experiment: every chain (task x arm x sample) concurrently on one event loop, LLM calls
overlapping evaluations, progress on the terminal, a summary at the end. Rerunning resumes."""

from __future__ import annotations

import asyncio
import collections
import statistics
from dataclasses import dataclass, field

import structlog
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from agentloop.config import ConfigError, Experiment, TaskSelection
from agentloop.evaluation import Evaluates
from agentloop.generators import build
from agentloop.generators.base import Generator
from agentloop.loop import Chain, LoopContext
from evaluator.loader import TaskLoadError, find_task
from evaluator.task import Task
from traces.records import Attempt
from traces.store import TraceStore
from traces.untrusted_text import plain

log = structlog.get_logger("agentloop.run")


def _named_tasks(names: list[str], suite: dict[str, Task]) -> dict[str, Task]:
    chosen: dict[str, Task] = {}
    try:
        for name in names:
            task = find_task(name, suite)
            chosen[task.id] = task
    except TaskLoadError as exc:
        raise ConfigError(f"tasks.ids: {exc}") from None
    return chosen


def _check_categories(categories: list[str], suite: dict[str, Task]) -> None:
    known = {t.category for t in suite.values()}
    for category in categories:
        if category not in known:
            raise ConfigError(f"tasks.categories: unknown category {category!r}; known: {', '.join(sorted(known))}")


def select_tasks(selection: TaskSelection, suite: dict[str, Task]) -> list[Task]:
    """The tasks named, plus those of the categories and difficulties listed; the whole suite when
    the selection lists nothing."""
    chosen = _named_tasks(selection.ids, suite)
    _check_categories(selection.categories, suite)
    for task in suite.values():
        if task.category in selection.categories or task.difficulty in selection.difficulty:
            chosen.setdefault(task.id, task)
    if not any((selection.ids, selection.categories, selection.difficulty)):
        chosen = dict(suite)
    if not chosen:
        raise ConfigError("the task selection matches no task")
    return sorted(chosen.values(), key=lambda t: t.id)


@dataclass
class RunSummary:
    run_id: str
    resumed: bool
    chains: list[Chain] = field(default_factory=list)
    new_attempts: int = 0
    llm_calls: int = 0
    cached_calls: int = 0

    def without_attempts(self) -> list[Chain]:
        """Chains that have no attempt at all (this time or before): their generator never gave a
        candidate, so they say nothing about the method and every figure must count them as such."""
        return [c for c in self.chains if c.outcome().attempts == 0]

    def empty_chains_line(self) -> str:
        empty = self.without_attempts()
        reasons = collections.Counter(chain.stop_reason or "no reason" for chain in empty)
        listed = "; ".join(f"{reason} ({n})" for reason, n in reasons.most_common())
        return f"{len(empty)} of {len(self.chains)} chains produced no attempt: {listed}"


async def run_experiment(experiment: Experiment, suite: dict[str, Task], store: TraceStore, evaluations: Evaluates,
                         console: Console, progress_enabled: bool = True,
                         generators: dict[str, Generator] | None = None) -> RunSummary:
    """`generators`: one per arm name, instead of those the experiment's specs build."""
    tasks = select_tasks(experiment.tasks, suite)
    run_id = experiment.run_id
    summary = RunSummary(run_id, store.ensure_run(run_id, experiment.to_dict()))
    generators = generators or {arm.name: build(experiment.generator_for(arm), store) for arm in experiment.arms}
    spent = {"cost": sum(a.cost_usd for a in store.attempts(run_id))}

    def on_attempt(attempt: Attempt) -> None:
        summary.new_attempts += 1
        spent["cost"] += attempt.cost_usd
        if attempt.trial == 0:
            summary.llm_calls += 1
            summary.cached_calls += attempt.cached_response
        log.info("attempt", task=attempt.task_id, arm=attempt.arm, sample=attempt.sample, round=attempt.round,
                 trial=attempt.trial, mode=attempt.mode, verdict=attempt.verdict, speedup=attempt.speedup,
                 decision=attempt.decision)
        progress.update(bar, advance=1, description=f"{attempt.task_id} r{attempt.round}: {attempt.verdict}")

    ctx = LoopContext(run_id=run_id, store=store, evaluations=evaluations, budgets=experiment.budgets,
                      on_attempt=on_attempt, run_cost=lambda: spent["cost"])
    chains = [Chain(task, arm, sample, generators[arm.name], experiment.generator_for(arm).model, ctx)
              for arm in experiment.arms for task in tasks for sample in range(experiment.samples)]
    summary.chains = chains
    limit = asyncio.Semaphore(experiment.max_concurrent_chains)

    async def run_one(chain: Chain) -> None:
        async with limit:
            try:
                await chain.run()
            except Exception as exc:  # noqa: BLE001 - one broken chain must not stop the others
                chain.stop_reason = f"error: {type(exc).__name__}: {exc}"
                log.error("chain failed", task=chain.task.id, arm=chain.arm.name, sample=chain.sample,
                          error=chain.stop_reason)
                return
            finally:
                chain.release()
                store.record_chain_end(run_id, chain.task.id, chain.arm.name, chain.sample,
                                       chain.outcome().attempts, chain.stop_reason or "ended")
        log.info("chain done", task=chain.task.id, arm=chain.arm.name, sample=chain.sample, reason=chain.stop_reason)

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=console, disable=not progress_enabled, transient=False) as progress:
        budget = sum(c.max_rounds for c in chains)
        bar = progress.add_task("refining", total=budget)
        try:
            await asyncio.gather(*(run_one(chain) for chain in chains))
        finally:
            for generator in generators.values():
                await generator.close()
        done = int(progress.tasks[bar].completed)  # chains stop early: the bar ends at what was done
        progress.update(bar, total=max(done, 1), completed=done, description=f"done: {done} new attempts")
    return summary


SUMMARY_COLUMNS = ("arm", "chains", "attempts", "correct", "fast_1", "best speedup (median)", "tokens", "cost $",
                   "stop reasons")


def _by_arm(chains: list[Chain]) -> dict[str, list[Chain]]:
    grouped: dict[str, list[Chain]] = {}
    for chain in chains:
        grouped.setdefault(chain.arm.name, []).append(chain)
    return grouped


def _speedup_cells(speedups: list[float], chains: int) -> list[str]:
    """How many chains ended faster than the baseline, and the median best speedup."""
    if not speedups:
        return ["- (no timing)", "-"]
    fast = sum(1 for s in speedups if s > 1.0)
    return [f"{fast}/{chains}", f"{statistics.median(speedups):.2f}x"]


def _stop_reasons(chains: list[Chain]) -> str:
    reasons = collections.Counter(c.stop_reason or "running" for c in chains)
    return "; ".join(f"{k} ({v})" for k, v in sorted(reasons.items()))


def _arm_row(arm: str, chains: list[Chain]) -> list:
    outcomes = [c.outcome() for c in chains]
    correct = sum(1 for o in outcomes if o.correct)
    speedups = [o.speedup for o in outcomes if o.speedup]
    return [arm, str(len(chains)), str(sum(o.attempts for o in outcomes)), f"{correct}/{len(chains)}",
            *_speedup_cells(speedups, len(chains)),
            str(sum(o.tokens for o in outcomes)),
            f"{sum(o.cost_usd for o in outcomes):.4f}",
            Text(plain(_stop_reasons(chains)))]


def summary_table(summary: RunSummary) -> Table:
    table = Table(title=f"run {summary.run_id}" + (" (resumed)" if summary.resumed else ""))
    for column in SUMMARY_COLUMNS:
        table.add_column(column, overflow="fold")
    for arm, chains in _by_arm(summary.chains).items():
        table.add_row(*_arm_row(arm, chains))
    return table
