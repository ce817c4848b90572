"""Determinants of a batch of square matrices."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A):
    return torch.linalg.det(A)


SHAPES = {
    # (batch dims, n); seeds rotate through them. The standard size has one configuration.
    "small": [((3,), 16), ((2, 3), 10)],
    "edge": [((), 1), ((1, 3), 13)],
    "standard": [((8192,), 64)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **SHAPES)
    batch, n = cases[seed % len(cases)]
    # Rows of D + N in a random order: D a diagonal with random signs and magnitudes in 1..2, N small
    # noise (condition number about 3). The permuted diagonal is small, so elimination needs row
    # exchanges, and the 1/1.47 scale (the geometric mean of the magnitudes) keeps |det| near 1.
    noise = randn(batch + (n, n), gen, torch.float32, mode, scale=0.5 / n ** 0.5)
    diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
    sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
    # The diagonal is D alone: an outlier there could cancel it.
    m = (noise - torch.diag_embed(torch.diagonal(noise, dim1=-2, dim2=-1)) + torch.diag_embed(diag * sign)) / 1.4715
    perm = torch.argsort(torch.rand(batch + (n,), generator=gen), dim=-1)
    a = torch.gather(m, -2, perm.unsqueeze(-1).expand(m.shape))
    return Inputs((a.to(dtype),))


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * 2 * n ** 3 / 3, bytes=element_bytes(a) + batch * a.element_size())


TASK = Task(
    id="LinearAlgebra/det",
    difficulty=4,
    entry="det",
    signature="det(A)",
    kernelbenchx_signature="linalg.det(A, *, out=None)",
    description=(
        "Compute the determinant of every square matrix in `A` of shape (*, n, n), where * is zero or more "
        "batch dimensions, and return them as a new tensor of shape * (a 0-dim tensor for a single matrix) in "
        "A's dtype (float32). The matrices are invertible but need row exchanges: factor them by Gaussian "
        "elimination with partial pivoting, and the determinant is the product of the pivots, negated once per "
        "row exchange. Matrices are small (n up to about 128) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
