"""The exception that ends an evaluation at any stage: it carries the verdict, the reason a model
reads, the traceback where there is one, and the case it is about."""

from __future__ import annotations

from evaluator.cases import Case
from evaluator.contracts import dtype_name
from evaluator.result import Verdict


class StageFailed(Exception):
    """Control flow: the evaluation ends with this verdict and reason."""

    def __init__(self, verdict: Verdict, reason: str, traceback: str | None = None, case: int | None = None,
                 out_of_gpu_memory: bool = False):
        super().__init__(reason)
        self.verdict, self.reason, self.traceback = verdict, reason, traceback
        self.case = case  # plan index of the case it is about; -1 for the import
        self.out_of_gpu_memory = out_of_gpu_memory


def describe_case(case: Case) -> str:
    mode = ", outlier mode (0.1% of elements x50)" if case.mode == "outlier" else ""
    return f"{case.size} {dtype_name(case.dtype)} inputs (seed {case.seed}{mode})"
