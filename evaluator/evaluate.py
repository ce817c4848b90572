"""The evaluation pipeline: static checks, a sandboxed candidate process, judging every call in
this process, then (on a GPU) timing against the eager baseline and the roofline."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import math
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

from evaluator import probes as probes_module
from evaluator import protocol
from evaluator import (baseline, baseline_server, calibration, compile_scout, event_log, gpu_lock, maintainability,
                       interpreter_probe, memcheck, memory_gate, profiler, roofline, wire)
from evaluator.case_feed import CaseFeed
from evaluator.case_shares import EarliestFailure, Share, failure_stage, merged, split_by_dtype
from evaluator.cases import Case, plan, timing_cases
from evaluator.compile_board import CompileBoard
from evaluator.contracts import Statistical, dtype_name, identical, structure_problem
from evaluator.environment import device_key, environment
from evaluator.sandboxed.guards import COPY_OPS
from evaluator.integrity import ProjectIntegrity
from evaluator.interop import strip_kernelbenchx_harness
from evaluator.judging import Judge
from evaluator.references import CaseData, ReferenceStore
from evaluator.redaction import Redactor
from evaluator.result import CaseResult, EvalResult, KernelInfo, Performance, Stage, TimingStats, Verdict
from evaluator.sandbox import (ChildGone, ForkServer, Limits, Reach, Sandbox, sandbox_folder, scratch_root,
                               secret_values)
from evaluator.settings import EvaluatorConfig, default_watched, resolve_device
from evaluator.stage_failed import StageFailed, describe_case
from evaluator.static_checks import check_source
from evaluator.task import Task
from evaluator.timing import stats

log = logging.getLogger(__name__)
ENTRY_ALIASES = ("kernel_function",)  # and the task's own name, as KernelBench-X accepts both
MAX_REASON_CHARS = 2000
MAX_SOURCE_CHARS = 1 << 20
FEED_POLL_SECONDS = 0.02  # how often, while cases are still being built, the evaluator sends new ones
SHARE_POLL_SECONDS = 0.1  # how often, once all are sent, a share looks whether another share failed earlier


class ProjectTampered(RuntimeError):
    """The project's own files changed while candidates ran; evaluation refuses to go on."""

    def __init__(self, files: list[str]):
        super().__init__("the project's own files changed while candidates ran: " + ", ".join(files[:10]))
        self.files = files


def entry_names(task: Task) -> list[str]:
    """The names a candidate's entry function may have, in order of preference."""
    names = [task.entry, *ENTRY_ALIASES]
    return names + [task.name] if task.name.isidentifier() and task.name not in names else names


class Evaluator:
    """Scores candidates against tasks. Thread-safe: evaluate() may run concurrently."""

    def __init__(self, config: EvaluatorConfig | None = None):
        self.config = config or EvaluatorConfig()
        self.device = resolve_device(self.config.device)
        self.on_gpu = self.device.type == "cuda"
        self.cache_dir = Path(self.config.cache_dir)
        self.lock_dir = (gpu_lock.lock_dir_for(self.cache_dir, self.device.index or 0) if self.on_gpu else None)
        self.limits = self.config.limits or (
            Limits(step_seconds=180, total_seconds=600, memory_bytes=16 << 30, address_space=False) if self.on_gpu
            else Limits(step_seconds=120, total_seconds=900, memory_bytes=6 << 30, address_space=True))
        if self.on_gpu and self.limits.address_space:  # CUDA cannot start under RLIMIT_AS; the watchdog holds
            self.limits = dataclasses.replace(self.limits, address_space=False)
        self.work_dir = Path(tempfile.mkdtemp(prefix="agentloop-inputs-", dir=scratch_root()))
        self.work_dir.chmod(0o755)  # candidates read their inputs here (through a read-only view)
        if self.lock_dir is not None:
            gpu_lock.prepare(self.lock_dir)
        self.references = ReferenceStore(self.work_dir, self.device, lock_dir=self.lock_dir)
        self.probe_offsets = probes_module.draw_seeds()
        self.second_look_offsets = probes_module.draw_seeds()  # new inputs again, where the first probe was slow
        self.server = ForkServer(interpret=not self.on_gpu,
                                 triton_stubs=self.cache_dir / "triton-stubs" if self.on_gpu else None)
        self.triton_target = compile_scout.gpu_target(self.device)  # what compile scouts compile for
        self.sanitizer = memcheck.sanitizer_path() if self.on_gpu and self.config.memcheck else None
        # dtype name -> why this Triton's interpreter cannot judge it (CPU only; interpreter_probe.py)
        self.unjudgeable = ({} if self.on_gpu or not self.config.skip_unjudgeable
                            else interpreter_probe.unreliable(self.cache_dir))
        self.baselines = baseline.BaselineCache(self.cache_dir / "baselines.json")
        self.baseline_server = baseline_server.BaselineServer(self.server, str(self.device), self.lock_dir)
        self.redactor = Redactor(secret_values(dict(os.environ)))
        self._peaks: calibration.Peaks | None = None
        self._calibrating = threading.Lock()
        self._calibrator = threading.Thread(target=self._calibration, name="calibration", daemon=True)
        if self.on_gpu and self.config.timing:  # while the first candidates start and compile
            self._calibrator.start()
        self.memory_gate = memory_gate.MemoryGate()
        self._in_flight = 0
        self._in_flight_lock = threading.Lock()
        # Judging a large case on the GPU takes a few of its temporaries at once; four at a time keep
        # the evaluator's own GPU memory small while candidates hold theirs.
        self._judges = ThreadPoolExecutor(thread_name_prefix="judge")  # large cases, beside their shares' loops
        self._probe_builder = ThreadPoolExecutor(max_workers=2, thread_name_prefix="probe")  # while cases run
        self.judge = Judge(self.device, self.lock_dir, timing=self.config.timing)
        self.integrity = ProjectIntegrity(self.config.watched or default_watched()) if self.config.watch_project else None
        self.tampered: list[str] = []
        self._isolation_warned = False

    def close(self) -> None:
        if self._calibrator.is_alive():
            self._calibrator.join()
        self.baseline_server.close()
        self._judges.shutdown(wait=True, cancel_futures=True)
        self._probe_builder.shutdown(wait=True, cancel_futures=True)
        self.server.close()
        shutil.rmtree(self.work_dir, ignore_errors=True)

    def __enter__(self) -> "Evaluator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------------------------------
    def evaluate(self, task: Task, source: str) -> EvalResult:
        if self.tampered:
            raise ProjectTampered(self.tampered)
        with self._counted(), self.memory_gate.shared():
            result = self._evaluate_once(task, source)
        if self.on_gpu and memory_gate.starved(result):
            with self.memory_gate.alone():
                result = self._evaluate_once(task, source)
            result.phases["retried_alone"] = 1.0
        return result

    @contextlib.contextmanager
    def _counted(self) -> Iterator[None]:
        with self._in_flight_lock:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._in_flight_lock:
                self._in_flight -= 1

    def candidate_processes(self) -> int:
        """Processes for the next candidate's cases. Split by dtype, one candidate's compiles run side by
        side (Normalization/batch_norm's correctness took 7.8 s instead of 15.6 s alone on an H100);
        but with 15 evaluations at once, three processes each made the whole run slower (55.0 s
        against 42.6 s): more CUDA contexts time-slicing the GPU held every shared lock longer. So a
        candidate is split only while few evaluations are in flight (one per 8 cores)."""
        if self.config.candidate_processes:
            return self.config.candidate_processes
        if not self.on_gpu:
            return 1
        with self._in_flight_lock:
            return 3 if self._in_flight <= max(1, (os.cpu_count() or 2) // 8) else 1

    def _scouting(self) -> bool:
        if self.config.compile_scout is None:
            return self.triton_target is not None
        return self.config.compile_scout

    def _evaluate_once(self, task: Task, source: str) -> EvalResult:
        began = time.perf_counter()
        result = EvalResult(task_id=task.id, verdict=Verdict.CORRECT, stage=Stage.STATIC, reason="",
                            source_hash=hashlib.sha256(source.encode()).hexdigest(),
                            environment=environment(self.device.type, self.device.index or 0))
        try:
            with self.references.using(task):
                self._evaluate(task, source, result)
            result.stage, result.reason = Stage.DONE, self._correct_reason(result)
        except StageFailed as v:
            result.verdict, result.reason = v.verdict, v.reason[:MAX_REASON_CHARS]
            result.traceback = v.traceback[-MAX_REASON_CHARS:] if v.traceback else None
            result.out_of_gpu_memory = result.out_of_gpu_memory or v.out_of_gpu_memory
        result.phases["total"] = time.perf_counter() - began
        if self.on_gpu:
            memory_gate.trim_cached(self.device)  # what this evaluation's references and judging left cached
        self._check_integrity(result)
        return self._redacted(result)

    def _check_integrity(self, result: EvalResult) -> None:
        """After a candidate ran: were the project's own files changed? Then nothing after is trusted."""
        if self.integrity is None:
            return
        changed = self.integrity.changes()
        if changed:
            self.tampered = changed
            result.verdict, result.stage = Verdict.CONTRACT_FAIL, Stage.DONE
            result.reason = ("the project's own files changed while candidates ran (" + ", ".join(changed[:5]) +
                             "); evaluation stops until they are checked")

    @contextlib.contextmanager
    def _phase(self, result: EvalResult, name: str) -> Iterator[None]:
        began = time.perf_counter()
        try:
            yield
        finally:
            result.phases[name] = result.phases.get(name, 0.0) + time.perf_counter() - began

    def _evaluate(self, task: Task, source: str, result: EvalResult) -> None:
        if len(source) > MAX_SOURCE_CHARS:
            raise StageFailed(Verdict.STATIC_REJECT, f"the candidate is {len(source) / 2**20:.1f} MiB of source; the "
                           f"limit is {MAX_SOURCE_CHARS >> 20} MiB (a kernel file is a few KiB)")
        source = strip_kernelbenchx_harness(source)
        with self._phase(result, "static"):
            report = check_source(source, entry_names(task), frozenset(a.api for a in task.allowed))
            result.maintainability = maintainability.measure(source)
        source = report.source
        result.executed_hash = hashlib.sha256(source.encode()).hexdigest()
        blocking = report.verdict in (Verdict.NO_CODE, Verdict.COMPILE_FAIL) or report.entry is None
        if not report.ok and (self.config.static_checks or blocking):
            raise StageFailed(report.verdict, report.reason)
        job = self._job(task, report.entry)
        result.stage = Stage.IMPORT
        feed = CaseFeed(self.references, task, self._plan(task, result))
        shared = sandbox_folder(Path(tempfile.mkdtemp(prefix="al-eval-", dir=scratch_root())))
        reach = Reach(writable=(shared,), readable=tuple(p for p in (self.work_dir, self.lock_dir) if p),
                      gpu=self.on_gpu, triton_cache=sandbox_folder(shared / "triton"))
        if self._scouting():
            job["compile_board"] = str(sandbox_folder(shared / "board"))
            job["triton_target"] = self.triton_target
        timed = self.on_gpu and self.config.timing
        cached = self._cached_baseline(task) if timed else None
        early = self._early_baseline(task, feed) if timed and not cached else None
        probing = self._probe_builder.submit(self._probe_sets, task) if timed else None
        try:
            with self._phase(result, "spawn"):
                box = Sandbox(self.server, "candidate", job, {"candidate.py": source}, self.limits, reach)
                checker = self._start_memcheck(job, reach, source, task, feed)
            with box, checker or contextlib.nullcontext():
                try:
                    with self._phase(result, "correctness"):
                        passed = self._correctness(box, job, reach, source, task, feed, result)
                except StageFailed as verdict:
                    if verdict.verdict is Verdict.MEMORY_FAIL and checker and verdict.case is not None:
                        self._locate_fault(checker, verdict, feed, result)
                    raise
                finally:
                    self._note_isolation(result, box)
                if timed:
                    result.stage = Stage.TIMING
                    earlier = [passed.get(feed.cases.index(case)) for case in timing_cases(task)]
                    with self._phase(result, "timing"):
                        self._time(box, task, result, cached or early, earlier, probing.result())
                if self.on_gpu:
                    result.stage = Stage.MEMCHECK
                    self._memcheck(checker, result)
        except ChildGone as gone:
            raise StageFailed(Verdict(gone.verdict), gone.reason, gone.output_tail or None) from None
        finally:
            if early is not None:
                early.cancel()
            if probing is not None:
                probing.cancel()
            feed.close()
            result.phases["references"] = feed.seconds
            shutil.rmtree(shared, ignore_errors=True)
        if self.on_gpu and self.config.profile:
            with self._phase(result, "profile"), gpu_lock.exclusive(self.lock_dir, "profile"):
                first = self.references.get(task, timing_cases(task)[0])
                result.profile = profiler.profile(source, report.entry, first.inputs_file, str(self.device))

    def _plan(self, task: Task, result: EvalResult) -> list[Case]:
        """The task's cases, less those of dtypes this interpreter cannot judge (said in the result);
        all of them where that would leave none."""
        cases = plan(task, self.on_gpu)
        skipped = sorted({dtype_name(c.dtype) for c in cases} & self.unjudgeable.keys())
        kept = [c for c in cases if dtype_name(c.dtype) not in skipped]
        if not skipped or not kept:
            return cases
        result.unchecked = "; ".join(self.unjudgeable[name] for name in skipped)
        return kept

    def _start_memcheck(self, job: dict, reach: Reach, source: str, task: Task,
                        feed: CaseFeed) -> memcheck.MemcheckRun | None:
        """On a GPU, the process that runs the candidate under Compute Sanitizer, started now and given
        the small and edge cases as they are built."""
        if not (self.on_gpu and self.config.memcheck and self.sanitizer):
            return None
        checker = memcheck.MemcheckRun(self.server, job, source, self.limits, reach, self.sanitizer)
        indices = [feed.cases.index(c) for c in memcheck.checked_cases(task) if c in feed.cases]
        checker.feed(feed.ready, [(i, lambda i=i: feed.data[i].inputs_file, describe_case(feed.cases[i]))
                                  for i in indices])
        return checker

    def _memcheck(self, checker: memcheck.MemcheckRun | None, result: EvalResult) -> None:
        """What Compute Sanitizer saw of a correct candidate's small and edge cases (memcheck.py), run
        beside its timing; an invalid access outranks the speed measured meanwhile."""
        if checker is None:
            result.memory_check = "off" if not self.config.memcheck else "unavailable: compute-sanitizer was not found"
            return
        with self._phase(result, "memcheck"):
            outcome = checker.outcome()
        result.phases["memcheck_exit"] = checker.exit_seconds
        result.memory_check = "memcheck" if outcome.ran else "unavailable: " + outcome.reason
        if outcome.verdict is not None:
            result.performance = None
            raise StageFailed(Verdict(outcome.verdict), outcome.reason, outcome.report or None)

    def _locate_fault(self, checker: memcheck.MemcheckRun, verdict: StageFailed, feed: CaseFeed,
                      result: EvalResult) -> None:
        """A CUDA fault (an illegal address) in a case: under Compute Sanitizer, whose report says which
        kernel, line and access (the fault alone says none of it), the small and edge cases sent to it
        so far (likely to show the same mistake), then the case that faulted."""
        if not 0 <= verdict.case < len(feed.cases):
            return
        checker.end(_described(feed, [feed.cases[verdict.case]]))
        with self._phase(result, "memcheck"):
            outcome = checker.outcome()
        if outcome.verdict == Verdict.MEMORY_FAIL.value:
            result.memory_check = "memcheck"
            verdict.reason, verdict.traceback = outcome.reason, outcome.report or verdict.traceback

    def _note_isolation(self, result: EvalResult, box: Sandbox) -> None:
        """The isolation the candidate's process got goes into the result; less than full is said
        once, loudly, with what is then not guaranteed."""
        if box.isolation is None:
            return
        level = box.isolation.level
        result.environment = dataclasses.replace(result.environment, isolation=level)
        if level != "full" and not self._isolation_warned:
            self._isolation_warned = True
            log.warning("candidates run with %s isolation: the OS refused part of the sandbox, so what "
                        "SECURITY.md lists under it is not guaranteed on this machine", level)

    def _job(self, task: Task, entry: str) -> dict[str, Any]:
        """What a candidate's process (or its scout) is told about its task."""
        return {"task": task.id, "entry": entry, "device": str(self.device), "mutates": list(task.mutates),
                "allowed_aten": sorted({op for a in task.allowed for op in a.aten}),
                "check_memory": self.config.memcheck,
                "denied_aten": [] if task.host_copies else sorted(COPY_OPS),
                "lock_dir": str(self.lock_dir) if self.lock_dir else None,
                "gpu_memory_fraction": self.config.gpu_memory_fraction if self.on_gpu else None,
                "model_init": str(self.references.model_init_file(task)) if task.model_init else None}

    # correctness ------------------------------------------------------------------------------
    def _correctness(self, box: Sandbox, job: dict, reach: Reach, source: str, task: Task, feed: CaseFeed,
                     result: EvalResult) -> dict[int, Any]:
        """The first share of the cases in `box` (kept for timing), the others in processes of their own.
        Returns the kept copies of timing cases' outputs as they passed, by plan index."""
        shares = [Share(members) for members in split_by_dtype(feed.cases, self.candidate_processes())]
        earliest = EarliestFailure()
        helpers = [threading.Thread(target=self._run_share_apart, args=(job, reach, source, task, feed, share, earliest),
                                    name=f"{task.id} share {k}", daemon=True) for k, share in enumerate(shares[1:], 1)]
        scouting = threading.Event()
        scout = threading.Thread(target=self._scout, args=(job, reach, source, feed, scouting, result),
                                 name=f"{task.id} compile scout", daemon=True) if self._scouting() else None
        for helper in helpers + ([scout] if scout else []):
            helper.start()
        try:
            self._run_share(box, task, feed, shares[0], earliest)
        except BaseException:
            earliest.report(-math.inf)  # the evaluator's own error: the other shares stop
            raise
        finally:
            for helper in helpers:
                helper.join()
            scouting.set()  # only once every share is done: the others may be waiting on the scout's kernels
            if scout is not None:
                scout.join()
        for share in shares[1:]:
            if share.failure is not None and not isinstance(share.failure, StageFailed):
                raise share.failure  # the evaluator's own error, not the candidate's
        result.cases, failed = merged(shares)
        result.kernels = _kernels(shares)
        if not self.on_gpu:
            said = {share.memory_check for share in shares if share.import_seconds is not None}
            result.memory_check = ("off" if not self.config.memcheck else
                                   next((m for m in sorted(said) if m != "interpreter"), "interpreter" if said else None))
        if shares[0].import_seconds is not None:
            result.phases["start_and_import"] = shares[0].import_seconds
        result.phases["calls"] = sum(share.call_seconds for share in shares)
        if self.on_gpu:
            result.phases["compile"] = sum(share.compile_seconds for share in shares)
            result.phases["scout_wait"] = sum(share.scout_wait_seconds for share in shares)
        if failed is not None:
            result.stage = failure_stage(failed.failed_at)
            raise failed.failure
        return {index: out for share in shares for index, out in share.passed_outputs.items()}

    def _scout(self, job: dict, reach: Reach, source: str, feed: CaseFeed, finished: threading.Event,
               result: EvalResult) -> None:
        """Sends the compile scout every case as it is built, until the scout is done or the
        candidate's cases are (then it is killed). Whatever goes wrong with it changes nothing."""
        members = list(range(len(feed.cases)))
        sent, began = 0, time.perf_counter()
        try:
            with Sandbox(self.server, "scout", job, {"candidate.py": source}, self.limits, reach) as box:
                while not finished.is_set():
                    sent = _send_ready_cases(box, feed, members, sent)
                    message = box.recv(timeout=FEED_POLL_SECONDS if sent < len(members) else SHARE_POLL_SECONDS)
                    if message is not None and isinstance(protocol.parse_event(message), protocol.Scouted):
                        result.phases["scout"] = time.perf_counter() - began
                        return
        except Exception:  # noqa: BLE001 - ChildGone, a failed case build: the candidate's process reports its own
            return
        finally:
            CompileBoard(job["compile_board"]).clear()  # nobody waits for the compiles of a scout that is gone

    def _run_share_apart(self, job: dict, reach: Reach, source: str, task: Task, feed: CaseFeed, share: Share,
                         earliest: EarliestFailure) -> None:
        try:
            with Sandbox(self.server, "candidate", job, {"candidate.py": source}, self.limits, reach) as box:
                self._run_share(box, task, feed, share, earliest)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the evaluation's thread
            share.failure, share.failed_at = exc, -1

    def _run_share(self, box: Sandbox, task: Task, feed: CaseFeed, share: Share, earliest: EarliestFailure) -> None:
        """Sends each case of the share as soon as it is built; judges each once both its runs are
        in. Records the share's verdict, if it fails, on `share`."""
        began = time.perf_counter()
        sent = calls = 0
        imported = False
        try:
            while not earliest.passed(share):
                sent = _send_ready_cases(box, feed, share.members, sent)
                box.idle(imported and calls == 2 * sent and sent < len(share.members))
                message = box.recv(timeout=FEED_POLL_SECONDS if sent < len(share.members) else SHARE_POLL_SECONDS)
                _harvest(share, task, wait=False)
                if message is None:
                    continue
                message = _parsed(message)
                if isinstance(message, protocol.Imported):
                    imported = True
                    share.memory_check = message.memory_check
                    event_log.case_event(task.id, "imported")
                    share.import_seconds = time.perf_counter() - began
                elif isinstance(message, protocol.Failed):
                    raise self._child_failed(message, feed.cases, share.members[:sent])
                elif isinstance(message, protocol.CallDone):
                    calls += 1
                    self._take_call(box, task, feed, share, message, sent)
                elif isinstance(message, protocol.CasesDone):
                    event_log.case_event(task.id, "cases_done")
                    _harvest(share, task, wait=True)
                    if len(share.judged) < len(share.members):  # the candidate's code shares the worker's socket
                        raise StageFailed(Verdict.CONTRACT_FAIL, f"the candidate's process reported the cases done "
                                       f"before running them all ({len(share.judged)} of {len(share.members)} judged)")
                    share.kernels = list(message.kernels)
                    share.compile_seconds = _seconds(message.compile_seconds)
                    share.scout_wait_seconds = _seconds(message.scout_wait_seconds)
                    return
                else:
                    raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process sent an unexpected message")
            box.kill()  # an earlier case failed in another process: nothing left here can change the verdict
        except ChildGone as gone:
            verdict = StageFailed(Verdict(gone.verdict), gone.reason, gone.output_tail or None)
            self._fail_share(share, earliest, _earliest(share, task, verdict), imported)
        except StageFailed as verdict:
            self._fail_share(share, earliest, _earliest(share, task, verdict), imported)
        finally:
            for future in share.pending.values():
                future.cancel()  # judgements not yet begun of cases after the verdict's

    @staticmethod
    def _fail_share(share: Share, earliest: EarliestFailure, verdict: StageFailed, imported: bool) -> None:
        """A verdict about no case in particular (the process died, say) is about the first case
        not yet judged, or the import."""
        pending = share.first_pending()
        share.failure = verdict
        if verdict.case is not None:
            share.failed_at = verdict.case
        elif imported:
            share.failed_at = pending if pending is not None else share.members[-1]
        else:
            share.failed_at = -1
        earliest.report(share.failed_at)

    def _take_call(self, box: Sandbox, task: Task, feed: CaseFeed, share: Share, message: protocol.CallDone,
                   sent: int) -> None:
        """One run's outputs, read back; both runs in, the case is judged."""
        index, run = _member(message.case, share.members[:sent]), _index(message.run, 2)
        case, data = feed.cases[index], feed.data[index]
        try:
            share.call_seconds += _seconds(message.seconds)
            event_log.case_event(task.id, "run_in", index, run=run)
            self._check_call_report(message, case)
            runs = share.runs.setdefault(index, [])
            runs.append(self.judge.load_call(box.scratch / f"case{index}_run{run}.pt", data, task, case))
            if len(runs) == 2:
                runs = share.runs.pop(index)
                alone = isinstance(task.contract, Statistical) and task.contract.draws_alone
                repeated = share.earlier_calls.add(runs) if alone else None
                if repeated:
                    raise StageFailed(Verdict.INCORRECT, f"on {describe_case(case)}: {repeated}")
                if self.judge.judged_apart(case, data):
                    share.pending[index] = self._judges.submit(self.judge.judge_runs, task, case, data, runs)
                else:
                    _record(share, task, index, self.judge.judge_runs(task, case, data, runs))
        except StageFailed as verdict:
            verdict.case = index
            raise

    def _child_failed(self, message: protocol.Failed, cases: list[Case], sent: list[int]) -> StageFailed:
        verdict = message.verdict
        if verdict not in {"COMPILE_FAIL", "RUNTIME_FAIL", "CONTRACT_FAIL", "MEMORY_FAIL"}:
            verdict = "RUNTIME_FAIL"
        reason, case = message.reason or "failed", None
        if message.phase == "import":
            reason, case = "importing the module failed: " + reason, -1
        elif message.phase == "call":
            case = _member(message.case, sent)
            reason = f"on {describe_case(cases[case])}: {reason}"
        return StageFailed(Verdict(verdict), reason, message.traceback or None, case, message.out_of_gpu_memory)

    @staticmethod
    def _check_call_report(message: protocol.CallDone, case: Case) -> None:
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

    # timing -----------------------------------------------------------------------------------
    def _early_baseline(self, task: Task, feed: CaseFeed) -> baseline.EarlyBaseline:
        """The task's baseline, measured once its timing inputs are built."""
        indices = [feed.cases.index(case) for case in timing_cases(task)]

        def inputs_ready() -> list[Path] | None:
            try:
                built = feed.ready()
            except BaseException:  # noqa: BLE001 - the evaluation reports it; the baseline waits to be cancelled
                return None
            return [feed.data[i].inputs_file for i in indices] if built > max(indices) else None

        def start(set_files: list[Path]) -> baseline_server.Measurement:
            return self.baseline_server.measure(task, set_files, self.config.timing_policy,
                                                self.config.compile_baseline)

        # kept as soon as measured: a candidate failing meanwhile leaves it for the task's next one
        return baseline.EarlyBaseline(inputs_ready, start, keep=lambda measured: self._keep_baseline(task, measured))

    def _probe_sets(self, task: Task, offsets: tuple[int, ...] | None = None) -> list[CaseData]:
        """The probe sets (built while the candidate runs its cases), or none where the task's
        configuration depends on the seed beyond the probes' period."""
        first = self.references.get(task, timing_cases(task)[0])
        cases = probes_module.probe_cases(task, offsets or self.probe_offsets)
        probes = [self.references.get(task, case) for case in cases]
        return probes if all(probes_module.same_configuration(p.inputs, first.inputs) for p in probes) else []

    def _time(self, box: Sandbox, task: Task, result: EvalResult,
              reference: dict[str, TimingStats] | baseline.EarlyBaseline, earlier: list[Any],
              probes: list[CaseData]) -> None:
        """`reference`: the cached baseline ({"eager": ..., "compiled": ...}), or the one being measured;
        `earlier`: per timing set, a kept copy of the output that passed on its inputs, or None."""
        sets = [self.references.get(task, case) for case in timing_cases(task)]
        event_log.case_event(task.id, "timing_asked")
        candidate, method, probe_ms = self._time_candidate(box, task, sets, earlier, probes)
        event_log.case_event(task.id, "timed_checked")
        try:
            measured = reference if isinstance(reference, dict) else reference.result()
            event_log.case_event(task.id, "baseline_in")
            eager, compiled = measured.get("eager"), measured.get("compiled")
            baseline_error = None
        except ChildGone as gone:  # the reference's failure is not the candidate's
            eager = compiled = None
            baseline_error = gone.reason[:MAX_REASON_CHARS]
            result.out_of_gpu_memory = result.out_of_gpu_memory or gone.out_of_gpu_memory
        perf = Performance(size="standard", dtype=dtype_name(task.primary_dtype), candidate=candidate, eager=eager,
                           compiled=compiled, timing_method=method,
                           baseline_error=baseline_error, probe_ms=probe_ms)
        if eager:
            perf.speedup = eager.median_ms / candidate.median_ms
        if compiled:
            perf.speedup_vs_compiled = compiled.median_ms / candidate.median_ms
        peaks = self._calibration()
        cost = task.cost(sets[0].inputs)
        tf32 = bool(getattr(task.contract, "tf32", False))
        compute_dtype = task.compute_dtype or task.primary_dtype
        for name, value in roofline.figures(cost, peaks, compute_dtype, tf32, candidate.median_ms).items():
            setattr(perf, name, value)
        if roofline.impossible(perf.roofline_fraction):
            raise StageFailed(Verdict.CONTRACT_FAIL, (
                f"measured {candidate.median_ms:.4f} ms, below the physical floor of {perf.roofline_floor_ms:.4f} ms "
                f"for {cost.bytes / 1e6:.1f} MB and {cost.flops / 1e9:.2f} GFLOP on this GPU; a result faster than "
                "the hardware allows is rejected (work escaping the timer, or results computed ahead of time)"))
        result.performance = perf

    def _time_candidate(self, box: Sandbox, task: Task, sets: list[CaseData], earlier: list[Any],
                        probes: list[CaseData]) -> tuple[TimingStats, str, list[float]]:
        """The candidate's timing statistics, how it was timed (CUDA events, or wall time when it
        launched on streams of its own), and its probe calls' times. Where the probe calls look like
        a replay, the candidate is timed once more with probes on other new inputs: a replay is slow
        on every new input, while a call slowed by something else on the machine seldom is twice."""
        timed, method, probe_ms = self._timed_once(box, task, sets, earlier, probes)
        replayed = probes_module.replay_reason(timed.median_ms, probe_ms)
        if not replayed:
            return timed, method, probe_ms
        second = self._probe_sets(task, self.second_look_offsets)
        if not second:  # no other new inputs in the timing sets' configuration: the first look stands
            raise StageFailed(Verdict.CONTRACT_FAIL, replayed)
        timed, method, second_ms = self._timed_once(box, task, sets, earlier, second)
        replayed_again = probes_module.replay_reason(timed.median_ms, second_ms)
        if replayed_again:
            raise StageFailed(Verdict.CONTRACT_FAIL, replayed_again + " (twice, on two draws of new inputs)")
        return timed, method, probe_ms + second_ms

    def _timed_once(self, box: Sandbox, task: Task, sets: list[CaseData], earlier: list[Any],
                    probes: list[CaseData]) -> tuple[TimingStats, str, list[float]]:
        box.send(protocol.encode(protocol.TimeCalls(sets=tuple(str(d.inputs_file) for d in sets),
                                                    probes=tuple(str(d.inputs_file) for d in probes),
                                                    policy=self.config.timing_policy)))
        message = _parsed(box.recv())
        event_log.case_event(task.id, "timed")
        if isinstance(message, protocol.Failed):
            raise StageFailed(Verdict(message.verdict) if message.verdict in {"RUNTIME_FAIL", "CONTRACT_FAIL"}
                           else Verdict.RUNTIME_FAIL, "while timing: " + message.reason, message.traceback or None,
                           out_of_gpu_memory=message.out_of_gpu_memory)
        if not isinstance(message, protocol.Timed):
            raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process sent an unexpected message")
        self._check_timed_calls(box, task, sets + probes, message, earlier + [None] * len(probes))
        if not message.samples_ms:
            raise StageFailed(Verdict.RUNTIME_FAIL, "timing produced no samples")
        timed = stats(list(message.samples_ms))
        if len(message.probe_ms) != len(probes):
            raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process reported no timing for the probe calls")
        return timed, "wall" if message.side_stream else "events", list(message.probe_ms)

    def _check_timed_calls(self, box: Sandbox, task: Task, sets: list[CaseData], message: protocol.Timed,
                           earlier: list[Any]) -> None:
        if message.calls_without_launch:
            raise StageFailed(Verdict.CONTRACT_FAIL, "some timed calls launched no Triton kernel (results cached or "
                           "replayed across calls are not allowed)")
        if message.violations:
            ops = ", ".join(message.violations[:8])
            raise StageFailed(Verdict.CONTRACT_FAIL, f"timed calls ran PyTorch operators on the host ({ops})")
        for k, data in enumerate(sets):
            try:
                payload = wire.load(box.scratch / f"timed_set{k}.pt", "cpu")
            except wire.WireError as exc:
                raise StageFailed(Verdict.CONTRACT_FAIL, f"timed call results unreadable: {exc}") from None
            out = payload.get("out") if isinstance(payload, dict) else None
            if earlier[k] is not None and identical(out, earlier[k]):
                continue  # bit for bit what passed on these inputs before timing
            problem = structure_problem(data.expected.lo, out)
            judgement = None if problem else self.judge.judge(task, data, [out])
            if problem or not judgement.passed:
                raise StageFailed(Verdict.CONTRACT_FAIL, "a timed call returned wrong results although calls of the "
                               "same configuration passed before timing (results cached, replayed or computed ahead?): "
                               + (problem or judgement.reason))

    def _baseline_keys(self, task: Task) -> dict[str, str]:
        seeds, key = tuple(task.timing_seeds), device_key(self.device)
        labels = ["eager", "compiled"] if self.config.compile_baseline else ["eager"]
        return {label: baseline.cache_key(task, dtype_name(task.primary_dtype), seeds, key, label == "compiled")
                for label in labels}

    def _cached_baseline(self, task: Task) -> dict[str, TimingStats] | None:
        found = {label: self.baselines.get(key) for label, key in self._baseline_keys(task).items()}
        return found if all(found.values()) else None

    def _keep_baseline(self, task: Task, measured: dict[str, TimingStats]) -> None:
        for label, key in self._baseline_keys(task).items():
            if label in measured:
                self.baselines.put(key, measured[label])

    def _calibration(self) -> calibration.Peaks:
        with self._calibrating:
            if self._peaks is None:
                peaks = calibration.calibrate(self.cache_dir, self.device, self.lock_dir)
                self._peaks = self._peaks or peaks  # peaks set meanwhile (a test's, say) stand
            return self._peaks

    # ------------------------------------------------------------------------------------------
    @staticmethod
    def _correct_reason(result: EvalResult) -> str:
        passed = sum(c.passed for c in result.cases)
        text = f"all {passed} cases passed"
        if result.performance and result.performance.speedup is not None:
            text += f"; {result.performance.speedup:.2f}x eager PyTorch"
        elif result.performance and result.performance.baseline_error:
            text += f"; no speedup: the eager PyTorch baseline failed ({result.performance.baseline_error[:200]})"
        if result.unchecked:
            text += f"; not checked: {result.unchecked}"
        return text

    def _redacted(self, result: EvalResult) -> EvalResult:
        if not self.redactor.secrets:
            return result
        return self.redactor.value(result)


def _record(share: Share, task: Task, index: int, outcome: tuple[CaseResult, StageFailed | None, Any]) -> None:
    share.judged[index], failure, kept = outcome
    event_log.case_event(task.id, "judged", index)
    if kept is not None:
        share.passed_outputs[index] = kept
    if failure is not None:
        failure.case = index
        raise failure


def _harvest(share: Share, task: Task, wait: bool, before: float = math.inf) -> None:
    """Records the share's judgements that are done (with `wait`, all of them before case `before`).
    A failure is raised once every case before it is judged: the verdict is the earliest failing case's."""
    ready = [i for i in sorted(share.pending) if i < before and (wait or share.pending[i].done())]
    failing = next((i for i in ready if share.pending[i].result()[1] is not None), None)
    if failing is not None:
        ready = [i for i in sorted(share.pending) if i <= failing]
    for index in ready:
        _record(share, task, index, share.pending.pop(index).result())


def _earliest(share: Share, task: Task, verdict: StageFailed) -> StageFailed:
    """`verdict`, or the failure of a case before it that was judged beside the share's loop."""
    try:
        _harvest(share, task, wait=True, before=math.inf if verdict.case is None else verdict.case)
    except StageFailed as earlier:
        return earlier
    return verdict


def _described(feed: CaseFeed, cases: list[Case]) -> list[tuple[int, Path, str]]:
    """(plan index, inputs file, description) of built cases."""
    indices = [feed.cases.index(case) for case in cases]
    return [(index, feed.data[index].inputs_file, describe_case(case)) for index, case in zip(indices, cases)]


def _send_ready_cases(box: Sandbox, feed: CaseFeed, members: list[int], sent: int) -> int:
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


def _parsed(message: dict) -> Any:
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


def _kernels(shares: list[Share]) -> list[KernelInfo]:
    """Compile metadata per kernel name, from the first share that launched it."""
    found: dict[str, KernelInfo] = {}
    for share in shares:
        for info in share.kernels:
            found.setdefault(info.name, info)
    return list(found.values())
