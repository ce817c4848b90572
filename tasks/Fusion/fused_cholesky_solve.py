"""Solve A x = b for symmetric positive-definite A through its Cholesky factor."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, b):
    L = torch.linalg.cholesky(A)
    return torch.cholesky_solve(b, L)


# Per size, the cases seeds rotate through: batch dims, n, k (right-hand sides). Matrices are small
# and batches large; the standard size has one configuration, so the timing seeds share it.
CASES = {
    "small": [((3,), 20, 5), ((2, 2), 12, 7)],
    "edge": [((), 1, 1), ((2,), 17, 3)],
    "standard": [((16384,), 64, 16)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, n, k = cases[seed % len(cases)]
    # A = M M^T + n I is symmetric positive definite with eigenvalues >= n. Outliers go into M, so A
    # gets a few large rows and columns but stays positive definite.
    m = randn(batch + (n, n), gen, torch.float32, mode)
    a = torch.matmul(m, m.transpose(-1, -2))
    a = (a + a.transpose(-1, -2)) * 0.5  # bit-exactly symmetric
    a.diagonal(dim1=-2, dim2=-1).add_(float(n))
    b = randn(batch + (n, k), gen, torch.float32, mode)
    return Inputs((a.to(dtype), b.to(dtype)))


def cost(inputs):
    a, b = inputs.args
    n, k = b.shape[-2], b.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * (n ** 3 / 3 + 2 * n * n * k), bytes=element_bytes(a) + 2 * element_bytes(b))


TASK = Task(
    id="Fusion/fused_cholesky_solve",
    difficulty=4,
    entry="fused_cholesky_solve",
    signature="fused_cholesky_solve(A: Tensor, b: Tensor)",
    description=(
        "Solve A x = b for every matrix of a batch: `A` has shape (*, n, n) and holds symmetric positive-definite "
        "matrices, `b` has shape (*, n, k) with the same batch dimensions * (zero or more). Factor A = L L^T with "
        "L lower triangular (Cholesky), then solve L y = b by forward substitution and L^T x = y by back "
        "substitution; return x, a new (*, n, k) tensor in the inputs' dtype (float32). The matrices are small "
        "(n up to about 128, k up to about 64) and the batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
