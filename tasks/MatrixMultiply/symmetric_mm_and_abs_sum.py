"""Sum of the absolute values of alpha * A @ A^T + beta * C."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, C, alpha, beta):
    updated = alpha * torch.mm(A, A.T) + beta * C
    return torch.sum(torch.abs(updated))


# (n, m, alpha, beta) per (size, seed): A is (n, m), C is (n, n). The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [(64, 80, 1.0, 1.0), (96, 40, -0.5, 2.0)],
    "edge": [(1, 1001, 0.25, -1.0), (37, 3, 2.0, 0.0)],
    "standard": [(4096, 4096, 0.5, 1.5)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, m, alpha, beta = cases[seed % len(cases)]
    A = randn((n, m), gen, dtype, mode, scale=m ** -0.25)
    C = randn((n, n), gen, dtype, mode)
    return Inputs((A, C, alpha, beta))


def cost(inputs):
    A, C, alpha, beta = inputs.args
    n, m = A.shape
    # A @ A^T is symmetric: only its upper triangle needs a product (n*(n+1)/2 dot products of length m)
    return Cost(flops=n * (n + 1) * m + 4 * n * n, bytes=element_bytes(A, C) + A.element_size())


TASK = Task(
    id="MatrixMultiply/symmetric_mm_and_abs_sum",
    difficulty=4,
    entry="symmetric_mm_and_abs_sum",
    signature="symmetric_mm_and_abs_sum(A: torch.Tensor, C: torch.Tensor, alpha: float, beta: float)",
    description=(
        "With A of shape (n, m) and C of shape (n, n), form alpha * (A @ A^T) + beta * C and return the sum of the "
        "absolute values of all its n*n elements as a 0-dim tensor in the inputs' dtype; C is not modified. "
        "alpha and beta are Python floats. Accumulate the product and the sum in float32 (TF32 tensor-core "
        "precision is accepted for float32); A @ A^T is symmetric, which a kernel may exploit."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
