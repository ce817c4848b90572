"""Batched LDL^T factorization (LAPACK's compact sytrf form) of symmetric indefinite matrices."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A, hermitian=False, out=None):
    return tuple(torch.linalg.ldl_factor(A, hermitian=hermitian, out=out))


# Per size, the cases a (seed, mode) pair picks: batch dims, n. Case = seed % 2 + 2 * outlier, so the
# standard size's timing seeds 0 and 2 share case 0. Standard batches are modest because torch's CUDA
# routine factors one matrix at a time with a host sync, and its eager time is the baseline.
CASES = {
    "small": (((4,), 16), ((3,), 24), ((2, 2), 12), ((3,), 20)),
    "edge": (((), 1), ((3,), 3), ((1, 2), 17), ((2,), 5)),
    "standard": (((1024,), 64), ((256,), 128), ((512,), 96), ((1024,), 64)),
}


def symmetric_dominant(batch, n, gen, mode):
    """Symmetric, indefinite, strictly diagonally dominant matrices: off-diagonal entries from a symmetrized
    normal sample (outliers there in outlier mode), each diagonal entry of random sign and of magnitude
    1.5 to 2.5 times its row's off-diagonal absolute sum, plus one. Gaussian elimination keeps diagonal
    dominance, so no Bunch-Kaufman pivoting ever happens."""
    m = randn(batch + (n, n), gen, torch.float32, mode)
    a = (m + m.transpose(-1, -2)) * 0.5
    a.diagonal(dim1=-2, dim2=-1).zero_()
    off = a.abs().sum(dim=-1)
    factor = uniform(batch + (n,), gen, torch.float32, 1.5, 2.5)
    sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
    a.diagonal(dim1=-2, dim2=-1).copy_(sign * (factor * off + 1.0))
    return a


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    batch, n = pick(size, **CASES)[seed % 2 + 2 * (mode == "outlier")]
    a = symmetric_dominant(batch, n, gen, mode)
    return Inputs((a.to(dtype),), {"hermitian": bool(seed % 2)})


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * n ** 3 / 3, bytes=2 * element_bytes(a) + batch * n * 4)


TASK = Task(
    id="LinearAlgebra/ldl_factor",
    difficulty=4,
    entry="ldl_factor",
    signature="ldl_factor(A, hermitian=False, out=None)",
    kernelbenchx_signature="linalg.ldl_factor(A, *, hermitian=False, out=None)",
    description=(
        "Factor every symmetric matrix of `A` (shape (*, n, n), float32, * zero or more batch dimensions) as "
        "A = L D L^T with L unit lower triangular and D diagonal, and return (LD, pivots) in LAPACK's compact "
        "sytrf form as torch.linalg.ldl_factor does: LD (same shape and dtype as A) holds D on its diagonal, L's "
        "entries below the diagonal and exact zeros above it; pivots (shape (*, n), int32) holds the 1-based "
        "Bunch-Kaufman interchanges. The inputs are indefinite but strictly diagonally dominant, so no pivoting "
        "happens: every pivot is a 1x1 block on the diagonal and pivots is 1, 2, ..., n. `hermitian` has no "
        "effect on real matrices; `out` is always None. Matrices are small (n up to about 128), batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
