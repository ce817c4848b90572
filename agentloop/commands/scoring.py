"""`agentloop eval` and `agentloop calibrate`: score candidate files, and measure the GPU that times them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from agentloop.commands.common import (EXIT_INTERRUPTED, DeviceOption, KernelBenchOption, WorkersOption, console,
                                       fail, out, task_named, task_suite)
from agentloop.suite import Submission, score, summary_table
from traces.untrusted_text import plain

EXIT_NOT_SCORED = 3  # the evaluator failed on some candidate (its error, not a verdict)

MAX_CANDIDATE_BYTES = 16 << 20  # read no further; the evaluator refuses sources over 1 MiB with a verdict


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


def evaluation_queue(device: str, workers: int, timing: bool = True, compile_baseline: bool = False,
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
    suite = task_suite(kernelbench)
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
    suite = task_suite()
    chosen = [t for t in suite.values() if not only or any(s in (t.id, t.name, t.category) for s in only)]
    if not chosen:
        fail(f"no task matches {only}; `agentloop tasks list` shows them")
    return [Submission(t, t.solution_path.read_text(), t.solution_path) for t in chosen if t.solution_path]


def chosen_submissions(task: str | None, file: Path | None, suite: Path | None, references: bool, only: list[str],
                       kernelbench: Path | None) -> list[Submission]:
    """The candidates that one of eval's three forms names: TASK FILE, --suite DIR or --references."""
    if references:
        if task or file or suite:
            fail("--references scores the shipped solutions; give no TASK, FILE or --suite with it")
        return reference_submissions(only)
    if suite is not None:
        if task or file:
            fail("give either TASK FILE or --suite DIR, not both")
        return suite_submissions(suite, kernelbench)
    if not task or not file:
        fail("give TASK and FILE (e.g. agentloop eval softmax my_softmax.py), or --suite DIR")
    return [Submission(task_named(task, kernelbench), read_source(file), file)]


def print_results(results: list, as_json: bool, one_candidate: bool) -> None:
    """The results as JSON (one object for a single candidate, else a list) or as a table; a lone
    failing candidate's traceback below its table."""
    if as_json:
        payload = [r.to_dict() for r in results]
        out.print_json(json.dumps(payload[0] if one_candidate else payload))
        return
    out.print(summary_table(results, full_reasons=not out.is_terminal))
    if len(results) == 1 and not results[0].correct and results[0].traceback:
        out.print(Text(plain(results[0].traceback)))


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

    Exit status: 0 when every candidate is CORRECT, 1 when some is not, 2 on bad input, 3 when the
    evaluator failed on some (they are named; the others' results are printed).
    """
    submissions = chosen_submissions(task, file, suite, references, only, kernelbench)
    evaluations = evaluation_queue(device, workers, not no_timing, compile_baseline, profile, not no_memcheck)
    scored = None
    try:
        scored = score(evaluations, submissions, console)
        if scored.results:  # before the evaluations in flight are wound down: an interrupt keeps them
            print_results(scored.results, as_json, one_candidate=suite is None and not references)
        for task_id, error in scored.unscored:
            console.print(Text(plain(f"not scored: {task_id}: the evaluator failed ({error})")))
        if scored.interrupted:
            console.print(f"{len(scored.results)} of {len(submissions)} candidates scored before the interrupt")
    finally:
        # an interrupt's evaluations in flight are abandoned, not waited for
        evaluations.close(abandon=scored is None or scored.interrupted)
    if scored.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)
    if scored.unscored:
        raise typer.Exit(EXIT_NOT_SCORED)
    raise typer.Exit(0 if all(r.correct for r in scored.results) else 1)


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
