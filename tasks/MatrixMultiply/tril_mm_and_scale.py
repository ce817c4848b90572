"""beta * alpha * (tril(A) @ B): a lower-triangular matrix product, scaled twice."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, B, alpha, beta):
    B = alpha * torch.mm(torch.tril(A), B)
    return beta * B


# (n, p, alpha, beta, B as a transposed view) per (size, seed): A is (n, n), B is (n, p). The
# standard size has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [(64, 80, 1.0, 1.0, False), (96, 33, -0.5, 3.0, False)],
    "edge": [(1, 5, 2.0, 0.5, False), (37, 1001, 0.25, -2.0, True)],
    "standard": [(4096, 4096, 0.5, 1.5, False)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, p, alpha, beta, transposed = cases[seed % len(cases)]
    A = randn((n, n), gen, dtype, mode)
    if transposed:
        B = randn((p, n), gen, dtype, mode, scale=n ** -0.5).t()  # a non-contiguous view
    else:
        B = randn((n, p), gen, dtype, mode, scale=n ** -0.5)
    return Inputs((A, B, alpha, beta))


def cost(inputs):
    A, B, alpha, beta = inputs.args
    n, p = B.shape
    lower = n * (n + 1) // 2  # only the lower triangle of A matters
    return Cost(flops=2 * lower * p + 2 * n * p,
                bytes=lower * A.element_size() + element_bytes(B) + n * p * A.element_size())


TASK = Task(
    id="MatrixMultiply/tril_mm_and_scale",
    difficulty=3,
    entry="tril_mm_and_scale",
    signature="tril_mm_and_scale(A: torch.Tensor, B: torch.Tensor, alpha: float, beta: float)",
    description=(
        "With a square A of shape (n, n) and B of shape (n, p), return beta * alpha * (L @ B) as a new (n, p) "
        "tensor in the inputs' dtype, where L = tril(A) keeps A's elements on and below the main diagonal "
        "(j <= i) and zeroes the rest. Neither input is modified; B may be a non-contiguous view, so honour its "
        "strides. alpha and beta are Python floats; accumulate in float32 (TF32 tensor-core precision is accepted "
        "for float32), and note that only the lower triangle of A needs to be read."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
