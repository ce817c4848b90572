"""Test doubles for the loop: answers written per round, and an evaluation that reads the verdict a
test wants from a marker line in the code (`# VERDICT CORRECT 1.5`). The real evaluator is used
elsewhere; these make DECIDE's rules testable in milliseconds."""

from __future__ import annotations

import asyncio
import re

from evaluator.result import (CaseResult, Environment, EvalResult, KernelInfo, Performance, Stage, TimingStats,
                              Verdict)

MARKER = re.compile(r"# VERDICT (\w+)(?: ([\d.]+))?")


def answer(verdict: str, speedup: float | None = None, body: str = "") -> str:
    marker = f"# VERDICT {verdict}" + (f" {speedup}" if speedup is not None else "")
    return (f"Here is the kernel.\n```python\nimport triton\n{marker}\n{body}\n"
            "def gelu(input, approximate='none'):\n    pass\n```\n")


def fake_result(task_id: str, verdict: str, speedup: float | None) -> EvalResult:
    env = Environment(device="cuda:0" if speedup else "cpu", interpreter=not speedup, torch="t", triton="t",
                      python="p", gpu="H100" if speedup else None, host="node-1" if speedup else "laptop")
    correct = verdict == "CORRECT"
    result = EvalResult(task_id=task_id, verdict=Verdict(verdict), stage=Stage.DONE if correct else Stage.ACCURACY,
                        reason="all cases passed" if correct else f"{verdict.lower()} because of the script",
                        source_hash="h", environment=env,
                        cases=[CaseResult("small", "float32", "standard", 0, correct,
                                          reason="" if correct else "3 of 10 elements outside tolerance")])
    if correct and speedup:
        stats = TimingStats(1.0 / speedup, 1.0 / speedup, 1.0 / speedup, 0.01, 30)
        result.performance = Performance("standard", "float32", stats, TimingStats(1.0, 1.0, 1.0, 0.01, 30),
                                         speedup=speedup, gbps=100.0, tflops=1.0, iou=0.5, mfu=0.1,
                                         roofline_floor_ms=0.1, roofline_fraction=0.1 * speedup)
        result.kernels = [KernelInfo("k", 32, 0, 0, 4, 3)]
    return result


class MarkerEvaluations:
    """Evaluates by reading the marker; counts calls; optionally fails after `crash_after` calls."""

    def __init__(self, latency_s: float = 0.0, crash_after: int | None = None, tune_speedup: float | None = None):
        self.calls = 0
        self.latency_s = latency_s
        self.crash_after = crash_after
        self.tune_speedup = tune_speedup
        self.in_flight = 0
        self.max_in_flight = 0

    async def evaluate(self, task, code: str) -> EvalResult:
        self.calls += 1
        if self.crash_after is not None and self.calls > self.crash_after:
            raise KeyboardInterrupt("simulated crash")
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if self.latency_s:
                await asyncio.sleep(self.latency_s)
        finally:
            self.in_flight -= 1
        match = MARKER.search(code or "")
        if not match:
            return fake_result(task.id, "NO_CODE", None)
        speedup = float(match.group(2)) if match.group(2) else None
        if self.tune_speedup and "num_warps=8" in code:
            speedup = self.tune_speedup
        return fake_result(task.id, match.group(1), speedup)

    def close(self, abandon: bool = False) -> None:
        pass
