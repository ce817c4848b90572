"""The static stage: the source's size, KernelBench-X's test harness left out, then the rules of
static_checks.py and the maintainability figures."""

from __future__ import annotations

import hashlib

from evaluator import maintainability
from evaluator.kernelbench_formats import strip_kernelbenchx_harness
from evaluator.result import EvalResult, Verdict
from evaluator.stage_failed import StageFailed
from evaluator.stages.context import Evaluation, phase
from evaluator.static_checks import check_source
from evaluator.task import Task

ENTRY_ALIASES = ("kernel_function",)  # and the task's own name, as KernelBench-X accepts both
MAX_SOURCE_CHARS = 1 << 20


def entry_names(task: Task) -> list[str]:
    """The names a candidate's entry function may have, in order of preference."""
    names = [task.entry, *ENTRY_ALIASES]
    return names + [task.name] if task.name.isidentifier() and task.name not in names else names


def static(ev: Evaluation, result: EvalResult) -> None:
    if len(ev.source) > MAX_SOURCE_CHARS:
        raise StageFailed(Verdict.STATIC_REJECT, f"the candidate is {len(ev.source) / 2**20:.1f} MiB of source; the "
                          f"limit is {MAX_SOURCE_CHARS >> 20} MiB (a kernel file is a few KiB)")
    source = strip_kernelbenchx_harness(ev.source)
    with phase(result, "static"):
        report = check_source(source, entry_names(ev.task), frozenset(a.api for a in ev.task.allowed))
        result.maintainability = maintainability.measure(source)
    ev.source, ev.entry = report.source, report.entry or ""
    result.executed_hash = hashlib.sha256(ev.source.encode()).hexdigest()
    blocking = report.verdict in (Verdict.NO_CODE, Verdict.COMPILE_FAIL) or report.entry is None
    if not report.ok and (ev.scorer.config.static_checks or blocking):
        raise StageFailed(report.verdict, report.reason)
