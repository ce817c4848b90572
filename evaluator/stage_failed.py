"""The exception that ends an evaluation at any stage: it carries the verdict, the reason a model
reads, the traceback where there is one, and the case it is about."""

from __future__ import annotations

from evaluator.result import Stage, Verdict


class StageFailed(Exception):
    """Control flow: the evaluation ends with this verdict and reason."""

    def __init__(self, verdict: Verdict, reason: str, traceback: str | None = None, case: int | None = None,
                 out_of_gpu_memory: bool = False, stage: Stage | None = None):
        super().__init__(reason)
        self.verdict, self.reason, self.traceback = Verdict(verdict), reason, traceback
        self.case = case  # plan index of the case it is about; -1 for the import
        self.out_of_gpu_memory = out_of_gpu_memory
        self.stage = stage  # where the verdict belongs when not the stage that raised it (an import seen late)
