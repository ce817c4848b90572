"""Least-squares solve through a QR factorization: x = R^-1 Q^T b."""

import torch

from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, b):
    Q, R = torch.linalg.qr(A, mode="reduced")
    return torch.linalg.solve_triangular(R, Q.mT @ b, upper=True)


# Per size, the cases a (seed, mode) pair picks: batch dims, m, n, k. Case = seed % 2 + 2 * outlier, so
# the standard size's timing seeds 0 and 2 share case 0. Unbatched (2-D) cases are KernelBench-X's form.
CASES = {
    "small": (((2,), 20, 8, 4), ((), 16, 8, 3), ((2, 2), 10, 4, 2), ((2,), 12, 6, 1)),
    "edge": (((), 1, 1, 1), ((3,), 7, 3, 5), ((1, 2), 9, 1, 2), ((2,), 13, 5, 1)),
    "standard": (((4096,), 256, 32, 8), ((2048,), 128, 64, 16), ((8192,), 96, 24, 4), ((4096,), 200, 48, 1)),
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    batch, m, n, k = pick(size, **CASES)[seed % 2 + 2 * (mode == "outlier")]
    # Tall Gaussian A (m >= 2n except for the 1x1 edge case) has full column rank and a small condition
    # number. b = A x0 + noise: a least-squares fit with a small residual.
    a = randn(batch + (m, n), gen, torch.float32, mode)
    x0 = randn(batch + (n, k), gen, torch.float32, "standard")
    b = a @ x0 + randn(batch + (m, k), gen, torch.float32, mode, scale=0.1)
    return Inputs((a.to(dtype), b.to(dtype)))


def cost(inputs):
    a, b = inputs.args
    m, n, k = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = a.numel() // max(1, m * n)
    x_bytes = batch * n * k * a.element_size()
    flops = 2 * m * n * n - 2 * n ** 3 / 3 + 4 * m * n * k - n * n * k
    return Cost(flops=batch * flops, bytes=element_bytes(a, b) + x_bytes)


TASK = Task(
    id="Fusion/fused_qr_solve",
    difficulty=3,
    entry="fused_qr_solve",
    signature="fused_qr_solve(A: Tensor, b: Tensor)",
    description=(
        "Solve the least-squares problem min |A x - b| for every matrix of a batch through a QR factorization: "
        "with A = Q R (Q with orthonormal columns, R upper triangular, the reduced factorization), "
        "x = R^-1 (Q^T b). `A` has shape (*, m, n) with m >= n and full column rank, `b` has shape (*, m, k) with "
        "the same batch dimensions * (zero or more; a plain (m, n) matrix is the unbatched case); return x of "
        "shape (*, n, k) in float32. x is unique, so the factors' signs do not matter; Q need not be formed. "
        "Matrices are small (m up to about 256, n up to about 64) and batches large."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    dtypes=(torch.float32,),
)
