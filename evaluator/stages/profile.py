"""The profile stage (on a GPU, when asked): Nsight Compute's metrics of one call on the first timing
inputs, taken with the GPU to itself once the candidate's processes have ended."""

from __future__ import annotations

from evaluator import gpu_lock, profiler
from evaluator.cases import timing_cases
from evaluator.result import EvalResult
from evaluator.stages.context import Evaluation, phase


def wanted(ev: Evaluation) -> bool:
    return ev.scorer.on_gpu and ev.scorer.config.profile


def profile(ev: Evaluation, result: EvalResult) -> None:
    ev.release()
    scorer = ev.scorer
    with phase(result, "profile"), gpu_lock.exclusive(scorer.lock_dir, "profile"):
        first = scorer.references.get(ev.task, timing_cases(ev.task)[0])
        result.profile = profiler.profile(ev.source, ev.entry, first.inputs_file, str(scorer.device))
