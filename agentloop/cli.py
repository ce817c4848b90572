"""The `agentloop` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from agentloop.suite import Submission, score, summary_table
from traces.untrusted_text import plain

EXIT_INTERRUPTED = 130
EXIT_EMPTY_CHAINS = 3  # `run`: some chain produced no attempt (its generator failed every time)
OFF_TERMINAL_WIDTH = 200  # wide enough for every table; longer cells fold, whole
MAX_CANDIDATE_BYTES = 16 << 20  # read no further; the evaluator refuses sources over 1 MiB with a verdict

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LLM-written Triton kernels: evaluate candidates, list tasks, calibrate the GPU.")
tasks_app = typer.Typer(no_args_is_help=True, help="List and inspect the task suite.")
app.add_typer(tasks_app, name="tasks")


def for_stream(stderr: bool) -> Console:
    """A console for stdout or stderr: the terminal's width on a terminal (or COLUMNS); off one (a
    log, a pipe), wide enough that tables are not squeezed, and messages are not wrapped."""
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty() or os.environ.get("COLUMNS"):
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=OFF_TERMINAL_WIDTH, soft_wrap=True)


console = for_stream(stderr=True)
out = for_stream(stderr=False)

DeviceOption = typer.Option("auto", "--device", help="auto (GPU when present), cpu, or cuda[:N].")
WorkersOption = typer.Option(0, "--workers", help="Candidates evaluated at once on each device (0: one per CPU core on the CPU; on GPUs, one per 2 cores shared among them, at most 8 each).")


def fail(message: str, code: int = 2) -> None:
    console.print(f"[red]error:[/red] {escape(plain(message))}")
    raise typer.Exit(code)


KernelBenchOption = typer.Option(None, "--kernelbench", help="Also load KernelBench problems (Model, get_inputs, "
                                 "get_init_inputs) from this folder, as tasks KernelBench/<file>.")


def _suite(kernelbench: Path | None = None):
    """The task suite, with the KernelBench problems of `kernelbench` where given."""
    from evaluator.interop import load_folder
    from evaluator.loader import TaskLoadError, load_suite
    try:
        suite = load_suite()
        if kernelbench is not None:
            suite.update(load_folder(kernelbench))
        return suite
    except (TaskLoadError, ValueError) as exc:
        fail(str(exc))


def _find(name: str, kernelbench: Path | None = None):
    from evaluator.loader import TaskLoadError, find_task
    try:
        return find_task(name, _suite(kernelbench))
    except TaskLoadError as exc:
        fail(str(exc))


def read_source(path: Path) -> str:
    if not path.exists():
        fail(f"{path}: no such file")
    if path.is_dir():
        fail(f"{path}: is a directory (use --suite DIR to score a folder of candidates)")
    if path.is_file() and path.stat().st_size > MAX_CANDIDATE_BYTES:
        fail(f"{path}: {path.stat().st_size / 2**20:.0f} MiB is far too large for a kernel file")
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        fail(f"{path}: not UTF-8 text")
    except OSError as exc:
        fail(f"{path}: cannot read ({exc.strerror})")
    return ""


def _evaluations(device: str, workers: int, timing: bool = True, compile_baseline: bool = False,
                 profile: bool = False, memcheck: bool = True):
    """An evaluator per device `device` names (`auto`: every visible GPU, else the CPU), `workers`
    evaluations at once on each (0: as many as the machine suits), as `run` has."""
    from agentloop.evaluation import EvaluationQueue
    try:
        return EvaluationQueue(device, workers, timing=timing, compile_baseline=compile_baseline, profile=profile,
                               memcheck=memcheck)
    except (ValueError, RuntimeError) as exc:
        fail(str(exc))


def suite_submissions(directory: Path, kernelbench: Path | None = None) -> list[Submission]:
    """Candidates in DIR named after their task: DIR/<name>.py or DIR/<Category>/<name>.py."""
    from evaluator.loader import TaskLoadError, find_task
    if not directory.is_dir():
        fail(f"{directory}: not a directory")
    suite = _suite(kernelbench)
    submissions = []
    for path in sorted(directory.rglob("*.py")):
        relative = path.relative_to(directory).with_suffix("")
        name = "/".join(relative.parts)
        try:
            task = find_task(name, suite)
        except TaskLoadError:
            skipped = escape(plain(f"{path}: no task named {name!r}"))
            console.print(f"[yellow]skipping[/yellow] {skipped}")
            continue
        submissions.append(Submission(task, read_source(path), path))
    if not submissions:
        fail(f"{directory}: no candidate file is named after a task (e.g. softmax.py or Math/softmax.py)")
    return submissions


def reference_submissions(only: list[str]) -> list[Submission]:
    suite = _suite()
    chosen = [t for t in suite.values() if not only or any(s in (t.id, t.name, t.category) for s in only)]
    if not chosen:
        fail(f"no task matches {only}; `agentloop tasks list` shows them")
    return [Submission(t, t.solution_path.read_text(), t.solution_path) for t in chosen if t.solution_path]


@app.command("eval")
def eval_command(
    task: Optional[str] = typer.Argument(None, help="Task id (Math/softmax) or name (softmax)."),
    file: Optional[Path] = typer.Argument(None, help="Candidate Python file."),
    suite: Optional[Path] = typer.Option(None, "--suite", help="Score every candidate in DIR, named by task."),
    references: bool = typer.Option(False, "--references", help="Score the shipped reference solutions."),
    only: list[str] = typer.Option([], "--task", help="With --references: only these tasks (id, name, category)."),
    as_json: bool = typer.Option(False, "--json", help="Print EvalResult JSON."),
    device: str = DeviceOption,
    workers: int = WorkersOption,
    no_timing: bool = typer.Option(False, "--no-timing", help="Skip GPU timing."),
    compile_baseline: bool = typer.Option(False, "--compile-baseline", help="Also time torch.compile."),
    profile: bool = typer.Option(False, "--profile", help="Nsight Compute metrics, where ncu is installed."),
    no_memcheck: bool = typer.Option(False, "--no-memcheck", help="Skip the out-of-bounds access check (recorded "
                                     "in each result as memory_check: off)."),
    kernelbench: Optional[Path] = KernelBenchOption,
) -> None:
    """Score one candidate file against a task, a folder of candidates (--suite), or the shipped
    reference solutions (--references).

    Exit status: 0 when every candidate is CORRECT, 1 when some is not, 2 on bad input.
    """
    if references:
        if task or file or suite:
            fail("--references scores the shipped solutions; give no TASK, FILE or --suite with it")
        submissions = reference_submissions(only)
    elif suite is not None:
        if task or file:
            fail("give either TASK FILE or --suite DIR, not both")
        submissions = suite_submissions(suite, kernelbench)
    else:
        if not task or not file:
            fail("give TASK and FILE (e.g. agentloop eval softmax my_softmax.py), or --suite DIR")
        submissions = [Submission(_find(task, kernelbench), read_source(file), file)]
    evaluations = _evaluations(device, workers, not no_timing, compile_baseline, profile, not no_memcheck)
    try:
        results = score(evaluations, submissions, console)
    finally:
        evaluations.close()
    if as_json:
        payload = [r.to_dict() for r in results]
        out.print_json(json.dumps(payload[0] if suite is None and not references else payload))
    else:
        out.print(summary_table(results, full_reasons=not out.is_terminal))
        if len(results) == 1 and not results[0].correct and results[0].traceback:
            out.print(Text(plain(results[0].traceback)))
    raise typer.Exit(0 if all(r.correct for r in results) else 1)


@app.command("run")
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
    import asyncio

    import structlog

    from agentloop import logs
    from agentloop.config import DEFAULT_MODELS, ConfigError, default_experiment, load_experiment

    logs.configure(json_lines=log_json)
    flags = list(overrides)
    if tasks:
        flags.append("tasks={ids: [" + ", ".join(tasks) + "], categories: [], difficulty: []}")
    for key, value in (("samples", samples), ("budgets.max_rounds", max_rounds), ("generator.provider", provider),
                       ("generator.model", model), ("generator.base_url", base_url), ("store", store),
                       ("evaluation.device", device), ("evaluation.workers", workers),
                       ("evaluation.executor", executor), ("evaluation.ray_address", ray_address)):
        if value is not None:
            flags.append(f"{key}={value}")
    if no_memcheck:
        flags.append("evaluation.memcheck=false")
    if provider is not None and provider != "replay":
        flags.append("generator.options={}")
        if model is None and config is None:  # the embedded default names the replay's model
            flags.append(f"generator.model={DEFAULT_MODELS.get(provider, 'default')}")
    try:
        if config is not None:
            experiment, what = load_experiment(config, flags), f"Running {config}."
        else:
            experiment, what = default_experiment(flags)
    except ConfigError as exc:
        fail(str(exc))
    console.print(what)
    from agentloop.run import run_experiment, summary_table  # torch and the evaluator: after the checks
    from traces.store import StoreError, TraceStore
    try:
        trace = TraceStore(experiment.store)
    except StoreError as exc:
        fail(str(exc))
    evaluations = _open_evaluations(experiment)
    try:
        summary = asyncio.run(run_experiment(experiment, _suite(), trace, evaluations, console,
                                             progress_enabled=not no_progress))
    except (ConfigError, StoreError) as exc:
        fail(str(exc))
    finally:
        evaluations.close()
        trace.close()
    out.print(summary_table(summary))
    out.print(f"{summary.new_attempts} new attempts ({summary.cached_calls} answered from the response cache); "
              f"trace store {experiment.store}, run {summary.run_id}")
    if summary.without_attempts():
        structlog.get_logger("agentloop.run").warning("chains without attempts", detail=summary.empty_chains_line())
        raise typer.Exit(EXIT_EMPTY_CHAINS)


@app.command("runs")
def runs_command(store: Path = typer.Option(Path("runs/agentloop.db"), "--store",
                                            help="The trace store (SQLite).")) -> None:
    """Runs kept in a trace store."""
    trace = _open_store(store)
    table = Table(title=str(store))
    for column in ("run", "created", "attempts", "correct", "cost $"):
        table.add_column(column)
    import datetime
    for run in trace.runs():
        created = datetime.datetime.fromtimestamp(run["created_at"]).strftime("%Y-%m-%d %H:%M")
        table.add_row(run["id"], created, str(run["attempts"]), str(run["correct"] or 0), f"{run['cost_usd'] or 0:.4f}")
    trace.close()
    out.print(table)


StoreOption = typer.Option(Path("runs/agentloop.db"), "--store", help="The trace store (SQLite).")


def _open_store(store: Path):
    from traces.store import StoreError, TraceStore
    if not store.exists():
        fail(f"{store}: no trace store here")
    try:
        return TraceStore(store)
    except StoreError as exc:
        fail(str(exc))


def _run_id(trace, run: str, listed: list[dict] | None = None) -> str:
    runs = [r["id"] for r in (listed if listed is not None else trace.runs())]
    if run in runs:
        return run
    matches = [r for r in runs if r.startswith(run)]
    if len(matches) == 1:
        return matches[0]
    fail(f"no run {run!r} in the store" + (f"; runs: {', '.join(runs)}" if runs else ""))
    return ""


def _run_with_attempts(trace, run: str) -> str:
    """The run's id, where it has attempts to report on or export."""
    listed = trace.runs()
    run_id = _run_id(trace, run, listed)
    if not next((r["attempts"] for r in listed if r["id"] == run_id), 0):
        fail(f"run {run_id!r} has no attempts (its chains produced none); nothing to report or export")
    return run_id


@app.command("report")
def report_command(
    run: str = typer.Argument(..., help="Run id (or a unique prefix); `agentloop runs` lists them."),
    store: Path = StoreOption,
    out_dir: Optional[Path] = typer.Option(None, "--out", help="Folder for report.html and summary.md."),
) -> None:
    """Write a self-contained HTML report and a markdown summary of a run."""
    from traces.report import write_report
    trace = _open_store(store)
    run_id = _run_with_attempts(trace, run)
    html, markdown = write_report(trace, run_id, out_dir or Path("reports") / run_id)
    trace.close()
    out.print(f"wrote {html} and {markdown}")


@app.command("harvest")
def harvest_command(
    run: str = typer.Argument(..., help="Run id (or a unique prefix)."),
    formats: list[str] = typer.Option(["sft", "dpo"], "--format",
                                      help="attempts, sft, prompt-completion, dpo, kto or stepwise (repeatable)."),
    store: Path = StoreOption,
    out_dir: Path = typer.Option(Path("datasets"), "--out",
                                 help="Folder for the exported files (one subfolder per run)."),
    threshold: float = typer.Option(0.1, "--threshold", help="Optimization pairs: faster by at least this share."),
    eval_share: float = typer.Option(0.0, "--eval-share", min=0.0, max=1.0,
                                     help="Share of tasks held out as eval files (by task, deterministic)."),
) -> None:
    """Export training data from a run as JSON lines and Parquet (loadable with `datasets`), with a
    dataset card (README.md) beside them."""
    from traces import dataset_card, pairs
    from traces.frames import export, load_frame
    trace = _open_store(store)
    run_id = _run_with_attempts(trace, run)
    unknown = [f for f in formats if f not in pairs.FORMATS + ("attempts",)]
    if unknown:
        fail(f"unknown format {unknown[0]!r}; choose from attempts, {', '.join(pairs.FORMATS)}")
    attempts = trace.attempts(run_id)
    table = Table(title=f"harvest of {run_id}")
    for column in ("format", "records", "files"):
        table.add_column(column)
    rows, files = {}, {}
    for fmt in formats:
        if fmt == "attempts":
            frame = load_frame(trace, run_id)
            rows[fmt] = {"all": frame.to_dict("records")}
            files[fmt] = [export(frame, out_dir / run_id / f"attempts{suffix}") for suffix in (".jsonl", ".parquet")]
        else:
            records = pairs.dataset(fmt, attempts, threshold)
            rows[fmt] = pairs.split(records, eval_share) if eval_share > 0 else {"all": records}
            files[fmt] = [pairs.write(part, out_dir / run_id / f"{fmt}{'' if name == 'all' else '.' + name}{suffix}", fmt)
                          for name, part in rows[fmt].items() for suffix in (".jsonl", ".parquet")]
        table.add_row(fmt, str(sum(len(part) for part in rows[fmt].values())), ", ".join(str(p) for p in files[fmt]))
    trace.close()
    (out_dir / run_id / "README.md").write_text(dataset_card.card(run_id, rows, files, threshold, eval_share))
    out.print(table)


@app.command("ab")
def ab_command(
    target: str = typer.Argument(..., help="An experiment YAML (run it, then compare its arms) or a run id."),
    other: Optional[str] = typer.Argument(None, help="A second run id: compare two finished runs."),
    arms: list[str] = typer.Option([], "--arm", help="The two arms to compare (default: the first two)."),
    store: Optional[Path] = typer.Option(None, "--store", help="The trace store (SQLite); default "
                                         "runs/agentloop.db, or for an experiment file, its own store."),
    overrides: list[str] = typer.Option([], "--set", help="KEY=VALUE applied to the experiment file (repeatable)."),
) -> None:
    """A/B test over tasks: correctness and speed of two arms of a run, or of the same arm in two runs."""
    from traces import ab
    from traces.frames import arm_methods, chains_frame, load_frame
    if target.endswith((".yaml", ".yml")):
        run_id, store = _run_experiment_file(Path(target), overrides + ([f"store={store}"] if store else []))
    else:
        run_id, store = None, store or Path("runs/agentloop.db")
    trace = _open_store(store)
    first = _run_id(trace, run_id or target)
    chains_first = chains_frame(load_frame(trace, first, with_empty_chains=True))
    if other is not None:
        second = _run_id(trace, other)
        chains_second = chains_frame(load_frame(trace, second, with_empty_chains=True))
        pick = _arms_across_runs(arms, list(dict.fromkeys(chains_first["arm"])), list(dict.fromkeys(chains_second["arm"])))
        a_rows = chains_first[chains_first["arm"] == pick[0]]
        b_rows = chains_second[chains_second["arm"] == pick[1]]
        names = (f"{first}:{pick[0]}", f"{second}:{pick[1]}") if pick[0] == pick[1] else (pick[0], pick[1])
    else:
        available = [a for a in arm_methods(trace, first) if a in set(chains_first["arm"])] or \
            list(dict.fromkeys(chains_first["arm"]))
        chosen = arms or available[:2]
        if len(chosen) != 2 or any(a not in available for a in chosen):
            fail(f"give two arms of {first} to compare (--arm A --arm B); it has {', '.join(available)}")
        a_rows, b_rows = (chains_first[chains_first["arm"] == a] for a in chosen)
        names = tuple(chosen)
    trace.close()
    try:
        result = ab.compare(a_rows, b_rows, *names)
    except ValueError as exc:
        fail(str(exc))
    table = Table(title=f"{names[0]} vs {names[1]} over {result.tasks} tasks")
    table.add_column("measure")
    table.add_column(names[0])
    table.add_column(names[1])
    table.add_row("chains correct", f"{result.correct_a}/{result.chains_a}", f"{result.correct_b}/{result.chains_b}")
    table.add_row("tasks where this arm is correct more often", str(result.tasks_a_better), str(result.tasks_b_better))
    for p in (1.0, 1.5, 2.0):
        if p in result.fast_p:
            table.add_row(f"fast_{p:g} (over tasks)", *(_share(v) for v in result.fast_p[p]))
    out.print(table)
    out.print(result.verdict)


def _share(value: float) -> str:
    return "unknown (untimed)" if value != value else f"{value:.2f}"


def _arms_across_runs(asked: list[str], first: list[str], second: list[str]) -> tuple[str, str]:
    """Which arm of each run to compare: by name, the same in both unless two names are given."""
    if len(asked) > 2:
        fail("give at most two --arm names: one arm compared in both runs, or one arm of each run")
    if len(asked) == 2:
        pair = (asked[0], asked[1])
    elif len(asked) == 1:
        pair = (asked[0], asked[0])
    elif first == second and len(first) == 1:
        pair = (first[0], first[0])
    elif set(first) == set(second):
        fail(f"both runs have the arms {', '.join(first)}: name the one to compare with --arm")
    else:
        fail(f"the runs' arms differ ({', '.join(first)} against {', '.join(second)}): name them with "
             "--arm A --arm B (an arm of the first run, then one of the second)")
    for arm, arms, which in ((pair[0], first, "first"), (pair[1], second, "second")):
        if arm not in arms:
            fail(f"the {which} run has no arm {arm!r}; it has {', '.join(arms)}")
    return pair


def _open_evaluations(experiment):
    """The experiment's executor: local (every visible GPU) or a Ray cluster."""
    from agentloop.evaluation import evaluations_for
    from agentloop.ray_evaluation import RayUnavailable
    try:
        return evaluations_for(experiment.evaluation)
    except (RayUnavailable, ValueError) as exc:
        fail(str(exc))


def _run_experiment_file(path: Path, overrides: list[str]) -> tuple[str, Path]:
    """Run (or resume) the experiment in `path`; its run id and store."""
    import asyncio

    from agentloop import logs
    from agentloop.config import ConfigError, load_experiment
    from agentloop.run import run_experiment
    from traces.store import StoreError, TraceStore
    logs.configure()
    try:
        experiment = load_experiment(path, overrides)
    except ConfigError as exc:
        fail(str(exc))
    if len(experiment.arms) < 2:
        fail(f"{path}: an A/B experiment needs at least two arms")
    trace = TraceStore(experiment.store)
    evaluations = _open_evaluations(experiment)
    try:
        asyncio.run(run_experiment(experiment, _suite(), trace, evaluations, console))
    except (ConfigError, StoreError) as exc:
        fail(str(exc))
    finally:
        evaluations.close()
        trace.close()
    return experiment.run_id, Path(experiment.store)


@tasks_app.command("list")
def tasks_list(as_json: bool = typer.Option(False, "--json", help="Print the tasks as JSON."),
               kernelbench: Optional[Path] = KernelBenchOption) -> None:
    """Tasks with counts per category and difficulty."""
    suite = _suite(kernelbench)
    if as_json:
        out.print_json(json.dumps([{"id": t.id, "difficulty": t.difficulty, "contract": t.contract.kind,
                                    "dtypes": [str(d).removeprefix("torch.") for d in t.dtypes]}
                                   for t in suite.values()]))
        return
    table = Table(title=f"{len(suite)} tasks")
    for column in ("category", "tasks", "difficulty 1-5", "names"):
        table.add_column(column, overflow="fold")
    by_category: dict[str, list] = {}
    for t in suite.values():
        by_category.setdefault(t.category, []).append(t)
    for category, items in sorted(by_category.items()):
        counts = [sum(t.difficulty == d for t in items) for d in range(1, 6)]
        table.add_row(category, str(len(items)), " ".join(str(c) for c in counts), ", ".join(t.name for t in items))
    out.print(table)


@tasks_app.command("show")
def tasks_show(name: str = typer.Argument(..., help="Task id or name."),
               kernelbench: Optional[Path] = KernelBenchOption) -> None:
    """Description, signature, sizes, contract and cost model of one task."""
    from evaluator.task import Inputs
    task = _find(name, kernelbench)
    out.print(f"[bold]{task.id}[/bold]  difficulty {task.difficulty}  contract {task.contract.kind}")
    out.print(f"signature: {task.signature}   (entry `{task.entry}`)")
    out.print(task.description)
    if task.kernelbenchx_difference:
        out.print(f"differs from KernelBench-X's definition: {task.kernelbenchx_difference}")
    out.print("dtypes: " + ", ".join(str(d).removeprefix("torch.") for d in task.dtypes))
    if task.mutates:
        out.print(f"mutates arguments: {list(task.mutates)}")
    for allowance in task.allowed:
        out.print(f"may call {allowance.api}: {allowance.why}")
    table = Table(title="sizes (seed 0, standard mode, primary dtype)")
    for column in ("size", "arguments", "MFLOP", "MB moved"):
        table.add_column(column, overflow="fold")
    for size in ("small", "edge", "standard"):
        inputs: Inputs = task.make_inputs(0, size, "standard", task.primary_dtype)
        cost = task.cost(inputs)
        table.add_row(size, _describe_args(inputs), f"{cost.flops / 1e6:.1f}", f"{cost.bytes / 1e6:.1f}")
    out.print(table)
    out.print(f"reference solution: {task.solution_path or 'none'}")


def _describe_args(inputs) -> str:
    import torch

    def one(v):
        if isinstance(v, torch.Tensor):
            return f"{tuple(v.shape)} {str(v.dtype).removeprefix('torch.')}"
        return repr(v)
    return ", ".join([one(v) for v in inputs.args] + [f"{k}={one(v)}" for k, v in inputs.kwargs.items()])


@app.command("calibrate")
def calibrate_command(
    device: str = typer.Option("cuda", "--device", help="cuda or cuda:N."),
    force: bool = typer.Option(False, "--force", help="Measure again even if cached."),
) -> None:
    """Measure this GPU's copy bandwidth and matrix throughput per dtype (cached)."""
    import torch

    from evaluator import calibration, gpu_lock
    from evaluator.settings import default_cache_dir, resolve_device
    if not torch.cuda.is_available():
        fail("calibrate needs a CUDA GPU; on the CPU there is nothing to measure (timing fields stay absent)")
    try:
        target = resolve_device(device)
    except ValueError as exc:
        fail(str(exc))
    cache = default_cache_dir()
    peaks = calibration.calibrate(cache, target, gpu_lock.lock_dir_for(cache, target.index or 0), force=force)
    table = Table(title=peaks.device)
    table.add_column("ceiling")
    table.add_column("measured")
    table.add_row("copy bandwidth", f"{peaks.copy_gbps:.0f} GB/s")
    for dtype, value in peaks.tflops.items():
        table.add_row(f"matmul {dtype}", f"{value:.1f} TFLOP/s")
    out.print(table)
    out.print(f"cached in {calibration.cache_path(cache)}")


# Errors that come from the user's input or environment, by module and class (imported only if
# already loaded, so that --help stays fast): one line and exit status 2, never a traceback.
USER_ERRORS = (("agentloop.config", "ConfigError"), ("traces.store", "StoreError"),
               ("agentloop.generators.base", "GeneratorError"), ("agentloop.ray_evaluation", "RayUnavailable"),
               ("evaluator.loader", "TaskLoadError"), ("sqlite3", "OperationalError"))


def user_error_message(exc: BaseException) -> str | None:
    """The one-line message for an error the user can act on; None for a bug (shown in full)."""
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}"
    for module, name in USER_ERRORS:
        cls = getattr(sys.modules.get(module), name, None)
        if cls is not None and isinstance(exc, cls):
            return str(exc)
    return None


def main() -> None:
    try:
        app()
    except (KeyboardInterrupt, SystemExit) as exc:  # typer turns Ctrl-C into exit status 130, silently
        if isinstance(exc, SystemExit) and exc.code != EXIT_INTERRUPTED:
            raise
        resumable = len(sys.argv) > 1 and sys.argv[1] in ("run", "ab")
        console.print("interrupted" + ("; run the same command again to resume where it stopped" if resumable else ""))
        sys.exit(EXIT_INTERRUPTED)
    except Exception as exc:  # noqa: BLE001 - input and environment problems get one line
        message = user_error_message(exc)
        if message is None or os.environ.get("AGENTLOOP_DEBUG"):
            raise
        console.print(f"[red]error:[/red] {escape(plain(message))}", highlight=False)
        sys.exit(2)
