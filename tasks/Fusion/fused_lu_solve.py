"""Pivoted LU decomposition of A, then a solve with the product of its triangular factors."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform, with_outliers


def reference(A, b):
    P, L, U = torch.linalg.lu(A)
    return torch.linalg.solve(L @ U, b)


SHAPES = {
    # (batch dims, n); seeds rotate through them. The standard size has one configuration.
    "small": [((2,), 16), ((1, 3), 10)],
    "edge": [((), 1), ((1, 2), 13)],
    "standard": [((8192,), 64)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **SHAPES)
    batch, n = cases[seed % len(cases)]
    # Rows of D + N in a random order: D a diagonal with random signs and magnitudes in 1..2, N small
    # off-diagonal noise (condition number about 3). Each column's pivot stands far above the other
    # candidates, so the permutation P (and with it the result) is not sensitive to rounding. Outlier
    # mode enlarges a few diagonal entries (an enlarged off-diagonal one could tie with a pivot).
    noise = randn(batch + (n, n), gen, torch.float32, "standard", scale=0.5 / n ** 0.5)
    diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
    if mode == "outlier":
        diag = with_outliers(diag, gen)
    sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
    m = noise - torch.diag_embed(torch.diagonal(noise, dim1=-2, dim2=-1)) + torch.diag_embed(diag * sign)
    perm = torch.argsort(torch.rand(batch + (n,), generator=gen), dim=-1)
    a = torch.gather(m, -2, perm.unsqueeze(-1).expand(m.shape))
    b = randn(batch + (n,), gen, torch.float32, mode)
    return Inputs((a.to(dtype), b.to(dtype)))


def cost(inputs):
    a, b = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * (2 * n ** 3 / 3 + 2 * n * n), bytes=element_bytes(a) + 2 * element_bytes(b))


TASK = Task(
    id="Fusion/fused_lu_solve",
    difficulty=5,
    entry="fused_lu_solve",
    signature="fused_lu_solve(A: Tensor, b: Tensor)",
    description=(
        "For every invertible matrix in `A` of shape (*, n, n) (zero or more batch dimensions *) and vector in "
        "`b` of shape (*, n): factor A = P L U by Gaussian elimination with partial pivoting (each pivot is the "
        "remaining element of largest magnitude in its column; P a permutation, L unit lower and U upper "
        "triangular), then return x solving (L U) x = b by forward and back substitution. The permutation is "
        "not applied to b, so x solves A x = P b, not A x = b. Return a new (*, n) tensor in the inputs' dtype "
        "(float32); matrices are small (n up to about 128) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
