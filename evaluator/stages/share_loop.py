"""One share of a candidate's cases run in one of its processes: each case sent as soon as it is
built, each run's outputs read back, each case judged once both its runs are in. Every message
from the candidate's process is untrusted and checked before use."""

from __future__ import annotations

import math
import time
from typing import Any

from evaluator import event_log, protocol
from evaluator.case_feed import CaseFeed
from evaluator.case_partition import EarliestFailure, Share
from evaluator.cases import Case, describe_case
from evaluator.contracts import Statistical
from evaluator.result import CaseResult, Verdict
from evaluator.sandbox import DeviceReadiness, Sandbox
from evaluator.stage_failed import StageFailed
from evaluator.task import Task
from evaluator.stages import memcheck
from evaluator.stages.context import Evaluation

FEED_POLL_SECONDS = 0.02  # how often, while cases are still being built, the evaluator sends new ones
SHARE_POLL_SECONDS = 0.1  # how often, once all are sent, a share looks whether another share failed earlier
CHILD_VERDICTS = {Verdict.COMPILE_FAIL, Verdict.RUNTIME_FAIL, Verdict.CONTRACT_FAIL, Verdict.MEMORY_FAIL}


class _ShareRun:
    """The message loop of one share; its verdict, if it fails, goes on the share."""

    def __init__(self, ev: Evaluation, box: Sandbox, share: Share, earliest: EarliestFailure):
        self.ev, self.box, self.share, self.earliest = ev, box, share, earliest
        self.task, self.feed = ev.task, ev.feed
        self.sent = self.calls = 0
        self.imported = False
        self.device = DeviceReadiness(f"{ev.scorer.device} could not be set up in a confined process")
        self.began = time.perf_counter()

    def run(self) -> None:
        share = self.share
        try:
            while not self.earliest.passed(share):
                self.sent = send_ready_cases(self.box, self.feed, share.members, self.sent)
                self.box.idle(self.imported and self.calls == 2 * self.sent and self.sent < len(share.members))
                waiting = self.sent < len(share.members)
                message = self.box.recv(timeout=FEED_POLL_SECONDS if waiting else SHARE_POLL_SECONDS)
                harvest(share, self.task, wait=False)
                if message is not None and self._take(parsed(message)):
                    return
                self._check_memory_once_a_case_passed()
            self.box.kill()  # an earlier case failed in another process: nothing left here can change the verdict
        except StageFailed as failed:  # a ChildGone too
            self._fail(_earliest(share, self.task, failed))
        finally:
            for future in share.pending.values():
                future.cancel()  # judgements not yet begun of cases after the verdict's

    def _check_memory_once_a_case_passed(self) -> None:
        """Every case judged so far passed (a failure raises): with the memory check started at the
        first pass, now is when."""
        ev = self.ev
        if self.share.judged and not ev.checker_asked and ev.scorer.config.memcheck_start == "first_pass":
            memcheck.ensure_checker(ev)

    def _take(self, message: Any) -> bool:
        """Acts on one message; True once the share's cases are all done."""
        if self.device.take(message):
            return False
        if isinstance(message, protocol.Imported):
            self.imported = True
            self.share.memory_check = message.memory_check
            event_log.case_event(self.task.id, "imported")
            self.share.import_seconds = time.perf_counter() - self.began
        elif isinstance(message, protocol.Failed):
            raise child_failed(message, self.feed.cases, self.share.members[:self.sent])
        elif isinstance(message, protocol.CallDone):
            self.calls += 1
            self._take_call(message)
        elif isinstance(message, protocol.CasesDone):
            self._finish(message)
            return True
        else:
            raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process sent an unexpected message")
        return False

    def _finish(self, message: protocol.CasesDone) -> None:
        share = self.share
        event_log.case_event(self.task.id, "cases_done")
        harvest(share, self.task, wait=True)
        if len(share.judged) < len(share.members):  # the candidate's code shares its process's socket
            raise StageFailed(Verdict.CONTRACT_FAIL, f"the candidate's process reported the cases done before "
                              f"running them all ({len(share.judged)} of {len(share.members)} judged)")
        share.kernels = list(message.kernels)
        share.compile_seconds = _seconds(message.compile_seconds)
        share.scout_wait_seconds = _seconds(message.scout_wait_seconds)
        self.ev.scorer.launchers.request(message.launchers)  # for later candidates' processes

    def _take_call(self, message: protocol.CallDone) -> None:
        """One run's outputs, read back; both runs in, the case is judged."""
        share, task, judge = self.share, self.task, self.ev.scorer.judge
        index, run = _member(message.case, share.members[:self.sent]), _index(message.run, 2)
        case, data = self.feed.cases[index], self.feed.data[index]
        try:
            share.call_seconds += _seconds(message.seconds)
            event_log.case_event(task.id, "run_in", index, run=run)
            check_call_report(message, case)
            runs = share.runs.setdefault(index, [])
            runs.append(judge.load_call(self.box.scratch / f"case{index}_run{run}.pt", data, task, case))
            if len(runs) < 2:
                return
            runs = share.runs.pop(index)
            alone = isinstance(task.contract, Statistical) and task.contract.draws_alone
            repeated = share.earlier_calls.add(runs) if alone else None
            if repeated:
                raise StageFailed(Verdict.INCORRECT, f"on {describe_case(case)}: {repeated}")
            if judge.judged_apart(case, data):
                share.pending[index] = self.ev.scorer.judges.submit(judge.judge_runs, task, case, data, runs)
            else:
                record(share, task, index, judge.judge_runs(task, case, data, runs))
        except StageFailed as failed:
            failed.case = index
            raise

    def _fail(self, failed: StageFailed) -> None:
        """A verdict about no case in particular (the process died, say) is about the first case
        not yet judged, or the import."""
        share = self.share
        pending = share.first_pending()
        share.failure = failed
        if failed.case is not None:
            share.failed_at = failed.case
        elif self.imported:
            share.failed_at = pending if pending is not None else share.members[-1]
        else:
            share.failed_at = -1
        self.earliest.report(share.failed_at)


def run_share(ev: Evaluation, box: Sandbox, share: Share, earliest: EarliestFailure) -> None:
    """Runs `share` in `box`; records its verdict, if it fails, on `share`."""
    _ShareRun(ev, box, share, earliest).run()


def run_share_apart(ev: Evaluation, share: Share, earliest: EarliestFailure) -> None:
    """Runs `share` in a process of its own (on a thread of its own)."""
    scorer = ev.scorer
    try:
        with ev.own(Sandbox(scorer.server, "candidate", ev.job, {"candidate.py": ev.source}, scorer.limits,
                            ev.reach)) as box:
            run_share(ev, box, share, earliest)
    except BaseException as exc:  # noqa: BLE001 - re-raised by the evaluation's thread
        share.failure, share.failed_at = exc, -1


def child_failed(message: protocol.Failed, cases: list[Case], sent: list[int]) -> StageFailed:
    verdict = Verdict(message.verdict) if message.verdict in {v.value for v in CHILD_VERDICTS} else Verdict.RUNTIME_FAIL
    reason, case = message.reason or "failed", None
    if message.phase == "import":
        reason, case = "importing the module failed: " + reason, -1
    elif message.phase == "call":
        case = _member(message.case, sent)
        reason = f"on {describe_case(cases[case])}: {reason}"
    return StageFailed(verdict, reason, message.traceback or None, case, message.out_of_gpu_memory)


def check_call_report(message: protocol.CallDone, case: Case) -> None:
    """What the candidate's process saw of one call breaks no rule."""
    where = describe_case(case)
    if message.launches < 1:
        raise StageFailed(Verdict.CONTRACT_FAIL, f"on {where}: the call returned without launching any Triton "
                          "kernel; the result must be computed by a @triton.jit kernel on every call")
    if message.violations:
        ops = ", ".join(message.violations[:8])
        raise StageFailed(Verdict.CONTRACT_FAIL, f"on {where}: PyTorch operators ran on the host outside Triton "
                          f"kernels ({ops}); only allocation and metadata are allowed there")
    if message.new_threads:
        raise StageFailed(Verdict.CONTRACT_FAIL, f"on {where}: the call left a thread running; work must finish "
                          "before the function returns")
    if message.mutated:
        changed = ", ".join(message.mutated[:4])
        raise StageFailed(Verdict.CONTRACT_FAIL, f"on {where}: the call modified its input {changed}, which this "
                          "task's semantics leave unchanged")


def record(share: Share, task: Task, index: int, outcome: tuple[CaseResult, StageFailed | None, Any]) -> None:
    share.judged[index], failure, kept = outcome
    event_log.case_event(task.id, "judged", index)
    if kept is not None:
        share.passed_outputs[index] = kept
    if failure is not None:
        failure.case = index
        raise failure


def harvest(share: Share, task: Task, wait: bool, before: float = math.inf) -> None:
    """Records the share's judgements that are done (with `wait`, all of them before case `before`).
    A failure is raised once every case before it is judged: the verdict is the earliest failing case's."""
    for index in _judged(share, wait, before):
        record(share, task, index, share.pending.pop(index).result())


def _judged(share: Share, wait: bool, before: float) -> list[int]:
    """The cases of `share` whose judgements to record now: those done (or all before `before`, with
    `wait`), and where one of them failed, every case up to it."""
    pending = sorted(share.pending)
    ready = [i for i in pending if i < before and (wait or share.pending[i].done())]
    failing = next((i for i in ready if share.pending[i].result()[1] is not None), None)
    return ready if failing is None else [i for i in pending if i <= failing]


def _earliest(share: Share, task: Task, failed: StageFailed) -> StageFailed:
    """`failed`, or the failure of a case before it that was judged beside the share's loop."""
    try:
        harvest(share, task, wait=True, before=math.inf if failed.case is None else failed.case)
    except StageFailed as earlier:
        return earlier
    return failed


def send_ready_cases(box: Sandbox, feed: CaseFeed, members: list[int], sent: int) -> int:
    """Sends the share's cases built since the last call (and the end of its cases once all are);
    how many of them have been sent in all."""
    ready, before = feed.ready(), sent
    while sent < len(members) and members[sent] < ready:
        index = members[sent]
        box.send(protocol.encode(protocol.RunCase(index=index, inputs=str(feed.data[index].inputs_file))))
        event_log.case_event(feed.task.id, "sent", index, to=box.kind)
        sent += 1
    if sent == len(members) and before < sent:
        box.send(protocol.encode(protocol.CasesEnd()))
    return sent


def parsed(message: dict) -> Any:
    """A message of the candidate's process as its protocol type; a malformed one is its verdict."""
    try:
        return protocol.parse_event(message)
    except protocol.ProtocolError as exc:
        raise StageFailed(Verdict.CONTRACT_FAIL, f"the candidate's process sent a malformed message ({exc})") from None


def _seconds(value: Any) -> float:
    """A duration the candidate's process reports (for the phases only; nothing is judged by it)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return 0.0


def _index(value: Any, bound: int) -> int:
    if not isinstance(value, int) or not 0 <= value < bound:
        raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process sent a malformed message")
    return value


def _member(value: Any, sent: list[int]) -> int:
    """A case index the candidate's process names: one of those sent to it."""
    if not isinstance(value, int) or isinstance(value, bool) or value not in sent:
        raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process sent a malformed message")
    return value
