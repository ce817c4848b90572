"""Dot product of the first two rows of alpha * (A @ B) + beta * C."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, B, alpha, beta, C):
    updated = alpha * torch.mm(A, B) + beta * C
    return torch.dot(updated[0], updated[1])


# (n, m, p, alpha, beta) per (size, seed); n >= 2 always. The standard size has one
# configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [(64, 80, 96, 1.0, 1.0), (2, 128, 40, 0.5, -1.5)],
    "edge": [(2, 1001, 3, 2.0, 0.0), (5, 1, 1001, -1.0, 0.75)],
    "standard": [(2048, 4096, 8192, 0.5, 2.0)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, m, p, alpha, beta = cases[seed % len(cases)]
    A = randn((n, m), gen, torch.float32, mode)
    # row 1 of A and C follows row 0 closely, so the two rows of the result are strongly correlated
    # and their dot product is far from zero (no catastrophic cancellation to blur the comparison)
    A[1] = 0.8 * A[0] + 0.6 * A[1]
    B = randn((m, p), gen, dtype, mode, scale=m ** -0.5)
    C = randn((n, p), gen, torch.float32, mode)
    C[1] = 0.8 * C[0] + 0.6 * C[1]
    return Inputs((A.to(dtype), B, alpha, beta, C.to(dtype)))


def cost(inputs):
    A, B, alpha, beta, C = inputs.args
    m, p = B.shape
    # only rows 0 and 1 of A and C and all of B are needed; the result is one element
    return Cost(flops=2 * 2 * m * p + 5 * p,
                bytes=2 * m * A.element_size() + element_bytes(B) + 2 * p * C.element_size() + A.element_size())


TASK = Task(
    id="MatrixMultiply/matrix_multiply_and_row_dot",
    difficulty=2,
    entry="matrix_multiply_and_row_dot",
    signature=("matrix_multiply_and_row_dot(A: torch.Tensor, B: torch.Tensor, alpha: float, beta: float, "
               "C: torch.Tensor)"),
    description=(
        "With A of shape (n, m), B of shape (m, p) and C of shape (n, p) (n >= 2), form D = alpha * (A @ B) + "
        "beta * C and return the dot product of its first two rows, sum_j D[0, j] * D[1, j], as a 0-dim tensor in "
        "the inputs' dtype. C is not modified (D is a new matrix, and only its rows 0 and 1 matter). alpha and beta "
        "are Python floats; accumulate in float32 for half-precision inputs."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
