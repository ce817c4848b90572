"""Feedback signals: small providers that turn an attempt and its history into prompt sections.

An experiment turns each on or off by name. A provider returns the context of its template
(prompts/feedback/<name>.j2), or None when it has nothing to say about this attempt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from evaluator.result import Verdict
from evaluator.task import Task
from traces.records import Attempt

MAX_FAILING_CASES = 3


@dataclass
class FeedbackContext:
    task: Task
    attempt: Attempt  # the attempt the next one builds on
    history: list[Attempt]
    reflection: str | None = None


def compile_errors(ctx: FeedbackContext) -> dict | None:
    """Compile, static, runtime, contract and memory-access errors, with the traceback trimmed to the
    candidate's lines."""
    result = ctx.attempt.result
    if result is None or not (result.verdict.is_error or result.verdict is Verdict.MEMORY_FAIL):
        return None
    return {"verdict": result.verdict.value, "stage": result.stage.value, "reason": result.reason,
            "traceback": result.traceback or ""}


def _case_view(case) -> dict:
    return {"size": case.size, "dtype": case.dtype, "mode": case.mode, "seed": case.seed, "reason": case.reason,
            "max_abs_err": case.max_abs_err, "mismatches": case.mismatches, "numel": case.numel,
            "first_bad": [{"index": b.index, "expected": b.expected, "got": b.got} for b in case.first_bad]}


def correctness(ctx: FeedbackContext) -> dict | None:
    """Which sizes, dtypes and elements are wrong, expected against got."""
    result = ctx.attempt.result
    if result is None or result.verdict.value != "INCORRECT":
        return None
    failing = [c for c in result.cases if not c.passed][:MAX_FAILING_CASES]
    return {"reason": result.reason, "passed": sum(c.passed for c in result.cases), "failing": [_case_view(c) for c in failing]}


def outliers(ctx: FeedbackContext) -> dict | None:
    """Right on ordinary inputs, wrong when 0.1% of the elements are 50x larger."""
    result = ctx.attempt.result
    if result is None or result.verdict.value != "OUTLIER_FAIL":
        return None
    failing = [c for c in result.cases if not c.passed][:MAX_FAILING_CASES]
    return {"reason": result.reason, "failing": [_case_view(c) for c in failing]}


def profiler(ctx: FeedbackContext) -> dict | None:
    """Roofline position, achieved against peak bandwidth and FLOP/s, registers, spills, occupancy."""
    result = ctx.attempt.result
    if result is None or result.performance is None:
        return None
    p = result.performance
    bound = "memory" if (p.iou or 0) >= (p.mfu or 0) else "compute"
    return {
        "median_ms": p.candidate.median_ms, "eager_ms": p.eager.median_ms if p.eager else None,
        "speedup": p.speedup, "gbps": p.gbps, "tflops": p.tflops, "iou": p.iou, "mfu": p.mfu,
        "floor_ms": p.roofline_floor_ms, "fraction": p.roofline_fraction, "bound": bound,
        "kernels": [vars(k) for k in result.kernels], "profile": result.profile or {},
    }


def history(ctx: FeedbackContext) -> dict | None:
    """Every earlier attempt of this chain: verdict and speedup, round by round."""
    rows = [{"round": a.round, "trial": a.trial, "mode": a.mode, "verdict": a.verdict or "none",
             "speedup": a.speedup, "reason": (a.result.reason if a.result else "")[:160]}
            for a in ctx.history]
    return {"attempts": rows} if len(rows) > 1 else None


def reflection(ctx: FeedbackContext) -> dict | None:
    """The model's own analysis of the last failure (GEAK's reflector), when one was asked for."""
    return {"text": ctx.reflection} if ctx.reflection else None


PROVIDERS: dict[str, Callable[[FeedbackContext], dict | None]] = {
    "compile_errors": compile_errors,
    "correctness": correctness,
    "outliers": outliers,
    "profiler": profiler,
    "history": history,
    "reflection": reflection,
}


def sections(signals: list[str] | tuple[str, ...], ctx: FeedbackContext) -> list[tuple[str, dict]]:
    """(signal, template context) for each enabled signal that has something to say, in order."""
    out = []
    for name in signals:
        content = PROVIDERS[name](ctx)
        if content is not None:
            out.append((name, content))
    return out
