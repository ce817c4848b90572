"""The tolerance contract: floating outputs within a dtype-aware bound of the float64 reference."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch

from evaluator.exact import exact_leaf
from evaluator.judgement import Expected, Judgement, bad_elements, host_scalars, merge, worst
from evaluator.output_trees import dtype_name, flatten

# Relative error floors per dtype: about one unit in the last place, so a kernel that rounds
# once more than the reference still passes and one that computes in a coarser type does not.
DEFAULT_EPS = {
    "float64": 1e-9,
    "float32": 1e-5,
    "float16": 1e-3,
    "bfloat16": 8e-3,
}
# TF32 rounds matmul inputs to 10 mantissa bits (unit roundoff 2^-11, about 4.9e-4). Relative to
# |hi| + rms, an element's error is a few units typically; the worst of 10^7 elements reached 3.2e-3
# for the reference solutions on an H100 (fused_tanh_linear).
TF32_EPS = 5e-3


def _nonfinite_status(x: torch.Tensor) -> torch.Tensor:
    """0 finite, 1 NaN, 2 +Inf, 3 -Inf."""
    codes = torch.where(x == -math.inf, 3, 0).to(torch.int8)
    codes = torch.where(x == math.inf, 2, codes)
    return torch.where(torch.isnan(x), 1, codes).to(torch.int8)


def _nonfinite_mismatch(lo: torch.Tensor, hi: torch.Tensor, got: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Elements whose NaN/Inf status matches neither the reference in the evaluated dtype nor the
    float64 one, and the float64 reference's status rounded to the evaluated dtype."""
    target = _nonfinite_status(hi.to(lo.dtype).to(torch.float64))
    got_status = _nonfinite_status(got)
    return (got_status != target) & (got_status != _nonfinite_status(lo.to(torch.float64))), target


def _nonfinite_reason(wrong: torch.Tensor, target: torch.Tensor, got: torch.Tensor) -> str:
    kinds = {1: "NaN", 2: "+Inf", 3: "-Inf", 0: "a finite value"}
    i = int(torch.nonzero(wrong.reshape(-1))[0])
    return (f"{int(wrong.sum())} elements have the wrong NaN/Inf status (first at flat index {i}: "
            f"got {kinds[int(_nonfinite_status(got).reshape(-1)[i])]}, expected {kinds[int(target.reshape(-1)[i])]})")


def _is_complex_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.is_complex()


@dataclass(frozen=True)
class Tolerance:
    """Floating outputs within a dtype-aware bound of the float64 reference.

    Element i passes when |got - hi| <= eps * (|hi| + rms(hi)) + error_factor * |lo - hi|,
    where lo is the reference computed in the evaluated dtype: the bound follows the
    reference's own low-precision error. The whole output must also pass in norm.
    `abs_floor` adds eps * abs_floor to every element's bound, for outputs that cancel far below
    the scale of the values they were computed from (a distance between nearly equal unit vectors).
    """

    kind: str = "tolerance"
    eps: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_EPS))
    error_factor: float = 4.0
    tf32: bool = False
    abs_floor: float = 0.0
    needs_hi: bool = True
    reads_inputs = False  # judged against the expected outputs alone
    judges_runs_apart = True  # each run on its own (and two runs' agreement): bit-identical runs judge alike

    def eps_for(self, dtype: torch.dtype) -> float:
        name = dtype_name(dtype)
        if name == "float32" and self.tf32:
            return TF32_EPS
        return self.eps.get(name, 0.0)

    def judge_leaf(self, lo: Any, hi: Any, got: Any) -> Judgement:
        if _is_complex_tensor(lo) and _is_complex_tensor(got):
            parts = [torch.view_as_real(t.resolve_conj()) for t in (lo, hi.to(torch.complex128), got)]
            return self.judge_leaf(*parts)
        if isinstance(lo, torch.Tensor) and lo.is_floating_point():
            return self._judge_floating_tensor(lo, hi, got)
        if isinstance(lo, float) and isinstance(got, (int, float)):
            return self._judge_float_scalar(lo, hi, got)
        return exact_leaf(lo, got)

    def _judge_float_scalar(self, lo: float, hi: float, got: int | float) -> Judgement:
        bound = self.eps.get("float64", 0) * (abs(hi) + 1) + self.error_factor * abs(lo - hi)
        ok = abs(got - hi) <= bound
        return Judgement(passed=ok, numel=1, mismatches=0 if ok else 1, max_abs_err=abs(got - hi),
                         reason="" if ok else f"returned {got!r}, expected {hi!r}")

    def _judge_floating_tensor(self, lo: torch.Tensor, hi: torch.Tensor, got: torch.Tensor) -> Judgement:
        if lo.numel() == 0:
            return Judgement(passed=True, numel=0, max_abs_err=0.0, max_rel_err=0.0)
        device = lo.device
        hi64 = hi.to(device=device, dtype=torch.float64)
        lo64 = lo.to(torch.float64)
        got64 = got.to(device=device, dtype=torch.float64)
        wrong_status, target_status = _nonfinite_mismatch(lo, hi64, got64)
        finite = torch.isfinite(hi64) & torch.isfinite(got64) & torch.isfinite(lo64)
        eps = self.eps_for(lo.dtype)
        h = torch.where(finite, hi64, torch.zeros_like(hi64))
        rms = h.square().mean().sqrt()
        err = torch.where(finite, (got64 - hi64).abs(), torch.zeros_like(hi64))
        own = torch.where(finite, (lo64 - hi64).abs(), torch.zeros_like(hi64))
        bound = eps * (h.abs() + rms + self.abs_floor) + self.error_factor * own
        bad = (err > bound) | wrong_status
        (rms, max_abs, max_rel, mismatches, own_norm, h_norm, err_norm, status_wrong, *constant) = host_scalars(
            rms, err.max(), (err / (h.abs() + rms)).max(), bad.sum(), own.square().sum().sqrt(),
            h.square().sum().sqrt(), err.square().sum().sqrt(), wrong_status.any(),
            *_constant_output_scalars(lo64, got64, finite))
        j = Judgement(passed=True, numel=lo.numel(), max_abs_err=max_abs, max_rel_err=max_rel if rms > 0 else max_abs,
                      mismatches=int(mismatches))
        norm_bound = self.error_factor * own_norm + eps * h_norm + eps * self.abs_floor * h.numel() ** 0.5
        if j.mismatches:
            j.passed = False
            j.first_bad = bad_elements(bad, hi64, got64)
            j.reason = (_nonfinite_reason(wrong_status, target_status, got64) if status_wrong else
                        _outside_reason(j, lo.dtype, eps))
        elif err_norm > norm_bound * (1 + 1e-9):
            j.passed = False
            j.reason = f"error norm {err_norm:.3g} exceeds the allowed {norm_bound:.3g} for {dtype_name(lo.dtype)}"
        _fail_if_constant(j, _constant_output_problem(lo.numel(), *constant))
        return j

    def judge(self, expected: Expected, runs: Sequence[Any], inputs: Any = None) -> Judgement:
        his = flatten(expected.hi) if expected.hi is not None else [None] * len(flatten(expected.lo))
        judgement = worst([merge([self.judge_leaf(lo, hi, got) for lo, hi, got in
                                  zip(flatten(expected.lo), his, flatten(run))]) for run in runs])
        if judgement.passed and len(runs) > 1:
            judgement = merge([judgement, _runs_agree(runs, self)])
        return judgement


def _outside_reason(j: Judgement, dtype: torch.dtype, eps: float) -> str:
    return (f"{j.mismatches} of {j.numel} elements outside tolerance (max abs error {j.max_abs_err:.3g}, "
            f"max error relative to |expected|+rms {j.max_rel_err:.3g}, allowed about {eps:.1g} for "
            f"{dtype_name(dtype)})")


def _constant_output_scalars(lo: torch.Tensor, got: torch.Tensor, finite: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """Is any element finite; are all finite outputs equal to the first finite one; are all finite
    expected values; that first finite output."""
    first = finite.reshape(-1).to(torch.uint8).argmax()  # the first finite position, if any
    g0, e0 = got.reshape(-1)[first], lo.reshape(-1)[first]
    return (finite.any(), ((got == g0) | ~finite).all(), ((lo == e0) | ~finite).all(), g0)


def _constant_output_problem(numel: int, any_finite: float, got_constant: float, expected_constant: float,
                             first_got: float) -> str:
    """A constant output where the reference in the same dtype varies (values that differ only
    beyond the dtype's precision may legitimately round to one value)."""
    if numel < 2 or not any_finite:
        return ""
    if got_constant and not expected_constant:
        return f"every output element is {first_got:.6g}, but the expected output varies"
    return ""


def _fail_if_constant(j: Judgement, problem: str) -> None:
    if problem:
        j.passed = False
        j.reason = problem + (f" ({j.reason})" if j.reason else "")


def _runs_agree(runs: Sequence[Any], tol: Tolerance) -> Judgement:
    first = flatten(runs[0])
    for other in runs[1:]:
        for a, b in zip(first, flatten(other)):
            if not isinstance(a, torch.Tensor) or not a.is_floating_point():
                if not exact_leaf(a, b).passed:
                    return Judgement(False, "two calls on the same inputs returned different results")
                continue
            if a.numel() == 0:
                continue
            a64, b64 = a.double(), b.to(a.device).double()
            both = torch.isfinite(a64) & torch.isfinite(b64)
            scale = torch.where(both, a64.abs(), torch.zeros_like(a64))
            count = both.sum()
            rms = (scale.square().sum() / count.clamp_min(1)).sqrt()
            diff = torch.where(both, (a64 - b64).abs(), torch.zeros_like(a64))
            limit = 2 * tol.eps_for(a.dtype) * (scale + rms) + 1e-300
            disagree, max_diff = host_scalars(((diff > limit) & both).any(), diff.max())
            if disagree:
                return Judgement(False, "two calls on the same inputs returned different results (unwritten or "
                                        "racy output elements?)", max_abs_err=max_diff)
    return Judgement(True)
