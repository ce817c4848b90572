"""Judging a candidate's calls in the evaluator's process: reading the outputs its process wrote
(refused when oversized or malformed), and holding them to the task's contract, small cases on the
host and large ones on the GPU, each case's verdict as the exception that ends the evaluation."""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import Any

import torch

from evaluator import event_log, gpu_lock, memory_gate, wire
from evaluator.cases import Case, describe_case, timing_cases
from evaluator.contracts import dtype_name, flatten, identical, structure_problem
from evaluator.kept_outputs import KeptOutputs
from evaluator.references import GPU_JUDGING_BYTES, HOST, CaseData
from evaluator.result import CaseResult, Verdict
from evaluator.stage_failed import StageFailed
from evaluator.task import Task, on_device

# Host bytes that copies of timing cases' outputs (what timed calls are held to) may take at once.
KEPT_OUTPUT_BYTES = 8 << 30


class Judge:
    """Thread-safe: the cases of several candidates are judged at once."""

    def __init__(self, device: torch.device, lock_dir: Path | None, timing: bool):
        self.device, self.lock_dir, self.timing = device, lock_dir, timing
        self.on_gpu = device.type == "cuda"
        # Judging a large case on the GPU takes a few of its temporaries at once; four at a time keep
        # the evaluator's own GPU memory small while candidates hold theirs.
        self._judging = threading.Semaphore(4) if self.on_gpu else contextlib.nullcontext()
        self.kept_outputs = KeptOutputs(KEPT_OUTPUT_BYTES)

    def load_call(self, path: Path, data: CaseData, task: Task, case: Case) -> Any:
        """A call's outputs as the candidate's process wrote them, refused when oversized or malformed."""
        expected = sum(t.numel() * t.element_size() for t in flatten(data.expected.lo) if isinstance(t, torch.Tensor))
        written = path.lstat().st_size if os.path.lexists(path) else 0
        if written > 2 * expected + (16 << 20):
            raise StageFailed(Verdict.CONTRACT_FAIL, f"on {describe_case(case)}: the call returned {written / 2**20:.1f} "
                           f"MiB of output where {expected / 2**20:.2f} MiB was expected; it was not loaded")
        try:
            payload = wire.load(path, "cpu")  # judging moves it to the device
        except wire.WireError as exc:
            raise StageFailed(Verdict.CONTRACT_FAIL, f"on {describe_case(case)}: {exc}") from None
        if not isinstance(payload, dict) or "out" not in payload:
            raise StageFailed(Verdict.CONTRACT_FAIL, "the candidate's process wrote a malformed result")
        return payload["out"]

    def judge_runs(self, task: Task, case: Case, data: CaseData,
                    runs: list[Any]) -> tuple[CaseResult, StageFailed | None, Any]:
        """`judge_case`, and for a timing case, a copy of the first run as it passed (or None): the
        timed calls' results, bit for bit the same, need no second judgement."""
        kept = None
        if self.on_gpu and self.timing and case in timing_cases(task) and task.contract.judges_runs_apart:
            kept = self.kept_outputs.copy(runs[0])
            runs = runs if kept is None else [kept, runs[1]]  # what is judged is what is kept
        case_result, failure = self.judge_case(task, case, data, runs)
        return case_result, failure, None if failure else kept

    def judge_case(self, task: Task, case: Case, data: CaseData,
                    runs: list[Any]) -> tuple[CaseResult, StageFailed | None]:
        """The case's result, and the verdict it ends the evaluation with if it failed."""
        problem = structure_problem(data.expected.lo, runs[0])
        if problem:
            return _outcome(case, _case_result(case, False, problem), contract_violation=False)
        if task.contract.judges_runs_apart and identical(runs[0], runs[1]):
            runs = runs[:1]  # the second run, bit for bit the first, is judged alike (compared on the host)
        judgement = self.judge(task, data, runs)
        case_result = _case_result(case, judgement.passed, judgement.reason)
        case_result.max_abs_err, case_result.max_rel_err = judgement.max_abs_err, judgement.max_rel_err
        case_result.mismatches, case_result.numel = judgement.mismatches, judgement.numel
        case_result.first_bad, case_result.metrics = judgement.first_bad, judgement.metrics
        return _outcome(case, case_result, judgement.contract_violation)

    def judged_apart(self, case: Case, data: CaseData) -> bool:
        """Judged beside the share's loop: on the GPU, a large case's judgement waits for a turn and
        for timings; meanwhile the share's later cases (Optimizer/AdamW's 24 small ones after its first,
        for 6 s on an H100) are taken and judged."""
        return self.judged_on_gpu(data)

    def judged_on_gpu(self, data: CaseData) -> bool:
        return self.on_gpu and (data.resident or data.expected_bytes >= GPU_JUDGING_BYTES)

    def judge(self, task: Task, data: CaseData, runs: list[Any]):
        """Small cases on the host, where their outputs already are; large ones on the evaluator's
        device, or on the host when candidates have taken the GPU's memory."""
        if not self.judged_on_gpu(data):
            return task.contract.judge(data.expected, runs, data.inputs)
        # The outputs are copied in under the lock from where they were read: staging them in
        # page-locked memory first took seconds per large case, and every judgement ran seconds
        # longer meanwhile (benchmarks/RESULTS.md).
        event_log.case_event(task.id, "judge_asked")
        with self._judging, gpu_lock.shared(self.lock_dir, "judging", yielding=True):
            event_log.case_event(task.id, "judge_got")
            try:
                # checks that read the inputs (a quantization gate's float64 product, say) run where
                # the outputs are
                inputs = on_device(data.inputs, self.device) if task.contract.reads_inputs else data.inputs
                return task.contract.judge(data.expected_on(self.device), on_device(runs, self.device), inputs)
            except torch.OutOfMemoryError:
                pass
            finally:
                memory_gate.trim_cached(self.device)  # the GPU's memory is mostly the candidates'
            expected = data.expected_on(HOST)
        return task.contract.judge(expected, runs, data.inputs)


def _case_result(case: Case, passed: bool, reason: str) -> CaseResult:
    return CaseResult(size=case.size, dtype=dtype_name(case.dtype), mode=case.mode, seed=case.seed,
                      passed=passed, reason=reason)


def _outcome(case: Case, case_result: CaseResult,
             contract_violation: bool) -> tuple[CaseResult, StageFailed | None]:
    if case_result.passed:
        return case_result, None
    if contract_violation:
        verdict = Verdict.CONTRACT_FAIL
    else:
        verdict = Verdict.OUTLIER_FAIL if case.mode == "outlier" else Verdict.INCORRECT
    return case_result, StageFailed(verdict, f"on {describe_case(case)}: {case_result.reason}")
