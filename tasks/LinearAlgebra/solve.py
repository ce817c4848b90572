"""Solve square linear systems A X = B by LU decomposition with partial pivoting."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A, B):
    return torch.linalg.solve(A, B)


# Per size, the cases seeds rotate through: batch dims, n, k (k None: B is a batch of vectors of
# shape (*, n)). The standard size has one configuration for the timing seeds.
CASES = {
    "small": [((2,), 16, 6), ((1, 3), 10, None)],
    "edge": [((2,), 13, 5), ((), 1, None)],
    "standard": [((8192,), 64, 32)],
}


def well_conditioned(batch, n, gen, mode):
    """Row-permuted matrices with a condition number of a few units whose permuted diagonal is small,
    so elimination without row exchanges is unstable."""
    noise = randn(batch + (n, n), gen, torch.float32, mode, scale=0.5 / n ** 0.5)
    diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
    sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
    # The diagonal is D alone: an outlier there could cancel it.
    m = noise - torch.diag_embed(torch.diagonal(noise, dim1=-2, dim2=-1)) + torch.diag_embed(diag * sign)
    perm = torch.argsort(torch.rand(batch + (n,), generator=gen), dim=-1)
    return torch.gather(m, -2, perm.unsqueeze(-1).expand(m.shape))


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    batch, n, k = cases[seed % len(cases)]
    a = well_conditioned(batch, n, gen, mode)
    b = randn(batch + ((n,) if k is None else (n, k)), gen, torch.float32, mode)
    return Inputs((a.to(dtype), b.to(dtype)))


def cost(inputs):
    a, b = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    k = b.numel() // max(1, batch * n)
    return Cost(flops=batch * (2 * n ** 3 / 3 + 2 * n * n * k), bytes=element_bytes(a) + 2 * element_bytes(b))


TASK = Task(
    id="LinearAlgebra/solve",
    difficulty=4,
    entry="solve",
    signature="solve(A, B)",
    kernelbenchx_signature="A (Tensor), B (Tensor), *, left (bool, optional), out (Tensor, optional)",
    description=(
        "Solve the square linear systems of a batch: `A` has shape (*, n, n) with zero or more batch "
        "dimensions *, every matrix invertible (but needing row exchanges: use Gaussian elimination with "
        "partial pivoting). Return X with A X = B, where `B` is either (*, n, k) (k right-hand sides) or a "
        "batch of vectors of shape (*, n) (then X has that shape too). B has A's batch dimensions; X is a new "
        "tensor of B's shape and dtype (float32). Matrices are small (n up to about 128) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
