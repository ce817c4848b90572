"""How a candidate's outputs are judged against the reference: the four contract kinds.

Each contract judges one case: the expected values (the reference in the evaluated dtype, `lo`,
and where it matters in float64, `hi`) against the outputs of the candidate's two runs. This code
runs in the evaluator's process, out of the candidate's reach.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import torch

from evaluator import gpu_lock
from evaluator.result import BadElement

FIRST_BAD_SHOWN = 5

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


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@dataclass
class Judgement:
    passed: bool
    reason: str = ""
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    mismatches: int = 0
    numel: int = 0
    first_bad: list[BadElement] = field(default_factory=list)
    metrics: dict[str, float] = field(default_factory=dict)
    contract_violation: bool = False


@dataclass
class Expected:
    lo: Any
    hi: Any = None


def flatten(tree: Any) -> list[Any]:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in flatten(item)]
    return [tree]


def describe(tree: Any) -> str:
    if isinstance(tree, torch.Tensor):
        return f"tensor{tuple(tree.shape)} {dtype_name(tree.dtype)}"
    if isinstance(tree, (tuple, list)):
        return f"{type(tree).__name__} of {len(tree)}: (" + ", ".join(describe(t) for t in tree) + ")"
    return type(tree).__name__


_SAME_WIDTH = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal shape, dtype and bits (NaNs included, +0.0 and -0.0 told apart)."""
    if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
        return False
    if a.is_complex():
        return same_bits(torch.view_as_real(a.resolve_conj()), torch.view_as_real(b.resolve_conj()))
    view = torch.uint8 if a.dtype == torch.bool else _SAME_WIDTH[a.element_size()]
    return torch.equal(a.view(view), b.view(view))


def identical(a: Any, b: Any) -> bool:
    """The same tree of tensors and scalars, bit for bit."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return type(a) is type(b) and same_bits(a, b)
    if isinstance(a, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(identical(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def structure_problem(expected: Any, got: Any) -> str | None:
    """Why `got` cannot be compared with `expected` (shape, dtype, arity), or None."""
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            return f"returned {describe(got)} where a tensor was expected ({describe(expected)})"
        if tuple(got.shape) != tuple(expected.shape):
            return f"output shape {tuple(got.shape)} where {tuple(expected.shape)} was expected"
        if got.dtype != expected.dtype:
            return (f"output dtype {dtype_name(got.dtype)} where {dtype_name(expected.dtype)} was "
                    "expected (return the reference's dtype; compute in higher precision inside the kernel if needed)")
        return None
    if isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            return f"returned {describe(got)} where {describe(expected)} was expected"
        for e, g in zip(expected, got):
            problem = structure_problem(e, g)
            if problem:
                return problem
        return None
    if isinstance(got, torch.Tensor) or isinstance(got, (tuple, list)):
        return f"returned {describe(got)} where {type(expected).__name__} was expected"
    return None


def _bad_elements(mask: torch.Tensor, expected: torch.Tensor, got: torch.Tensor) -> list[BadElement]:
    flat = torch.nonzero(mask.reshape(-1)).reshape(-1)[:FIRST_BAD_SHOWN].tolist()
    shape = tuple(expected.shape)
    out = []
    for i in flat:
        index = list(torch.unravel_index(torch.tensor(i), shape)) if shape else []
        out.append(BadElement([int(j) for j in index], float(expected.reshape(-1)[i]), float(got.reshape(-1)[i])))
    return out


def _merge(parts: Sequence[Judgement]) -> Judgement:
    failed = [p for p in parts if not p.passed]
    merged = Judgement(
        passed=not failed,
        reason=failed[0].reason if failed else "",
        max_abs_err=max((p.max_abs_err for p in parts if p.max_abs_err is not None), default=None),
        max_rel_err=max((p.max_rel_err for p in parts if p.max_rel_err is not None), default=None),
        mismatches=sum(p.mismatches for p in parts),
        numel=sum(p.numel for p in parts),
        first_bad=[b for p in parts for b in p.first_bad][:FIRST_BAD_SHOWN],
        contract_violation=any(p.contract_violation for p in failed),
    )
    for p in parts:
        merged.metrics.update(p.metrics)
    return merged


def _worst(per_run: Sequence[Judgement]) -> Judgement:
    """One judgement for several runs of the same call: the first failing run's, else the first."""
    return next((j for j in per_run if not j.passed), per_run[0])


def _exact_leaf(expected: Any, got: Any) -> Judgement:
    if not isinstance(expected, torch.Tensor):
        same = expected == got or (isinstance(expected, float) and math.isnan(expected) and math.isnan(got))
        return Judgement(passed=bool(same), reason="" if same else f"returned {got!r}, expected {expected!r}",
                         numel=1, mismatches=0 if same else 1)
    e, g = expected, got.to(expected.device)
    differ = e != g
    if e.is_floating_point():
        differ &= ~(torch.isnan(e) & torch.isnan(g))
    count = int(differ.sum())
    j = Judgement(passed=count == 0, numel=e.numel(), mismatches=count)
    if count:
        j.first_bad = _bad_elements(differ, e, g)
        diff = (e.double() - g.double()).abs()
        j.max_abs_err = float(diff[differ].max()) if e.is_floating_point() or count else 0.0
        j.reason = f"{count} of {e.numel()} elements differ from the exact expected values"
    else:
        j.max_abs_err = 0.0
    return j


def host_scalars(*values: torch.Tensor) -> list[float]:
    """Zero-dimensional results brought to the host in one transfer. Each separate `.item()` waits
    for the GPU, and on a GPU time-sliced between many processes every wait costs a time slice.
    With the GPU work so far finished, a timing waiting for the GPU lock goes first."""
    if not values:
        return []
    scalars = torch.stack([v.reshape(()).to(torch.float64) for v in values]).tolist()
    gpu_lock.yield_to_writers()
    return scalars


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
        if isinstance(lo, torch.Tensor) and lo.is_complex() and isinstance(got, torch.Tensor) and got.is_complex():
            parts = [torch.view_as_real(t.resolve_conj()) for t in (lo, hi.to(torch.complex128), got)]
            return self.judge_leaf(*parts)
        if not isinstance(lo, torch.Tensor) or not lo.is_floating_point():
            if isinstance(lo, float) and isinstance(got, (int, float)):
                bound = self.eps.get("float64", 0) * (abs(hi) + 1) + self.error_factor * abs(lo - hi)
                ok = abs(got - hi) <= bound
                return Judgement(passed=ok, numel=1, mismatches=0 if ok else 1, max_abs_err=abs(got - hi),
                                 reason="" if ok else f"returned {got!r}, expected {hi!r}")
            return _exact_leaf(lo, got)
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
            j.first_bad = _bad_elements(bad, hi64, got64)
            j.reason = (_nonfinite_reason(wrong_status, target_status, got64) if status_wrong else
                        f"{j.mismatches} of {lo.numel()} elements outside tolerance (max abs error {j.max_abs_err:.3g}, "
                        f"max error relative to |expected|+rms {j.max_rel_err:.3g}, allowed about {eps:.1g} for "
                        f"{dtype_name(lo.dtype)})")
        elif err_norm > norm_bound * (1 + 1e-9):
            j.passed = False
            j.reason = f"error norm {err_norm:.3g} exceeds the allowed {norm_bound:.3g} for {dtype_name(lo.dtype)}"
        problem = _constant_output_problem(lo.numel(), *constant)
        if problem:
            j.passed = False
            j.reason = problem + (f" ({j.reason})" if j.reason else "")
        return j

    def judge(self, expected: Expected, runs: Sequence[Any], inputs: Any = None) -> Judgement:
        his = flatten(expected.hi) if expected.hi is not None else [None] * len(flatten(expected.lo))
        judgement = _worst([_merge([self.judge_leaf(lo, hi, got) for lo, hi, got in
                                    zip(flatten(expected.lo), his, flatten(run))]) for run in runs])
        if judgement.passed and len(runs) > 1:
            judgement = _merge([judgement, _runs_agree(runs, self)])
        return judgement


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


def _runs_agree(runs: Sequence[Any], tol: Tolerance) -> Judgement:
    first = flatten(runs[0])
    for other in runs[1:]:
        for a, b in zip(first, flatten(other)):
            if not isinstance(a, torch.Tensor) or not a.is_floating_point():
                if not _exact_leaf(a, b).passed:
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


@dataclass(frozen=True)
class Exact:
    """Integer, index and mask outputs (and values merely moved) must match exactly."""

    kind: str = "exact"
    needs_hi: bool = False
    reads_inputs = False
    judges_runs_apart = True

    def judge(self, expected: Expected, runs: Sequence[Any], inputs: Any = None) -> Judgement:
        return _worst([_merge([_exact_leaf(lo, got) for lo, got in zip(flatten(expected.lo), flatten(run))])
                       for run in runs])


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
        return _worst([_merge([self._judge_leaf(hi, got, inputs) for hi, got in zip(flatten(expected.hi), flatten(run))])
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
