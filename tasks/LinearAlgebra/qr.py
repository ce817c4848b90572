"""Batched QR factorization in the three modes of torch.linalg.qr, judged by its properties."""

import torch

from evaluator.contracts import Property
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, mode='reduced', out=None):
    return torch.linalg.qr(A, mode=mode, out=out)


# Per size, the cases a (seed, mode) pair picks: batch dims, m, n, mode. Case = seed % 2 + 2 * outlier,
# so the standard size's timing seeds 0 and 2 share case 0.
CASES = {
    "small": (((2,), 20, 12, "reduced"), ((2,), 16, 10, "complete"), ((2, 2), 8, 14, "r"),
              ((2,), 10, 16, "complete")),
    "edge": (((), 1, 1, "complete"), ((2,), 17, 5, "reduced"), ((2,), 5, 13, "r"), ((1, 3), 9, 1, "complete")),
    "standard": (((4096,), 64, 48, "reduced"), ((4096,), 64, 64, "complete"), ((4096,), 96, 64, "r"),
                 ((4096,), 48, 64, "reduced")),
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    batch, m, n, qr_mode = pick(size, **CASES)[seed % 2 + 2 * (mode == "outlier")]
    a = randn(batch + (m, n), gen, torch.float32, mode)
    return Inputs((a.to(dtype),), {"mode": qr_mode})


# A run passes when every matrix's errors stay within FACTOR times the worst error of torch's own
# float32 factorization of the same batch (at least FLOOR_ULPS * max(m, n) float32 units): Householder
# reflections or Givens rotations accumulated in float32 pass with a wide margin; float16, bfloat16 or
# TF32 arithmetic, classical Gram-Schmidt (orthogonality lost as cond(A)^2) and wrong factors do not.
FACTOR = 20.0
FLOOR_ULPS = 1.0
EPS32 = 2.0 ** -24


def _errors(a, q, r, mode):
    """Relative errors per matrix (float64) of the properties the factors must have."""
    a64, r64 = a.double(), r.double()
    scale = a64.flatten(-2).norm(dim=-1).clamp_min(1e-300).reshape(-1)
    if mode == "r":
        gram = (a64.mT @ a64 - r64.mT @ r64).flatten(-2).norm(dim=-1).reshape(-1)
        return {"R^T R = A^T A (relative to |A|^2)": gram / scale.square()}
    q64 = q.double()
    residual = (a64 - q64 @ r64).flatten(-2).norm(dim=-1).reshape(-1) / scale
    eye = torch.eye(q.shape[-1], dtype=torch.float64, device=q.device)
    orthogonality = (q64.mT @ q64 - eye).flatten(-2).norm(dim=-1).reshape(-1)
    return {"A = QR (|A - QR| / |A|)": residual, "Q^T Q = I (|Q^T Q - I|)": orthogonality}


def check(inputs, runs):
    (a,) = inputs.args
    mode = inputs.kwargs["mode"]
    m, n = a.shape[-2], a.shape[-1]
    device = runs[0][1].device
    a = a.to(device)
    own = _errors(a, *torch.linalg.qr(a, mode=mode), mode)
    floor = FLOOR_ULPS * EPS32 * max(m, n)
    failures = []
    for index, (q, r) in enumerate(runs, 1):
        if not (bool(torch.isfinite(q).all()) and bool(torch.isfinite(r).all())):
            failures.append(f"run {index}: Q or R contains NaN or Inf")
            continue
        below = int((r.tril(-1) != 0).sum())
        if below:
            failures.append(f"run {index}: R is not upper triangular ({below} nonzero elements below the diagonal; "
                            "they must be exact zeros)")
        for name, errors in _errors(a, q, r, mode).items():
            allowed = FACTOR * max(float(own[name].max()), floor)
            worst = int(errors.argmax())
            if float(errors[worst]) > allowed:
                failures.append(f"run {index}: {name} fails for matrix {worst} of the flattened batch: error "
                                f"{float(errors[worst]):.3g}, allowed {allowed:.3g} (torch's own float32 "
                                f"factorization reaches {float(own[name].max()):.3g})")
    return failures


def cost(inputs):
    (a,) = inputs.args
    mode = inputs.kwargs["mode"]
    m, n = a.shape[-2], a.shape[-1]
    batch = a.numel() // max(1, m * n)
    big, k = max(m, n), min(m, n)
    kq = m if mode == "complete" else k
    factor = 2 * big * k * k - 2 * k ** 3 / 3
    form_q = 0 if mode == "r" else 4 * m * kq * k - 2 * (m + kq) * k * k + 4 * k ** 3 / 3
    r_rows = m if mode == "complete" else k
    written = (0 if mode == "r" else m * kq) + r_rows * n
    return Cost(flops=batch * (factor + form_q), bytes=element_bytes(a) + batch * written * a.element_size())


TASK = Task(
    id="LinearAlgebra/qr",
    difficulty=5,
    entry="qr",
    signature="qr(A, mode='reduced', out=None)",
    kernelbenchx_signature="qr(A, mode='reduced', *, out=None)",
    description=(
        "Factor every matrix of `A` (shape (*, m, n), float32, * zero or more batch dimensions) as A = Q R and "
        "return the pair (Q, R), with k = min(m, n). mode='reduced': Q is (*, m, k) with orthonormal columns and R "
        "is (*, k, n); mode='complete': Q is (*, m, m) orthogonal and R is (*, m, n); mode='r': R as in 'reduced' "
        "and Q an empty tensor of shape (0,). R is upper triangular with exact zeros below its diagonal. "
        "The factors are unique only up to signs, so any signs on R's diagonal are accepted: a result is judged by "
        "|A - QR| / |A|, |Q^T Q - I| (for 'r': |R^T R - A^T A| / |A|^2) per matrix, each of which must stay within 20 "
        "times the worst error of torch's own float32 factorization of the batch (at least max(m, n) float32 units), "
        "so compute in float32: TF32 or half-precision products are too coarse. "
        "Both outputs are float32; `out` is always None; matrices are small (m, n up to about 100) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
    contract=Property(check=check),
)
