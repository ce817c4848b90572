"""Two chained scaled products: D = alpha*A@B + beta*C, then alpha*D@D^T + beta*D."""

import torch

from evaluator.contracts import Tolerance
from evaluator.task import Cost, Inputs, Task, element_bytes, generator, pick, randn


def reference(A, B, C, alpha, beta):
    C = alpha * torch.mm(A, B) + beta * C
    return alpha * torch.mm(C, C.T) + beta * C


# (n, m, alpha, beta) per (size, seed): A is (n, m), B is (m, n), C is (n, n). The standard size
# has one configuration, so the seeds that rotate during timing share it.
CASES = {
    "small": [(64, 80, 0.5, 1.0), (96, 48, -0.25, 0.5)],
    "edge": [(1, 7, 2.0, -1.0), (37, 1001, 0.125, 0.0)],
    "standard": [(4096, 2048, 0.25, 0.5)],
}


def make_inputs(seed, size, mode, dtype):
    gen = generator(seed)
    cases = pick(size, **CASES)
    n, m, alpha, beta = cases[seed % len(cases)]
    A = randn((n, m), gen, dtype, mode)
    B = randn((m, n), gen, dtype, mode, scale=m ** -0.5)
    C = randn((n, n), gen, dtype, mode)
    return Inputs((A, B, C, alpha, beta))


def cost(inputs):
    A, B, C, alpha, beta = inputs.args
    n, m = A.shape
    # D = alpha*A@B + beta*C costs 2*n*m*n; D@D^T is symmetric, so only its upper triangle needs a
    # product (about n*n*n multiply-adds counted as n*(n+1)*n flops), plus the two epilogues
    return Cost(flops=2 * n * m * n + n * (n + 1) * n + 6 * n * n,
                bytes=element_bytes(A, B, C) + n * n * A.element_size())


TASK = Task(
    id="MatrixMultiply/matrix_multiply_symmetric",
    difficulty=4,
    entry="matrix_multiply_symmetric",
    signature=("matrix_multiply_symmetric(A: torch.Tensor, B: torch.Tensor, C: torch.Tensor, alpha: float, "
               "beta: float)"),
    description=(
        "With A of shape (n, m), B of shape (m, n) and C of shape (n, n), first form D = alpha * (A @ B) + beta * C, "
        "then return a new (n, n) tensor alpha * (D @ D^T) + beta * D, in the inputs' dtype. C is not modified. "
        "alpha and beta are Python floats; accumulate both products in float32. Keep D in float32, since D @ D^T "
        "magnifies any rounding of D: for float16/bfloat16 inputs D must be neither rounded to the input dtype "
        "nor multiplied at TF32 precision (use full or 3xTF32 precision), while for float32 inputs TF32 "
        "tensor-core precision is accepted."
    ),
    reference=reference,
    make_inputs=make_inputs,
    cost=cost,
    contract=Tolerance(tf32=True),
)
