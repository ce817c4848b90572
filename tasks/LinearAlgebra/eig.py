"""Eigenvalues and eigenvectors of general (non-symmetric) square matrices, judged by the properties of
an eigendecomposition (eigenvectors are unique only up to a complex scale)."""

import torch

from evaluator.contracts import Property
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, with_outliers


def reference(A):
    return torch.linalg.eig(A)


# Per size, the cases seeds and modes rotate through: batch dims, n.
# Standard batches are modest: torch's CUDA eig (MAGMA's hybrid host/GPU geev) takes one matrix at a time.
CASES = {
    "small": [((2,), 5), ((2,), 4), ((1, 2), 4), ((2,), 5)],
    "edge": [((), 1), ((2,), 2), ((), 3), ((1,), 5)],
    "standard": [((128,), 64)],
}


def diagonalizable(batch, n, gen, mode):
    """A = P diag(lam) P^-1 in float64: P = Q1 diag(1..2) Q2^T has condition number at most 2, and the
    eigenvalues lam have distinct magnitudes spread over [1, 3] with random signs. Outlier mode multiplies
    a few eigenvalues by 50 (they stay distinct from the others)."""
    q1 = torch.linalg.qr(torch.randn(batch + (n, n), generator=gen, dtype=torch.float64)).Q
    q2 = torch.linalg.qr(torch.randn(batch + (n, n), generator=gen, dtype=torch.float64)).Q
    p = (q1 * (1 + torch.rand(batch + (1, n), generator=gen, dtype=torch.float64))) @ q2.mT
    mag = torch.linspace(1.0, 3.0, n, dtype=torch.float64) if n > 1 else torch.full((1,), 2.0, dtype=torch.float64)
    sign = torch.where(torch.rand(batch + (n,), generator=gen, dtype=torch.float64) < 0.5, -1.0, 1.0)
    lam = mag * sign
    if mode == "outlier":
        lam = with_outliers(lam, gen)
    return (p * lam.unsqueeze(-2)) @ torch.linalg.inv(p)


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, n = cases[(seed % 2 + 2 * (mode == "outlier")) % len(cases)]
    return Inputs((diagonalizable(batch, n, gen, mode).to(dtype),))


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    # the nonsymmetric QR algorithm with eigenvectors, about 25 n^3 (Golub and Van Loan)
    return Cost(flops=batch * 25 * n ** 3, bytes=element_bytes(a) + 2 * batch * (n * n + n) * a.element_size())


def _measures(a64, lam, vec):
    """Per call (worst over the batch): residual |A V - V diag(lam)|_F / |A|_F, largest deviation of an
    eigenvector's norm from 1, and the distance of the eigenvalues, sorted, from float64 ones, over |A|_F."""
    a = a64.to(torch.complex128)
    lam, vec = lam.cpu().to(torch.complex128), vec.cpu().to(torch.complex128)
    scale = a64.flatten(-2).norm(dim=-1).clamp_min(1e-300)
    res = float(((a @ vec - vec * lam.unsqueeze(-2)).flatten(-2).norm(dim=-1) / scale).max())
    norms = float((vec.abs().square().sum(dim=-2).sqrt() - 1).abs().max())
    exact = torch.linalg.eigvals(a64)

    def ordered(x):  # by real part, then imaginary part
        key = torch.argsort(x.imag, dim=-1, stable=True)
        x = torch.gather(x, -1, key)
        return torch.gather(x, -1, torch.argsort(x.real, dim=-1, stable=True))
    values = float(((ordered(lam) - ordered(exact)).abs() / scale.unsqueeze(-1)).max())
    return res, norms, values


FACTOR = 10.0   # allowed multiple of torch's own float32 error on the same inputs
FLOOR = 1e-6    # plus this much (about ten float32 ulps), for inputs where torch is exact


def check(inputs, runs):
    (a,) = inputs.args
    a64 = a.double().cpu()
    own = _measures(a64, *torch.linalg.eig(a.float().cpu()))
    names = ("residual |A V - V diag(L)|_F / |A|_F", "deviation of an eigenvector's norm from 1",
             "eigenvalue error (sorted, against float64, relative to |A|_F)")
    failures = []
    for i, (lam, vec) in enumerate(runs):
        if not (bool(torch.isfinite(torch.view_as_real(lam)).all()) and bool(torch.isfinite(torch.view_as_real(vec)).all())):
            failures.append(f"call {i + 1}: the outputs contain NaN or Inf")
            continue
        if a.numel() == 0:
            continue
        got = _measures(a64, lam, vec)
        for name, g, o in zip(names, got, own):
            bound = FACTOR * o + FLOOR
            if not g <= bound:
                failures.append(f"call {i + 1}: {name} is {g:.3g}, allowed {bound:.3g} (torch's own float32 "
                                f"result has {o:.3g})")
    return failures


TASK = Task(
    id="LinearAlgebra/eig",
    difficulty=3,
    entry="eig",
    signature="eig(A)",
    kernelbenchx_signature="linalg.eig(A, *, out=None)",
    description=(
        "Compute the eigenvalues and eigenvectors of every real square matrix in `A` of shape (*, n, n) (not "
        "symmetric in general): return (L, V) with L of shape (*, n) and V of shape (*, n, n), both complex64, "
        "such that A @ V[..., :, j] = L[..., j] * V[..., :, j] and every column of V has Euclidean norm 1. The "
        "eigenvalues may come in any order (each with its own column), and each eigenvector may be multiplied "
        "by any unit complex number; results with torch's accuracy are accepted. Every input matrix is "
        "diagonalizable with n distinct real eigenvalues, so the imaginary parts may be left at zero. Matrices "
        "are small (n up to about 64) in large batches."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
    contract=Property(check=check),
)
