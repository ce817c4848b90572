"""How a candidate's outputs are judged against the reference: the contract kinds.

Each contract judges one case: the expected values (the reference in the evaluated dtype, `lo`,
and where it matters in float64, `hi`) against the outputs of the candidate's two runs. This code
runs in the evaluator's process, out of the candidate's reach. Tolerance and Exact have modules of
their own (tolerance.py, exact.py), built on judgement.py and output_trees.py; the other kinds are
here, and every kind and the helpers judging uses are imported from here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import torch

from evaluator.exact import Exact
from evaluator.judgement import Expected, Judgement, host_scalars, merge, worst
from evaluator.output_trees import dtype_name, flatten, identical, same_bits, structure_problem
from evaluator.tolerance import DEFAULT_EPS, Tolerance

__all__ = ["DEFAULT_EPS", "Approximate", "Contract", "Exact", "Expected", "Judgement", "Property", "Statistical",
           "Tolerance", "approximation_metrics", "dtype_name", "flatten", "host_scalars", "identical", "same_bits",
           "structure_problem"]


def approximation_metrics(ref: torch.Tensor, got: torch.Tensor) -> dict[str, float]:
    """Cosine similarity, relative L1 and RMSE, SQNR; with `finite` (1.0 when every output is) and
    `max_abs_err`, all in one transfer to the host."""
    r = ref.double().reshape(-1)
    g = got.to(ref.device).double().reshape(-1)
    noise = (g - r).square().sum()
    signal = r.square().sum()
    names = ("cosine", "l1_relative", "rmse_relative", "sqnr_db", "finite", "max_abs_err")
    return dict(zip(names, host_scalars(
        torch.nn.functional.cosine_similarity(r, g, dim=0),
        (g - r).abs().sum() / r.abs().sum().clamp_min(1e-300),
        noise.div(r.numel()).sqrt() / signal.div(r.numel()).sqrt().clamp_min(1e-300),
        10 * torch.log10(signal / noise.clamp_min(1e-300)),
        torch.isfinite(g).all(),
        (g - r).abs().max() if r.numel() else torch.zeros((), dtype=torch.float64))))


QuantGate = Callable[[Any, torch.Tensor], "tuple[bool, str, dict[str, float]]"]


@dataclass(frozen=True)
class Approximate:
    """Quantized kernels: close to the float result by approximation metrics, and a gate that
    checks the output carries the signature of the quantization the task asks for."""

    kind: str = "approximate"
    min_cosine: float = 0.95
    max_l1_relative: float = 0.05
    max_rmse_relative: float = 0.1
    min_sqnr_db: float = 20.0
    gate: QuantGate | None = None
    needs_hi: bool = True
    judges_runs_apart = True

    @property
    def reads_inputs(self) -> bool:
        return self.gate is not None

    def judge(self, expected: Expected, runs: Sequence[Any], inputs: Any = None) -> Judgement:
        return worst([merge([self._judge_leaf(hi, got, inputs) for hi, got in zip(flatten(expected.hi), flatten(run))])
                      for run in runs])

    def _judge_leaf(self, hi: torch.Tensor, got: torch.Tensor, inputs: Any) -> Judgement:
        m = approximation_metrics(hi, got)
        finite, max_abs_err = m.pop("finite"), m.pop("max_abs_err")
        if not finite:
            return Judgement(False, "output contains NaN or Inf", numel=got.numel(), mismatches=got.numel())
        failures = []
        if m["cosine"] < self.min_cosine:
            failures.append(f"cosine similarity {m['cosine']:.4f} < {self.min_cosine}")
        if m["l1_relative"] > self.max_l1_relative:
            failures.append(f"relative L1 error {m['l1_relative']:.4f} > {self.max_l1_relative}")
        if m["rmse_relative"] > self.max_rmse_relative:
            failures.append(f"relative RMSE {m['rmse_relative']:.4f} > {self.max_rmse_relative}")
        if m["sqnr_db"] < self.min_sqnr_db:
            failures.append(f"SQNR {m['sqnr_db']:.1f} dB < {self.min_sqnr_db} dB")
        j = Judgement(passed=not failures, reason="; ".join(failures), numel=got.numel(), metrics=m,
                      max_abs_err=max_abs_err)
        if j.passed and self.gate is not None:
            ok, why, gate_metrics = self.gate(inputs, got)
            j.metrics.update(gate_metrics)
            if not ok:
                j.passed, j.reason, j.contract_violation = False, why, True
        return j


StatisticalCheck = Callable[[Any, Sequence[Any]], "list[str]"]


@dataclass(frozen=True)
class Statistical:
    """Random outputs: judged by distribution tests over the runs, never by matching torch's RNG."""

    check: StatisticalCheck
    kind: str = "statistical"
    needs_hi: bool = False
    # A generator whose outputs depend on no input values (Random/rand): every call is also compared
    # with every earlier call of the candidate's process (earlier_calls.py). Where outputs follow
    # the inputs, cases drawn from the same seed share values and such a comparison means nothing.
    draws_alone: bool = False
    reads_inputs = True
    judges_runs_apart = False  # identical draws are themselves a failure

    def judge(self, expected: Expected, runs: Sequence[Any], inputs: Any = None) -> Judgement:
        failures = self.check(inputs, runs)
        numel = sum(t.numel() for t in flatten(runs[0]) if isinstance(t, torch.Tensor))
        return Judgement(passed=not failures, reason="; ".join(failures), numel=numel,
                         mismatches=0 if not failures else numel)


PropertyCheck = Callable[[Any, Sequence[Any]], "list[str]"]


@dataclass(frozen=True)
class Property:
    """Results that are not unique (a QR factorization's signs, eigenvectors' scale and phase, an
    SVD's singular vectors): judged by the properties they must have, checked by the task in float64
    (e.g. A = QR within the reference's own error, Q orthogonal, R upper triangular)."""

    check: PropertyCheck
    kind: str = "property"
    needs_hi: bool = False
    reads_inputs = True
    judges_runs_apart = False  # the task's check sees every run

    def judge(self, expected: Expected, runs: Sequence[Any], inputs: Any = None) -> Judgement:
        failures = self.check(inputs, runs)
        numel = sum(t.numel() for t in flatten(runs[0]) if isinstance(t, torch.Tensor))
        return Judgement(passed=not failures, reason="; ".join(failures), numel=numel,
                         mismatches=0 if not failures else numel)


Contract = Tolerance | Exact | Approximate | Statistical | Property
