"""Determinants of a batch of square matrices from their LU decomposition."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A, *, pivot=True, out=None):
    # The inputs given with pivot=False have a dominant diagonal, where elimination with and without
    # row exchanges computes the same factors; PyTorch has no unpivoted LU on the CPU, so the
    # pivoted one stands for both (the determinant is the same number either way).
    P, L, U = torch.linalg.lu(A)
    det_u = torch.prod(torch.diagonal(U, dim1=-2, dim2=-1), dim=-1)
    sign_p, _ = torch.linalg.slogdet(P)
    det = sign_p * det_u
    if out is not None:
        out.copy_(det)
        return out
    return det


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
    pivot = seed % 2 == 0 if size == "standard" else (seed + (mode == "outlier")) % 2 == 0
    # D + N: D a diagonal with random signs and magnitudes in 1..2, N small noise (condition number
    # about 3); the 1/1.47 scale (the magnitudes' geometric mean) keeps |det| near 1. With pivoting
    # the rows come in a random order, so the diagonal is small and row exchanges are needed;
    # without it the diagonal dominates and elimination needs none.
    scale = 0.5 if pivot else 0.25
    noise = randn(batch + (n, n), gen, torch.float32, mode, scale=scale / n ** 0.5)
    diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
    sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
    # The diagonal is D alone: an outlier there could cancel it.
    a = (noise - torch.diag_embed(torch.diagonal(noise, dim1=-2, dim2=-1)) + torch.diag_embed(diag * sign)) / 1.4715
    if pivot:
        perm = torch.argsort(torch.rand(batch + (n,), generator=gen), dim=-1)
        a = torch.gather(a, -2, perm.unsqueeze(-1).expand(a.shape))
    return Inputs((a.to(dtype),), {"pivot": pivot})


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * 2 * n ** 3 / 3, bytes=element_bytes(a) + batch * a.element_size())


TASK = Task(
    id="LinearAlgebra/determinant_lu",
    difficulty=3,
    entry="determinant_lu",
    signature="determinant_lu(A, *, pivot=True, out=None)",
    description=(
        "Compute the determinant of every invertible matrix in `A` of shape (*, n, n) (zero or more batch "
        "dimensions *) through its LU decomposition and return a new tensor of shape * (0-dim for one matrix) "
        "in A's dtype (float32); `out` is always None. With pivot=True use partial pivoting, A = P L U with L "
        "unit lower triangular: the determinant is the product of U's diagonal times det(P), which is -1 per "
        "exchange of two different rows (these inputs need exchanges). With pivot=False factor A = L U without "
        "row exchanges (those inputs have a dominant diagonal) and multiply U's diagonal. Matrices are small "
        "(n up to about 128) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
