"""Inverses of a batch of square matrices through their LU decomposition."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A, *, pivot=True, out=None):
    # The inputs given with pivot=False have a dominant diagonal, where elimination with and without
    # row exchanges computes the same factors; PyTorch has no unpivoted LU on the CPU, so the
    # pivoted one stands for both (the inverse is the same matrix either way).
    P, L, U = torch.linalg.lu(A)
    # A = P L U, so A^-1 = U^-1 L^-1 P^T.
    Y = torch.linalg.solve_triangular(L, P.transpose(-1, -2), upper=False, unitriangular=True)
    inv = torch.linalg.solve_triangular(U, Y, upper=True)
    if out is not None:
        out.copy_(inv)
        return out
    return inv


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
    pivot = seed % 2 == 0 if size == "standard" else (seed + (mode == "outlier")) % 2 == 0
    # D + N: D a diagonal with random signs and magnitudes in 1..2, N small off-diagonal noise
    # (condition number about 3). With pivoting the rows come in a random order, so the diagonal is
    # small and row exchanges are needed; without it the diagonal dominates and none are needed.
    scale = 0.5 if pivot else 0.25
    noise = randn(batch + (n, n), gen, torch.float32, mode, scale=scale / n ** 0.5)
    diag = uniform(batch + (n,), gen, torch.float32, 1.0, 2.0)
    sign = torch.where(torch.rand(batch + (n,), generator=gen) < 0.5, -1.0, 1.0)
    a = noise - torch.diag_embed(torch.diagonal(noise, dim1=-2, dim2=-1)) + torch.diag_embed(diag * sign)
    if pivot:
        perm = torch.argsort(torch.rand(batch + (n,), generator=gen), dim=-1)
        a = torch.gather(a, -2, perm.unsqueeze(-1).expand(a.shape))
    return Inputs((a.to(dtype),), {"pivot": pivot})


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * 2 * n ** 3, bytes=2 * element_bytes(a))


TASK = Task(
    id="LinearAlgebra/invert_matrix_lu",
    difficulty=3,
    entry="invert_matrix_lu",
    signature="invert_matrix_lu(A, *, pivot=True, out=None)",
    description=(
        "Invert every matrix in `A` of shape (*, n, n) (zero or more batch dimensions *) through its LU "
        "decomposition and return A^-1 as a new tensor of A's shape and dtype (float32); `out` is always None. "
        "With pivot=True factor A = P L U with partial pivoting (these inputs need row exchanges), L unit lower "
        "and U upper triangular, so A^-1 = U^-1 L^-1 P^T: solve L Y = P^T by forward and U X = Y by back "
        "substitution. With pivot=False factor A = L U without row exchanges (those inputs have a dominant "
        "diagonal). Matrices are small (n up to about 128) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
