"""Solve symmetric indefinite systems A x = b through an LDL^T factorization."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A, b, hermitian=False, out=None):
    LD, pivots = torch.linalg.ldl_factor(A, hermitian=hermitian)
    vector = b.dim() == A.dim() - 1
    x = torch.linalg.ldl_solve(LD, pivots, b.unsqueeze(-1) if vector else b, hermitian=hermitian)
    x = x.squeeze(-1) if vector else x
    if out is not None:
        return out.copy_(x)
    return x


# Per size, the cases a (seed, mode) pair picks: batch dims, n, k (0: b is a batch of vectors (*, n)).
# Case = seed % 2 + 2 * outlier, so the standard size's timing seeds 0 and 2 share case 0. Standard batches
# are modest because torch's CUDA LDL routine works one matrix at a time with a host sync.
CASES = {
    "small": (((3,), 16, 4), ((2,), 20, 0), ((2, 2), 12, 3), ((3,), 10, 0)),
    "edge": (((), 1, 0), ((3,), 3, 5), ((1, 2), 17, 1), ((2,), 5, 0)),
    "standard": (((1024,), 64, 16), ((256,), 128, 0), ((512,), 96, 8), ((1024,), 64, 0)),
}


def symmetric_dominant(batch, n, gen, mode):
    """Symmetric, indefinite, strictly diagonally dominant matrices: off-diagonal entries from a symmetrized
    normal sample (outliers there in outlier mode), each diagonal entry of random sign and of magnitude
    1.5 to 2.5 times its row's off-diagonal absolute sum, plus one."""
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
    batch, n, k = pick(size, **CASES)[seed % 2 + 2 * (mode == "outlier")]
    a = symmetric_dominant(batch, n, gen, mode)
    b = randn(batch + ((n, k) if k else (n,)), gen, torch.float32, mode)
    return Inputs((a.to(dtype), b.to(dtype)), {"hermitian": bool(seed % 2)})


def cost(inputs):
    a, b = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    k = b.numel() // max(1, batch * n)
    return Cost(flops=batch * (n ** 3 / 3 + 2 * n * n * k), bytes=element_bytes(a) + 2 * element_bytes(b))


TASK = Task(
    id="LinearAlgebra/solve_symmetric_ldl",
    difficulty=4,
    entry="solve_symmetric_ldl",
    signature="solve_symmetric_ldl(A, b, hermitian=False, out=None)",
    kernelbenchx_signature="solve_symmetric_ldl(A, b, *, hermitian=False, out=None)",
    description=(
        "Solve A x = b for every symmetric matrix of `A` (shape (*, n, n), float32, * zero or more batch "
        "dimensions) through its factorization A = L D L^T (L unit lower triangular, D diagonal): forward "
        "substitution with L, division by D, back substitution with L^T. `b` is either a batch of vectors of "
        "shape (*, n) (when it has one dimension fewer than A) or of matrices (*, n, k), with A's batch "
        "dimensions; x has b's shape and dtype. The matrices are indefinite but strictly diagonally dominant, "
        "so the factorization needs no pivoting. `hermitian` has no effect on real matrices; `out` is always "
        "None. Matrices are small (n up to about 128), batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
