"""Batched Cholesky factorization of symmetric positive-definite matrices."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, upper=False, out=None):
    return torch.linalg.cholesky(A, upper=upper, out=out)


SHAPES = {
    # (batch dims, n)
    "small": (((8,), 32), ((6,), 24), ((2, 3), 20), ((4,), 48)),
    "edge": (((), 1), ((5,), 3), ((1, 2), 17), ((3,), 70)),
    "standard": (((16384,), 64), ((4096,), 128), ((6144,), 96), ((4096,), 128)),
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    case = seed % 2 + 2 * (mode == "outlier")
    batch, n = pick(size, **{k: v[case] for k, v in SHAPES.items()})
    # A = M M^T + n I is symmetric positive definite with eigenvalues >= n. Outliers go into M, so A
    # gets a few large rows and columns but stays positive definite.
    m = randn(batch + (n, n), gen, torch.float32, mode)
    a = torch.matmul(m, m.transpose(-1, -2))
    a = (a + a.transpose(-1, -2)) * 0.5  # bit-exactly symmetric
    a.diagonal(dim1=-2, dim2=-1).add_(float(n))
    upper = bool((seed + (mode == "outlier")) % 2)
    return Inputs((a.to(dtype),), {"upper": upper})


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * (n ** 3 / 3 + n ** 2 / 2), bytes=2 * element_bytes(a))


TASK = Task(
    id="LinearAlgebra/cholesky",
    difficulty=4,
    entry="cholesky",
    signature="cholesky(A, upper=False, out=None)",
    kernelbenchx_signature="linalg.cholesky(A, *, upper=False, out=None)",
    description=(
        "Compute the Cholesky factor of every symmetric positive-definite matrix in `A` of shape (*, n, n), "
        "where * is zero or more batch dimensions: the lower-triangular L with a positive diagonal such that "
        "A = L @ L^T, with exact zeros above the diagonal. With upper=True return the upper-triangular "
        "U = L^T instead. The result has A's shape and dtype (float32); `out` is always None. Matrices are small "
        "(n up to about 128) and batches are large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
