"""`agentloop run`: an experiment's refinement chains, from a YAML file or the embedded default."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import typer

from agentloop.commands.common import console, fail, out, task_suite

EXIT_EMPTY_CHAINS = 3  # `run`: some chain produced no attempt (its generator failed every time)


def command_line_overrides(overrides: list[str], tasks: list[str], settings: dict[str, Any],
                           no_memcheck: bool) -> list[str]:
    """`--set` assignments, then one for each option given: `settings` maps a configuration key to
    its option's value (None where not given)."""
    flags = list(overrides)
    if tasks:
        flags.append("tasks={ids: [" + ", ".join(tasks) + "], categories: [], difficulty: []}")
    flags += [f"{key}={value}" for key, value in settings.items() if value is not None]
    if no_memcheck:
        flags.append("evaluation.memcheck=false")
    return flags


def provider_overrides(provider: str | None, model: str | None, config: Path | None) -> list[str]:
    """A provider other than the replay drops the configured generator options, and gets its default
    model where neither --model nor a configuration file names one."""
    from agentloop.config import DEFAULT_MODELS
    if provider is None or provider == "replay":
        return []
    flags = ["generator.options={}"]
    if model is None and config is None:  # the embedded default names the replay's model
        flags.append(f"generator.model={DEFAULT_MODELS.get(provider, 'default')}")
    return flags


def chosen_experiment(config: Path | None, flags: list[str]):
    """The experiment of `config` (or the embedded default) with `flags` applied, and a sentence
    saying which it is."""
    from agentloop.config import ConfigError, default_experiment, load_experiment
    try:
        if config is not None:
            return load_experiment(config, flags), f"Running {config}."
        return default_experiment(flags)
    except ConfigError as exc:
        fail(str(exc))


def open_evaluations(experiment):
    """The experiment's executor: local (every visible GPU) or a Ray cluster."""
    from agentloop.evaluation import evaluations_for
    from agentloop.ray_evaluation import RayUnavailable
    try:
        return evaluations_for(experiment.evaluation)
    except (RayUnavailable, ValueError) as exc:
        fail(str(exc))


def run_into(experiment, trace, progress_enabled: bool = True):
    """Run (or resume) `experiment` on its executor, recording into `trace`; its RunSummary. Closes
    the trace store."""
    import asyncio

    from agentloop.config import ConfigError
    from agentloop.run import run_experiment  # torch and the evaluator: after the checks
    from traces.store import StoreError
    evaluations = open_evaluations(experiment)
    interrupted = True  # until the run returns: then nothing is in flight
    try:
        summary = asyncio.run(run_experiment(experiment, task_suite(), trace, evaluations, console,
                                             progress_enabled=progress_enabled))
        interrupted = False
        return summary
    except (ConfigError, StoreError) as exc:
        fail(str(exc))
    finally:
        evaluations.close(abandon=interrupted)  # Ctrl-C: the evaluations in flight are not waited for
        trace.close()


def print_summary(summary, store: str) -> None:
    """The run's table and counts; exit status EXIT_EMPTY_CHAINS where some chain produced no attempt."""
    import structlog

    from agentloop.run import summary_table
    out.print(summary_table(summary))
    out.print(f"{summary.new_attempts} new attempts ({summary.cached_calls} answered from the response cache); "
              f"trace store {store}, run {summary.run_id}")
    if summary.without_attempts():
        structlog.get_logger("agentloop.run").warning("chains without attempts", detail=summary.empty_chains_line())
        raise typer.Exit(EXIT_EMPTY_CHAINS)


def run_command(
    config: Optional[Path] = typer.Argument(None, help="Experiment YAML; without it, the embedded default."),
    overrides: list[str] = typer.Option([], "--set", help="KEY=VALUE, e.g. budgets.max_rounds=3 (repeatable)."),
    tasks: list[str] = typer.Option([], "--task", help="Task ids or names (repeatable); replaces tasks.ids."),
    samples: Optional[int] = typer.Option(None, "--samples", help="Chains per task and arm."),
    max_rounds: Optional[int] = typer.Option(None, "--max-rounds",
                                             help="Rounds per chain, at least 1 (default: the method's own)."),
    provider: Optional[str] = typer.Option(None, "--provider", help="anthropic, openai, openai-compatible, ..."),
    model: Optional[str] = typer.Option(None, "--model",
                                        help="Model name for the provider (default: the provider's default model)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="An OpenAI-compatible server (vLLM, SGLang)."),
    store: Optional[Path] = typer.Option(None, "--store", help="Trace store (SQLite); default runs/agentloop.db."),
    device: Optional[str] = typer.Option(None, "--device", help="auto (GPU when present), cpu, or cuda[:N]."),
    workers: Optional[int] = typer.Option(None, "--workers", help="Evaluations at once per device."),
    executor: Optional[str] = typer.Option(None, "--executor", help="local (default: every visible GPU) or ray."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="A Ray cluster ('auto', "
                                              "'ray://host:10001'); default: a new local Ray instance."),
    log_json: Optional[bool] = typer.Option(None, "--log-json/--log-console", help="Log format (default: by terminal)."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar (logs only)."),
    no_memcheck: bool = typer.Option(False, "--no-memcheck", help="Skip the out-of-bounds access check "
                                     "(evaluation.memcheck=false; recorded in each result)."),
) -> None:
    """Run refinement chains (the main job). Rerunning the same command resumes an interrupted run."""
    from agentloop import logs

    logs.configure(json_lines=log_json)
    settings = {"samples": samples, "budgets.max_rounds": max_rounds, "generator.provider": provider,
                "generator.model": model, "generator.base_url": base_url, "store": store,
                "evaluation.device": device, "evaluation.workers": workers, "evaluation.executor": executor,
                "evaluation.ray_address": ray_address}
    flags = command_line_overrides(overrides, tasks, settings, no_memcheck)
    experiment, what = chosen_experiment(config, flags + provider_overrides(provider, model, config))
    console.print(what)
    from traces.store import StoreError, TraceStore
    try:
        trace = TraceStore(experiment.store)
    except StoreError as exc:
        fail(str(exc))
    summary = run_into(experiment, trace, progress_enabled=not no_progress)
    print_summary(summary, experiment.store)


def run_experiment_file(path: Path, overrides: list[str]) -> tuple[str, Path]:
    """Run (or resume) the experiment in `path`; its run id and store."""
    from agentloop import logs
    from agentloop.config import ConfigError, load_experiment
    from traces.store import TraceStore
    logs.configure()
    try:
        experiment = load_experiment(path, overrides)
    except ConfigError as exc:
        fail(str(exc))
    if len(experiment.arms) < 2:
        fail(f"{path}: an A/B experiment needs at least two arms")
    run_into(experiment, TraceStore(experiment.store))
    return experiment.run_id, Path(experiment.store)
