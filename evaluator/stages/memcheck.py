"""The memcheck stage (on a GPU): what Compute Sanitizer saw of a correct candidate's small and edge
cases, run beside its correctness and timing (memcheck.py); an invalid access outranks the speed
measured meanwhile. A CUDA fault during correctness is located here too."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from evaluator.case_feed import CaseFeed
from evaluator.cases import Case, describe_case
from evaluator.memcheck import MemcheckRun, checked_cases
from evaluator.result import EvalResult, Verdict
from evaluator.stage_failed import StageFailed
from evaluator.stages.context import Evaluation, phase


MEMCHECK_STARTS = ("spawn", "first_pass")


def ensure_checker(ev: Evaluation) -> MemcheckRun | None:
    """The evaluation's memory-check process, started now if its start was not asked for yet (at the
    candidate's spawn, at its first passed case, or at the end as the last chance)."""
    with ev.checking:
        if not ev.checker_asked:
            ev.checker_asked = True
            ev.checker = start_checker(ev)
            if ev.checker is not None:
                ev.held.enter_context(ev.checker)
    return ev.checker


def start_checker(ev: Evaluation) -> MemcheckRun | None:
    """Where there is a sanitizer (on a GPU), the process that runs the candidate under Compute
    Sanitizer, started now and given the small and edge cases as they are built."""
    scorer, feed = ev.scorer, ev.feed
    if not (scorer.config.memcheck and scorer.sanitizer):
        return None
    reach = ev.reach
    if scorer.config.sanitizer:  # named in the settings, wherever it lies: its folder read-only to this process
        reach = dataclasses.replace(reach, readable=(*reach.readable, Path(scorer.sanitizer).parent))
    checker = MemcheckRun(scorer.server, ev.job, ev.source, scorer.limits, reach, scorer.sanitizer)
    ev.own(checker.box)
    indices = [feed.cases.index(c) for c in checked_cases(ev.task) if c in feed.cases]
    checker.feed(feed.ready, [(i, lambda i=i: feed.data[i].inputs_file, describe_case(feed.cases[i]))
                              for i in indices])
    return checker


def memcheck(ev: Evaluation, result: EvalResult) -> None:
    checker = ensure_checker(ev)
    if checker is None:
        result.memory_check = ("off" if not ev.scorer.config.memcheck
                               else "unavailable: compute-sanitizer was not found")
        return
    with phase(result, "memcheck"):
        outcome = checker.outcome()
    result.phases["memcheck_exit"] = checker.exit_seconds
    result.memory_check = "memcheck" if outcome.ran else "unavailable: " + outcome.reason
    if outcome.verdict is not None:
        result.performance = None
        raise StageFailed(Verdict(outcome.verdict), outcome.reason, outcome.report or None)


def locate_fault(ev: Evaluation, failed: StageFailed, result: EvalResult) -> None:
    """A CUDA fault (an illegal address) in a case: under Compute Sanitizer, whose report says which
    kernel, line and access (the fault alone says none of it), the small and edge cases sent to it
    so far (likely to show the same mistake), then the case that faulted."""
    feed = ev.feed
    if failed.case is None or not 0 <= failed.case < len(feed.cases):
        return
    checker = ensure_checker(ev)
    if checker is None:
        return
    checker.end(described(feed, [feed.cases[failed.case]]))
    with phase(result, "memcheck"):
        outcome = checker.outcome()
    if outcome.verdict == Verdict.MEMORY_FAIL.value:
        result.memory_check = "memcheck"
        failed.reason, failed.traceback = outcome.reason, outcome.report or failed.traceback


def described(feed: CaseFeed, cases: list[Case]) -> list[tuple[int, Path, str]]:
    """(plan index, inputs file, description) of built cases."""
    indices = [feed.cases.index(case) for case in cases]
    return [(index, feed.data[index].inputs_file, describe_case(case)) for index, case in zip(indices, cases)]
