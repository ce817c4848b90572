"""Real powers of diagonalizable matrices through their eigendecomposition: A^k = V diag(L^k) V^-1."""

import torch

from evaluator.contracts import DEFAULT_EPS, Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, with_outliers


def reference(A, k, *, out=None):
    L, V = torch.linalg.eig(A)
    return V @ torch.diag_embed(L ** k) @ torch.linalg.inv(V)


# Per size, the cases seeds and modes rotate through: batch dims, n, k.
# Standard batches are modest: torch's CUDA eig (MAGMA's hybrid host/GPU geev) takes one matrix at a time.
CASES = {
    "small": [((2,), 5, 2), ((2,), 4, 0.5), ((1, 2), 4, -1), ((2,), 6, 1.5)],
    "edge": [((), 1, 3), ((2,), 2, -0.5), ((), 3, 0.5), ((1,), 5, 2)],
    "standard": [((256,), 32, 1.5)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, n, k = cases[(seed % 2 + 2 * (mode == "outlier")) % len(cases)]
    # A = P diag(lam) P^-1 with P = Q1 diag(1..2) Q2^T (condition number at most 2) and distinct positive
    # eigenvalues lam spread over [0.5, 4]. Outlier mode multiplies a few eigenvalues by 50.
    q1 = torch.linalg.qr(torch.randn(batch + (n, n), generator=gen, dtype=torch.float64)).Q
    q2 = torch.linalg.qr(torch.randn(batch + (n, n), generator=gen, dtype=torch.float64)).Q
    p = (q1 * (1 + torch.rand(batch + (1, n), generator=gen, dtype=torch.float64))) @ q2.mT
    lam = torch.linspace(0.5, 4.0, n, dtype=torch.float64) if n > 1 else torch.full((1,), 1.5, dtype=torch.float64)
    lam = lam.expand(batch + (n,)) * (1 + 0.1 * torch.rand(batch + (1,), generator=gen, dtype=torch.float64))
    if mode == "outlier":
        lam = with_outliers(lam, gen)
    a = (p * lam.unsqueeze(-2)) @ torch.linalg.inv(p)
    return Inputs((a.to(dtype), k))


def cost(inputs):
    a, k = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    # the nonsymmetric QR algorithm with eigenvectors (about 25 n^3), an inverse and two products
    return Cost(flops=batch * 31 * n ** 3, bytes=element_bytes(a) + 2 * a.numel() * a.element_size())


TASK = Task(
    id="LinearAlgebra/matrix_power_eig",
    difficulty=3,
    entry="matrix_power_eig",
    signature="matrix_power_eig(A, k, *, out=None)",
    description=(
        "Raise every square matrix in `A` of shape (*, n, n) to the real power k (a Python float or int, possibly "
        "fractional or negative) through its eigendecomposition: with A = V diag(L) V^-1, return "
        "V @ diag(L**k) @ V^-1, a complex64 tensor of A's shape (L**k taken on the principal branch). Every "
        "input matrix is diagonalizable with n distinct positive real eigenvalues, so the result is real: its "
        "imaginary parts are exactly zero. `out` is always None; matrices are small (n up to about 64) in large "
        "batches."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
    # Going through eigenvectors amplifies float32 rounding by the eigenvalue spacing: torch itself, run on
    # inputs perturbed by one ulp, lands up to about 4e-5 of |expected| + rms away from the float64 result
    # on the standard size. The float32 floor is raised from 1e-5 to 1e-4 for that.
    contract=Tolerance(eps=dict(DEFAULT_EPS, float32=1e-4)),
)
