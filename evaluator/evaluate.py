"""The evaluation: an Evaluator's lifecycle (the servers, caches and threads every candidate shares)
and the runner of one candidate's stages, in order: static checks, the sandboxed candidate's start,
correctness judged in this process, then on a GPU timing against the eager baseline and the
roofline, Compute Sanitizer's memory check, and the profile."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import torch

from evaluator import (baseline, baseline_server, calibration, compile_scout, gpu_lock, gpu_memory_log, gpu_node,
                       interpreter_probe, ir_compiler, isolation, memcheck, memory_gate, probes, triton_launchers)
from evaluator.environment import environment
from evaluator.fork_server import ForkServer, secret_values
from evaluator.integrity import ProjectIntegrity
from evaluator.ir_store import STORE_FOLDER, IRStore
from evaluator.judging import Judge
from evaluator.redaction import Redactor
from evaluator.reference_cache import ReferenceCache
from evaluator.references import ReferenceStore
from evaluator.result import EvalResult, Stage, Verdict
from evaluator.sandbox import DeviceUnavailable, Sandbox, benchmark_logs, confinement_now, scratch_root
from evaluator.settings import EvaluatorConfig, default_limits, default_watched, resolve_device
from evaluator.stage_failed import StageFailed
from evaluator.stages import correctness, memcheck as memcheck_stage, profile, start, static, timing
from evaluator.stages.context import Evaluation
from evaluator.task import Task

log = logging.getLogger(__name__)
MAX_REASON_CHARS = 2000


@dataclass(frozen=True)
class Step:
    """A stage of the evaluation: where its verdicts belong, what it does, and whether it runs."""

    stage: Stage
    run: Callable[[Evaluation, EvalResult], None]
    wanted: Callable[[Evaluation], bool] = lambda evaluation: True


STEPS = (
    Step(Stage.STATIC, static.static),
    Step(Stage.IMPORT, start.start),
    Step(Stage.CALL, correctness.correctness),
    Step(Stage.TIMING, timing.time_candidate, wanted=lambda evaluation: evaluation.timed),
    Step(Stage.MEMCHECK, memcheck_stage.memcheck,
         wanted=lambda evaluation: evaluation.scorer.on_gpu or evaluation.scorer.sanitizer is not None),
    Step(Stage.TIMING, profile.profile, wanted=profile.wanted),
)


def run_stages(evaluation: Evaluation, result: EvalResult, steps: tuple[Step, ...] = STEPS) -> None:
    """Runs the wanted steps in order until one fails; sets the result's stage, verdict and reason."""
    for step in steps:
        if not step.wanted(evaluation):
            continue
        try:
            step.run(evaluation, result)
        except StageFailed as failed:
            result.stage = failed.stage or step.stage
            result.verdict, result.reason = failed.verdict, failed.reason[:MAX_REASON_CHARS]
            result.traceback = failed.traceback[-MAX_REASON_CHARS:] if failed.traceback else None
            result.out_of_gpu_memory = result.out_of_gpu_memory or failed.out_of_gpu_memory
            return
    result.stage, result.reason = Stage.DONE, correct_reason(result)


def correct_reason(result: EvalResult) -> str:
    passed = sum(c.passed for c in result.cases)
    text = f"all {passed} cases passed"
    if result.performance and result.performance.speedup is not None:
        text += f"; {result.performance.speedup:.2f}x eager PyTorch"
    elif result.performance and result.performance.baseline_error:
        text += f"; no speedup: the eager PyTorch baseline failed ({result.performance.baseline_error[:200]})"
    if result.unchecked:
        text += f"; not checked: {result.unchecked}"
    return text


class ProjectTampered(RuntimeError):
    """The project's own files changed while candidates ran; evaluation refuses to go on."""

    def __init__(self, files: list[str]):
        super().__init__("the project's own files changed while candidates ran: " + ", ".join(files[:10]))
        self.files = files


class EvaluationAbandoned(RuntimeError):
    """The evaluator was told to abandon its evaluations (an interrupted run) while this one ran or
    waited: its processes were killed, and nothing it produced is a verdict."""


class Evaluator:
    """Scores candidates against tasks. Thread-safe: evaluate() may run concurrently."""

    def __init__(self, config: EvaluatorConfig | None = None):
        self.config = config or EvaluatorConfig()
        self._abandoned = threading.Event()
        if self.config.memcheck_start not in memcheck_stage.MEMCHECK_STARTS:
            raise ValueError(f"memcheck_start {self.config.memcheck_start!r}: one of {memcheck_stage.MEMCHECK_STARTS}")
        self.device = resolve_device(self.config.device)
        self.on_gpu = self.device.type == "cuda"
        self.gpu_node = gpu_node.device_node(self.device.index or 0) if self.on_gpu else None  # its GPU alone
        self.machine_gpus = gpu_node.machine_gpus() if self.on_gpu else 1  # asked of NVML once
        self.cache_dir = Path(self.config.cache_dir)
        benchmark_logs()  # before anything of the evaluator's writes them: then confined processes can too
        self.limits = default_limits(self.config.limits, self.on_gpu)
        self._make_folders()
        self.references = ReferenceStore(self.work_dir, self.device, lock_dir=self.lock_dir)
        cache_bytes = self.config.reference_cache_bytes
        self.reference_cache = (ReferenceCache(self.cache_dir / "references", self.device, cache_bytes)
                                if cache_bytes != 0 else None)
        self.probe_offsets = probes.draw_seeds()
        self.second_look_offsets = probes.draw_seeds()  # new inputs again, where the first probe was slow
        self._start_servers()
        self.triton_target = compile_scout.gpu_target(self.device)  # what compile scouts compile for
        self.ir_compiler = (ir_compiler.IRCompiler(IRStore(self.cache_dir / STORE_FOLDER), self.server,
                                                   self.triton_target, self.limits, ir_compiler.threads(self.cores()))
                            if self.scouting() and self.triton_target is not None and self.config.ir_store else None)
        self.sanitizer = ((self.config.sanitizer or (memcheck.sanitizer_path() if self.on_gpu else None))
                          if self.config.memcheck else None)
        # dtype name -> why this Triton's interpreter cannot judge it (CPU only; interpreter_probe.py)
        self.unjudgeable = ({} if self.on_gpu or not self.config.skip_unjudgeable
                            else interpreter_probe.unreliable(self.cache_dir, self.server))
        self.baselines = baseline.BaselineCache(self.cache_dir / "baselines.json")
        self.redactor = Redactor(secret_values(dict(os.environ)))
        self._start_calibration()
        self.memory_gate = memory_gate.MemoryGate()
        self._in_flight = 0
        self._in_flight_lock = threading.Lock()
        self.judges = ThreadPoolExecutor(thread_name_prefix="judge")  # large cases, beside their shares' loops
        self.probe_builder = ThreadPoolExecutor(max_workers=2, thread_name_prefix="probe")  # while cases run
        self.judge = Judge(self.device, self.lock_dir, timing=self.config.timing)
        watched = self.config.watched or default_watched()
        self.integrity = ProjectIntegrity(watched) if self.config.watch_project else None
        self.tampered: list[str] = []
        self._isolation_warned = False
        self._use_disk_cache(confinement_now(self.server, self.limits))
        self.memory_log = (gpu_memory_log.GpuMemoryLog(self._gpu_bytes_held, lambda: self._in_flight)
                           if self.on_gpu else None)

    def _make_folders(self) -> None:
        """The folder of built inputs candidates read, and on a GPU the folder of its shared locks."""
        self.work_dir = Path(tempfile.mkdtemp(prefix="agentloop-inputs-", dir=scratch_root()))
        self.work_dir.chmod(0o755)  # candidates read their inputs here (through a read-only view)
        self.lock_dir = gpu_lock.lock_dir_for(self.cache_dir, self.device.index or 0) if self.on_gpu else None
        if self.lock_dir is not None:
            gpu_lock.prepare(self.lock_dir)

    def _start_servers(self) -> None:
        """The fork server every sandboxed process starts from, and the baseline's server."""
        stubs = self.cache_dir / "triton-stubs" if self.on_gpu else None
        hidden = (self.reference_cache.directory,) if self.reference_cache else ()
        self.server = ForkServer(interpret=not self.on_gpu, triton_stubs=stubs, hidden=hidden)
        self.launchers = triton_launchers.LauncherBuilder(stubs)
        self.baseline_server = baseline_server.BaselineServer(self.server, str(self.device), self.lock_dir)

    def _start_calibration(self) -> None:
        """The GPU's peaks, measured while the first candidates start and compile."""
        self._peaks: calibration.Peaks | None = None
        self._calibrating = threading.Lock()
        self._calibrator = threading.Thread(target=self.calibrated_peaks, name="calibration", daemon=True)
        if self.on_gpu and self.config.timing:
            self._calibrator.start()

    def _gpu_bytes_held(self) -> dict[str, int]:
        """For the memory log: torch's bytes on this GPU, and of them the expected outputs kept there."""
        return {**gpu_memory_log.torch_bytes(self.device), "expected_outputs_kept": self.references.device_bytes()}

    def abandon(self) -> None:
        """Ends every evaluation in flight now, for a caller that will not use their results (an
        interrupted run): the processes they run in are killed, none is started again, and each
        evaluate() in flight or asked later raises EvaluationAbandoned. close() still follows."""
        self._abandoned.set()
        self.server.stop()

    def close(self) -> None:
        if self.memory_log is not None:
            self.memory_log.close()
        if self._calibrator.is_alive() and not self._abandoned.is_set():
            self._calibrator.join()
        self.baseline_server.close()
        self.judges.shutdown(wait=True, cancel_futures=True)
        self.probe_builder.shutdown(wait=True, cancel_futures=True)
        self.launchers.close()
        if self.ir_compiler is not None:
            self.ir_compiler.close()
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
        with self._unless_abandoned(task):
            with self._counted(), self.memory_gate.shared():
                result = self._evaluate_sharing_memory(task, source)
            if result is None or (self.on_gpu and memory_gate.starved(result)):
                with self.memory_gate.alone():
                    result = self._evaluate_once(task, source)
                result.phases["retried_alone"] = 1.0
        return result

    @contextlib.contextmanager
    def _unless_abandoned(self, task: Task) -> Iterator[None]:
        """Whatever an evaluation ended with once abandon() killed its processes (a verdict on a
        killed candidate, an error) is replaced by EvaluationAbandoned."""
        abandoned = EvaluationAbandoned(f"{task.id}: the evaluator abandoned its evaluations")
        if self._abandoned.is_set():
            raise abandoned
        try:
            yield
        except Exception as exc:
            if self._abandoned.is_set():
                raise abandoned from exc
            raise
        if self._abandoned.is_set():
            raise abandoned

    def _evaluate_sharing_memory(self, task: Task, source: str) -> EvalResult | None:
        """None where the evaluator's own GPU work for it (building its references; judging falls back
        to the host) ran out of memory beside the other evaluations: it is evaluated again alone."""
        try:
            return self._evaluate_on_a_working_device(task, source)
        except torch.OutOfMemoryError as exc:
            log.warning("%s: the evaluator ran out of GPU memory beside other evaluations (%s); evaluating "
                        "it again alone", task.id, str(exc).splitlines()[0][:200])
            memory_gate.trim_cached(self.device, slack_bytes=0)
            return None

    def _evaluate_on_a_working_device(self, task: Task, source: str) -> EvalResult:
        """A confined process that could not set up its device before any candidate code ran is the
        machine's failure: the evaluation runs once more in fresh processes; a second such failure
        is raised (DeviceUnavailable), never turned into a verdict."""
        try:
            return self._evaluate_once(task, source)
        except DeviceUnavailable as failed:
            log.warning("%s: %s; evaluating it once more", task.id, failed)
            return self._evaluate_once(task, source)

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
        against 42.6 s): more CUDA contexts time-slicing the GPU held every shared lock longer, and
        CUDA contexts are made one at a time across the machine. So a candidate is split only while
        few evaluations are in flight: one per 8 of this evaluator's cores."""
        if self.config.candidate_processes:
            return self.config.candidate_processes
        if not self.on_gpu:
            return 1
        with self._in_flight_lock:
            return 3 if self._in_flight <= max(1, self.cores() // 8) else 1

    def cores(self) -> int:
        """The machine's cores this evaluator counts on: those it is given, else on a GPU its GPU's
        share of the machine's (every GPU of the machine has an evaluator of its own)."""
        cores = os.cpu_count() or 2
        if self.config.cores:
            return min(self.config.cores, cores)
        return cores // self.machine_gpus if self.on_gpu else cores

    def scouting(self) -> bool:
        if self.config.compile_scout is None:
            return self.triton_target is not None
        return self.config.compile_scout

    def _evaluate_once(self, task: Task, source: str) -> EvalResult:
        began = time.perf_counter()
        result = EvalResult(task_id=task.id, verdict=Verdict.CORRECT, stage=Stage.STATIC, reason="",
                            source_hash=hashlib.sha256(source.encode()).hexdigest(),
                            environment=environment(self.device.type, self.device.index or 0))
        with self.references.using(task), Evaluation(self, task, source) as evaluation:
            run_stages(evaluation, result)
        result.phases.update(evaluation.cpu_seconds())
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

    def note_isolation(self, result: EvalResult, box: Sandbox) -> None:
        """The isolation the candidate's process got goes into the result; less than full is said
        once, loudly, with what is then not guaranteed."""
        if box.isolation is None:
            return
        level = box.isolation.level
        result.environment = dataclasses.replace(result.environment, isolation=level)
        self._use_disk_cache(box.isolation)
        if level != "full" and not self._isolation_warned:
            self._isolation_warned = True
            log.warning("candidates run with %s isolation: the OS refused part of the sandbox, so what "
                        "SECURITY.md lists under it is not guaranteed on this machine", level)

    def _use_disk_cache(self, measured: isolation.Measured | None) -> None:
        """Expected outputs on disk only while confined processes are seen unable to read them: from
        the start where a process confined without candidate code was, then as each candidate's is."""
        self.references.disk = self.reference_cache if measured is not None and measured.level == "full" else None

    def calibrated_peaks(self) -> calibration.Peaks:
        with self._calibrating:
            if self._peaks is None:
                peaks = calibration.calibrate(self.cache_dir, self.device, self.lock_dir)
                self._peaks = self._peaks or peaks  # peaks set meanwhile (a test's, say) stand
            return self._peaks

    def _redacted(self, result: EvalResult) -> EvalResult:
        if not self.redactor.secrets:
            return result
        return self.redactor.value(result)

