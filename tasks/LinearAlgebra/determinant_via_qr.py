"""Determinant of a batch of square matrices from their QR factorization."""

import math

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn, uniform


def reference(A, *, mode='reduced', out=None):
    Q, R = torch.linalg.qr(A, mode=mode)
    result = torch.linalg.det(Q) * torch.diagonal(R, dim1=-2, dim2=-1).prod(dim=-1)
    if out is not None:
        return out.copy_(result)
    return result


# Per size, the cases a (seed, mode) pair picks: batch dims, n, QR mode. Case = seed % 2 + 2 * outlier,
# so the standard size's timing seeds 0 and 2 share case 0.
CASES = {
    "small": (((4,), 16, "reduced"), ((3,), 12, "complete"), ((2, 2), 8, "complete"), ((3,), 20, "reduced")),
    "edge": (((), 1, "reduced"), ((3,), 3, "complete"), ((1, 2), 17, "complete"), ((2,), 5, "reduced")),
    "standard": (((8192,), 64, "reduced"), ((4096,), 96, "complete"), ((8192,), 64, "complete"),
                 ((4096,), 128, "reduced")),
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    batch, n, qr_mode = pick(size, **CASES)[seed % 2 + 2 * (mode == "outlier")]
    # I + 0.3 G / sqrt(n) is well conditioned and its determinant is of order one; shuffled rows and
    # random row signs give determinants of either sign, and a scale per matrix spreads |det| over about
    # e^-2 .. e^2. Outliers go into G.
    g = randn(batch + (n, n), gen, torch.float32, mode)
    a = torch.eye(n) + g * (0.3 / math.sqrt(n))
    perm = torch.argsort(torch.rand(batch + (n,), generator=gen), dim=-1)
    a = torch.take_along_dim(a, perm[..., None], dim=-2)
    signs = torch.where(torch.rand(batch + (n, 1), generator=gen) < 0.5, -1.0, 1.0)
    scale = torch.exp(uniform(batch + (1, 1), gen, torch.float32, -2.0, 2.0) / n)
    return Inputs(((a * signs * scale).to(dtype),), {"mode": qr_mode})


def cost(inputs):
    (a,) = inputs.args
    n = a.shape[-1]
    batch = a.numel() // max(1, n * n)
    return Cost(flops=batch * 4 * n ** 3 / 3, bytes=element_bytes(a) + batch * a.element_size())


TASK = Task(
    id="LinearAlgebra/determinant_via_qr",
    difficulty=3,
    entry="determinant_via_qr",
    signature="determinant_via_qr(A, *, mode='reduced', out=None)",
    description=(
        "Return the determinant of every square matrix of `A` (shape (*, n, n), float32, * zero or more batch "
        "dimensions) computed from a QR factorization A = Q R: det(A) = det(Q) * prod(diag(R)), where det(Q) is +1 "
        "or -1 (for Householder reflections, -1 per nontrivial reflection), so the sign must come out right. "
        "`mode` is 'reduced' or 'complete', which are the same factorization for square matrices and do not change "
        "the result. The output has shape (*) (a 0-dim tensor for a single matrix) and dtype float32; `out` is "
        "always None. The matrices are invertible and well conditioned, small (n up to about 128), in large batches."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
