"""The correctness stage: every planned case run twice in the candidate's processes (its cases split
by dtype over several where that pays, case_partition.py) and judged in the evaluator's process; on a
GPU a compile scout compiles the candidate's kernels ahead beside them (compile_scout.py)."""

from __future__ import annotations

import math
import threading
import time

from evaluator import protocol
from evaluator.case_partition import EarliestFailure, Share, failure_stage, merged, split_by_dtype
from evaluator.compile_markers import CompileMarkers
from evaluator.ir_compiler import MAX_IR_QUESTIONS, answer_scout
from evaluator.result import EvalResult, KernelInfo, Verdict
from evaluator.sandbox import Sandbox
from evaluator.stage_failed import StageFailed
from evaluator.stages import memcheck
from evaluator.stages.context import Evaluation, phase
from evaluator.stages.share_loop import (FEED_POLL_SECONDS, SHARE_POLL_SECONDS, run_share, run_share_apart,
                                         send_ready_cases)


def correctness(ev: Evaluation, result: EvalResult) -> None:
    try:
        with phase(result, "correctness"):
            shares = run_shares(ev, result)
        _note_shares(ev, shares, result)
        failed = merged(shares)[1]
        if failed is not None:
            failed.failure.stage = failure_stage(failed.failed_at)
            raise failed.failure
        ev.passed_outputs = {index: out for share in shares for index, out in share.passed_outputs.items()}
    except StageFailed as failed:
        if failed.verdict is Verdict.MEMORY_FAIL:
            memcheck.locate_fault(ev, failed, result)
        raise
    finally:
        ev.scorer.note_isolation(result, ev.box)


def run_shares(ev: Evaluation, result: EvalResult) -> list[Share]:
    """The first share of the cases in the started process (kept for timing), the others in
    processes of their own, with the compile scout beside them; each share as it ended."""
    shares = [Share(members) for members in split_by_dtype(ev.feed.cases, ev.scorer.candidate_processes())]
    earliest = EarliestFailure()
    helpers = [threading.Thread(target=run_share_apart, args=(ev, share, earliest),
                                name=f"{ev.task.id} share {k}", daemon=True) for k, share in enumerate(shares[1:], 1)]
    scouting = threading.Event()
    scout = threading.Thread(target=run_scout, args=(ev, scouting, result), name=f"{ev.task.id} compile scout",
                             daemon=True)
    beside = helpers + [scout] if ev.scorer.scouting() else helpers
    for thread in beside:
        thread.start()
    try:
        run_share(ev, ev.box, shares[0], earliest)
    except BaseException:
        earliest.report(-math.inf)  # the evaluator's own error: the other shares stop
        raise
    finally:
        for helper in helpers:
            helper.join()
        scouting.set()  # only once every share is done: the others may be waiting on the scout's kernels
        if scout in beside:
            scout.join()
    _raise_own_errors(shares)
    return shares


def _raise_own_errors(shares: list[Share]) -> None:
    """A share that ended on the evaluator's own error (not a verdict about the candidate) raises it."""
    for share in shares[1:]:
        if share.failure is not None and not isinstance(share.failure, StageFailed):
            raise share.failure


def _note_shares(ev: Evaluation, shares: list[Share], result: EvalResult) -> None:
    """The judged cases up to the earliest failure, the kernels, the memory check and the phases."""
    result.cases = merged(shares)[0]
    result.kernels = _kernels(shares)
    scorer = ev.scorer
    if not scorer.on_gpu:
        result.memory_check = _interpreter_memory_check(shares) if scorer.config.memcheck else "off"
    if shares[0].import_seconds is not None:
        result.phases["start_and_import"] = shares[0].import_seconds
    result.phases["calls"] = sum(share.call_seconds for share in shares)
    if scorer.on_gpu:
        result.phases["compile"] = sum(share.compile_seconds for share in shares)
        result.phases["scout_wait"] = sum(share.scout_wait_seconds for share in shares)


def _interpreter_memory_check(shares: list[Share]) -> str | None:
    """How the candidate's processes that got going looked for out-of-bounds accesses ("interpreter"),
    or why one could not, which is the one said."""
    said = {share.memory_check for share in shares if share.import_seconds is not None}
    return next((m for m in sorted(said) if m != "interpreter"), "interpreter" if said else None)


def run_scout(ev: Evaluation, finished: threading.Event, result: EvalResult) -> None:
    """Sends the compile scout every case as it is built, until the scout is done or the
    candidate's cases are (then it is killed). Whatever goes wrong with it changes nothing."""
    scorer, feed = ev.scorer, ev.feed
    members = list(range(len(feed.cases)))
    sent, began = 0, time.perf_counter()
    try:
        with ev.own(Sandbox(scorer.server, "scout", ev.job, {"candidate.py": ev.source}, scorer.limits, ev.reach)) as box:
            while not finished.is_set():
                sent = send_ready_cases(box, feed, members, sent)
                message = box.recv(timeout=FEED_POLL_SECONDS if sent < len(members) else SHARE_POLL_SECONDS)
                event = protocol.parse_event(message) if message is not None else None
                if isinstance(event, protocol.IRAsked):
                    box.send(protocol.encode(_ir_answer(ev, box, event)))
                elif isinstance(event, protocol.Scouted):
                    result.phases["scout"] = time.perf_counter() - began
                    result.phases["scout_kernels_from_store"] = event.answered
                    return
    except Exception:  # noqa: BLE001 - ChildGone, a failed case build: the candidate's process reports its own
        return
    finally:
        CompileMarkers(ev.job.compile_markers).clear()  # nobody waits for the compiles of a scout that is gone


def _ir_answer(ev: Evaluation, box: Sandbox, asked: protocol.IRAsked) -> protocol.IRAnswer:
    """At most MAX_IR_QUESTIONS are read and answered per evaluation (a kernel specialization is
    one; the suite's reference solutions have at most 52)."""
    compiler = ev.scorer.ir_compiler
    ev.ir_asked += 1
    if compiler is None or ev.ir_answers is None or ev.ir_asked > MAX_IR_QUESTIONS:
        return protocol.IRAnswer(id=asked.id)
    return answer_scout(compiler, box.scratch, asked, ev.ir_answers)


def _kernels(shares: list[Share]) -> list[KernelInfo]:
    """Compile metadata per kernel name, from the first share that launched it."""
    found: dict[str, KernelInfo] = {}
    for share in shares:
        for info in share.kernels:
            found.setdefault(info.name, info)
    return list(found.values())

