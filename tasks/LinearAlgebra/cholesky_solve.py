"""Solve A X = B given the Cholesky factor of the symmetric positive-definite A."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(B, L, upper=False, out=None):
    return torch.cholesky_solve(B, L, upper=upper, out=out)


# Per size, the cases seeds rotate through: batch dims, n, k (right-hand sides). The standard size
# has one configuration, so the timing seeds share it.
CASES = {
    "small": [((3,), 20, 8), ((2, 2), 12, 5)],
    "edge": [((), 1, 1), ((3,), 13, 1)],
    "standard": [((8192,), 64, 32)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, n, k = cases[seed % len(cases)]
    # A Cholesky factor: a positive diagonal in 1..2 plus small off-diagonal entries in one
    # triangle, exact zeros in the other (A = L L^T has a condition number below about 10).
    noise = randn(batch + (n, n), gen, torch.float32, mode, scale=0.5 / n ** 0.5)
    diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
    upper = bool((seed + (mode == "outlier")) % 2)
    factor = torch.tril(noise, -1) + torch.diag_embed(diag)
    if upper:
        factor = factor.transpose(-1, -2).contiguous()
    b = randn(batch + (n, k), gen, torch.float32, mode)
    return Inputs((b.to(dtype), factor.to(dtype)), {"upper": upper})


def cost(inputs):
    b, factor = inputs.args
    n, k = b.shape[-2], b.shape[-1]
    batch = b.numel() // max(1, n * k)
    tri = batch * n * (n + 1) // 2 * factor.element_size()
    return Cost(flops=batch * 2 * n * n * k, bytes=tri + 2 * element_bytes(b))


TASK = Task(
    id="LinearAlgebra/cholesky_solve",
    difficulty=4,
    entry="cholesky_solve",
    signature="cholesky_solve(B, L, upper=False, out=None)",
    kernelbenchx_signature="cholesky_solve(B, L, upper=False, *, out=None)",
    description=(
        "Solve A X = B for every matrix of a batch, where A is symmetric positive definite and given only through "
        "its Cholesky factor `L` of shape (*, n, n): with upper=False L is lower triangular and A = L L^T, with "
        "upper=True it is upper triangular and A = L^T L (the other triangle holds zeros). `B` has shape "
        "(*, n, k) with the same batch dimensions * (zero or more). Solve by a forward and a backward triangular "
        "substitution and return X, a new (*, n, k) tensor in the inputs' dtype (float32); `out` is always None. "
        "Matrices are small (n up to about 128) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
